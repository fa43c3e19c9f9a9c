//! QRTZ_JOB_DETAILS: the scheduler's units of work.

use super::{TRIGGER_HANDLER, b, i, ot, scope_type, t, w};
use crate::{Row, Rows};
use kairos_store::{Result, SqlValue, Store, Write};
use serde::Serialize;
use serde_json::{Map, Value as Json};

/// A job detail as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobDetail {
    pub name: String,
    pub group: String,
    /// The handler that does the work (JOB_CLASS_NAME: Quartz keeps a Java class there).
    pub handler: String,
    pub description: Option<String>,
    pub durable: bool,
    pub requests_recovery: bool,
    /// Whether firings may overlap (IS_NONCONCURRENT negated).
    pub concurrent: bool,
    pub data: Map<String, Json>,
    pub retries: i32,
    /// TENANT_ID_ (kairos's): whose job it is, `''` for none; its triggers are its tenant's.
    pub tenant_id: String,
}

/// The columns of a job detail, in their select order.
pub const JOB_COLUMNS: &[&str] = &[
    "JOB_NAME",
    "JOB_GROUP",
    "JOB_CLASS_NAME",
    "DESCRIPTION",
    "IS_DURABLE",
    "REQUESTS_RECOVERY",
    "IS_NONCONCURRENT",
    "JOB_DATA",
    "RETRIES",
    "TENANT_ID_",
];

const JOB_COLS: &str = "JOB_NAME, JOB_GROUP, JOB_CLASS_NAME, DESCRIPTION, IS_DURABLE, REQUESTS_RECOVERY, IS_NONCONCURRENT, JOB_DATA, RETRIES, TENANT_ID_";

/// [`JOB_COLS`] of the job details table aliased `jd`, for joins.
pub(crate) const JD_COLS: &str = "jd.JOB_NAME, jd.JOB_GROUP, jd.JOB_CLASS_NAME, jd.DESCRIPTION, jd.IS_DURABLE, \
    jd.REQUESTS_RECOVERY, jd.IS_NONCONCURRENT, jd.JOB_DATA, jd.RETRIES, jd.TENANT_ID_";

/// A JSON object stored as text (JOB_DATA of a job or a trigger); NULL is the empty map.
pub(crate) fn data_of(row: &Row<'_>, column: &str) -> Result<Map<String, Json>> {
    match row.opt_text(column)? {
        None => Ok(Map::new()),
        Some(text) => match serde_json::from_str::<Json>(&text) {
            Ok(Json::Object(m)) => Ok(m),
            _ => Err(row.unreadable(column, "is not a JSON object")),
        },
    }
}

/// A whole number that fits an `i32` (a count, a priority, a misfire instruction).
pub(crate) fn int32(row: &Row<'_>, column: &str) -> Result<i32> {
    i32::try_from(row.int(column)?).map_err(|_| row.unreadable(column, "is out of range"))
}

/// A job detail from a row of [`JOB_COLUMNS`].
pub fn job_of(r: &Row<'_>) -> Result<JobDetail> {
    Ok(JobDetail {
        name: r.text("JOB_NAME")?,
        group: r.text("JOB_GROUP")?,
        handler: r.text("JOB_CLASS_NAME")?,
        description: r.opt_text("DESCRIPTION")?,
        durable: r.flag("IS_DURABLE")?,
        requests_recovery: r.flag("REQUESTS_RECOVERY")?,
        concurrent: !r.flag("IS_NONCONCURRENT")?,
        data: data_of(r, "JOB_DATA")?,
        retries: int32(r, "RETRIES")?,
        tenant_id: r.opt_text("TENANT_ID_")?.unwrap_or_default(),
    })
}

pub async fn job_exists(store: &dyn Store, sched: &str, name: &str, group: &str) -> Result<bool> {
    let rows = store
        .read(
            "SELECT 1 FROM QRTZ_JOB_DETAILS WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ?",
            &[t(sched), t(name), t(group)],
        )
        .await?;
    Ok(!rows.is_empty())
}

