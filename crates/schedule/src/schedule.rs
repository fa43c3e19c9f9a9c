//! The type-specific part of a trigger: one enum over the four Quartz trigger types.

use jiff::{SignedDuration, Timestamp};

use crate::calendar_interval::{CalendarIntervalSchedule, IntervalUnit};
use crate::cron::CronSchedule;
use crate::daily_time_interval::DailyTimeIntervalSchedule;
use crate::error::ScheduleError;
use crate::misfire::TriggerKind;
use crate::simple::SimpleSchedule;
use crate::zone::Zone;

/// When a trigger fires, by type. Serialized with a `"type"` tag (`"simple"`, `"cron"`,
/// `"calendarInterval"`, `"dailyTimeInterval"`) and camelCase fields, so it can be stored on
/// its own next to the common columns of `QRTZ_TRIGGERS` and read back:
///
/// ```json
/// {"type": "cron", "expression": "0 0 12 ? * MON-FRI", "timeZone": "Europe/Paris"}
/// ```
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Schedule {
    Simple(SimpleSchedule),
    Cron(CronSchedule),
    CalendarInterval(CalendarIntervalSchedule),
    DailyTimeInterval(DailyTimeIntervalSchedule),
}

impl Schedule {
    /// Fires once, then `repeat_count` more times (-1: forever) every `interval`.
    pub fn simple(repeat_count: i32, interval: SignedDuration) -> Schedule {
        Schedule::Simple(SimpleSchedule::new(repeat_count, interval))
    }

    /// Fires when the cron expression says, on `time_zone`'s wall clock. An invalid
    /// expression is refused naming `schedule.expression`, the cron field and the position.
    pub fn cron(expression: &str, time_zone: &str) -> Result<Schedule, ScheduleError> {
        CronSchedule::parse(expression, time_zone).map(Schedule::Cron)
    }

    /// Fires every `interval` `unit`s, days and longer on `time_zone`'s calendar.
    pub fn calendar_interval(interval: i32, unit: IntervalUnit, time_zone: &str) -> Schedule {
        Schedule::CalendarInterval(CalendarIntervalSchedule::new(interval, unit, Zone::new(time_zone)))
    }

    /// Fires every `interval` `unit`s all day, every day (narrow it with the fields of
    /// [`DailyTimeIntervalSchedule`]).
    pub fn daily_time_interval(interval: i32, unit: IntervalUnit, time_zone: &str) -> Schedule {
        Schedule::DailyTimeInterval(DailyTimeIntervalSchedule::new(interval, unit, Zone::new(time_zone)))
    }

    /// Which Quartz trigger type this is.
    pub fn kind(&self) -> TriggerKind {
        match self {
            Schedule::Simple(_) => TriggerKind::Simple,
            Schedule::Cron(_) => TriggerKind::Cron,
            Schedule::CalendarInterval(_) => TriggerKind::CalendarInterval,
            Schedule::DailyTimeInterval(_) => TriggerKind::DailyTimeInterval,
        }
    }

    /// Refuses what Quartz's setters and `validate` refuse, naming the field (`schedule.…`).
    pub fn validate(&self) -> Result<(), ScheduleError> {
        match self {
            Schedule::Simple(s) => s.validate(),
            Schedule::Cron(s) => s.validate(),
            Schedule::CalendarInterval(s) => s.validate(),
            Schedule::DailyTimeInterval(s) => s.validate(),
        }
    }

    /// How many times the trigger fired; cron triggers do not count.
    pub fn times_triggered(&self) -> Option<i32> {
        match self {
            Schedule::Simple(s) => Some(s.times_triggered),
            Schedule::Cron(_) => None,
            Schedule::CalendarInterval(s) => Some(s.times_triggered),
            Schedule::DailyTimeInterval(s) => Some(s.times_triggered),
        }
    }

    pub(crate) fn times_triggered_mut(&mut self) -> Option<&mut i32> {
        match self {
            Schedule::Simple(s) => Some(&mut s.times_triggered),
            Schedule::Cron(_) => None,
            Schedule::CalendarInterval(s) => Some(&mut s.times_triggered),
            Schedule::DailyTimeInterval(s) => Some(&mut s.times_triggered),
        }
    }

    /// The first fire time strictly after `after` for a trigger with these start and end times.
    pub(crate) fn fire_time_after(
        &self,
        start: Timestamp,
        end: Option<Timestamp>,
        after: Timestamp,
    ) -> Option<Timestamp> {
        match self {
            Schedule::Simple(s) => s.fire_time_after(start, end, after),
            Schedule::Cron(s) => s.fire_time_after(start, end, after),
            Schedule::CalendarInterval(s) => s.fire_time_after(start, end, after),
            Schedule::DailyTimeInterval(s) => s.fire_time_after(start, end, after),
        }
    }
}
