//! The doctor's finding `unreadable-row`: a stored row kairos cannot read (issue 14, item 1).
//! Such a row never stops the others (acquisition sets a job aside in the dead letters, an
//! instance with one refuses its commands alone), but it is work that will not happen until an
//! operator fixes the column or deletes the row, so each is an error with that way out.

use super::*;
use kairos_store::Unreadable;

/// Rows named at most; `GET /management/unreadable-rows` lists more.
const LIMIT: usize = 20;

/// Adds one finding per unreadable row. A report that had nothing else to say loses its
/// all-clear.
pub(super) async fn check(engine: &Engine, out: &mut Vec<Finding>) -> Result<(), Error> {
    let rows = engine.unreadable_rows(LIMIT).await?;
    if rows.is_empty() {
        return Ok(());
    }
    out.retain(|f| f.code != "all-clear");
    out.extend(rows.iter().map(finding_of));
    Ok(())
}

pub(super) fn finding_of(u: &Unreadable) -> Finding {
    let job = u.table.starts_with("ACT_RU_") && u.table.ends_with("JOB");
    let action = if job {
        let dead = if u.table == "ACT_RU_DEADLETTER_JOB" { " --dead" } else { "" };
        format!(
            "Fix {} of {} {} with SQL (then, for a dead letter, move it back: kairos jobs retry {}), or delete the \
             job: kairos jobs delete{dead} --force {} (DELETE /management/jobs/{}?force=true).",
            u.column, u.table, u.id, u.id, u.id, u.id
        )
    } else {
        format!(
            "Fix {} of {} row {} with SQL (to a value kairos writes), or delete the row; until then that row's \
             process instance or trigger refuses every command, and the others run.",
            u.column, u.table, u.id
        )
    };
    Finding {
        severity: Severity::Error,
        code: "unreadable-row",
        title: format!("{} row {} cannot be read", u.table, u.id),
        detail: u.describe(),
        action,
        job_id: job.then(|| u.id.clone()),
        process_instance_id: None,
        trigger_group: None,
        trigger_name: None,
    }
}
