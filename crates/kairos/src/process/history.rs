//! The history a command writes, by history level (as Flowable's history manager), is
//! `kairos_store_engine::process::instance_writes`'s; this module reads it back: at level
//! `full`, ACT_HI_DETAIL keeps one row per variable change (TYPE_ 'VariableUpdate'), listed by
//! [`super::Processes::historic_details`] (Flowable's `GET /history/historic-detail`), and
//! ACT_HI_TASKINST every user task ([`super::Processes::historic_tasks`]).

use kairos_store_engine::process as tables;

pub use kairos_store_engine::process::{
    DetailQuery, DetailVariable, HistoricDetail, HistoricTask, HistoricVariable, VariableQuery,
};

impl super::Processes {
    /// A page of ACT_HI_DETAIL (oldest change first) and how many rows match in all.
    pub async fn historic_details(
        &self,
        q: &DetailQuery,
        start: u64,
        size: u64,
    ) -> Result<(Vec<HistoricDetail>, u64), crate::Error> {
        Ok(tables::historic_details(self.store.as_ref(), q, start, size).await?)
    }

    /// A page of ACT_HI_VARINST (by name) and how many rows match in all.
    pub async fn historic_variables(
        &self,
        q: &VariableQuery,
        start: u64,
        size: u64,
    ) -> Result<(Vec<HistoricVariable>, u64), crate::Error> {
        Ok(tables::historic_variables(self.store.as_ref(), q, start, size).await?)
    }

    /// A page of ACT_HI_TASKINST (oldest first), of one instance or all, all tasks or only the
    /// `finished` (or unfinished) ones, and how many match in all.
    pub async fn historic_tasks(
        &self,
        instance: Option<&str>,
        finished: Option<bool>,
        start: u64,
        size: u64,
    ) -> Result<(Vec<HistoricTask>, u64), crate::Error> {
        self.historic_tasks_in(None, instance, finished, (start, size)).await
    }

    /// [`Processes::historic_tasks`] of one tenant (`None`: every tenant's).
    pub async fn historic_tasks_in(
        &self,
        tenant: Option<&str>,
        instance: Option<&str>,
        finished: Option<bool>,
        page: (u64, u64),
    ) -> Result<(Vec<HistoricTask>, u64), crate::Error> {
        Ok(tables::historic_tasks(self.store.as_ref(), instance, finished, tenant, page).await?)
    }
}
