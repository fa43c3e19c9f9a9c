//! Date-times: Camunda's `dateTime()` and the Joda-Time methods models call
//! on it (`${dateTime().plusDays(2).toDate()}` in a due date or a timer).
//!
//! A date-time is an instant with millisecond precision, as a Joda `DateTime`
//! is. `dateTime()` reads "now" from [`Context::now`](crate::Context::now),
//! the engine's database clock; this crate never reads the system clock, so
//! an expression is still a pure function of its context.
//!
//! Calendar arithmetic (years, months, weeks, days) is done in UTC. Camunda
//! does it in the JVM's default time zone, so around a daylight-saving change
//! `plusDays(1)` there can be 23 or 25 hours; here a day is always 24 hours
//! and months clamp to their last day as in Joda (31 January plus one month
//! is 28 or 29 February).

use jiff::tz::TimeZone;
use jiff::{Span, Timestamp};

/// The unit a `plus…`/`minus…` method moves by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Years,
    Months,
    Weeks,
    Days,
    Hours,
    Minutes,
    Seconds,
    Millis,
}

/// "Now" as `dateTime()` sees it: the context's clock cut to the millisecond
/// (towards the past), the precision of a Joda `DateTime`.
pub(crate) fn whole_millis(now: Timestamp) -> Timestamp {
    let millis = now.as_nanosecond().div_euclid(1_000_000);
    i64::try_from(millis).ok().and_then(|ms| Timestamp::from_millisecond(ms).ok()).unwrap_or(now)
}

/// `at` moved by `amount` `unit`s, or `None` when the result (or the amount
/// itself) is outside the range of dates kairos can represent (years -9999
/// to 9999).
pub(crate) fn shift(at: Timestamp, unit: Unit, amount: i64) -> Option<Timestamp> {
    let span = match unit {
        Unit::Years => Span::new().try_years(amount),
        Unit::Months => Span::new().try_months(amount),
        Unit::Weeks => Span::new().try_weeks(amount),
        Unit::Days => Span::new().try_days(amount),
        Unit::Hours => Span::new().try_hours(amount),
        Unit::Minutes => Span::new().try_minutes(amount),
        Unit::Seconds => Span::new().try_seconds(amount),
        Unit::Millis => Span::new().try_milliseconds(amount),
    }
    .ok()?;
    at.to_zoned(TimeZone::UTC).checked_add(span).ok().map(|z| z.timestamp())
}

/// RFC 3339 in UTC with milliseconds, as Joda prints a UTC `DateTime`:
/// `2026-01-05T09:00:00.000Z`.
pub(crate) fn format(at: Timestamp) -> String {
    format!("{at:.3}")
}

/// Reads an RFC 3339 date-time with an offset (`2026-01-05T09:00:00Z`,
/// `2026-01-05T10:00:00.5+01:00`); `None` for anything else.
pub(crate) fn parse(text: &str) -> Option<Timestamp> {
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn now_is_cut_to_the_millisecond() {
        assert_eq!(whole_millis(ts("2026-01-05T09:00:00.123999Z")), ts("2026-01-05T09:00:00.123Z"));
        assert_eq!(whole_millis(ts("1969-12-31T23:59:59.9995Z")), ts("1969-12-31T23:59:59.999Z"));
    }

    #[test]
    fn months_clamp_and_days_are_utc() {
        assert_eq!(shift(ts("2024-01-31T12:00:00Z"), Unit::Months, 1), Some(ts("2024-02-29T12:00:00Z")));
        assert_eq!(shift(ts("2024-02-29T12:00:00Z"), Unit::Years, 1), Some(ts("2025-02-28T12:00:00Z")));
        assert_eq!(shift(ts("2026-03-28T12:00:00Z"), Unit::Days, 1), Some(ts("2026-03-29T12:00:00Z")));
        assert_eq!(shift(ts("2026-01-05T09:00:00Z"), Unit::Millis, -1), Some(ts("2026-01-05T08:59:59.999Z")));
    }

    #[test]
    fn out_of_range_is_none() {
        let now = ts("2026-01-05T09:00:00Z");
        assert_eq!(shift(now, Unit::Years, 8000), None);
        assert_eq!(shift(now, Unit::Years, i64::MAX), None);
        assert_eq!(shift(now, Unit::Millis, i64::MIN), None);
        assert_eq!(shift(now, Unit::Days, -5_000_000), None);
    }

    #[test]
    fn formats_with_milliseconds() {
        assert_eq!(format(ts("2026-01-05T09:00:00Z")), "2026-01-05T09:00:00.000Z");
        assert_eq!(format(ts("2026-01-05T10:00:00.25+01:00")), "2026-01-05T09:00:00.250Z");
        assert_eq!(parse("2026-01-05"), None);
        assert_eq!(parse("soon"), None);
    }
}
