//! Quartz's calendars (`org.quartz.impl.calendar`): sets of excluded times that keep a trigger
//! from firing, chained through base calendars.

use std::collections::BTreeSet;

use jiff::Timestamp;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use kairos_cron::CronExpr;

use crate::days::{DaysOfWeek, MonthDay};
use crate::error::ScheduleError;
use crate::time_of_day::TimeOfDay;
use crate::zone::{Zone, add_ms, date_of, give_up_after, start_of_day};

/// A calendar: what it excludes, in which zone, on top of which base calendar.
///
/// A time is included only if every calendar of the chain (this one, its base, the base's
/// base …) includes it. Stored as JSON in `QRTZ_CALENDARS` (never Java serialization):
///
/// ```json
/// {"type": "holiday", "excludedDates": ["2026-12-25"], "timeZone": "Europe/Paris",
///  "baseCalendar": {"type": "weekly", "excludedDays": ["saturday", "sunday"]}}
/// ```
///
/// A calendar without a zone works in UTC (Quartz would use the JVM's default zone).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Calendar {
    #[serde(flatten)]
    pub kind: CalendarKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<Zone>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_calendar: Option<Box<Calendar>>,
}

/// What a calendar excludes; the JSON `"type"` tag names the Quartz class.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum CalendarKind {
    /// HolidayCalendar: whole dates (the year counts).
    Holiday {
        #[serde(default)]
        excluded_dates: BTreeSet<Date>,
    },
    /// AnnualCalendar: days of the year, every year (`"12-25"`).
    Annual {
        #[serde(default)]
        excluded_days: BTreeSet<MonthDay>,
    },
    /// MonthlyCalendar: days of the month (1–31), every month.
    Monthly {
        #[serde(default)]
        excluded_days: BTreeSet<u8>,
    },
    /// WeeklyCalendar: days of the week; Saturday and Sunday when not given, as in Quartz.
    Weekly {
        #[serde(default = "weekend")]
        excluded_days: DaysOfWeek,
    },
    /// DailyCalendar: the range `[rangeStart, rangeEnd]` of every day (both ends included), or,
    /// with `invertTimeRange`, everything outside it.
    Daily {
        range_start: TimeOfDay,
        range_end: TimeOfDay,
        #[serde(default)]
        invert_time_range: bool,
    },
    /// CronCalendar: every second the cron expression names.
    Cron { expression: CronExpr },
}

fn weekend() -> DaysOfWeek {
    DaysOfWeek::SATURDAY_AND_SUNDAY
}

/// How deep a chain of base calendars may be.
pub const MAX_CHAIN_DEPTH: usize = 32;
/// How many days a day-based calendar looks ahead for an included day (eight years: an annual
/// calendar that leaves only February 29 is still answered).
const MAX_DAYS: u32 = 8 * 366;
/// How many rounds a chain may take to agree on an included time.
const MAX_ROUNDS: u32 = 10_000;

impl Calendar {
    /// A calendar of this kind, in UTC, with no base.
    pub fn new(kind: CalendarKind) -> Calendar {
        Calendar { kind, description: None, time_zone: None, base_calendar: None }
    }

    /// The same calendar on top of `base`.
    pub fn with_base(mut self, base: Calendar) -> Calendar {
        self.base_calendar = Some(Box::new(base));
        self
    }

    /// The same calendar in `zone`.
    pub fn in_zone(mut self, zone: Zone) -> Calendar {
        self.time_zone = Some(zone);
        self
    }

    /// This calendar, then its base, then the base's base …
    pub fn chain(&self) -> impl Iterator<Item = &Calendar> {
        std::iter::successors(Some(self), |c| c.base_calendar.as_deref())
    }

    /// Mirrors Calendar.isTimeIncluded: whether every calendar of the chain includes `t`.
    pub fn is_time_included(&self, t: Timestamp) -> bool {
        self.chain().all(|c| c.includes_itself(t))
    }

