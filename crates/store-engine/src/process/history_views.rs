//! Pages of the history tables for `/history/historic-*`: ACT_HI_DETAIL (Flowable's
//! `historic-detail`) and ACT_HI_TASKINST.

use super::values::row_value;
use super::{bound, finished_code, t};
use crate::{Row, Rows};
use jiff::Timestamp;
use kairos_store::{Result, Sql, SqlValue};
use serde::Serialize;

/// A row of ACT_HI_DETAIL in Flowable's REST shape (`HistoricDetailResponse`): a variable
/// update (kairos has no form properties, so `propertyId` and `propertyValue` stay null).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoricDetail {
    pub id: String,
    /// `variableUpdate` (Flowable's name for TYPE_ 'VariableUpdate').
    pub detail_type: &'static str,
    pub process_instance_id: Option<String>,
    pub execution_id: Option<String>,
    pub activity_instance_id: Option<String>,
    pub task_id: Option<String>,
    pub time: Option<Timestamp>,
    /// REV_: the revision of the variable row this change belongs to.
    pub revision: Option<i64>,
    pub variable: DetailVariable,
    pub property_id: Option<String>,
    pub property_value: Option<String>,
}

/// The variable of a [`HistoricDetail`], as Flowable's `RestVariable`: its value as set.
#[derive(Debug, Clone, Serialize)]
pub struct DetailVariable {
    pub name: String,
    #[serde(rename = "type")]
    pub var_type: String,
    pub value: serde_json::Value,
}

/// Which ACT_HI_DETAIL rows `GET /history/historic-detail` lists (all filters optional).
#[derive(Debug, Clone, Default)]
pub struct DetailQuery {
    pub id: Option<String>,
    pub process_instance_id: Option<String>,
    pub execution_id: Option<String>,
    pub activity_instance_id: Option<String>,
    pub task_id: Option<String>,
}

const DETAIL_WHERE: &str = "WHERE (CAST(? AS VARCHAR(64)) IS NULL OR ID_ = ?) \
     AND (CAST(? AS VARCHAR(64)) IS NULL OR PROC_INST_ID_ = ?) \
     AND (CAST(? AS VARCHAR(64)) IS NULL OR EXECUTION_ID_ = ?) \
     AND (CAST(? AS VARCHAR(64)) IS NULL OR ACT_INST_ID_ = ?) \
     AND (CAST(? AS VARCHAR(64)) IS NULL OR TASK_ID_ = ?)";

const DETAIL_COLUMNS: &[&str] = &[
    "ID_",
    "PROC_INST_ID_",
    "EXECUTION_ID_",
    "ACT_INST_ID_",
    "TASK_ID_",
    "TIME_",
    "REV_",
    "NAME_",
    "VAR_TYPE_",
    "TEXT_",
    "LONG_",
    "DOUBLE_",
];

/// How many rows a `SELECT COUNT(*) …` counted.
pub(super) async fn count(store: &dyn Sql, table: &'static str, sql: &str, binds: &[SqlValue]) -> Result<u64> {
    let rows = Rows::read(store, table, &["COUNT"], sql, binds).await?;
    Ok(rows.first().map(|r| r.int("COUNT")).transpose()?.unwrap_or(0).max(0) as u64)
}

/// A page of ACT_HI_DETAIL (oldest change first) and how many rows match in all.
pub async fn historic_details(
    store: &dyn Sql,
    q: &DetailQuery,
    start: u64,
    size: u64,
) -> Result<(Vec<HistoricDetail>, u64)> {
    let mut binds = Vec::new();
    for f in [&q.id, &q.process_instance_id, &q.execution_id, &q.activity_instance_id, &q.task_id] {
        let v = f.as_deref().map_or(SqlValue::Null, t);
        binds.extend([v.clone(), v]);
    }
    let total =
        count(store, "ACT_HI_DETAIL", &format!("SELECT COUNT(*) FROM ACT_HI_DETAIL {DETAIL_WHERE}"), &binds).await?;
    binds.extend([bound(size), bound(start)]);
    let sql = format!(
        "SELECT ID_, PROC_INST_ID_, EXECUTION_ID_, ACT_INST_ID_, TASK_ID_, TIME_, REV_, NAME_, VAR_TYPE_, \
         TEXT_, LONG_, DOUBLE_ FROM ACT_HI_DETAIL {DETAIL_WHERE} ORDER BY TIME_, ID_ LIMIT ? OFFSET ?"
    );
    let rows = Rows::read(store, "ACT_HI_DETAIL", DETAIL_COLUMNS, &sql, &binds).await?;
    Ok((rows.iter().map(|r| detail_row(&r)).collect::<Result<_>>()?, total))
}

