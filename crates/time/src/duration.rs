//! ISO 8601 durations (`PT48H`, `P1D`, `PT0.5S`, `P1Y2M10DT2H30M`).
//!
//! The parser is hand-written rather than delegated to jiff because timer
//! definitions come from BPMN files typed by people: a rejected `PT5X` must say
//! *which* character is wrong, and jiff's parser neither reports positions nor
//! rejects zero/negative spans (a zero-period timer cycle would spin forever).

use std::fmt;
use std::str::FromStr;

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Span, Timestamp};

use crate::error::{Error, Fail, Kind, describe_at};
use crate::scan::{Cursor, parse_u64, trim_with_offset};

const NANOS_PER_SEC: i128 = 1_000_000_000;

/// A strictly positive ISO 8601 duration (or zero, when made by
/// [`parse_delay`](IsoDuration::parse_delay)).
///
/// Calendar units (years, months, weeks, days) are applied to the UTC civil
/// date, so `P1D` is always 24 hours and `P1M` from January 31st lands on the
/// last day of February. UTC is used because the engine has no business
/// guessing a server's local time zone: a job scheduled on one node must fire
/// at the same instant when picked up by another.
///
/// Equality compares the canonical text (`pt5m` and `PT5M` are equal, `PT60M`
/// and `PT1H` are not) because the stored text is what the engine persists.
#[derive(Debug, Clone)]
pub struct IsoDuration {
    span: Span,
    text: String,
    /// Years, months, weeks, days: the part whose length depends on the date.
    calendar: [i64; 4],
    /// Hours, minutes, seconds and fractions as an exact nanosecond count.
    /// Kept separately so cycle arithmetic can multiply it without hitting
    /// jiff's per-field span limits.
    time_nanos: i128,
}

impl IsoDuration {
    /// Parses an ISO 8601 duration. Surrounding whitespace is ignored; letters
    /// may be lower case and `,` may be the decimal separator (both are
    /// normalised in [`as_str`](Self::as_str)). A fraction is allowed only on
    /// the last component, and only on hours, minutes or seconds.
    pub fn parse(s: &str) -> Result<Self, Error> {
        let (lead, trimmed) = trim_with_offset(s);
        parse_piece(trimmed).map_err(|f| f.shift(lead).into_error(Kind::Duration, s))
    }

    /// Parses a one-shot delay (a BPMN `timeDuration`): as [`parse`](Self::parse), but zero
    /// (`PT0S`, `P0D`) is allowed and means "now", as in Flowable and Camunda. Only where the
    /// duration is waited once: a zero period in a cycle or a retry would spin.
    pub fn parse_delay(s: &str) -> Result<Self, Error> {
        let (lead, trimmed) = trim_with_offset(s);
        parse_span(trimmed).map_err(|f| f.shift(lead).into_error(Kind::Duration, s))
    }

    /// True for a zero delay (only [`parse_delay`](Self::parse_delay) makes one).
    pub fn is_zero(&self) -> bool {
        self.span.is_zero()
    }

    /// `t` plus this duration, computed in UTC. Errors when the result leaves
    /// the range jiff can represent.
    pub fn add_to(&self, t: Timestamp) -> Result<Timestamp, Error> {
        self.add_times(t, 1)
            .ok_or_else(|| Error::Overflow { what: format!("{t} + {self} is outside the supported range") })
    }

    /// The exact length for durations without calendar units (Y/M/W/D). With
    /// calendar units the length depends on the date (`P1M` is 28 to 31 days),
    /// so it is the length when added at `at`.
    pub fn to_signed_duration_at(&self, at: Timestamp) -> Result<SignedDuration, Error> {
        if self.has_calendar_units() {
            Ok(self.add_to(at)?.duration_since(at))
        } else {
            let secs = self.time_nanos / NANOS_PER_SEC;
            let nanos = self.time_nanos % NANOS_PER_SEC;
            // Field limits bound the total far below i64::MAX seconds.
            let secs = i64::try_from(secs)
                .map_err(|_| Error::Overflow { what: format!("{self} does not fit a signed duration") })?;
            Ok(SignedDuration::new(secs, nanos as i32))
        }
    }

    /// The canonical text: trimmed, upper case, `.` as decimal separator.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The duration as a jiff [`Span`], for callers that want jiff arithmetic.
    pub fn span(&self) -> Span {
        self.span
    }

    /// Whether the length depends on the date it is added to (Y, M, W or D).
    pub fn has_calendar_units(&self) -> bool {
        self.calendar.iter().any(|&v| v != 0)
    }

    /// The length in nanoseconds when it does not depend on the date.
    pub(crate) fn fixed_nanos(&self) -> Option<i128> {
        (!self.has_calendar_units()).then_some(self.time_nanos)
    }

    /// `t + k × self`, or `None` on overflow. Multiplying the duration (rather
    /// than adding it `k` times) keeps month-based schedules anchored: the
    /// 3rd monthly step from January 31st is April 30th, not April 28th.
    pub(crate) fn add_times(&self, t: Timestamp, k: i64) -> Option<Timestamp> {
        let mut t = t;
        if self.has_calendar_units() {
            let [y, mo, w, d] = self.calendar.map(|v| v.checked_mul(k));
            let span = Span::new().try_years(y?).ok()?.try_months(mo?).ok()?.try_weeks(w?).ok()?.try_days(d?).ok()?;
            t = t.to_zoned(TimeZone::UTC).checked_add(span).ok()?.timestamp();
        }
        let offset = self.time_nanos.checked_mul(i128::from(k))?;
        Timestamp::from_nanosecond(t.as_nanosecond().checked_add(offset)?).ok()
    }
}