    /// Mirrors Calendar.getNextIncludedTime: the earliest instant at or after `t` that the whole
    /// chain includes (`t` itself when included); `None` if none comes within the search limits
    /// (years ahead for day-based calendars).
    ///
    /// Difference: Quartz's answers vary by class (the same time, the start of the day, or one
    /// millisecond later); kairos always answers the earliest included instant not before `t`.
    pub fn next_included_time(&self, t: Timestamp) -> Option<Timestamp> {
        let mut t = t;
        for _ in 0..MAX_ROUNDS {
            let mut moved = false;
            for calendar in self.chain() {
                let next = calendar.next_included_itself(t)?;
                if next > t {
                    t = next;
                    moved = true;
                }
            }
            if !moved {
                return Some(t);
            }
        }
        None
    }

    /// Where a search for a fire time this chain includes, starting at `from`, gives up: a
    /// hundred years on (Quartz's `YEAR_TO_GIVEUP_SCHEDULING_AT`), and never past the last
    /// instant of the cron years ([`kairos_cron::LAST_YEAR`], in the calendar's zone) when a
    /// cron calendar is in the chain. Past that year its expression matches nothing, so the
    /// calendar would seem to stop excluding: a trigger it excludes entirely would be given a
    /// fire time in 2100 instead of being refused as never firing. (Quartz's cron years end
    /// where its search gives up, the current year + 100, so it never meets this.)
    pub fn give_up_after(&self, from: Timestamp) -> Timestamp {
        let cron_end = self
            .chain()
            .filter(|c| matches!(c.kind, CalendarKind::Cron { .. }))
            .filter_map(|c| start_of_day(c.tz(), Date::new(kairos_cron::LAST_YEAR + 1, 1, 1).ok()?))
            .filter_map(|t| add_ms(t, -1))
            .min();
        let give_up = give_up_after(from);
        cron_end.map_or(give_up, |end| end.min(give_up))
    }

    /// Refuses what Quartz's setters refuse (and what would exclude every time), naming the
    /// field; a base calendar's fields are named `baseCalendar.…`.
    pub fn validate(&self) -> Result<(), ScheduleError> {
        let mut prefix = String::new();
        for (depth, calendar) in self.chain().enumerate() {
            if depth >= MAX_CHAIN_DEPTH {
                return Err(ScheduleError::Invalid {
                    field: format!("{prefix}baseCalendar"),
                    message: format!("more than {MAX_CHAIN_DEPTH} chained calendars"),
                });
            }
            let result = calendar.validate_itself();
            if let Err(error) = result {
                return Err(match prefix.strip_suffix('.') {
                    Some(path) => error.within(path),
                    None => error,
                });
            }
            prefix.push_str("baseCalendar.");
        }
        Ok(())
    }

    fn validate_itself(&self) -> Result<(), ScheduleError> {
        if let Some(zone) = &self.time_zone {
            zone.check("timeZone")?;
        }
        match &self.kind {
            CalendarKind::Holiday { .. } | CalendarKind::Cron { .. } => Ok(()),
            CalendarKind::Annual { excluded_days } => {
                for day in excluded_days {
                    day.check("excludedDays")?;
                }
                if excluded_days.len() >= 366 {
                    return Err(everything_excluded("every day of the year"));
                }
                Ok(())
            }
            CalendarKind::Monthly { excluded_days } => {
                if let Some(day) = excluded_days.iter().find(|d| !(1..=31).contains(*d)) {
                    return Err(ScheduleError::out_of_range(
                        "excludedDays",
                        format!("{day} is not a day of the month (1-31)"),
                    ));
                }
                if excluded_days.len() == 31 {
                    return Err(everything_excluded("every day of the month"));
                }
                Ok(())
            }
            CalendarKind::Weekly { excluded_days } => {
                if excluded_days.is_all() {
                    return Err(everything_excluded("every day of the week"));
                }
                Ok(())
            }
            CalendarKind::Daily { range_start, range_end, .. } => {
                range_start.check("rangeStart")?;
                range_end.check("rangeEnd")?;
                if range_end <= range_start {
                    return Err(ScheduleError::Invalid {
                        field: "rangeEnd".to_string(),
                        message: format!("{range_end} is not after rangeStart {range_start}"),
                    });
                }
                Ok(())
            }
        }
    }

