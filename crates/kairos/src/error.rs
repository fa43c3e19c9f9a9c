//! The library's error: what a caller of [`crate::Engine`] may need to tell apart.

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request was invalid; nothing was written. The message names the field.
    #[error(transparent)]
    Invalid(#[from] kairos_core::Error),
    /// The store failed; see its kind.
    #[error(transparent)]
    Store(#[from] kairos_store::Error),
    /// A process command failed (see its kind); nothing was written.
    #[error(transparent)]
    Process(#[from] kairos_process::ProcessError),
    /// A BPMN document was refused: every problem with its line and element id.
    #[error("{0}")]
    Deploy(kairos_bpmn::ParseErrors),
    /// A scheduler command failed (see its kind); nothing was written.
    #[error(transparent)]
    Scheduler(#[from] crate::scheduler::SchedulerError),
    /// The engine's configuration cannot work (e.g. an unknown store URL scheme).
    #[error("{0}")]
    Config(String),
}
