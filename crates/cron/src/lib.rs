//! Quartz 2.3 cron expressions (`0 15 10 ? * MON-FRI`), evaluated on local wall-clock time
//! with a written DST policy. Pure: no I/O, no wall clock; `now` is always an argument.
//!
//! The dialect, every deliberate divergence from Quartz 2.3.2 and the DST policy are in
//! `docs/cron.md`; `tests/quartz_diff.rs` compares this crate with the real Quartz.
//!
//! ```
//! use kairos_cron::{CronExpr, TimeZone, Timestamp};
//! let cron: CronExpr = "0 15 10 ? * MON-FRI".parse()?;
//! let from: Timestamp = "2024-06-01T00:00:00Z".parse()?; // a Saturday
//! let next = cron.next_after(from, &TimeZone::UTC);
//! assert_eq!(next, Some("2024-06-03T10:15:00Z".parse()?));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod parse;
mod schedule;
mod zone;

pub use jiff::{Timestamp, tz::TimeZone};

use schedule::Schedule;

/// The last year an expression can fire in (Quartz: the current year + 100; kairos: 2099).
/// Past it no expression matches, so a cron calendar excludes nothing there.
pub const LAST_YEAR: i16 = schedule::MAX_YEAR;

/// A parsed Quartz cron expression (6 or 7 fields: sec min hour dom month dow [year]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CronExpr {
    text: String,
    schedule: Schedule,
}

impl CronExpr {
    /// Parses a Quartz cron expression (6 or 7 fields: sec min hour dom month dow [year]).
    ///
    /// Errors name the field and the 1-based character position (in `text`) of the
    /// offending token; no input panics.
    pub fn parse(text: &str) -> Result<CronExpr, CronError> {
        let schedule = parse::parse(text)?;
        Ok(CronExpr { text: text.trim().to_string(), schedule })
    }

    /// The text as given (trimmed).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Quartz getTimeAfter: the first fire time strictly after `after` (whole seconds; the
    /// sub-second part of `after` is ignored the way Quartz ignores milliseconds), None if
    /// none (past 2099). Local times are read in `tz` with kairos's DST policy.
    pub fn next_after(&self, after: Timestamp, tz: &TimeZone) -> Option<Timestamp> {
        zone::next_after(&self.schedule, after, tz)
    }

    /// Quartz isSatisfiedBy: whether the whole second containing `t` is a fire time.
    pub fn is_satisfied_by(&self, t: Timestamp, tz: &TimeZone) -> bool {
        zone::is_satisfied_by(&self.schedule, t, tz)
    }

    /// Quartz getNextInvalidTimeAfter: the first whole second after `after` that is NOT a
    /// fire time (used by CronCalendar). Unlike Quartz it jumps over runs of fire times
    /// instead of stepping through them, so `* * * * * ?` answers at once (the first second
    /// of 2100).
    pub fn next_invalid_after(&self, after: Timestamp, tz: &TimeZone) -> Option<Timestamp> {
        zone::next_invalid_after(&self.schedule, after, tz)
    }
}

impl std::str::FromStr for CronExpr {
    type Err = CronError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CronExpr::parse(s)
    }
}

impl std::fmt::Display for CronExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for CronExpr {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for CronExpr {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        CronExpr::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Why a cron expression was refused: the field, the 1-based character position of the
/// offending token, and what was wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field} field, position {position}: {message}")]
pub struct CronError {
    pub field: Field,
    /// 1-based character position in the text.
    pub position: usize,
    pub message: String,
}

/// The field of a cron expression an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Second,
    Minute,
    Hour,
    DayOfMonth,
    Month,
    DayOfWeek,
    Year,
    /// The expression as a whole (e.g. the wrong number of fields).
    Expression,
}

impl std::fmt::Display for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Field::Second => "second",
            Field::Minute => "minute",
            Field::Hour => "hour",
            Field::DayOfMonth => "day-of-month",
            Field::Month => "month",
            Field::DayOfWeek => "day-of-week",
            Field::Year => "year",
            Field::Expression => "expression",
        })
    }
}

/// Whether a timer text or REPEAT_ is a cron expression rather than an ISO 8601 cycle: 5–7
/// space-separated fields and not starting with `R` or `P`. Five fields are accepted here so
/// that a classic (seconds-less) cron gets this parser's error, which says what is missing,
/// instead of an ISO 8601 one. Used by the BPMN parser, the process runtime and the job core.
pub fn looks_like_cron(text: &str) -> bool {
    let text = text.trim();
    (5..=7).contains(&text.split_whitespace().count()) && !text.starts_with(['R', 'P'])
}

#[cfg(test)]
mod tests {
    use super::looks_like_cron;

    #[test]
    fn crons_are_told_from_iso_8601_cycles() {
        assert!(looks_like_cron("0 0/5 * * * ?"));
        assert!(looks_like_cron("0 0 12 * * ? 2030"));
        assert!(looks_like_cron("*/5 * * * *"), "five fields: the cron parser explains what is missing");
        assert!(!looks_like_cron("R3/PT5M"));
        assert!(!looks_like_cron("PT5M"));
        assert!(!looks_like_cron("0 0 12"));
    }
}
