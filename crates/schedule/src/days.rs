//! Sets of days: days of the week (daily time intervals, weekly calendars) and days of the year
//! (annual calendars).

use std::fmt;

use jiff::civil::Weekday;

use crate::error::ScheduleError;

/// A set of days of the week.
///
/// Serialized as a list of lowercase English names (`["monday", "friday"]`); read from names,
/// three-letter abbreviations in any case (`"MON"`) or Quartz's numbers (1 = Sunday … 7 = Saturday,
/// as in `java.util.Calendar` and `QRTZ_SIMPROP_TRIGGERS.STR_PROP_2`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DaysOfWeek(u8);

const ORDER: [Weekday; 7] = [
    Weekday::Monday,
    Weekday::Tuesday,
    Weekday::Wednesday,
    Weekday::Thursday,
    Weekday::Friday,
    Weekday::Saturday,
    Weekday::Sunday,
];

impl DaysOfWeek {
    /// No day.
    pub const NONE: DaysOfWeek = DaysOfWeek(0);
    /// Every day (Quartz's `ALL_DAYS_OF_THE_WEEK`, the default of a daily time interval).
    pub const ALL: DaysOfWeek = DaysOfWeek(0b111_1111);
    /// Monday to Friday (Quartz's `MONDAY_THROUGH_FRIDAY`).
    pub const MONDAY_THROUGH_FRIDAY: DaysOfWeek = DaysOfWeek(0b011_1110);
    /// Saturday and Sunday (Quartz's `SATURDAY_AND_SUNDAY`, and what a weekly calendar
    /// excludes by default).
    pub const SATURDAY_AND_SUNDAY: DaysOfWeek = DaysOfWeek(0b100_0001);

    /// The set of the given days.
    pub fn of(days: &[Weekday]) -> DaysOfWeek {
        days.iter().fold(DaysOfWeek::NONE, |set, day| set.with(*day))
    }

    /// This set and `day`.
    pub fn with(self, day: Weekday) -> DaysOfWeek {
        DaysOfWeek(self.0 | bit(day))
    }

    /// Whether `day` is in the set.
    pub fn contains(self, day: Weekday) -> bool {
        self.0 & bit(day) != 0
    }

    /// Whether the set has no day.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the set has all seven days.
    pub fn is_all(self) -> bool {
        self.0 == DaysOfWeek::ALL.0
    }

    /// The days, Monday first.
    pub fn iter(self) -> impl Iterator<Item = Weekday> {
        ORDER.into_iter().filter(move |day| self.contains(*day))
    }

    /// Quartz's numbers of the days (1 = Sunday … 7 = Saturday), ascending.
    pub fn quartz_numbers(self) -> Vec<i8> {
        let mut numbers: Vec<i8> = self.iter().map(|d| d.to_sunday_one_offset()).collect();
        numbers.sort_unstable();
        numbers
    }

    /// The set of Quartz's day numbers (1 = Sunday … 7 = Saturday); `None` for any other number.
    pub fn from_quartz_numbers(numbers: &[i64]) -> Option<DaysOfWeek> {
        numbers.iter().try_fold(DaysOfWeek::NONE, |set, n| {
            let day = Weekday::from_sunday_one_offset(i8::try_from(*n).ok()?).ok()?;
            Some(set.with(day))
        })
    }

    pub(crate) fn check_not_empty(self, field: &str) -> Result<(), ScheduleError> {
        if self.is_empty() {
            return Err(ScheduleError::Empty { field: field.to_string() });
        }
        Ok(())
    }
}

/// Sunday is bit 0, Saturday bit 6 (Quartz's numbering minus one).
fn bit(day: Weekday) -> u8 {
    1 << (day.to_sunday_one_offset() - 1)
}

fn name(day: Weekday) -> &'static str {
    match day {
        Weekday::Monday => "monday",
        Weekday::Tuesday => "tuesday",
        Weekday::Wednesday => "wednesday",
        Weekday::Thursday => "thursday",
        Weekday::Friday => "friday",
        Weekday::Saturday => "saturday",
        Weekday::Sunday => "sunday",
    }
}

fn parse_day(text: &str) -> Option<Weekday> {
    let lower = text.trim().to_ascii_lowercase();
    ORDER.into_iter().find(|day| lower == name(*day) || (lower.len() == 3 && name(*day).starts_with(&lower)))
}

impl fmt::Debug for DaysOfWeek {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter().map(name)).finish()
    }
}

impl serde::Serialize for DaysOfWeek {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter().map(name))
    }
}

/// One element of a serialized day list: a name or a Quartz number.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum DayItem {
    Number(i64),
    Name(String),
}

impl<'de> serde::Deserialize<'de> for DaysOfWeek {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<DaysOfWeek, D::Error> {
        let items = <Vec<DayItem> as serde::Deserialize>::deserialize(deserializer)?;
        items.into_iter().try_fold(DaysOfWeek::NONE, |set, item| {
            let day = match &item {
                DayItem::Number(n) => i8::try_from(*n).ok().and_then(|n| Weekday::from_sunday_one_offset(n).ok()),
                DayItem::Name(text) => parse_day(text),
            };
            day.map(|day| set.with(day)).ok_or_else(|| {
                let shown = match item {
                    DayItem::Number(n) => n.to_string(),
                    DayItem::Name(text) => text,
                };
                serde::de::Error::custom(format!(
                    "invalid day of week '{shown}' (expected a name like \"monday\" or 1 = Sunday … 7 = Saturday)"
                ))
            })
        })
    }
}

/// A day of any year (an annual calendar's excluded day). Serialized as `"MM-DD"`; also read
/// from ISO 8601's `"--MM-DD"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MonthDay {
    pub month: u8,
    pub day: u8,
}

impl MonthDay {
    pub const fn new(month: u8, day: u8) -> MonthDay {
        MonthDay { month, day }
    }

    /// Parses `MM-DD` or `--MM-DD`; checks the shape only.
    pub fn parse(text: &str) -> Option<MonthDay> {
        let text = text.trim();
        let text = text.strip_prefix("--").unwrap_or(text);
        let (month, day) = text.split_once('-')?;
        let digits = |s: &str| {
            (!s.is_empty() && s.len() <= 2 && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<u8>().ok())
                .flatten()
        };
        Some(MonthDay::new(digits(month)?, digits(day)?))
    }

    /// Refuses a day that no year has (`02-30`, `13-01`); `02-29` is allowed.
    pub fn check(&self, field: &str) -> Result<(), ScheduleError> {
        let valid = jiff::civil::Date::new(2000, self.month as i8, self.day as i8).is_ok()
            && self.month <= 12
            && self.day <= 31;
        if !valid {
            return Err(ScheduleError::out_of_range(field, format!("{self} is not a day of the year")));
        }
        Ok(())
    }
}

impl fmt::Display for MonthDay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}-{:02}", self.month, self.day)
    }
}

impl serde::Serialize for MonthDay {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for MonthDay {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<MonthDay, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(deserializer)?;
        MonthDay::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("invalid day of the year '{text}' (expected MM-DD)")))
    }
}
