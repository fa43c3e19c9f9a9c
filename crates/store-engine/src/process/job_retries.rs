//! Setting the retries of a live job (Camunda's `PUT /job/{id}/retries`): only while no node
//! holds a lease on it, so that the attempt under way plans its outcome from the retries it
//! started with (a dead letter's retries are set by moving it back: `Store::deadletter_move`).

use super::{i, t, ts};
use jiff::Timestamp;
use kairos_store::Write;

/// Sets `retries` on live job `id` unless it is leased at `now`: zero rows (a conflict) when it
/// is, or when there is no such job.
pub fn job_retries_write(id: &str, retries: i64, now: Timestamp) -> Write {
    Write::new(
        "UPDATE ACT_RU_JOB SET RETRIES_ = ?, REV_ = REV_ + 1 WHERE ID_ = ? AND TYPE_ <> 'external-worker' \
         AND (LOCK_OWNER_ IS NULL OR LOCK_EXP_TIME_ <= ?)",
        vec![i(retries), t(id), ts(now)],
    )
    .expect(1)
}
