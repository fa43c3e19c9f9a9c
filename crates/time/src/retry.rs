//! Retry cycles: BPMN/Activiti `failedJobRetryTimeCycle`.
//!
//! Two forms: `R5/PT10M` (five retries, each ten minutes after the previous
//! failure) and a comma list `PT1M,PT5M,PT10M` (one wait per retry, for
//! back-off). Retries must be bounded: a job that fails forever has to end up
//! in the dead-letter state where a human sees it, so `R/PT10M` is rejected.

use std::fmt;
use std::str::FromStr;

use crate::duration::{self, IsoDuration};
use crate::error::{Error, Fail, Kind, clip};
use crate::scan::{Cursor, parse_u64, split_with_offsets, trim_with_offset};

/// A bounded retry schedule for failed jobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryCycle {
    form: Form,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Form {
    /// `R<n>/<wait>`: the same wait before each of `retries` retries.
    Repeat { retries: u32, wait: IsoDuration },
    /// One wait per retry; never empty.
    List(Vec<IsoDuration>),
}

impl RetryCycle {
    /// Parses `R<n>/<duration>` or a comma-separated list of durations.
    /// `R0/PT1M` is accepted and means "never retry" (the wait is kept so the
    /// value still prints back). Whitespace around commas, `/` and the whole
    /// text is ignored. In the list form `,` separates entries, so fractional
    /// durations must use `.` (`PT0.5S,PT1M`).
    pub fn parse(s: &str) -> Result<Self, Error> {
        let (lead, trimmed) = trim_with_offset(s);
        parse_piece(trimmed).map_err(|f| f.shift(lead).into_error(Kind::Retry, s))
    }

    /// Number of retries after the first attempt (`R5` → 5, a list of 3 → 3);
    /// total attempts are `retries() + 1`.
    pub fn retries(&self) -> u32 {
        match &self.form {
            Form::Repeat { retries, .. } => *retries,
            // parse() caps the list length at u32::MAX entries.
            Form::List(waits) => u32::try_from(waits.len()).unwrap_or(u32::MAX),
        }
    }

    /// Wait before retry number `n`, counted from 1 (`n = 1` is the wait after
    /// the first failure). Past the end of a list the last wait repeats, so a
    /// caller that raised the retry count by hand still gets a sane back-off;
    /// `n = 0` is treated as 1 rather than panicking.
    pub fn wait_before_retry(&self, n: u32) -> &IsoDuration {
        match &self.form {
            Form::Repeat { wait, .. } => wait,
            Form::List(waits) => {
                let i = usize::try_from(n.max(1) - 1).unwrap_or(usize::MAX);
                // Never empty: parse() rejects an empty list.
                &waits[i.min(waits.len() - 1)]
            }
        }
    }
}

fn parse_piece(s: &str) -> Result<RetryCycle, Fail> {
    if s.is_empty() {
        return Err(Fail::new(0, "empty retry cycle (expected e.g. R5/PT10M or PT1M,PT5M)"));
    }
    let wait = |at: usize, piece: &str, what: &str| {
        duration::parse_piece(piece)
            .map_err(|f| Fail::new(f.at, format!("{what} {:?}: {}", clip(piece), f.reason)).shift(at))
    };
    if s.as_bytes()[0].eq_ignore_ascii_case(&b'R') {
        let parts: Vec<(usize, &str)> = split_with_offsets(s, '/').collect();
        let retries = parse_count(parts[0].1)?;
        let Some(&(at, raw)) = parts.get(1) else {
            return Err(Fail::new(s.len(), "missing wait after the retry count (e.g. R5/PT10M)"));
        };
        if let Some(&(extra, _)) = parts.get(2) {
            let msg = "expected R<count>/<duration>: start and end instants are not supported for retries";
            return Err(Fail::new(extra - 1, msg));
        }
        let (lead, piece) = trim_with_offset(raw);
        if piece.is_empty() {
            return Err(Fail::new(at, "missing wait after the retry count (e.g. R5/PT10M)"));
        }
        let wait = wait(at + lead, piece, "wait")?;
        return Ok(RetryCycle { form: Form::Repeat { retries, wait } });
    }
    let mut waits = Vec::new();
    for (i, (at, raw)) in split_with_offsets(s, ',').enumerate() {
        let (lead, piece) = trim_with_offset(raw);
        if piece.is_empty() {
            return Err(Fail::new(at, format!("entry {} of the list is empty", i + 1)));
        }
        waits.push(wait(at + lead, piece, &format!("entry {}", i + 1))?);
    }
    if u32::try_from(waits.len()).is_err() {
        return Err(Fail::new(0, "too many entries in the list"));
    }
    Ok(RetryCycle { form: Form::List(waits) })
}

/// Parses `R<n>`; unbounded `R` is rejected, `R0` is fine.
fn parse_count(head: &str) -> Result<u32, Fail> {
    // The whole text is trimmed already; allow spaces before the first '/'.
    let mut c = Cursor::new(head.trim_end());
    c.eat(b'R');
    let digits = c.digits();
    if !c.at_end() {
        return Err(c.unexpected("a retry count or '/'"));
    }
    if digits.is_empty() {
        let msg = "unbounded retries (R/...) are not allowed: give a count such as R5/PT10M";
        return Err(Fail::new(1, msg));
    }
    parse_u64(digits)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| Fail::new(1, format!("retry count {digits} is too large (at most {})", u32::MAX)))
}

impl FromStr for RetryCycle {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        RetryCycle::parse(s)
    }
}

impl fmt::Display for RetryCycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.form {
            Form::Repeat { retries, wait } => write!(f, "R{retries}/{wait}"),
            Form::List(waits) => {
                for (i, w) in waits.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{w}")?;
                }
                Ok(())
            }
        }
    }
}
