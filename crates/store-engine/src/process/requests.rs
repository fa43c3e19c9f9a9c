//! Recorded requestIds of idempotent commands (SPEC C2): KAIROS_REQUEST.

use super::t;
use crate::Rows;
use kairos_store::{Result, Sql, SqlValue, Write};

/// A recorded request: the command it was, its request's fingerprint and its answer (JSON
/// text, when it had one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    pub command: String,
    pub fingerprint: String,
    pub result: Option<String>,
}

/// The row that records requestId `id`; it goes into the command's writes, and the primary
/// key makes the second of two concurrent duplicates fail.
pub fn request_insert(id: &str, command: &str, fingerprint: &str, result: Option<String>) -> Write {
    Write::new(
        "INSERT INTO KAIROS_REQUEST (REQUEST_ID_, COMMAND_, FINGERPRINT_, RESULT_) VALUES (?, ?, ?, ?)",
        vec![t(id), t(command), t(fingerprint), result.map_or(SqlValue::Null, SqlValue::Text)],
    )
}

/// What requestId `id` recorded, if it is recorded.
pub async fn request_get(store: &dyn Sql, id: &str) -> Result<Option<RecordedRequest>> {
    let rows = Rows::read(
        store,
        "KAIROS_REQUEST",
        &["REQUEST_ID_", "COMMAND_", "FINGERPRINT_", "RESULT_"],
        "SELECT REQUEST_ID_, COMMAND_, FINGERPRINT_, RESULT_ FROM KAIROS_REQUEST WHERE REQUEST_ID_ = ?",
        &[t(id)],
    )
    .await?;
    rows.first()
        .map(|r| {
            Ok(RecordedRequest {
                command: r.text("COMMAND_")?,
                fingerprint: r.text("FINGERPRINT_")?,
                result: r.opt_text("RESULT_")?,
            })
        })
        .transpose()
}
