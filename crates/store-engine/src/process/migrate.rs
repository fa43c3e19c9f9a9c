//! Process instance migration (SPEC P13): what refuses a move (a job running now, a dead
//! letter), the guard that commits with it, and the rows the instance's diff does not cover.

use super::t;
use crate::Rows;
use kairos_process::{Instance, JobKind};
use kairos_store::{Dialect, Result, Sql, SqlValue, Write};

/// The running instances of definition `definition_id`, in id order.
pub async fn instances_of_definition(store: &dyn Sql, definition_id: &str) -> Result<Vec<String>> {
    let rows = Rows::read(
        store,
        "ACT_RU_EXECUTION",
        &["ID_"],
        "SELECT ID_ FROM ACT_RU_EXECUTION WHERE PARENT_ID_ IS NULL AND PROC_DEF_ID_ = ? ORDER BY ID_",
        &[t(definition_id)],
    )
    .await?;
    rows.iter().map(|r| r.text("ID_")).collect()
}

/// A job of instance `pi` under an unexpired lease (a node or an external worker runs it
/// now): its id and lock owner.
pub async fn instance_running_job(store: &dyn Sql, pi: &str) -> Result<Option<(String, String)>> {
    let now = store.dialect().now;
    let rows = Rows::read(
        store,
        "ACT_RU_JOB",
        &["ID_", "LOCK_OWNER_"],
        &format!(
            "SELECT ID_, LOCK_OWNER_ FROM ACT_RU_JOB WHERE PROCESS_INSTANCE_ID_ = ? \
             AND LOCK_OWNER_ IS NOT NULL AND LOCK_EXP_TIME_ > {now}"
        ),
        &[t(pi)],
    )
    .await?;
    rows.first().map(|r| Ok((r.text("ID_")?, r.text("LOCK_OWNER_")?))).transpose()
}

/// A dead letter job of instance `pi`, if it has one.
pub async fn instance_dead_letter(store: &dyn Sql, pi: &str) -> Result<Option<String>> {
    let rows = Rows::read(
        store,
        "ACT_RU_DEADLETTER_JOB",
        &["ID_"],
        "SELECT ID_ FROM ACT_RU_DEADLETTER_JOB WHERE PROCESS_INSTANCE_ID_ = ?",
        &[t(pi)],
    )
    .await?;
    rows.first().map(|r| r.text("ID_")).transpose()
}

/// Commits only while no job of instance `pi` is under an unexpired lease (a node or worker
/// that locked one since the check would hold a job that changed under it).
pub fn migration_guard(dialect: &Dialect, pi: &str) -> Write {
    let now = dialect.now;
    Write::new(
        format!(
            "UPDATE ACT_RU_JOB SET REV_ = REV_ WHERE PROCESS_INSTANCE_ID_ = ? \
             AND LOCK_OWNER_ IS NOT NULL AND LOCK_EXP_TIME_ > {now}"
        ),
        vec![t(pi)],
    )
    .expect(0)
}

/// The rows the instance diff leaves alone: PROC_DEF_ID_ of every row of the instance, the
/// key and name of moved tasks, the activity of open history records and kept jobs.
pub fn migration_writes(before: &Instance, after: &Instance) -> Vec<Write> {
    let text = |s: &str| SqlValue::Text(s.to_string());
    let opt = |s: &Option<String>| s.clone().map_or(SqlValue::Null, SqlValue::Text);
    let (pi, def) = (after.id.as_str(), after.definition_id.as_str());
    let mut w = Vec::new();
    for table in [
        "ACT_RU_EXECUTION SET PROC_DEF_ID_ = ? WHERE PROC_INST_ID_ = ?",
        "ACT_RU_TASK SET PROC_DEF_ID_ = ? WHERE PROC_INST_ID_ = ?",
        "ACT_RU_IDENTITYLINK SET PROC_DEF_ID_ = ? WHERE PROC_INST_ID_ = ?",
        "ACT_RU_JOB SET PROC_DEF_ID_ = ? WHERE PROCESS_INSTANCE_ID_ = ?",
        // Open history follows; what was done before stays with the definition it was done in.
        "ACT_HI_ACTINST SET PROC_DEF_ID_ = ? WHERE PROC_INST_ID_ = ? AND END_TIME_ IS NULL",
        "ACT_HI_TASKINST SET PROC_DEF_ID_ = ? WHERE PROC_INST_ID_ = ? AND END_TIME_ IS NULL",
        "ACT_HI_PROCINST SET PROC_DEF_ID_ = ? WHERE PROC_INST_ID_ = ?",
    ] {
        w.push(Write::new(format!("UPDATE {table}"), vec![text(def), text(pi)]));
    }
    w.push(Write::new(
        "UPDATE ACT_HI_PROCINST SET PROC_DEF_KEY_ = ? WHERE PROC_INST_ID_ = ?",
        vec![text(&after.definition_key), text(pi)],
    ));
    for t in &after.tasks {
        let moved = before.tasks.iter().any(|b| {
            b.id == t.id && (b.task_def_key != t.task_def_key || b.name != t.name || b.form_key != t.form_key)
        });
        if moved {
            for table in ["ACT_RU_TASK", "ACT_HI_TASKINST"] {
                w.push(Write::new(
                    format!("UPDATE {table} SET TASK_DEF_KEY_ = ?, NAME_ = ?, FORM_KEY_ = ? WHERE ID_ = ?"),
                    vec![text(&t.task_def_key), opt(&t.name), opt(&t.form_key), text(&t.id)],
                ));
            }
        }
    }
    for r in after.activities.iter().filter(|r| r.end.is_none()) {
        if before.activities.iter().any(|b| b.id == r.id && b.activity_id != r.activity_id) {
            w.push(Write::new(
                "UPDATE ACT_HI_ACTINST SET ACT_ID_ = ?, ACT_NAME_ = ? WHERE ID_ = ?",
                vec![text(&r.activity_id), opt(&r.activity_name), text(&r.id)],
            ));
        }
    }
    for j in &after.jobs {
        let Some(b) = before.jobs.iter().find(|b| b.id == j.id) else { continue };
        if b.activity_id != j.activity_id || b.topic != j.topic {
            let config = match (&j.kind, &j.topic) {
                (JobKind::External, Some(topic)) => topic.clone(),
                _ => j.kind.config(&j.activity_id),
            };
            w.push(Write::new(
                "UPDATE ACT_RU_JOB SET ELEMENT_ID_ = ?, HANDLER_CFG_ = ? WHERE ID_ = ?",
                vec![text(&j.activity_id), text(&config), text(&j.id)],
            ));
        }
    }
    w
}