/// Parses an already-trimmed, strictly positive duration; offsets in the error are relative
/// to `s`.
pub(crate) fn parse_piece(s: &str) -> Result<IsoDuration, Fail> {
    let d = parse_span(s)?;
    if d.is_zero() {
        return Err(Fail::new(0, "zero-length durations are not allowed"));
    }
    Ok(d)
}

/// Parses an already-trimmed duration, zero included.
fn parse_span(s: &str) -> Result<IsoDuration, Fail> {
    if s.is_empty() {
        return Err(Fail::new(0, "empty duration (expected e.g. PT5M or P1D)"));
    }
    let mut c = Cursor::new(s);
    if c.peek() == Some(b'-') {
        return Err(Fail::new(0, "negative durations are not allowed"));
    }
    if !c.eat(b'P') {
        return Err(c.unexpected("'P' to start the duration"));
    }
    let mut span = Span::new();
    let mut calendar = [0i64; 4];
    let mut time_nanos: i128 = 0;
    let mut in_time = false;
    let mut next_unit = 0usize; // index into "YMWDHMS": enforces order, no repeats
    let mut components = 0;
    let mut fraction_seen = false;

    while !c.at_end() {
        if c.eat(b'T') {
            if in_time {
                return Err(Fail::new(c.pos() - 1, "'T' may appear only once"));
            }
            in_time = true;
            next_unit = 4;
            continue;
        }
        let start = c.pos();
        if fraction_seen {
            return Err(Fail::new(start, "only the last component may have a fraction"));
        }
        let digits = c.digits();
        if digits.is_empty() {
            let want = if in_time { "a number" } else { "a number or 'T'" };
            return Err(c.unexpected(want));
        }
        let mut frac_nanos: Option<i128> = None;
        let sep = c.pos();
        if c.eat_any(b".,").is_some() {
            let frac = c.digits();
            if frac.is_empty() {
                return Err(c.unexpected("digits after the decimal separator"));
            }
            if frac.len() > 9 {
                return Err(Fail::new(sep + 10, "at most 9 fractional digits are supported"));
            }
            let padded = format!("{frac:0<9}");
            frac_nanos = parse_u64(&padded).map(i128::from);
            fraction_seen = true;
        }
        let unit_at = c.pos();
        let Some(unit) = c.eat_any(b"YMWDHS") else {
            if c.at_end() {
                return Err(Fail::new(unit_at, format!("missing unit after number {digits}")));
            }
            return Err(Fail::new(unit_at, format!("unknown unit {}", describe_at(s, unit_at))));
        };
        let unit_char = unit as char;
        let index = match (in_time, unit) {
            (false, b'Y') => 0,
            (false, b'M') => 1,
            (false, b'W') => 2,
            (false, b'D') => 3,
            (true, b'H') => 4,
            (true, b'M') => 5,
            (true, b'S') => 6,
            (true, _) => {
                let msg = format!("unit '{unit_char}' belongs to the date part, before 'T'");
                return Err(Fail::new(unit_at, msg));
            }
            (false, _) => {
                let msg = format!("unit '{unit_char}' needs a 'T' before it (e.g. PT1{unit_char})");
                return Err(Fail::new(unit_at, msg));
            }
        };
        if index < next_unit {
            let msg =
                format!("unit '{unit_char}' is repeated or out of order (expected Y, M, W, D, then T and H, M, S)");
            return Err(Fail::new(unit_at, msg));
        }
        next_unit = index + 1;
        if frac_nanos.is_some() && index < 4 {
            return Err(Fail::new(sep, "fractions are only allowed on hours, minutes or seconds"));
        }
        let too_big = || Fail::new(start, format!("{digits}{unit_char} is out of range"));
        let value = parse_u64(digits).and_then(|v| i64::try_from(v).ok()).ok_or_else(too_big)?;
        let unit_secs: i128 = match index {
            4 => 3600,
            5 => 60,
            _ => 1,
        };
        span = match index {
            0 => span.try_years(value),
            1 => span.try_months(value),
            2 => span.try_weeks(value),
            3 => span.try_days(value),
            4 => span.try_hours(value),
            5 => span.try_minutes(value),
            _ => span.try_seconds(value),
        }
        .map_err(|_| too_big())?;
        if index < 4 {
            calendar[index] = value;
        } else {
            time_nanos += i128::from(value) * unit_secs * NANOS_PER_SEC;
        }
        if let Some(frac) = frac_nanos {
            let extra = frac * unit_secs; // < 3.6e12: fits the nanosecond field
            span = span.try_nanoseconds(extra as i64).map_err(|_| too_big())?;
            time_nanos += extra;
        }
        components += 1;
    }
    if components == 0 {
        let want = if in_time { "a number after 'T'" } else { "at least one component (e.g. PT5M or P1D)" };
        return Err(c.unexpected(want));
    }
    if in_time && next_unit == 4 {
        return Err(c.unexpected("a number after 'T'"));
    }
    let text = s.to_ascii_uppercase().replace(',', ".");
    Ok(IsoDuration { span, text, calendar, time_nanos })
}

impl PartialEq for IsoDuration {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for IsoDuration {}

impl std::hash::Hash for IsoDuration {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.text.hash(state);
    }
}

impl FromStr for IsoDuration {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        IsoDuration::parse(s)
    }
}

impl fmt::Display for IsoDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}
