//! What can go wrong in a command, in terms the caller can act on.

/// How a command failed; the engine maps these to HTTP statuses and job outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The task, job, subscription or instance named is not there (404).
    NotFound,
    /// The state does not allow it: a suspended instance, a task claimed by someone else, a
    /// definition that is suspended (409).
    Conflict,
    /// The input is wrong: a variable name, a value of the wrong shape (400).
    Invalid,
    /// The model cannot go on: an expression that failed, no flow to take, an error no one
    /// catches. A job that hits this fails (and is retried, then dead-lettered); a request
    /// gets a 422 naming the element.
    Model,
    /// A service task's handler failed.
    Handler,
}

/// A failed command. Nothing of it is written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProcessError {
    pub kind: ErrorKind,
    pub message: String,
    /// The BPMN element involved, when there is one.
    pub element_id: Option<String>,
}

impl ProcessError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ProcessError {
        ProcessError { kind, message: message.into(), element_id: None }
    }

    pub fn at(kind: ErrorKind, element: &str, message: impl Into<String>) -> ProcessError {
        ProcessError { kind, message: message.into(), element_id: Some(element.to_string()) }
    }
}

pub type Result<T, E = ProcessError> = std::result::Result<T, E>;
