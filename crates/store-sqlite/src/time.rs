//! Instants as SQLite stores them: UTC text `YYYY-MM-DD HH:MM:SS.SSS`.
//!
//! That is exactly what `strftime('%Y-%m-%d %H:%M:%f','now')` produces, so text comparison is
//! time comparison and SQL can compare a column with the database clock or a bound instant
//! without conversion. Every instant written by this crate goes through [`to_text`], which
//! rounds to the millisecond (Activiti's precision, and PostgreSQL's `TIMESTAMP(3)` rounding),
//! so both backends store the same value for the same input.

use jiff::civil::DateTime;
use jiff::tz::Offset;
use jiff::{Timestamp, Unit};
use kairos_store::{Error, ErrorKind, Result};
use std::fmt::Write as _;

/// Rounds to the millisecond, the precision of every stored instant.
pub(crate) fn round_ms(t: Timestamp) -> Result<Timestamp> {
    t.round(Unit::Millisecond).map_err(|e| Error::new(ErrorKind::Invalid, format!("instant {t} cannot be stored: {e}")))
}

/// The stored text of an instant, rounded to the millisecond.
///
/// Years outside 0000..=9999 would break the text ordering, so they are refused.
pub(crate) fn to_text(t: Timestamp) -> Result<String> {
    let dt = Offset::UTC.to_datetime(round_ms(t)?);
    if !(0..=9999).contains(&dt.year()) {
        return Err(Error::new(
            ErrorKind::Invalid,
            format!("instant {t} is outside the years 0000-9999 that can be stored"),
        ));
    }
    let mut s = String::with_capacity(23);
    let _ = write!(
        s,
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}",
        dt.year(),
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second(),
        dt.subsec_nanosecond() / 1_000_000
    );
    Ok(s)
}

/// The stored text of an optional instant.
pub(crate) fn opt_to_text(t: Option<Timestamp>) -> Result<Option<String>> {
    t.map(to_text).transpose()
}

/// Reads a stored instant. The fast path reads the canonical format; anything else an operator
/// may have written by hand (`2026-01-01T08:00:00Z`, `2026-01-01 08:00:00`) is read as UTC.
pub(crate) fn from_text(s: &str) -> Result<Timestamp> {
    if let Some(t) = parse_canonical(s.as_bytes()) {
        return Ok(t);
    }
    if let Ok(t) = s.parse::<Timestamp>() {
        return Ok(t);
    }
    s.parse::<DateTime>()
        .ok()
        .and_then(|dt| Offset::UTC.to_timestamp(dt).ok())
        .ok_or_else(|| Error::new(ErrorKind::Other, format!("stored instant {s:?} cannot be read")))
}

fn parse_canonical(b: &[u8]) -> Option<Timestamp> {
    if b.len() != 23 || b[4] != b'-' || b[7] != b'-' || b[10] != b' ' || b[13] != b':' || b[16] != b':' || b[19] != b'.'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i32> {
        b[r].iter().try_fold(0i32, |acc, c| c.is_ascii_digit().then(|| acc * 10 + i32::from(c - b'0')))
    };
    let dt = DateTime::new(
        i16::try_from(num(0..4)?).ok()?,
        i8::try_from(num(5..7)?).ok()?,
        i8::try_from(num(8..10)?).ok()?,
        i8::try_from(num(11..13)?).ok()?,
        i8::try_from(num(14..16)?).ok()?,
        i8::try_from(num(17..19)?).ok()?,
        num(20..23)? * 1_000_000,
    )
    .ok()?;
    Offset::UTC.to_timestamp(dt).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips_and_rounds_to_the_millisecond() {
        let t: Timestamp = "2026-03-04T05:06:07.123456789Z".parse().unwrap();
        let s = to_text(t).unwrap();
        assert_eq!(s, "2026-03-04 05:06:07.123");
        assert_eq!(from_text(&s).unwrap(), "2026-03-04T05:06:07.123Z".parse::<Timestamp>().unwrap());
        let up: Timestamp = "2026-03-04T05:06:07.9996Z".parse().unwrap();
        assert_eq!(to_text(up).unwrap(), "2026-03-04 05:06:08.000");
    }

    #[test]
    fn hand_written_instants_are_read_as_utc() {
        let want: Timestamp = "2026-01-01T08:00:00Z".parse().unwrap();
        assert_eq!(from_text("2026-01-01T08:00:00Z").unwrap(), want);
        assert_eq!(from_text("2026-01-01 08:00:00").unwrap(), want);
        assert!(from_text("yesterday").is_err());
    }

    #[test]
    fn text_order_is_time_order() {
        let a = to_text("2026-01-01T00:00:00.999Z".parse().unwrap()).unwrap();
        let b = to_text("2026-01-01T00:00:01Z".parse().unwrap()).unwrap();
        assert!(a < b);
    }
}
