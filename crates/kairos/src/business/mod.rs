//! The business side of seed 002: what a team's own rows need from kairos to stay consistent
//! with its processes (SPEC C1–C6). Bindings between business objects and process instances,
//! a compare-and-set for the team's rows, the inbox, and the sessions they run on.

use crate::Error;
use kairos_store::Sql;
use std::sync::Arc;

/// Opens a database kairos does not own — the business database the command worker reads its
/// `workflow_command` rows from (SPEC C6) — as a session for kairos's statements. No migration
/// runs on it. A SQLite file is opened as kairos opens its own (WAL, `synchronous=FULL`, a
/// busy timeout), which changes the file's journal mode to WAL if it was not.
pub async fn connect(url: &str) -> Result<Arc<dyn Sql>, Error> {
    let store: Arc<dyn Sql> = crate::open_store(url).await?;
    Ok(store)
}
