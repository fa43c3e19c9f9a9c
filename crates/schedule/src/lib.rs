//! The Quartz 2.3 scheduling model for kairos: triggers, calendars and misfire handling.
//!
//! This crate says *when* a trigger fires; the scheduler stores triggers and calendars in the
//! `QRTZ_*` tables and fires jobs through kairos's job engine. It is pure: it never reads the
//! wall clock (`now` is an argument) and performs no I/O, so a cluster's nodes compute the
//! same fire times from the same rows, and an outage of a week is a test that takes a
//! millisecond.
//!
//! * [`Trigger`]: identity, start/end times, priority, calendar name, misfire instruction,
//!   next/previous fire times, and a [`Schedule`]: [`SimpleSchedule`], [`CronSchedule`],
//!   [`CalendarIntervalSchedule`] or [`DailyTimeIntervalSchedule`]. Its operations mirror
//!   Quartz's `OperableTrigger` (`compute_first_fire_time`, `triggered`,
//!   `update_after_misfire`, `update_with_new_calendar`, `fire_time_after`,
//!   `final_fire_time`, `may_fire_again`); each says which Quartz method it mirrors and where
//!   it differs on purpose.
//! * [`MisfireInstruction`]: Quartz's instructions with their names and numbers, refused for
//!   the wrong trigger type.
//! * [`Calendar`]: holiday, annual, monthly, weekly, daily and cron calendars, chained through
//!   base calendars, serialized as JSON.
//!
//! ```
//! use kairos_schedule::{JobKey, MisfireInstruction, MisfireOutcome, Schedule, Timestamp,
//!     Trigger, TriggerKey, DEFAULT_MISFIRE_THRESHOLD};
//!
//! let start: Timestamp = "2026-01-05T00:00:00Z".parse().unwrap();
//! let schedule = Schedule::cron("0 0/10 * * * ?", "Europe/Paris").unwrap();
//! let mut trigger = Trigger::new(TriggerKey::new("report", "DEFAULT"),
//!     JobKey::new("report", "DEFAULT"), start, schedule)
//!     .with_misfire_instruction(MisfireInstruction::DoNothing);
//! trigger.validate().unwrap();
//! assert_eq!(trigger.compute_first_fire_time(None), Some(start));
//!
//! // The scheduler was down for an hour: six fire times were missed.
//! let now: Timestamp = "2026-01-05T01:03:00Z".parse().unwrap();
//! assert!(trigger.is_misfired(now, DEFAULT_MISFIRE_THRESHOLD));
//! assert_eq!(trigger.update_after_misfire(now, None), MisfireOutcome::Rescheduled);
//! assert_eq!(trigger.next_fire_time, Some("2026-01-05T01:10:00Z".parse().unwrap()));
//! ```

mod calendar;
mod calendar_interval;
mod cron;
mod daily_time_interval;
mod days;
mod error;
mod misfire;
mod recovery;
mod schedule;
mod simple;
mod time_of_day;
mod trigger;
mod zone;

pub use calendar::{Calendar, CalendarKind, MAX_CHAIN_DEPTH};
pub use calendar_interval::{CalendarIntervalSchedule, IntervalUnit};
pub use cron::CronSchedule;
pub use daily_time_interval::DailyTimeIntervalSchedule;
pub use days::{DaysOfWeek, MonthDay};
pub use error::ScheduleError;
pub use jiff::civil::Weekday;
pub use jiff::tz::TimeZone;
pub use jiff::{SignedDuration, Timestamp};
pub use kairos_cron::{CronError, CronExpr};
pub use misfire::{MisfireInstruction, MisfireOutcome, TriggerKind};
pub use schedule::Schedule;
pub use simple::{REPEAT_INDEFINITELY, SimpleSchedule};
pub use time_of_day::TimeOfDay;
pub use trigger::{DEFAULT_GROUP, DEFAULT_MISFIRE_THRESHOLD, DEFAULT_PRIORITY, JobKey, Trigger, TriggerKey};
pub use zone::Zone;
