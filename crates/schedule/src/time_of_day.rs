//! A wall-clock time of day (Quartz's `TimeOfDay`, and the bounds of a `DailyCalendar`).

use std::fmt;

use jiff::Timestamp;
use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;

use crate::error::ScheduleError;
use crate::zone;

/// A time of day, to the millisecond. Serialized as `"HH:MM:SS"` (`"HH:MM:SS.mmm"` when the
/// milliseconds are not zero); parsed from `H:MM`, `H:MM:SS`, `H:MM:SS.mmm` or Quartz
/// DailyCalendar's `H:MM:SS:mmm`.
///
/// The parts are plain numbers so that a stored value can always be loaded; `validate` on the
/// trigger or calendar refuses an impossible one (`25:00`), naming the field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeOfDay {
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub millisecond: u16,
}

impl TimeOfDay {
    /// 00:00:00, the default start of a daily time interval.
    pub const MIDNIGHT: TimeOfDay = TimeOfDay::new(0, 0, 0);
    /// 23:59:59, the default end of a daily time interval (as in Quartz).
    pub const LAST_SECOND: TimeOfDay = TimeOfDay::new(23, 59, 59);

    /// A time of day in whole seconds.
    pub const fn new(hour: u8, minute: u8, second: u8) -> TimeOfDay {
        TimeOfDay { hour, minute, second, millisecond: 0 }
    }

    /// A time of day to the millisecond.
    pub const fn with_millis(hour: u8, minute: u8, second: u8, millisecond: u16) -> TimeOfDay {
        TimeOfDay { hour, minute, second, millisecond }
    }

    /// Parses `H:MM`, `H:MM:SS`, `H:MM:SS.mmm` or `H:MM:SS:mmm`. Checks the shape only;
    /// ranges are checked by `validate`.
    pub fn parse(text: &str) -> Option<TimeOfDay> {
        let parts: Vec<&str> = text.trim().split(':').collect();
        if !(2..=4).contains(&parts.len()) {
            return None;
        }
        let hour = number(parts[0], 2)?;
        let minute = number(parts[1], 2)?;
        let (second, mut millisecond) = match parts.get(2) {
            None => (0, 0),
            Some(part) => match part.split_once('.') {
                None => (number(part, 2)?, 0),
                Some((second, fraction)) => (number(second, 2)?, fraction_ms(fraction)?),
            },
        };
        if let Some(part) = parts.get(3) {
            if millisecond != 0 || parts[2].contains('.') {
                return None;
            }
            millisecond = number(part, 3)?;
        }
        Some(TimeOfDay {
            hour: u8::try_from(hour).ok()?,
            minute: u8::try_from(minute).ok()?,
            second: u8::try_from(second).ok()?,
            millisecond: u16::try_from(millisecond).ok()?,
        })
    }

    /// Refuses an impossible time of day (hour 24, minute 60, …), naming `field`.
    pub fn check(&self, field: &str) -> Result<(), ScheduleError> {
        if self.hour > 23 || self.minute > 59 || self.second > 59 || self.millisecond > 999 {
            return Err(ScheduleError::out_of_range(field, format!("{self} is not a time of day")));
        }
        Ok(())
    }

    /// As a jiff civil time (`None` when impossible).
    pub fn to_time(&self) -> Option<Time> {
        Time::new(
            i8::try_from(self.hour).ok()?,
            i8::try_from(self.minute).ok()?,
            i8::try_from(self.second).ok()?,
            i32::from(self.millisecond) * 1_000_000,
        )
        .ok()
    }

    /// The instant of this time of day on a local date (gap times move forward, fold times
    /// take their first occurrence).
    pub(crate) fn on(&self, date: Date, tz: &TimeZone) -> Option<Timestamp> {
        zone::instant(tz, date, self.to_time()?)
    }
}

/// Digits only, at most `max_digits` of them.
fn number(text: &str, max_digits: usize) -> Option<u32> {
    if text.is_empty() || text.len() > max_digits || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// A decimal fraction of a second (`5` → 500 ms, `25` → 250 ms, `123` → 123 ms).
fn fraction_ms(text: &str) -> Option<u32> {
    let value = number(text, 3)?;
    Some(value * 10u32.pow(3 - text.len() as u32))
}

impl fmt::Display for TimeOfDay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}:{:02}", self.hour, self.minute, self.second)?;
        if self.millisecond != 0 {
            write!(f, ".{:03}", self.millisecond)?;
        }
        Ok(())
    }
}

impl serde::Serialize for TimeOfDay {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for TimeOfDay {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<TimeOfDay, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(deserializer)?;
        TimeOfDay::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!("invalid time of day '{text}' (expected HH:MM, HH:MM:SS or HH:MM:SS.mmm)"))
        })
    }
}
