//! Errors to exit codes: 0 ok, 1 runtime failure, 2 bad input, 3 doctor findings.
//!
//! Every failure ends as one line on stderr (`error: ...`). Bad input — anything the user can
//! fix by changing the command — is 2, as clap's usage errors are; a store that cannot be
//! reached is 1, so that a script can tell "retry later" from "fix the command".

use kairos_store::ErrorKind;

pub const SUCCESS: u8 = 0;
pub const FAILURE: u8 = 1;
pub const BAD_INPUT: u8 = 2;
pub const FINDINGS: u8 = 3;

/// A command's failure: its exit code and the one line to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    pub code: u8,
    pub message: String,
}

impl CliError {
    pub fn bad_input(message: impl Into<String>) -> Self {
        CliError { code: BAD_INPUT, message: message.into() }
    }
    pub fn failure(message: impl Into<String>) -> Self {
        CliError { code: FAILURE, message: message.into() }
    }

    /// The line written to stderr: `error: ` and the message on one line.
    pub fn line(&self) -> String {
        format!("error: {}", one_line(&self.message))
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<kairos::Error> for CliError {
    fn from(e: kairos::Error) -> Self {
        match e {
            kairos::Error::Invalid(e) => CliError::bad_input(e.to_string()),
            kairos::Error::Config(m) => CliError::bad_input(m),
            kairos::Error::Store(e) => e.into(),
            kairos::Error::Deploy(e) => CliError::bad_input(format!("the BPMN document was refused: {e}")),
            kairos::Error::Process(p) => match p.kind {
                kairos_process::ErrorKind::Invalid
                | kairos_process::ErrorKind::NotFound
                | kairos_process::ErrorKind::Conflict => CliError::bad_input(p.message),
                _ => CliError::failure(p.message),
            },
            // Invalid, not found, conflict: all the command's input.
            kairos::Error::Scheduler(e) => CliError::bad_input(e.to_string()),
        }
    }
}

impl From<kairos_store::Error> for CliError {
    fn from(e: kairos_store::Error) -> Self {
        match e.kind {
            // The id named does not exist, the value cannot be stored, or the row's state
            // refuses the request (e.g. a lock a live node holds): the command must change.
            ErrorKind::NotFound | ErrorKind::Invalid | ErrorKind::Conflict => CliError::bad_input(e.message),
            ErrorKind::Unavailable => CliError::failure(format!("store unavailable: {}", with_sources(&e))),
            // A stored row that cannot be read: the command was fine, the row is not.
            ErrorKind::Unreadable => CliError::failure(e.message),
            ErrorKind::Other => CliError::failure(with_sources(&e)),
        }
    }
}

/// The message followed by its causes, for failures where the cause is what an operator needs
/// ("connection refused").
fn with_sources(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let text = c.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cur = c.source();
    }
    out
}

/// Collapses a possibly multi-line message to one line.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Turns a clap error into one line: clap's first paragraph, joined, with a pointer to --help.
pub fn clap_line(rendered: &str) -> String {
    let first_paragraph: Vec<&str> = rendered.trim().lines().take_while(|l| !l.trim().is_empty()).collect();
    let mut line = one_line(&first_paragraph.join(" "));
    if !line.starts_with("error:") {
        line = format!("error: {line}");
    }
    if !line.contains("--help") {
        line.push_str(" (see --help)");
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_errors_map_to_exit_codes() {
        let nf: CliError = kairos_store::Error::not_found("job", "x").into();
        assert_eq!((nf.code, nf.message.as_str()), (BAD_INPUT, "job x does not exist"));
        let down: CliError = kairos_store::Error::new(ErrorKind::Unavailable, "cannot connect").into();
        assert_eq!(down.code, FAILURE);
        assert_eq!(down.line(), "error: store unavailable: cannot connect");
    }

    #[test]
    fn clap_errors_become_one_line() {
        let rendered = "error: the following required arguments were not provided:\n  --handler <H>\n\nUsage: kairos jobs enqueue --handler <H>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_line(rendered),
            "error: the following required arguments were not provided: --handler <H> (see --help)"
        );
    }

    #[test]
    fn messages_are_one_line() {
        assert_eq!(CliError::failure("a\nb\n  c").line(), "error: a b c");
    }
}
