//! Validation errors of the core. Each names the field that was wrong so that the HTTP layer
//! can answer 400 with a message an operator can act on, and nothing is written.

/// What was wrong with a command's input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A field had a value that cannot be accepted.
    #[error("invalid {field}: {message}")]
    Invalid { field: &'static str, message: String },
    /// The handler named by a job is not registered on this engine.
    #[error("unknown handler \"{0}\": register it before enqueueing jobs for it")]
    UnknownHandler(String),
}

impl Error {
    pub fn invalid(field: &'static str, message: impl Into<String>) -> Self {
        Error::Invalid { field, message: message.into() }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
