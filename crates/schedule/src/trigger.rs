//! A trigger: its identity, its time bounds, its fire times and its schedule, and the
//! operations Quartz's `OperableTrigger` performs on them.

use jiff::{SignedDuration, Timestamp};

use crate::calendar::Calendar;
use crate::error::ScheduleError;
use crate::misfire::{MisfireInstruction, TriggerKind};
use crate::schedule::Schedule;
use crate::zone::{add_ms, to_millis};

/// Quartz's default trigger priority.
pub const DEFAULT_PRIORITY: i32 = 5;
/// Quartz's default group of a trigger or a job.
pub const DEFAULT_GROUP: &str = "DEFAULT";
/// Quartz's default `org.quartz.jobStore.misfireThreshold`: a trigger is misfired when its
/// next fire time is more than this far behind now.
pub const DEFAULT_MISFIRE_THRESHOLD: SignedDuration = SignedDuration::from_secs(60);

/// How many excluded fire times a calendar may make a trigger skip in one computation
/// (Quartz loops until the year it gives up at; kairos also bounds the steps).
pub(crate) const MAX_CALENDAR_STEPS: u32 = 100_000;

/// A trigger's identity: `TRIGGER_NAME` and `TRIGGER_GROUP`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct TriggerKey {
    pub name: String,
    pub group: String,
}

/// A job's identity: `JOB_NAME` and `JOB_GROUP`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct JobKey {
    pub name: String,
    pub group: String,
}

impl TriggerKey {
    pub fn new(name: impl Into<String>, group: impl Into<String>) -> TriggerKey {
        TriggerKey { name: name.into(), group: group.into() }
    }
}

impl JobKey {
    pub fn new(name: impl Into<String>, group: impl Into<String>) -> JobKey {
        JobKey { name: name.into(), group: group.into() }
    }
}

/// One Quartz trigger: the columns of `QRTZ_TRIGGERS` and its [`Schedule`].
///
/// Instants are millisecond precision (stored as epoch milliseconds). Every operation is pure:
/// the scheduler passes `now` in, and the trigger changes only itself.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Trigger {
    pub key: TriggerKey,
    pub job_key: JobKey,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Among triggers due at the same time, the higher fires first.
    #[serde(default = "default_priority")]
    pub priority: i32,
    /// The trigger does not fire before this instant.
    pub start_time: Timestamp,
    /// The trigger does not fire after this instant (simple and calendar-interval triggers
    /// not at it either, as in Quartz).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_time: Option<Timestamp>,
    /// The name of the calendar that excludes fire times (resolved by the caller).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calendar_name: Option<String>,
    #[serde(default)]
    pub misfire_instruction: MisfireInstruction,
    /// When the trigger fires next; `None` once it never will (complete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_fire_time: Option<Timestamp>,
    /// When it last fired (the scheduled time, not the time it ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_fire_time: Option<Timestamp>,
    pub schedule: Schedule,
}

fn default_priority() -> i32 {
    DEFAULT_PRIORITY
}

impl Trigger {
    /// A trigger with Quartz's defaults: priority 5, no end time, no calendar, the smart
    /// misfire policy, no fire time computed yet. The start time is cut to milliseconds.
    pub fn new(key: TriggerKey, job_key: JobKey, start_time: Timestamp, schedule: Schedule) -> Trigger {
        Trigger {
            key,
            job_key,
            description: None,
            priority: DEFAULT_PRIORITY,
            start_time: to_millis(start_time),
            end_time: None,
            calendar_name: None,
            misfire_instruction: MisfireInstruction::Smart,
            next_fire_time: None,
            previous_fire_time: None,
            schedule,
        }
    }

    /// The same trigger ending at `end_time` (cut to milliseconds).
    pub fn with_end_time(mut self, end_time: Timestamp) -> Trigger {
        self.end_time = Some(to_millis(end_time));
        self
    }

    /// The same trigger with a misfire instruction.
    pub fn with_misfire_instruction(mut self, instruction: MisfireInstruction) -> Trigger {
        self.misfire_instruction = instruction;
        self
    }

    /// The same trigger modified by the named calendar.
    pub fn with_calendar(mut self, name: impl Into<String>) -> Trigger {
        self.calendar_name = Some(name.into());
        self
    }

    /// The same trigger with a priority.
    pub fn with_priority(mut self, priority: i32) -> Trigger {
        self.priority = priority;
        self
    }

    /// Which Quartz trigger type this is.
    pub fn kind(&self) -> TriggerKind {
        self.schedule.kind()
    }