/// One ACT_HI_DETAIL row; a value kairos cannot read is named, not shown as null.
fn detail_row(r: &Row<'_>) -> Result<HistoricDetail> {
    let value = row_value(r, "VAR_TYPE_", None)?;
    Ok(HistoricDetail {
        id: r.text("ID_")?,
        detail_type: "variableUpdate",
        process_instance_id: r.opt_text("PROC_INST_ID_")?,
        execution_id: r.opt_text("EXECUTION_ID_")?,
        activity_instance_id: r.opt_text("ACT_INST_ID_")?,
        task_id: r.opt_text("TASK_ID_")?,
        time: r.opt_instant("TIME_")?,
        revision: r.opt_int("REV_")?,
        variable: DetailVariable { name: r.text("NAME_")?, value, var_type: r.text("VAR_TYPE_")? },
        property_id: None,
        property_value: None,
    })
}

/// A row of ACT_HI_VARINST: a variable's last value, kept after its instance ended
/// (Flowable's `HistoricVariableInstanceResponse`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoricVariable {
    pub id: String,
    pub process_instance_id: Option<String>,
    pub execution_id: Option<String>,
    pub task_id: Option<String>,
    pub variable: DetailVariable,
    pub create_time: Option<Timestamp>,
    pub last_updated_time: Option<Timestamp>,
}

/// Which ACT_HI_VARINST rows [`historic_variables`] lists (all filters optional).
#[derive(Debug, Clone, Default)]
pub struct VariableQuery {
    pub process_instance_id: Option<String>,
    pub task_id: Option<String>,
    pub variable_name: Option<String>,
    /// Only variables of no task (true) or of a task (false).
    pub exclude_task_variables: bool,
}

/// A page of ACT_HI_VARINST (by name, then id) and how many rows match in all.
pub async fn historic_variables(
    store: &dyn Sql,
    q: &VariableQuery,
    start: u64,
    size: u64,
) -> Result<(Vec<HistoricVariable>, u64)> {
    const WHERE: &str = "WHERE (CAST(? AS VARCHAR(64)) IS NULL OR PROC_INST_ID_ = ?) \
         AND (CAST(? AS VARCHAR(64)) IS NULL OR TASK_ID_ = ?) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR NAME_ = ?) \
         AND (? = 0 OR TASK_ID_ IS NULL)";
    const COLUMNS: &[&str] = &[
        "ID_",
        "PROC_INST_ID_",
        "EXECUTION_ID_",
        "TASK_ID_",
        "NAME_",
        "VAR_TYPE_",
        "TEXT_",
        "LONG_",
        "DOUBLE_",
        "CREATE_TIME_",
        "LAST_UPDATED_TIME_",
    ];
    let mut binds = Vec::new();
    for f in [&q.process_instance_id, &q.task_id, &q.variable_name] {
        let v = f.as_deref().map_or(SqlValue::Null, t);
        binds.extend([v.clone(), v]);
    }
    binds.push(SqlValue::Int(i64::from(q.exclude_task_variables)));
    let total = count(store, "ACT_HI_VARINST", &format!("SELECT COUNT(*) FROM ACT_HI_VARINST {WHERE}"), &binds).await?;
    binds.extend([bound(size), bound(start)]);
    let sql = format!(
        "SELECT ID_, PROC_INST_ID_, EXECUTION_ID_, TASK_ID_, NAME_, VAR_TYPE_, TEXT_, LONG_, DOUBLE_, CREATE_TIME_, \
         LAST_UPDATED_TIME_ FROM ACT_HI_VARINST {WHERE} ORDER BY NAME_, ID_ LIMIT ? OFFSET ?"
    );
    let rows = Rows::read(store, "ACT_HI_VARINST", COLUMNS, &sql, &binds).await?;
    rows.iter()
        .map(|r| {
            let value = row_value(&r, "VAR_TYPE_", None)?;
            Ok(HistoricVariable {
                id: r.text("ID_")?,
                process_instance_id: r.opt_text("PROC_INST_ID_")?,
                execution_id: r.opt_text("EXECUTION_ID_")?,
                task_id: r.opt_text("TASK_ID_")?,
                variable: DetailVariable {
                    name: r.text("NAME_")?,
                    value,
                    var_type: r.opt_text("VAR_TYPE_")?.unwrap_or_default(),
                },
                create_time: r.opt_instant("CREATE_TIME_")?,
                last_updated_time: r.opt_instant("LAST_UPDATED_TIME_")?,
            })
        })
        .collect::<Result<Vec<_>>>()
        .map(|v| (v, total))
}

