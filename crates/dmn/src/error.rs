//! The crate's one error type.

/// Why a DMN document was refused or a decision could not be evaluated.
///
/// `Parse` is for the document (a deploy-time problem: fix the model), `Evaluation` for one
/// evaluation (a run-time problem: the variables or the rules' outcome), so a caller can map the
/// first to a 4xx on deployment and the second to an incident or a BPMN error.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DmnError {
    /// The document is not a DMN model kairos can run: bad XML, not DMN, no decision, an
    /// unsupported DMN version, element, expression language or FEEL construct. The message names
    /// the decision (and rule) where there is one; `line` is the XML line where known.
    #[error("DMN model refused{}: {message}", line_suffix(*.line))]
    Parse { line: Option<u32>, message: String },
    /// No decision has this `id` (Camunda's `decisionRef` is the id, not the name).
    #[error("no decision with id '{0}' in this DMN model")]
    UnknownDecision(String),
    /// Evaluating `decision` failed: a hit policy's rule was broken (UNIQUE with several matches,
    /// ANY with different outputs), a value does not fit a clause's `typeRef`, an aggregation met
    /// a non-number, a variable is too deep, or the FEEL evaluator failed internally.
    #[error("decision '{decision}' failed: {message}")]
    Evaluation { decision: String, message: String },
    /// The document is larger than [`crate::MAX_DOCUMENT_BYTES`]; refused before parsing.
    #[error("DMN document of {size} bytes is larger than the limit of {limit} bytes")]
    TooLarge { size: usize, limit: usize },
}

fn line_suffix(line: Option<u32>) -> String {
    line.map(|line| format!(" at line {line}")).unwrap_or_default()
}

impl DmnError {
    pub(crate) fn parse(line: Option<u32>, message: impl Into<String>) -> Self {
        DmnError::Parse { line, message: message.into() }
    }

    pub(crate) fn evaluation(decision: &str, message: impl Into<String>) -> Self {
        DmnError::Evaluation { decision: decision.to_string(), message: message.into() }
    }
}
