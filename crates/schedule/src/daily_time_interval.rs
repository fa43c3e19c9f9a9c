//! Quartz's DailyTimeIntervalTriggerImpl: every N seconds, minutes or hours between a start
//! and an end time of day, on chosen days of the week.

use jiff::Timestamp;

use crate::calendar_interval::IntervalUnit;
use crate::days::DaysOfWeek;
use crate::error::ScheduleError;
use crate::simple::REPEAT_INDEFINITELY;
use crate::time_of_day::TimeOfDay;
use crate::zone::{Zone, add_ms, date_of, ms_between};

/// The schedule of a daily time interval trigger (Quartz keeps it in `QRTZ_SIMPROP_TRIGGERS`).
///
/// On each chosen day it fires at the start time of day, then every interval while not after
/// the end time of day; the next day starts again at the start time of day.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DailyTimeIntervalSchedule {
    #[serde(default = "midnight")]
    pub start_time_of_day: TimeOfDay,
    /// The last time of day a fire time may fall on (inclusive; Quartz's default 23:59:59).
    #[serde(default = "last_second")]
    pub end_time_of_day: TimeOfDay,
    #[serde(default = "all_days")]
    pub days_of_week: DaysOfWeek,
    /// How many units between fire times within a day (at least 1, at most 24 hours).
    pub interval: i32,
    /// Second, minute or hour.
    pub unit: IntervalUnit,
    /// Fires after the first; -1 (Quartz's default here) for no limit.
    #[serde(default = "forever")]
    pub repeat_count: i32,
    /// The zone of the times of day and the days of the week (UTC when not given).
    #[serde(default)]
    pub time_zone: Zone,
    /// How many times the trigger fired (kept by `triggered`).
    #[serde(default)]
    pub times_triggered: i32,
}

fn midnight() -> TimeOfDay {
    TimeOfDay::MIDNIGHT
}

fn last_second() -> TimeOfDay {
    TimeOfDay::LAST_SECOND
}

fn all_days() -> DaysOfWeek {
    DaysOfWeek::ALL
}

fn forever() -> i32 {
    REPEAT_INDEFINITELY
}

/// How many days a search may look ahead (a week, and a day whose window is already over).
const MAX_DAYS: u32 = 16;

impl DailyTimeIntervalSchedule {
    /// Every `interval` `unit`s all day, every day, forever (Quartz's defaults).
    pub fn new(interval: i32, unit: IntervalUnit, time_zone: Zone) -> DailyTimeIntervalSchedule {
        DailyTimeIntervalSchedule {
            start_time_of_day: TimeOfDay::MIDNIGHT,
            end_time_of_day: TimeOfDay::LAST_SECOND,
            days_of_week: DaysOfWeek::ALL,
            interval,
            unit,
            repeat_count: REPEAT_INDEFINITELY,
            time_zone,
            times_triggered: 0,
        }
    }

    fn step_ms(&self) -> Option<i64> {
        i64::from(self.interval).checked_mul(self.unit.fixed_ms()?)
    }

    /// Quartz's DailyTimeIntervalTriggerImpl.validate and setters: a second, minute or hour
    /// unit, an interval of 1 up to 24 hours, the start time of day not after the end, at least
    /// one day, a repeat count of at least -1. Times of day are whole seconds, as in Quartz.
    pub(crate) fn validate(&self) -> Result<(), ScheduleError> {
        if self.unit.fixed_ms().is_none() {
            return Err(ScheduleError::out_of_range(
                "schedule.unit",
                format!("{} is not second, minute or hour", self.unit),
            ));
        }
        if self.interval < 1 {
            return Err(ScheduleError::out_of_range("schedule.interval", format!("{} is below 1", self.interval)));
        }
        if self.step_ms().is_none_or(|ms| ms > 86_400_000) {
            return Err(ScheduleError::out_of_range(
                "schedule.interval",
                format!("{} {}s is more than 24 hours", self.interval, self.unit),
            ));
        }
        for (tod, field) in
            [(self.start_time_of_day, "schedule.startTimeOfDay"), (self.end_time_of_day, "schedule.endTimeOfDay")]
        {
            tod.check(field)?;
            if tod.millisecond != 0 {
                return Err(ScheduleError::out_of_range(field, format!("{tod}: a time of day here is whole seconds")));
            }
        }
        if self.end_time_of_day < self.start_time_of_day {
            return Err(ScheduleError::Order { field: "schedule.endTimeOfDay".to_string(), other: "startTimeOfDay" });
        }
        self.days_of_week.check_not_empty("schedule.daysOfWeek")?;
        if self.repeat_count < REPEAT_INDEFINITELY {
            return Err(ScheduleError::out_of_range(
                "schedule.repeatCount",
                format!("{} is below -1 (repeat forever)", self.repeat_count),
            ));
        }
        if self.times_triggered < 0 {
            return Err(ScheduleError::out_of_range("schedule.timesTriggered", "must not be negative"));
        }
        self.time_zone.check("schedule.timeZone")
    }

    /// Mirrors DailyTimeIntervalTriggerImpl.getFireTimeAfter: the first fire time strictly
    /// after `after`, not before the start time and not after the end time (a fire time equal
    /// to the end time fires), while the repeat count is not used up.
    ///
    /// Differences: Quartz works on the JVM's default zone (it has no zone of its own) and
    /// compares whole seconds (`after + 1s`); kairos uses the schedule's zone and milliseconds,
    /// which gives the same fire times for whole-second inputs. Quartz can answer the first
    /// fire time of a day past the end time (its end-time check runs before it moves to the
    /// start time of day); kairos checks the end time last.
    pub(crate) fn fire_time_after(
        &self,
        start: Timestamp,
        end: Option<Timestamp>,
        after: Timestamp,
    ) -> Option<Timestamp> {
        if self.repeat_count != REPEAT_INDEFINITELY && self.times_triggered > self.repeat_count {
            return None;
        }
        let step = self.step_ms().filter(|ms| *ms > 0)?;
        let tz = self.time_zone.time_zone();
        let lower = add_ms(after, 1)?.max(start);
        let mut date = date_of(tz, lower);
        let mut lower = Some(lower);
        for _ in 0..MAX_DAYS {
            if self.days_of_week.contains(date.weekday())
                && let Some(time) = self.first_on(date, lower, step)
            {
                return match end {
                    Some(end) if time > end => None,
                    _ => Some(time),
                };
            }
            date = date.tomorrow().ok()?;
            lower = None;
            if let (Some(end), Some(first)) = (end, self.start_time_of_day.on(date, tz))
                && first > end
            {
                return None;
            }
        }
        None
    }

    /// The first fire time on `date` that is not before `lower`, if the day's window has one.
    fn first_on(&self, date: jiff::civil::Date, lower: Option<Timestamp>, step: i64) -> Option<Timestamp> {
        let tz = self.time_zone.time_zone();
        let first = self.start_time_of_day.on(date, tz)?;
        let last = self.end_time_of_day.on(date, tz)?;
        let time = match lower {
            Some(lower) if lower > first => {
                let jumps = (ms_between(first, lower) + step - 1) / step;
                add_ms(first, jumps.checked_mul(step)?)?
            }
            _ => first,
        };
        (time <= last).then_some(time)
    }
}
