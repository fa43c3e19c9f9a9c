//! The crate's single error type and the internal plumbing that builds it.
//!
//! Parsers deep inside the crate only know *byte offsets* into the text they
//! were handed; users want a *character position* into the text they typed.
//! Keeping the two apart ([`Fail`] internally, [`Error`] publicly) lets a
//! nested parser (a duration inside a cycle inside a retry list) report an
//! offset once and have it translated exactly once, at the public boundary.

/// Longest input text copied into an [`Error`]. Errors are cloned, logged and
/// stored on failed jobs; an attacker-sized input must not make them huge.
const MAX_INPUT_IN_ERROR: usize = 120;

/// Everything that can go wrong in this crate.
///
/// Parse errors carry the offending input and a 1-based character `position`
/// so that an operator reading a log line can find the mistake in a long
/// BPMN attribute without counting bytes. `input` is cut to 120 characters
/// (with a trailing `…`) so that errors stay cheap to clone and store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// An ISO 8601 duration such as `PT5M` was malformed or out of range.
    #[error("invalid ISO 8601 duration {input:?} at position {position}: {reason}")]
    InvalidDuration { input: String, position: usize, reason: String },
    /// A repeating interval (`R3/PT5M`, `R/<start>/P1D/<end>`) was malformed.
    #[error("invalid ISO 8601 repeating interval {input:?} at position {position}: {reason}")]
    InvalidCycle { input: String, position: usize, reason: String },
    /// A failedJobRetryTimeCycle (`R5/PT10M` or `PT1M,PT5M`) was malformed.
    #[error("invalid retry cycle {input:?} at position {position}: {reason}")]
    InvalidRetryCycle { input: String, position: usize, reason: String },
    /// An RFC 3339 instant was malformed, lacked an offset, or was out of range.
    #[error("invalid instant {input:?} at position {position}: {reason}")]
    InvalidInstant { input: String, position: usize, reason: String },
    /// Date arithmetic left the range jiff can represent (years -9999..=9999).
    /// This is an error rather than a silent clamp because a clamped due date
    /// would fire at a wrong, arbitrary instant.
    #[error("date arithmetic overflow: {what}")]
    Overflow { what: String },
}

/// Which grammar failed; decides the [`Error`] variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Duration,
    Cycle,
    Retry,
    Instant,
}

/// An internal parse failure: a byte offset into the text being parsed plus a
/// human reason. Converted to [`Error`] by [`Fail::into_error`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fail {
    pub(crate) at: usize,
    pub(crate) reason: String,
    /// The text is a well-formed instant whose year the date library cannot hold (beyond
    /// ±9999): a caller may refuse it with its own range instead of this reason.
    pub(crate) out_of_range: bool,
}

impl Fail {
    pub(crate) fn new(at: usize, reason: impl Into<String>) -> Self {
        Fail { at, reason: reason.into(), out_of_range: false }
    }

    /// A [`Fail`] for a well-formed instant beyond the date library's years.
    pub(crate) fn out_of_range(at: usize, reason: impl Into<String>) -> Self {
        Fail { out_of_range: true, ..Fail::new(at, reason) }
    }

    /// Moves the offset by `by` bytes: used when a sub-parser ran on a slice
    /// that starts `by` bytes into the enclosing text.
    pub(crate) fn shift(mut self, by: usize) -> Self {
        self.at = self.at.saturating_add(by);
        self
    }

    /// Builds the public error for `input` (the whole text the user passed).
    pub(crate) fn into_error(self, kind: Kind, input: &str) -> Error {
        let position = char_position(input, self.at);
        let input = clip(input);
        let reason = self.reason;
        match kind {
            Kind::Duration => Error::InvalidDuration { input, position, reason },
            Kind::Cycle => Error::InvalidCycle { input, position, reason },
            Kind::Retry => Error::InvalidRetryCycle { input, position, reason },
            Kind::Instant => Error::InvalidInstant { input, position, reason },
        }
    }
}

/// 1-based character position of byte offset `at`. Counts the characters that
/// start before `at`, so it never panics even if `at` is not a char boundary or
/// lies past the end (an "unexpected end of input" points just past the text).
fn char_position(input: &str, at: usize) -> usize {
    input.char_indices().take_while(|(i, _)| *i < at).count() + 1
}

/// Copies at most [`MAX_INPUT_IN_ERROR`] characters of `input`.
pub(crate) fn clip(input: &str) -> String {
    match input.char_indices().nth(MAX_INPUT_IN_ERROR) {
        Some((cut, _)) => format!("{}…", &input[..cut]),
        None => input.to_owned(),
    }
}

/// Describes the character at byte offset `at` for an error message, or
/// "end of input". Shows control characters escaped so messages stay one line.
pub(crate) fn describe_at(s: &str, at: usize) -> String {
    match s.get(at..).and_then(|rest| rest.chars().next()) {
        Some(c) => format!("{c:?}"),
        None => "end of input".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_chars() {
        assert_eq!(char_position("PT5X", 3), 4);
        assert_eq!(char_position("éPT5X", 5), 5);
        assert_eq!(char_position("é", 1), 2); // not a boundary: still no panic
        assert_eq!(char_position("ab", 99), 3);
    }

    #[test]
    fn long_inputs_are_clipped() {
        let long = "x".repeat(500);
        let clipped = clip(&long);
        assert_eq!(clipped.chars().count(), MAX_INPUT_IN_ERROR + 1);
        assert!(clipped.ends_with('…'));
        assert_eq!(clip("short"), "short");
    }

    #[test]
    fn describe_names_the_character() {
        assert_eq!(describe_at("PT5X", 3), "'X'");
        assert_eq!(describe_at("PT5", 3), "end of input");
        assert_eq!(describe_at("a\tb", 1), "'\\t'");
    }
}