/// A user task of ACT_HI_TASKINST, open or done.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoricTask {
    pub id: String,
    pub process_instance_id: Option<String>,
    pub process_definition_id: Option<String>,
    pub execution_id: Option<String>,
    pub task_definition_key: Option<String>,
    pub name: Option<String>,
    pub assignee: Option<String>,
    pub start_time: Option<Timestamp>,
    pub claim_time: Option<Timestamp>,
    pub end_time: Option<Timestamp>,
    pub duration_in_millis: Option<i64>,
    pub delete_reason: Option<String>,
    /// TENANT_ID_: its instance's tenant (`''`: none).
    pub tenant_id: String,
}

const TASK_COLUMNS: &[&str] = &[
    "ID_",
    "PROC_INST_ID_",
    "PROC_DEF_ID_",
    "EXECUTION_ID_",
    "TASK_DEF_KEY_",
    "NAME_",
    "ASSIGNEE_",
    "START_TIME_",
    "CLAIM_TIME_",
    "END_TIME_",
    "DURATION_",
    "DELETE_REASON_",
    "TENANT_ID_",
];
const TASK_WHERE: &str = "WHERE (CAST(? AS VARCHAR(64)) IS NULL OR PROC_INST_ID_ = ?) \
     AND (? = 0 OR (? = 1 AND END_TIME_ IS NOT NULL) OR (? = 2 AND END_TIME_ IS NULL)) \
     AND (CAST(? AS VARCHAR(255)) IS NULL OR TENANT_ID_ = ?)";

/// A page of ACT_HI_TASKINST (oldest first) of one instance or all, every task or only the
/// `finished` (or unfinished) ones, of one tenant or all, and how many match in all.
pub async fn historic_tasks(
    store: &dyn Sql,
    instance: Option<&str>,
    finished: Option<bool>,
    tenant: Option<&str>,
    (start, size): (u64, u64),
) -> Result<(Vec<HistoricTask>, u64)> {
    let pi = instance.map_or(SqlValue::Null, t);
    let f = finished_code(finished);
    let tenant = tenant.map_or(SqlValue::Null, t);
    let mut binds = vec![pi.clone(), pi, f.clone(), f.clone(), f, tenant.clone(), tenant];
    let total =
        count(store, "ACT_HI_TASKINST", &format!("SELECT COUNT(*) FROM ACT_HI_TASKINST {TASK_WHERE}"), &binds).await?;
    binds.extend([bound(size), bound(start)]);
    let sql = format!(
        "SELECT ID_, PROC_INST_ID_, PROC_DEF_ID_, EXECUTION_ID_, TASK_DEF_KEY_, NAME_, ASSIGNEE_, \
         START_TIME_, CLAIM_TIME_, END_TIME_, DURATION_, DELETE_REASON_, TENANT_ID_ FROM ACT_HI_TASKINST {TASK_WHERE} \
         ORDER BY START_TIME_, ID_ LIMIT ? OFFSET ?"
    );
    let rows = Rows::read(store, "ACT_HI_TASKINST", TASK_COLUMNS, &sql, &binds).await?;
    let tasks = rows
        .iter()
        .map(|r| {
            Ok(HistoricTask {
                id: r.text("ID_")?,
                process_instance_id: r.opt_text("PROC_INST_ID_")?,
                process_definition_id: r.opt_text("PROC_DEF_ID_")?,
                execution_id: r.opt_text("EXECUTION_ID_")?,
                task_definition_key: r.opt_text("TASK_DEF_KEY_")?,
                name: r.opt_text("NAME_")?,
                assignee: r.opt_text("ASSIGNEE_")?,
                start_time: r.opt_instant("START_TIME_")?,
                claim_time: r.opt_instant("CLAIM_TIME_")?,
                end_time: r.opt_instant("END_TIME_")?,
                duration_in_millis: r.opt_int("DURATION_")?,
                delete_reason: r.opt_text("DELETE_REASON_")?,
                tenant_id: r.opt_text("TENANT_ID_")?.unwrap_or_default(),
            })
        })
        .collect::<Result<_>>()?;
    Ok((tasks, total))
}
