//! Time zones by IANA name, and the few wall-clock conversions the triggers and calendars need.

use jiff::civil::{Date, DateTime, Time};
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::{SignedDuration, Timestamp};

use crate::error::ScheduleError;

static UTC: TimeZone = TimeZone::UTC;

/// A time zone as stored: its IANA name (`America/New_York`), resolved once.
///
/// A name the time zone database does not know is kept rather than refused, so that a stored
/// row can always be loaded; [`validate`](crate::Trigger::validate) refuses it, naming the
/// field, and computations on it (which a validated trigger never does) use UTC.
/// Serialized as the name alone.
#[derive(Clone, Debug)]
pub struct Zone {
    name: String,
    tz: Option<TimeZone>,
}

impl Zone {
    /// Looks the name up in the time zone database.
    pub fn new(name: impl Into<String>) -> Zone {
        let name = name.into();
        let tz = TimeZone::get(&name).ok();
        Zone { name, tz }
    }

    /// UTC, the zone of a schedule or calendar that names none (Quartz would use the JVM's
    /// default zone; kairos never depends on the host it runs on).
    pub fn utc() -> Zone {
        Zone { name: "UTC".to_string(), tz: Some(TimeZone::UTC) }
    }

    /// The IANA name, as given.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the time zone database knows the name.
    pub fn is_known(&self) -> bool {
        self.tz.is_some()
    }

    /// The resolved zone (UTC for an unknown name).
    pub fn time_zone(&self) -> &TimeZone {
        self.tz.as_ref().unwrap_or(&UTC)
    }

    pub(crate) fn check(&self, field: &str) -> Result<(), ScheduleError> {
        if self.is_known() {
            Ok(())
        } else {
            Err(ScheduleError::UnknownTimeZone { field: field.to_string(), name: self.name.clone() })
        }
    }
}

impl Default for Zone {
    fn default() -> Zone {
        Zone::utc()
    }
}

impl PartialEq for Zone {
    fn eq(&self, other: &Zone) -> bool {
        self.name == other.name
    }
}

impl Eq for Zone {}

impl serde::Serialize for Zone {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name)
    }
}

impl<'de> serde::Deserialize<'de> for Zone {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Zone, D::Error> {
        let name = <String as serde::Deserialize>::deserialize(deserializer)?;
        Ok(Zone::new(name))
    }
}

/// UTC, for places that need a `&'static TimeZone`.
pub(crate) fn utc() -> &'static TimeZone {
    &UTC
}

/// The local date of an instant in a zone.
pub(crate) fn date_of(tz: &TimeZone, t: Timestamp) -> Date {
    tz.to_datetime(t).date()
}

/// The instant of a wall-clock date and time in a zone, resolved as `java.time` and jiff's
/// "compatible" rule do: a time in a DST gap moves forward by the gap (02:30 → 03:30), a time
/// in a fold takes its first occurrence. `None` only past the representable range.
pub(crate) fn instant(tz: &TimeZone, date: Date, time: Time) -> Option<Timestamp> {
    resolve(tz, DateTime::from_parts(date, time)).map(|(t, _)| t)
}

/// Like [`instant`], and also whether the wall time fell in a DST gap (does not exist).
pub(crate) fn resolve(tz: &TimeZone, dt: DateTime) -> Option<(Timestamp, bool)> {
    let ambiguous = tz.to_ambiguous_timestamp(dt);
    let in_gap = matches!(ambiguous.offset(), AmbiguousOffset::Gap { .. });
    ambiguous.compatible().ok().map(|t| (t, in_gap))
}

/// The first instant of a local date (midnight, or the end of a gap at midnight).
pub(crate) fn start_of_day(tz: &TimeZone, date: Date) -> Option<Timestamp> {
    instant(tz, date, Time::midnight())
}

/// `t` moved by `ms` milliseconds, `None` past the representable range.
pub(crate) fn add_ms(t: Timestamp, ms: i64) -> Option<Timestamp> {
    t.checked_add(SignedDuration::from_millis(ms)).ok()
}

/// `t` without its sub-millisecond part: kairos stores instants as epoch milliseconds.
pub(crate) fn to_millis(t: Timestamp) -> Timestamp {
    Timestamp::from_millisecond(t.as_millisecond()).unwrap_or(t)
}

/// `t` without its sub-second part (rounded down), as Quartz's CronTriggerImpl does to start times.
pub(crate) fn to_seconds(t: Timestamp) -> Timestamp {
    let ms = t.as_millisecond();
    Timestamp::from_millisecond(ms - ms.rem_euclid(1000)).unwrap_or(t)
}

/// Milliseconds from `a` to `b` (negative when `b` is earlier).
pub(crate) fn ms_between(a: Timestamp, b: Timestamp) -> i64 {
    b.as_millisecond().saturating_sub(a.as_millisecond())
}

/// About a hundred years after `t`: where Quartz gives up looking for an included fire time
/// (`YEAR_TO_GIVEUP_SCHEDULING_AT`, which Quartz takes from the wall clock; kairos counts from
/// where the search starts).
pub(crate) fn give_up_after(t: Timestamp) -> Timestamp {
    add_ms(t, 100 * 366 * 86_400_000).unwrap_or(Timestamp::MAX)
}
