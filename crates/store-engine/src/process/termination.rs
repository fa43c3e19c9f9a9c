//! `kairos_termination` (seed 002 §27): the record of an instance's withdrawal, termination or
//! deletion, inserted as one more write of the command that ends the instance.

use crate::Rows;
use jiff::Timestamp;
use kairos_store::{Dialect, Result, Sql, SqlValue, Write};

/// One record.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Termination {
    pub process_instance_id: String,
    /// WITHDRAW, TERMINATE or DELETE.
    pub kind: String,
    pub user_id: Option<String>,
    pub reason: String,
    /// JSON: the activity ids the instance was at.
    pub activities_json: String,
    /// JSON: its open tasks (id, key, name, assignee, candidates).
    pub tasks_json: String,
    /// JSON: its jobs (id, kind, activity, due).
    pub jobs_json: String,
    /// JSON: its message/signal/conditional waits.
    pub waits_json: String,
    pub business_state: Option<String>,
    pub pending_actions: Option<String>,
    pub compensation_plan: Option<String>,
    /// The kairos node that ran the command.
    pub node_id: Option<String>,
    pub recorded_at: Timestamp,
}

fn t(s: &str) -> SqlValue {
    SqlValue::Text(s.to_owned())
}

fn opt(s: Option<&str>) -> SqlValue {
    s.map_or(SqlValue::Null, t)
}

/// The insert of `r` (its `recorded_at` is the database's now); a second record of one
/// instance fails the list on the primary key: an instance ends once.
pub fn termination_insert(dialect: &Dialect, r: &Termination) -> Write {
    Write::new(
        format!(
            "INSERT INTO kairos_termination (process_instance_id, kind, user_id, reason, activities_json, tasks_json, \
             jobs_json, waits_json, business_state, pending_actions, compensation_plan, node_id, recorded_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {})",
            dialect.now
        ),
        vec![
            t(&r.process_instance_id),
            t(&r.kind),
            opt(r.user_id.as_deref()),
            t(&r.reason),
            t(&r.activities_json),
            t(&r.tasks_json),
            t(&r.jobs_json),
            t(&r.waits_json),
            opt(r.business_state.as_deref()),
            opt(r.pending_actions.as_deref()),
            opt(r.compensation_plan.as_deref()),
            opt(r.node_id.as_deref()),
        ],
    )
    .expect(1)
}

const COLUMNS: &[&str] = &[
    "process_instance_id",
    "kind",
    "user_id",
    "reason",
    "activities_json",
    "tasks_json",
    "jobs_json",
    "waits_json",
    "business_state",
    "pending_actions",
    "compensation_plan",
    "node_id",
    "recorded_at",
];

pub async fn termination_get(db: &dyn Sql, pi: &str) -> Result<Option<Termination>> {
    let sql = format!("SELECT {} FROM kairos_termination WHERE process_instance_id = ?", COLUMNS.join(", "));
    let rows = Rows::read(db, "kairos_termination", COLUMNS, &sql, &[t(pi)]).await?;
    rows.first()
        .map(|r| {
            Ok(Termination {
                process_instance_id: r.text("process_instance_id")?,
                kind: r.text("kind")?,
                user_id: r.opt_text("user_id")?,
                reason: r.text("reason")?,
                activities_json: r.text("activities_json")?,
                tasks_json: r.text("tasks_json")?,
                jobs_json: r.text("jobs_json")?,
                waits_json: r.text("waits_json")?,
                business_state: r.opt_text("business_state")?,
                pending_actions: r.opt_text("pending_actions")?,
                compensation_plan: r.opt_text("compensation_plan")?,
                node_id: r.opt_text("node_id")?,
                recorded_at: r.instant("recorded_at")?,
            })
        })
        .transpose()
}

/// Whether any user task of instance `pi` has been completed (history has an ended task that
/// was not deleted with its instance): a withdrawal comes too late then.
pub async fn instance_has_completed_task(db: &dyn Sql, pi: &str) -> Result<bool> {
    let rows = Rows::read(
        db,
        "ACT_HI_TASKINST",
        &["n"],
        "SELECT COUNT(*) AS n FROM ACT_HI_TASKINST WHERE PROC_INST_ID_ = ? AND END_TIME_ IS NOT NULL \
         AND DELETE_REASON_ IS NULL",
        &[t(pi)],
    )
    .await?;
    Ok(rows.first().map_or(Ok(0), |r| r.int("n"))? > 0)
}