/// Stores job detail `j`: an UPDATE when it `exists` (its tenant stays), an INSERT otherwise.
/// `data` is its JOB_DATA as JSON text.
pub fn job_upsert(sched: &str, j: &JobDetail, data: Option<String>, exists: bool) -> Write {
    let data = data.map(SqlValue::Text).unwrap_or(SqlValue::Null);
    if exists {
        w(
            "UPDATE QRTZ_JOB_DETAILS SET JOB_CLASS_NAME = ?, DESCRIPTION = ?, IS_DURABLE = ?, REQUESTS_RECOVERY = ?, \
             IS_NONCONCURRENT = ?, JOB_DATA = ?, RETRIES = ? WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ?",
            vec![
                t(&j.handler),
                ot(&j.description),
                b(j.durable),
                b(j.requests_recovery),
                b(!j.concurrent),
                data,
                i(j.retries.into()),
                t(sched),
                t(&j.name),
                t(&j.group),
            ],
        )
    } else {
        w(
            "INSERT INTO QRTZ_JOB_DETAILS (SCHED_NAME, JOB_NAME, JOB_GROUP, DESCRIPTION, JOB_CLASS_NAME, IS_DURABLE, \
             IS_NONCONCURRENT, IS_UPDATE_DATA, REQUESTS_RECOVERY, JOB_DATA, RETRIES, TENANT_ID_) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                t(sched),
                t(&j.name),
                t(&j.group),
                ot(&j.description),
                t(&j.handler),
                b(j.durable),
                b(!j.concurrent),
                b(false),
                b(j.requests_recovery),
                data,
                i(j.retries.into()),
                t(&j.tenant_id),
            ],
        )
    }
}

pub async fn job_get(store: &dyn Store, sched: &str, group: &str, name: &str) -> Result<Option<JobDetail>> {
    let rows = Rows::read(
        store,
        "QRTZ_JOB_DETAILS",
        JOB_COLUMNS,
        &format!("SELECT {JOB_COLS} FROM QRTZ_JOB_DETAILS WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ?"),
        &[t(sched), t(name), t(group)],
    )
    .await?;
    rows.first().map(|r| job_of(&r)).transpose()
}

/// The job details, of one group or all, by group and name.
pub async fn job_list(store: &dyn Store, sched: &str, group: Option<&str>) -> Result<Vec<JobDetail>> {
    let rows = match group {
        Some(g) => {
            Rows::read(
                store,
                "QRTZ_JOB_DETAILS",
                JOB_COLUMNS,
                &format!(
                    "SELECT {JOB_COLS} FROM QRTZ_JOB_DETAILS WHERE SCHED_NAME = ? AND JOB_GROUP = ? ORDER BY JOB_GROUP, JOB_NAME"
                ),
                &[t(sched), t(g)],
            )
            .await?
        }
        None => {
            Rows::read(
                store,
                "QRTZ_JOB_DETAILS",
                JOB_COLUMNS,
                &format!("SELECT {JOB_COLS} FROM QRTZ_JOB_DETAILS WHERE SCHED_NAME = ? ORDER BY JOB_GROUP, JOB_NAME"),
                &[t(sched)],
            )
            .await?
        }
    };
    rows.iter().map(|r| job_of(&r)).collect()
}

pub fn job_delete(sched: &str, group: &str, name: &str) -> Write {
    w(
        "DELETE FROM QRTZ_JOB_DETAILS WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ?",
        vec![t(sched), t(name), t(group)],
    )
}

/// Deletes a job detail that is not durable and that no trigger points at any more (Quartz
/// deletes such a job with its last trigger).
pub fn orphan_job_delete(sched: &str, group: &str, name: &str) -> Write {
    w(
        "DELETE FROM QRTZ_JOB_DETAILS WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ? AND IS_DURABLE = ? \
         AND NOT EXISTS (SELECT 1 FROM QRTZ_TRIGGERS t WHERE t.SCHED_NAME = ? AND t.JOB_NAME = ? AND t.JOB_GROUP = ?)",
        vec![t(sched), t(name), t(group), b(false), t(sched), t(name), t(group)],
    )
}

/// The statements deleting every trigger of a job, with their trigger jobs (by subquery, so no
/// read is needed first).
pub fn triggers_of_job_delete(sched: &str, group: &str, name: &str) -> Vec<Write> {
    let key = || vec![t(sched), t(sched), t(name), t(group)];
    let mut out: Vec<Write> = ["QRTZ_SIMPLE_TRIGGERS", "QRTZ_CRON_TRIGGERS", "QRTZ_SIMPROP_TRIGGERS", "QRTZ_BLOB_TRIGGERS"]
        .iter()
        .map(|table| {
            w(
                &format!(
                    "DELETE FROM {table} WHERE SCHED_NAME = ? AND (TRIGGER_NAME, TRIGGER_GROUP) IN \
                     (SELECT TRIGGER_NAME, TRIGGER_GROUP FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ?)"
                ),
                key(),
            )
        })
        .collect();
    out.push(w(
        "DELETE FROM ACT_RU_JOB WHERE SCOPE_TYPE_ = ? AND HANDLER_TYPE_ = ? AND (SCOPE_ID_, SCOPE_DEFINITION_ID_) IN \
         (SELECT TRIGGER_NAME, TRIGGER_GROUP FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ?)",
        vec![t(&scope_type(sched)), t(TRIGGER_HANDLER), t(sched), t(name), t(group)],
    ));
    out.push(w(
        "DELETE FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ?",
        vec![t(sched), t(name), t(group)],
    ));
    out
}