    /// Mirrors AbstractTrigger.validate, the setters' checks and the type's `validate`:
    /// names and groups are not empty, the end time is not before the start time, the misfire
    /// instruction is one of this type's, and the schedule is valid. The error names the field.
    pub fn validate(&self) -> Result<(), ScheduleError> {
        for (text, field) in [
            (&self.key.name, "key.name"),
            (&self.key.group, "key.group"),
            (&self.job_key.name, "jobKey.name"),
            (&self.job_key.group, "jobKey.group"),
        ] {
            if text.trim().is_empty() {
                return Err(ScheduleError::Empty { field: field.to_string() });
            }
        }
        if self.calendar_name.as_deref().is_some_and(|n| n.trim().is_empty()) {
            return Err(ScheduleError::Empty { field: "calendarName".to_string() });
        }
        if self.end_time.is_some_and(|end| end < self.start_time) {
            return Err(ScheduleError::Order { field: "endTime".to_string(), other: "startTime" });
        }
        self.misfire_instruction.check(self.kind())?;
        self.schedule.validate()
    }

    /// Mirrors `getFireTimeAfter`: the first time strictly after `after` this trigger fires at,
    /// by its schedule, start and end times (calendars are not consulted).
    ///
    /// Difference: Quartz reads the wall clock when `after` is null; here it is required.
    pub fn fire_time_after(&self, after: Timestamp) -> Option<Timestamp> {
        self.schedule.fire_time_after(self.start_time, self.end_time, after)
    }

    /// Mirrors `computeFirstFireTime`: sets and returns the first fire time the calendar does
    /// not exclude (the start time for simple and calendar-interval triggers, the first
    /// scheduled time from the start time for cron and daily-time-interval triggers).
    pub fn compute_first_fire_time(&mut self, calendar: Option<&Calendar>) -> Option<Timestamp> {
        let first = match self.kind() {
            TriggerKind::Simple | TriggerKind::CalendarInterval => Some(self.start_time),
            TriggerKind::Cron => add_ms(self.start_time, -1000).and_then(|t| self.fire_time_after(t)),
            TriggerKind::DailyTimeInterval => add_ms(self.start_time, -1).and_then(|t| self.fire_time_after(t)),
        };
        self.next_fire_time = self.first_included(first, calendar);
        self.next_fire_time
    }

    /// Mirrors `triggered`: called when the trigger fires. Counts the firing (simple,
    /// calendar-interval and daily-time-interval triggers), makes the next fire time the
    /// previous one and moves to the first later fire time the calendar does not exclude.
    pub fn triggered(&mut self, calendar: Option<&Calendar>) {
        if let Some(count) = self.schedule.times_triggered_mut() {
            *count = count.saturating_add(1);
        }
        self.previous_fire_time = self.next_fire_time;
        let next = self.next_fire_time.and_then(|t| self.fire_time_after(t));
        self.next_fire_time = self.first_included(next, calendar);
    }

    /// What the scheduler calls when it fires the trigger at `now`: [`Trigger::triggered`],
    /// then, for a trigger whose misfire policy resolves to `DoNothing`, a next fire time that
    /// is already behind `now` is skipped, with every other missed one, to the first fire time
    /// after `now`.
    ///
    /// Difference (Quartz #239): a fire time late by less than the misfire threshold is not a
    /// misfire, so Quartz fires it, and then every following missed time one after another:
    /// a `DoNothing` trigger fired a burst of missed runs after a short outage. Here it fires
    /// once and waits for its next scheduled time.
    pub fn triggered_at(&mut self, calendar: Option<&Calendar>, now: Timestamp) {
        self.triggered(calendar);
        let behind = self.next_fire_time.is_some_and(|next| next < now);
        if behind && self.resolved_misfire_instruction() == MisfireInstruction::DoNothing {
            let next = self.fire_time_after(to_millis(now));
            self.next_fire_time = self.first_included(next, calendar);
        }
    }

    /// Mirrors `getFinalFireTime`: the last time the trigger fires, ignoring calendars;
    /// `None` when it has no end (repeats forever without an end time).
    ///
    /// Differences: always a time the trigger really fires at. Quartz's simple and
    /// calendar-interval triggers can answer the end time itself (at which they never fire),
    /// its cron trigger never answers (`getTimeBefore` is not implemented) and its
    /// daily-time-interval trigger answers the end time or the day's end time of day.
    pub fn final_fire_time(&self) -> Option<Timestamp> {
        match &self.schedule {
            Schedule::Simple(s) => s.final_fire_time(self.start_time, self.end_time),
            _ => self.last_fire_time_until(self.end_time?),
        }
    }

