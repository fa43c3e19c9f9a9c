//! Helpers shared by the tests: instants written the way Quartz's tests write them.
#![allow(dead_code)]

use kairos_schedule::{JobKey, Schedule, Timestamp, Trigger, TriggerKey};

/// An instant from RFC 3339 text.
pub fn ts(text: &str) -> Timestamp {
    text.parse().unwrap_or_else(|e| panic!("bad instant {text}: {e}"))
}

/// A wall-clock time in a zone (gap times move forward, fold times take the first occurrence).
pub fn local(zone: &str, year: i16, month: i8, day: i8, hour: i8, minute: i8, second: i8) -> Timestamp {
    jiff::civil::date(year, month, day).at(hour, minute, second, 0).in_tz(zone).unwrap().timestamp()
}

/// Quartz's `DateBuilder.dateOf(hour, minute, second, day, month, year)`, in UTC (Quartz's
/// tests run in the JVM's default zone).
pub fn date_of(hour: i8, minute: i8, second: i8, day: i8, month: i8, year: i16) -> Timestamp {
    local("UTC", year, month, day, hour, minute, second)
}

/// A trigger with the given start and schedule, and Quartz's defaults for everything else.
pub fn trigger(start: Timestamp, schedule: Schedule) -> Trigger {
    Trigger::new(TriggerKey::new("trigger", "DEFAULT"), JobKey::new("job", "DEFAULT"), start, schedule)
}

/// The wall-clock hour of an instant in a zone.
pub fn hour_in(zone: &str, t: Timestamp) -> i8 {
    t.in_tz(zone).unwrap().hour()
}
