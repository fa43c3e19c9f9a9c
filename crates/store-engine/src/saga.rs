//! `kairos_saga_step` (SPEC C8, seed 002 §23): each step of a saga outside BPMN, keyed by the
//! saga and the step, with its status, its action's result (what a compensation is given) and
//! the compensation's attempts.

use crate::Rows;
use jiff::Timestamp;
use kairos_store::{Result, Sql, SqlValue, Write};

/// One step's record.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SagaStepRow {
    pub saga_id: String,
    pub step_no: i64,
    pub step_name: String,
    /// DONE, FAILED, COMPENSATED or COMPENSATION_FAILED.
    pub status: String,
    pub result_json: Option<String>,
    pub attempts: i64,
    pub last_error: Option<String>,
    pub updated_at: Timestamp,
}

fn t(s: &str) -> SqlValue {
    SqlValue::Text(s.to_owned())
}

const COLUMNS: &[&str] =
    &["saga_id", "step_no", "step_name", "status", "result_json", "attempts", "last_error", "updated_at"];

/// The recorded steps of `saga_id`, in order.
pub async fn steps(db: &dyn Sql, saga_id: &str) -> Result<Vec<SagaStepRow>> {
    let sql = format!("SELECT {} FROM kairos_saga_step WHERE saga_id = ? ORDER BY step_no", COLUMNS.join(", "));
    let rows = Rows::read(db, "kairos_saga_step", COLUMNS, &sql, &[t(saga_id)]).await?;
    rows.iter()
        .map(|r| {
            Ok(SagaStepRow {
                saga_id: r.text("saga_id")?,
                step_no: r.int("step_no")?,
                step_name: r.text("step_name")?,
                status: r.text("status")?,
                result_json: r.opt_text("result_json")?,
                attempts: r.int("attempts")?,
                last_error: r.opt_text("last_error")?,
                updated_at: r.instant("updated_at")?,
            })
        })
        .collect()
}

/// Records a step's state (insert, or replace the earlier record of the same step).
#[allow(clippy::too_many_arguments)]
pub async fn record(
    db: &dyn Sql,
    saga_id: &str,
    step_no: i64,
    step_name: &str,
    status: &str,
    result_json: Option<&str>,
    attempts: i64,
    last_error: Option<&str>,
) -> Result<()> {
    let now = db.dialect().now;
    let sql = format!(
        "INSERT INTO kairos_saga_step (saga_id, step_no, step_name, status, result_json, attempts, last_error, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, {now}) ON CONFLICT (saga_id, step_no) DO UPDATE SET step_name = excluded.step_name, \
         status = excluded.status, result_json = COALESCE(excluded.result_json, kairos_saga_step.result_json), \
         attempts = excluded.attempts, last_error = excluded.last_error, updated_at = excluded.updated_at"
    );
    let error = last_error.map(|e| e.chars().take(2000).collect::<String>());
    db.write_all(&[Write::new(
        sql,
        vec![
            t(saga_id),
            SqlValue::Int(step_no),
            t(step_name),
            t(status),
            result_json.map_or(SqlValue::Null, t),
            SqlValue::Int(attempts),
            error.as_deref().map_or(SqlValue::Null, t),
        ],
    )])
    .await?;
    Ok(())
}