    /// The last fire time not after `end`, by bisection on `fire_time_after` (whether a fire
    /// time is left after an instant only changes once, from yes to no).
    fn last_fire_time_until(&self, end: Timestamp) -> Option<Timestamp> {
        let mut low = add_ms(self.start_time, -1000)?;
        self.fire_time_after(low)?;
        let mut high = end.max(low);
        if self.fire_time_after(high).is_some() {
            return None;
        }
        while high.as_millisecond() - low.as_millisecond() > 1 {
            let middle = add_ms(low, (high.as_millisecond() - low.as_millisecond()) / 2)?;
            if self.fire_time_after(middle).is_some() {
                low = middle;
            } else {
                high = middle;
            }
        }
        self.fire_time_after(low)
    }

    /// Mirrors `mayFireAgain`: whether a next fire time is set.
    pub fn may_fire_again(&self) -> bool {
        self.next_fire_time.is_some()
    }

    /// Mirrors the job stores' misfire test: the next fire time is more than `threshold`
    /// behind `now` (JDBC store: `NEXT_FIRE_TIME < now - threshold`). A trigger whose policy is
    /// `IgnoreMisfires` never misfires.
    pub fn is_misfired(&self, now: Timestamp, threshold: SignedDuration) -> bool {
        if self.misfire_instruction == MisfireInstruction::IgnoreMisfires {
            return false;
        }
        let Ok(limit) = now.checked_sub(threshold) else {
            return false;
        };
        self.next_fire_time.is_some_and(|next| next < limit)
    }

    /// Mirrors TriggerUtils.computeFireTimes: the next `count` fire times of a copy of this
    /// trigger from its start, skipping the calendar's exclusions.
    pub fn fire_times(&self, calendar: Option<&Calendar>, count: usize) -> Vec<Timestamp> {
        let mut copy = self.clone();
        copy.compute_first_fire_time(calendar);
        let mut times = Vec::new();
        while times.len() < count {
            let Some(next) = copy.next_fire_time else { break };
            times.push(next);
            copy.triggered(calendar);
        }
        times
    }

    /// Mirrors TriggerUtils.computeFireTimesBetween: the fire times of a copy of this trigger
    /// from `from` to `to` (both included), at most `max` of them. Fire times before `from`
    /// are jumped over rather than fired one by one, so a daily-time-interval trigger's repeat
    /// count is counted from the trigger's current state.
    pub fn fire_times_between(
        &self,
        calendar: Option<&Calendar>,
        from: Timestamp,
        to: Timestamp,
        max: usize,
    ) -> Vec<Timestamp> {
        let mut copy = self.clone();
        copy.compute_first_fire_time(calendar);
        if copy.next_fire_time.is_some_and(|next| next < from) {
            let next = add_ms(from, -1).and_then(|t| copy.fire_time_after(t));
            copy.next_fire_time = copy.first_included(next, calendar);
        }
        let mut times = Vec::new();
        while let Some(next) = copy.next_fire_time {
            if next > to || times.len() >= max {
                break;
            }
            times.push(next);
            copy.triggered(calendar);
        }
        times
    }

    /// The first of `candidate` and the later fire times that the calendar includes.
    ///
    /// Where Quartz steps through the excluded fire times one by one, kairos jumps to the
    /// calendar's next included time and takes the first fire time from there (the same
    /// answer). It gives up (`None`) where [`Calendar::give_up_after`] says (a hundred years
    /// after the first candidate, as Quartz does at `YEAR_TO_GIVEUP_SCHEDULING_AT`, and no
    /// later than the end of the cron years under a cron calendar), or after
    /// `MAX_CALENDAR_STEPS` jumps.
    pub(crate) fn first_included(
        &self,
        candidate: Option<Timestamp>,
        calendar: Option<&Calendar>,
    ) -> Option<Timestamp> {
        let Some(calendar) = calendar else {
            return candidate;
        };
        let give_up = calendar.give_up_after(candidate?);
        let mut candidate = candidate;
        for _ in 0..MAX_CALENDAR_STEPS {
            let time = candidate?;
            if time > give_up {
                return None;
            }
            if calendar.is_time_included(time) {
                return Some(time);
            }
            let resume = calendar.next_included_time(time)?;
            candidate = if resume > time {
                add_ms(resume, -1).and_then(|t| self.fire_time_after(t))
            } else {
                self.fire_time_after(time)
            };
        }
        None
    }
}
