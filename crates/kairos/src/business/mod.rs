//! The business side of seed 002: what a team's own rows need from kairos to stay consistent
//! with its processes (SPEC C1–C6). Bindings between business objects and process instances,
//! a compare-and-set for the team's rows, the inbox, and the sessions they run on.

use crate::Error;
use kairos_store::Sql;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Inbox deliveries this process saw, first and duplicate (seed 002 §39's "inbox duplicate
/// rate": how often upstream re-delivers, e.g. after a publisher's crash). Process-wide: every
/// engine of the process shares one inbox table per database anyway.
static INBOX_FIRST: AtomicU64 = AtomicU64::new(0);
static INBOX_DUPLICATE: AtomicU64 = AtomicU64::new(0);

/// Counts a duplicate found before [`inbox_first`] was needed (a look-up that found the row).
pub(crate) fn count_duplicate() {
    INBOX_DUPLICATE.fetch_add(1, Ordering::Relaxed);
}

/// (first, duplicate) deliveries counted by [`inbox_first`] since the process started.
pub fn inbox_deliveries() -> (u64, u64) {
    (INBOX_FIRST.load(Ordering::Relaxed), INBOX_DUPLICATE.load(Ordering::Relaxed))
}

/// Opens a database kairos does not own — the business database the command worker reads its
/// `workflow_command` rows from (SPEC C6) — as a session for kairos's statements. No migration
/// runs on it. A SQLite file is opened as kairos opens its own (WAL, `synchronous=FULL`, a
/// busy timeout), which changes the file's journal mode to WAL if it was not.
pub async fn connect(url: &str) -> Result<Arc<dyn Sql>, Error> {
    let store: Arc<dyn Sql> = crate::open_store(url).await?;
    Ok(store)
}

pub use kairos_store_engine::business::{Binding, CasOutcome, CompareAndSet};

/// Seed 002 §9's compare-and-set on the caller's own business row, usually inside the
/// caller's transaction (`engine.within(&mut *tx).session()`): moves the row's status from one
/// of `from` to `to` only while its row_version is the one the caller read, and tells apart
/// what "0 rows updated" means — already done, not allowed (with the actual status), stale
/// (read again), or no such row — instead of calling them all a failure.
pub async fn compare_and_set(db: &dyn Sql, cas: &CompareAndSet<'_>) -> Result<CasOutcome, Error> {
    Ok(kairos_store_engine::business::compare_and_set(db, cas).await?)
}

/// The inbox of seed 002 §15: records that `consumer` processed `event_id` and answers
/// whether this call was the first to do so. Run it in the transaction that applies the
/// event's effect: a duplicate delivery (the publisher re-sent after a crash) finds the key
/// taken and skips the effect. The primary key decides — there is no look before the insert —
/// so of concurrent deliveries exactly one is first.
pub async fn inbox_first(
    db: &dyn Sql,
    consumer: &str,
    event_id: &str,
    result_code: Option<&str>,
) -> Result<bool, Error> {
    for (field, value, max) in [("consumer", consumer, 128), ("eventId", event_id, 64)] {
        let n = value.chars().count();
        if n == 0 || n > max || value.chars().any(char::is_control) {
            return Err(invalid(format!("{field} must have 1 to {max} characters and no control characters")));
        }
    }
    if let Some(code) = result_code
        && code.chars().count() > 64
    {
        return Err(invalid("resultCode must have at most 64 characters".into()));
    }
    let write = kairos_store_engine::business::inbox_insert(db.dialect(), consumer, event_id, result_code);
    let n = db.write_all(&[write]).await?;
    let first = n.first() == Some(&1);
    if first { &INBOX_FIRST } else { &INBOX_DUPLICATE }.fetch_add(1, Ordering::Relaxed);
    Ok(first)
}

fn invalid(message: String) -> Error {
    Error::Store(kairos_store::Error::new(kairos_store::ErrorKind::Invalid, message))
}