    fn tz(&self) -> &TimeZone {
        match &self.time_zone {
            Some(zone) => zone.time_zone(),
            None => crate::zone::utc(),
        }
    }

    /// Whether a whole local date is excluded by a day-based calendar.
    fn excludes_date(&self, date: Date) -> bool {
        match &self.kind {
            CalendarKind::Holiday { excluded_dates } => excluded_dates.contains(&date),
            CalendarKind::Annual { excluded_days } => {
                excluded_days.contains(&MonthDay::new(date.month() as u8, date.day() as u8))
            }
            CalendarKind::Monthly { excluded_days } => excluded_days.contains(&(date.day() as u8)),
            CalendarKind::Weekly { excluded_days } => excluded_days.contains(date.weekday()),
            CalendarKind::Daily { .. } | CalendarKind::Cron { .. } => false,
        }
    }

    /// Whether this calendar alone includes `t`.
    fn includes_itself(&self, t: Timestamp) -> bool {
        let tz = self.tz();
        match &self.kind {
            CalendarKind::Daily { range_start, range_end, invert_time_range } => {
                let date = date_of(tz, t);
                let inside = match (range_start.on(date, tz), range_end.on(date, tz)) {
                    (Some(first), Some(last)) => first <= t && t <= last,
                    _ => false,
                };
                inside == *invert_time_range
            }
            CalendarKind::Cron { expression } => !expression.is_satisfied_by(t, tz),
            _ => !self.excludes_date(date_of(tz, t)),
        }
    }

    /// The earliest instant at or after `t` that this calendar alone includes.
    fn next_included_itself(&self, t: Timestamp) -> Option<Timestamp> {
        let tz = self.tz();
        match &self.kind {
            CalendarKind::Daily { range_start, range_end, invert_time_range } => {
                next_in_daily(tz, *range_start, *range_end, *invert_time_range, t)
            }
            CalendarKind::Cron { expression } => {
                if expression.is_satisfied_by(t, tz) {
                    expression.next_invalid_after(t, tz)
                } else {
                    Some(t)
                }
            }
            _ => {
                let mut date = date_of(tz, t);
                if !self.excludes_date(date) {
                    return Some(t);
                }
                for _ in 0..MAX_DAYS {
                    date = date.tomorrow().ok()?;
                    if !self.excludes_date(date) {
                        return start_of_day(tz, date);
                    }
                }
                None
            }
        }
    }
}

/// The earliest instant at or after `t` that a daily calendar includes.
///
/// Difference: Quartz's DailyCalendar also excludes the first and the last millisecond of every
/// day (00:00:00.000 and 23:59:59.999) when the range is not inverted, so a trigger firing at
/// midnight never fires under any daily calendar; kairos excludes the range only.
fn next_in_daily(
    tz: &TimeZone,
    range_start: TimeOfDay,
    range_end: TimeOfDay,
    invert: bool,
    t: Timestamp,
) -> Option<Timestamp> {
    let mut lower = t;
    let mut date = date_of(tz, t);
    for _ in 0..4 {
        let first = range_start.on(date, tz)?;
        let last = range_end.on(date, tz)?;
        if !invert {
            if lower < first || lower > last {
                return Some(lower);
            }
            lower = add_ms(last, 1)?;
            date = date_of(tz, lower);
            continue;
        }
        if first <= last && lower <= last {
            return Some(lower.max(first));
        }
        date = date.tomorrow().ok()?;
        lower = start_of_day(tz, date)?;
    }
    None
}

fn everything_excluded(what: &str) -> ScheduleError {
    ScheduleError::Invalid {
        field: "excludedDays".to_string(),
        message: format!("{what} is excluded: nothing would ever fire"),
    }
}
