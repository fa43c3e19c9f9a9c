//! sqlx errors turned into the seam's [`ErrorKind`]s, so callers branch on kinds and never on
//! SQLite result codes. Messages name the operation and SQLite's own message (e.g. `UNIQUE
//! constraint failed: ACT_RU_JOB.ID_`), which is what an operator needs; statement text never
//! reaches them.

use kairos_store::{Error, ErrorKind};

// Primary SQLite result codes (the low byte of an extended code).
const SQLITE_BUSY: i32 = 5;
const SQLITE_LOCKED: i32 = 6;
const SQLITE_NOMEM: i32 = 7;
const SQLITE_READONLY: i32 = 8;
const SQLITE_IOERR: i32 = 10;
const SQLITE_FULL: i32 = 13;
const SQLITE_CANTOPEN: i32 = 14;
const SQLITE_PROTOCOL: i32 = 15;
const SQLITE_TOOBIG: i32 = 18;
const SQLITE_MISMATCH: i32 = 20;
const SQLITE_RANGE: i32 = 25;

/// The kind of a failure, judged by what a caller can do about it.
fn kind_of(e: &sqlx::Error) -> ErrorKind {
    match e {
        sqlx::Error::Database(db) => {
            match db.kind() {
                sqlx::error::ErrorKind::UniqueViolation => return ErrorKind::Conflict,
                sqlx::error::ErrorKind::NotNullViolation
                | sqlx::error::ErrorKind::CheckViolation
                | sqlx::error::ErrorKind::ForeignKeyViolation => return ErrorKind::Invalid,
                _ => {}
            }
            let primary = db.code().and_then(|c| c.parse::<i32>().ok()).map(|c| c & 0xff);
            match primary {
                // Another writer held the database past busy_timeout, or the disk failed: the
                // database is (for now) unavailable and the operation may be retried.
                Some(SQLITE_BUSY | SQLITE_LOCKED | SQLITE_NOMEM | SQLITE_READONLY | SQLITE_IOERR)
                | Some(SQLITE_FULL | SQLITE_CANTOPEN | SQLITE_PROTOCOL) => ErrorKind::Unavailable,
                Some(SQLITE_TOOBIG | SQLITE_MISMATCH | SQLITE_RANGE) => ErrorKind::Invalid,
                _ => ErrorKind::Other,
            }
        }
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Protocol(_)
        | sqlx::Error::BeginFailed => ErrorKind::Unavailable,
        sqlx::Error::RowNotFound => ErrorKind::NotFound,
        sqlx::Error::InvalidArgument(_) | sqlx::Error::Encode(_) => ErrorKind::Invalid,
        _ => ErrorKind::Other,
    }
}

/// A short, statement-free description of a sqlx error.
fn describe(e: &sqlx::Error) -> String {
    match e {
        sqlx::Error::Database(db) => db.message().to_string(),
        sqlx::Error::PoolTimedOut => "no database connection became free in time".to_string(),
        sqlx::Error::PoolClosed => "the store is closed".to_string(),
        other => other.to_string(),
    }
}

/// Wraps a sqlx error for operation `op` (e.g. `job_acquire`).
pub(crate) fn db_err(op: &'static str) -> impl FnOnce(sqlx::Error) -> Error {
    move |e| {
        let kind = kind_of(&e);
        let msg = match kind {
            ErrorKind::Unavailable => format!("{op}: the sqlite database is unavailable: {}", describe(&e)),
            ErrorKind::Conflict => format!("{op}: conflicts with an existing row: {}", describe(&e)),
            _ => format!("{op}: {}", describe(&e)),
        };
        Error::new(kind, msg).with_source(e)
    }
}

/// Like [`db_err`] for an operator's own SQL: a statement SQLite rejects (syntax, unknown
/// column) is the operator's input, hence `Invalid`, not a store bug.
pub(crate) fn operator_err(op: &'static str) -> impl FnOnce(sqlx::Error) -> Error {
    move |e| {
        let mut err = db_err(op)(e);
        if err.kind == ErrorKind::Other {
            err.kind = ErrorKind::Invalid;
        }
        err
    }
}

/// A stored value this crate cannot read back (a bad TYPE_, an unreadable instant).
pub(crate) fn corrupt(what: impl Into<String>) -> Error {
    Error::new(ErrorKind::Other, what.into())
}
