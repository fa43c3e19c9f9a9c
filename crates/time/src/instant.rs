//! RFC 3339 instants (`2026-01-01T08:00:00Z`, `2026-01-01T09:00:00+01:00`).
//!
//! An offset is mandatory: a job engine runs on several nodes that may sit in
//! different time zones, so a local time like `2026-01-01T08:00:00` would fire
//! at different instants depending on which node read it. Rejecting it with a
//! clear message is kinder than guessing.

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::Offset;

use crate::error::{Error, Fail, Kind};
use crate::scan::{Cursor, parse_u64, trim_with_offset};

/// Parses an RFC 3339 instant with a UTC offset (`Z` or `±hh:mm`).
///
/// Accepted: `T`, `t` or a space between date and time; seconds may be
/// omitted; up to 9 fractional digits; `±hhmm` offsets; expanded years
/// (`+010000`/`-000001`, six digits) so that every instant this crate prints
/// can be read back. Surrounding whitespace is ignored. A `:60` leap second is
/// read as `:59`, as jiff does, because jiff has no leap seconds.
pub fn parse_instant(s: &str) -> Result<Timestamp, Error> {
    let (lead, trimmed) = trim_with_offset(s);
    parse_piece(trimmed).map_err(|f| f.shift(lead).into_error(Kind::Instant, s))
}

/// Parses an already-trimmed instant; offsets in the error are relative to `s`.
pub(crate) fn parse_piece(s: &str) -> Result<Timestamp, Fail> {
    if s.is_empty() {
        return Err(Fail::new(0, "empty instant (expected e.g. 2026-01-01T08:00:00Z)"));
    }
    let mut c = Cursor::new(s);
    let year_at = c.pos();
    let year = match c.eat_any(b"+-") {
        Some(sign) => {
            let v = c.fixed(6, "year after the sign")? as i32;
            if sign == b'-' { -v } else { v }
        }
        None => c.fixed(4, "year")? as i32,
    };
    c.expect(b'-', "'-' after the year")?;
    let month_at = c.pos();
    let month = c.fixed(2, "month")?;
    c.expect(b'-', "'-' after the month")?;
    let day_at = c.pos();
    let day = c.fixed(2, "day")?;
    if c.at_end() {
        let msg = "missing time and UTC offset (expected e.g. 2026-01-01T08:00:00Z)";
        return Err(Fail::new(c.pos(), msg));
    }
    if c.eat_any(b"T ").is_none() {
        return Err(c.unexpected("'T' between date and time"));
    }
    let hour_at = c.pos();
    let hour = c.fixed(2, "hour")?;
    c.expect(b':', "':' after the hour")?;
    let minute_at = c.pos();
    let minute = c.fixed(2, "minute")?;
    let second_at = c.pos() + 1;
    let second = if c.eat(b':') { c.fixed(2, "second")? } else { 0 };
    let mut nanos = 0;
    if c.eat_any(b".,").is_some() {
        let frac_at = c.pos();
        let frac = c.digits();
        if frac.is_empty() {
            return Err(c.unexpected("digits after the decimal separator"));
        }
        if frac.len() > 9 {
            return Err(Fail::new(frac_at + 9, "at most 9 fractional digits are supported"));
        }
        nanos = parse_u64(&format!("{frac:0<9}")).unwrap_or(0) as i32;
    }
    let offset_at = c.pos();
    let offset_secs = if c.at_end() {
        let msg = "missing UTC offset: add 'Z' or '+hh:mm' (local times are ambiguous)";
        return Err(Fail::new(offset_at, msg));
    } else if c.eat(b'Z') {
        0
    } else if let Some(sign) = c.eat_any(b"+-") {
        let hh_at = c.pos();
        let hh = c.fixed_prefix(2, "offset hours")?;
        c.eat(b':');
        let mm_at = c.pos();
        let mm = c.fixed(2, "offset minutes")?;
        if hh > 23 {
            return Err(Fail::new(hh_at, format!("offset hours {hh:02} out of range 00..=23")));
        }
        if mm > 59 {
            return Err(Fail::new(mm_at, format!("offset minutes {mm:02} out of range 00..=59")));
        }
        let secs = (hh * 3600 + mm * 60) as i32;
        if sign == b'-' { -secs } else { secs }
    } else {
        return Err(c.unexpected("'Z' or a '+hh:mm' UTC offset"));
    };
    if !c.at_end() {
        if c.peek() == Some(b'[') {
            let msg =
                "time zone annotations like [Europe/Paris] are not supported; the offset already fixes the instant";
            return Err(Fail::new(c.pos(), msg));
        }
        return Err(c.unexpected("end of instant"));
    }

    if !(-9999..=9999).contains(&year) {
        return Err(Fail::out_of_range(year_at, format!("year {year} out of range -9999..=9999")));
    }
    if !(1..=12).contains(&month) {
        return Err(Fail::new(month_at, format!("month {month:02} out of range 01..=12")));
    }
    if hour > 23 {
        return Err(Fail::new(hour_at, format!("hour {hour:02} out of range 00..=23")));
    }
    if minute > 59 {
        return Err(Fail::new(minute_at, format!("minute {minute:02} out of range 00..=59")));
    }
    if second > 60 {
        return Err(Fail::new(second_at, format!("second {second:02} out of range 00..=60")));
    }
    let second = second.min(59);
    // All casts below are in range: checked just above.
    let dt = DateTime::new(year as i16, month as i8, day as i8, hour as i8, minute as i8, second as i8, nanos)
        .map_err(|_| Fail::new(day_at, format!("day {day:02} does not exist in {year:04}-{month:02}")))?;
    let offset = Offset::from_seconds(offset_secs).map_err(|_| Fail::new(offset_at, "UTC offset out of range"))?;
    offset
        .to_timestamp(dt)
        .map_err(|_| Fail::out_of_range(0, "instant is outside the supported range (years -9999..=9999)"))
}

/// The years of the instants kairos takes from callers (a job's `dueDate`, a trigger's
/// `startTime` and `endTime`, a cron's `from`, a BPMN `timeDate`): 1970 through 9998, one range
/// for every field. Before 1970 nothing is scheduled (Quartz counts milliseconds from the epoch);
/// a year below jiff's last (9999) is left so that adding a lock time, a retry wait or a period
/// to any accepted instant stays representable on both stores.
pub const ACCEPTED_YEARS: std::ops::RangeInclusive<i16> = 1970..=9998;

/// Refuses an instant outside [`ACCEPTED_YEARS`], with the message every field uses.
pub fn check_accepted_instant(t: Timestamp) -> Result<(), String> {
    let year = t.to_zoned(jiff::tz::TimeZone::UTC).year();
    if ACCEPTED_YEARS.contains(&year) { Ok(()) } else { Err(outside_accepted_years(&t.to_string())) }
}

/// The message for an instant (as written) outside [`ACCEPTED_YEARS`].
pub fn outside_accepted_years(instant: &str) -> String {
    format!(
        "{instant} is outside the instants kairos accepts (years {} through {}, UTC)",
        ACCEPTED_YEARS.start(),
        ACCEPTED_YEARS.end()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_expanded_years() {
        for t in [Timestamp::MIN, Timestamp::MAX, Timestamp::UNIX_EPOCH] {
            assert_eq!(parse_instant(&t.to_string()).unwrap(), t, "{t}");
        }
    }
}
