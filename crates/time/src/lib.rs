//! Time vocabulary for kairos timers: ISO 8601 durations, repeating timer
//! cycles and failed-job retry cycles.
//!
//! The crate is deliberately pure: it never reads the wall clock and performs
//! no I/O. Every function that needs "now" takes it as an argument, because a
//! job engine must be testable at arbitrary instants (a leap day, an outage of
//! three days) and because cluster nodes must agree on due dates computed from
//! the same stored data, whatever their local clocks or time zones say.
//!
//! All calendar arithmetic is done in UTC; all instants are [`Timestamp`]s.
//! Parsers never panic and report errors with the offending text and a
//! 1-based character position (see [`Error`]).
//!
//! ```
//! use kairos_time::{IsoDuration, RepeatCycle, RetryCycle, parse_instant};
//!
//! let now = parse_instant("2026-01-01T08:00:00Z").unwrap();
//! let cycle = RepeatCycle::parse("R3/PT5M").unwrap();
//! let due = cycle.first_due(now).unwrap().unwrap();
//! assert_eq!(due.to_string(), "2026-01-01T08:05:00Z");
//!
//! let (rest, next) = cycle.next_after_fire(due, due).unwrap().unwrap();
//! assert_eq!(rest.to_string(), "R2/PT5M");
//! assert_eq!(next.to_string(), "2026-01-01T08:10:00Z");
//!
//! let retry = RetryCycle::parse("PT1M, PT5M").unwrap();
//! assert_eq!(retry.retries(), 2);
//! assert_eq!(retry.wait_before_retry(9), &IsoDuration::parse("PT5M").unwrap());
//! ```

mod cycle;
mod duration;
mod error;
mod instant;
mod retry;
mod scan;

pub use cycle::RepeatCycle;
pub use duration::IsoDuration;
pub use error::Error;
pub use instant::{ACCEPTED_YEARS, check_accepted_instant, outside_accepted_years, parse_instant};
pub use jiff::{SignedDuration, Span, Timestamp};
pub use retry::RetryCycle;
