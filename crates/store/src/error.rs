//! The one error type of the storage seam. Callers branch on [`ErrorKind`], never on a
//! backend's error codes, so the executor and the HTTP layer stay backend-agnostic.

/// What kind of failure a store operation met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The named row does not exist.
    NotFound,
    /// The operation conflicts with the row's current state (e.g. clearing a lock a live node
    /// holds, a unique key already taken).
    Conflict,
    /// The input cannot be stored (e.g. a value out of range for a column).
    Invalid,
    /// The database could not be reached or the connection broke; the outcome of a commit may be
    /// unknown. Retrying later is reasonable.
    Unavailable,
    /// A stored row cannot be decoded (a value SQLite kept in the wrong type, a TYPE_ kairos
    /// does not know, an instant out of range): the row's data is at fault, not the caller
    /// nor the database. [`Error::unreadable`] says which row and column.
    Unreadable,
    /// Anything else: a bug or a schema problem.
    Other,
}

/// A storage failure with its kind and a message safe to show an operator.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
    #[source]
    pub source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    /// The row that could not be read, for [`ErrorKind::Unreadable`].
    pub unreadable: Option<Box<crate::Unreadable>>,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into(), source: None, unreadable: None }
    }
    /// The error of a read that met a row it cannot decode.
    pub fn unreadable(row: crate::Unreadable) -> Self {
        Error { kind: ErrorKind::Unreadable, message: row.describe(), source: None, unreadable: Some(Box::new(row)) }
    }
    pub fn not_found(what: &str, id: &str) -> Self {
        Error::new(ErrorKind::NotFound, format!("{what} {id} does not exist"))
    }
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }
}

impl From<kairos_core::Error> for Error {
    fn from(e: kairos_core::Error) -> Self {
        Error::new(ErrorKind::Invalid, e.to_string())
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The conflict [`crate::Sql::write_all`] reports when statement `i` affected `got` rows instead
/// of `want` (a REV_ that moved on: another command changed the row first).
pub fn write_conflict(i: usize, write: &crate::Write, want: u64, got: u64) -> Error {
    let head: String = write.sql.split_whitespace().take(6).collect::<Vec<_>>().join(" ");
    Error::new(
        ErrorKind::Conflict,
        format!(
            "optimistic lock: statement {i} ({head} …) affected {got} rows, expected {want}; another command changed the rows first"
        ),
    )
}
