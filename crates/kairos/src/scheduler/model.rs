//! Requests and views of the scheduler: a [`TriggerSpec`] validated into a
//! [`kairos_schedule::Trigger`], and the [`TriggerView`] the API shows. The QRTZ_* rows of a
//! trigger are `kairos_store_engine::scheduler`'s.

use super::{DEFAULT_GROUP, SchedulerError, TriggerState, check_name};
use jiff::Timestamp;
use kairos_schedule::{
    CalendarIntervalSchedule, CronSchedule, DailyTimeIntervalSchedule, DaysOfWeek, IntervalUnit, JobKey,
    MisfireInstruction, Schedule, SimpleSchedule, TimeOfDay, Trigger, TriggerKey, TriggerKind, Zone,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// A trigger to schedule (`POST /scheduler/triggers`): exactly one of `cron`, `simple`,
/// `calendarInterval`, `dailyTimeInterval`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TriggerSpec {
    pub name: String,
    #[serde(default)]
    pub group: Option<String>,
    pub job_name: String,
    #[serde(default)]
    pub job_group: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub cron: Option<CronSpec>,
    #[serde(default)]
    pub simple: Option<SimpleSpec>,
    #[serde(default)]
    pub calendar_interval: Option<CalendarIntervalSpec>,
    #[serde(default)]
    pub daily_time_interval: Option<DailyTimeIntervalSpec>,
    /// Default: now (by the database clock).
    #[serde(default, deserialize_with = "kairos_core::instant::accepted")]
    pub start_time: Option<Timestamp>,
    #[serde(default, deserialize_with = "kairos_core::instant::accepted")]
    pub end_time: Option<Timestamp>,
    /// Default 5; among triggers due at the same time the higher fires first.
    #[serde(default)]
    pub priority: Option<i32>,
    #[serde(default)]
    pub calendar_name: Option<String>,
    /// A misfire instruction by name (`fireNow`, `doNothing`, `MISFIRE_INSTRUCTION_FIRE_NOW`,
    /// …) or Quartz's number; default `smart`.
    #[serde(default)]
    pub misfire_policy: Option<Json>,
    /// The trigger's data, merged over the job's for each firing.
    #[serde(default)]
    pub data: Option<Map<String, Json>>,
    /// Replace a trigger of the same key instead of refusing it (Quartz's rescheduleJob).
    #[serde(default)]
    pub replace: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CronSpec {
    pub expression: String,
    /// An IANA zone; default UTC.
    #[serde(default)]
    pub time_zone: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SimpleSpec {
    /// ISO 8601 duration between fires (`PT10S`); may be left out for a single fire.
    #[serde(default)]
    pub interval: Option<String>,
    /// Fires after the first; -1 forever. Default: -1 with an interval, 0 without.
    #[serde(default)]
    pub repeat_count: Option<i32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CalendarIntervalSpec {
    pub interval: i32,
    /// second, minute, hour, day, week, month, year (Quartz's upper case too).
    pub unit: IntervalUnit,
    #[serde(default)]
    pub time_zone: Option<String>,
    #[serde(default)]
    pub preserve_hour_of_day_across_daylight_savings: bool,
    #[serde(default)]
    pub skip_day_if_hour_does_not_exist: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DailyTimeIntervalSpec {
    pub interval: i32,
    /// second, minute or hour.
    pub unit: IntervalUnit,
    /// `HH:MM[:SS]`; default 00:00:00.
    #[serde(default)]
    pub start_time_of_day: Option<String>,
    /// `HH:MM[:SS]`; default 23:59:59.
    #[serde(default)]
    pub end_time_of_day: Option<String>,
    /// Day names (`MON`, `monday`) or Quartz's numbers (1 = Sunday); default every day.
    #[serde(default)]
    pub days_of_week: Option<Vec<Json>>,
    #[serde(default)]
    pub repeat_count: Option<i32>,
    #[serde(default)]
    pub time_zone: Option<String>,
}

/// A calendar to store (`PUT /scheduler/calendars/{name}`): a [`kairos_schedule::Calendar`]'s
/// JSON whose `baseCalendar`, if any, names a stored calendar.
pub type CalendarSpec = Json;

/// A trigger as stored, for the API.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TriggerView {
    pub name: String,
    pub group: String,
    pub job_name: String,
    pub job_group: String,
    pub description: Option<String>,
    /// SIMPLE, CRON, CAL_INT, DAILY_I (QRTZ_TRIGGERS.TRIGGER_TYPE).
    #[serde(rename = "type")]
    pub trigger_type: &'static str,
    pub state: TriggerState,
    pub next_fire_time: Option<Timestamp>,
    pub previous_fire_time: Option<Timestamp>,
    pub start_time: Timestamp,
    pub end_time: Option<Timestamp>,
    pub priority: i32,
    pub calendar_name: Option<String>,
    pub misfire_policy: &'static str,
    pub schedule: Schedule,
    pub data: Map<String, Json>,
}

impl TriggerView {
    pub(crate) fn of(tr: &Trigger, state: TriggerState, data: Map<String, Json>) -> TriggerView {
        TriggerView {
            name: tr.key.name.clone(),
            group: tr.key.group.clone(),
            job_name: tr.job_key.name.clone(),
            job_group: tr.job_key.group.clone(),
            description: tr.description.clone(),
            trigger_type: tr.kind().quartz_type(),
            state,
            next_fire_time: tr.next_fire_time,
            previous_fire_time: tr.previous_fire_time,
            start_time: tr.start_time,
            end_time: tr.end_time,
            priority: tr.priority,
            calendar_name: tr.calendar_name.clone(),
            misfire_policy: tr.misfire_instruction.name(),
            schedule: tr.schedule.clone(),
            data,
        }
    }
}

fn invalid(field: &str, e: impl std::fmt::Display) -> SchedulerError {
    SchedulerError::invalid(field, e.to_string())
}

fn zone(field: &str, name: &Option<String>) -> Result<Zone, SchedulerError> {
    match name {
        None => Ok(Zone::utc()),
        Some(n) => {
            let z = Zone::new(n.clone());
            if z.is_known() { Ok(z) } else { Err(invalid(field, format!("unknown time zone '{n}'"))) }
        }
    }
}

fn time_of_day(field: &str, text: &Option<String>, default: TimeOfDay) -> Result<TimeOfDay, SchedulerError> {
    match text {
        None => Ok(default),
        Some(s) => {
            TimeOfDay::parse(s).ok_or_else(|| invalid(field, format!("'{s}' is not a time of day (HH:MM[:SS])")))
        }
    }
}

fn days_of_week(field: &str, days: &Option<Vec<Json>>) -> Result<DaysOfWeek, SchedulerError> {
    let Some(days) = days else { return Ok(DaysOfWeek::ALL) };
    let mut numbers = Vec::new();
    for d in days {
        let n = match d {
            Json::Number(n) => n.as_i64(),
            Json::String(s) => {
                let k = s.trim().to_ascii_lowercase();
                ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
                    .iter()
                    .position(|p| {
                        k.len() >= 3
                            && p.starts_with(&k[..3])
                            && ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
                                .iter()
                                .any(|full| full.starts_with(&k))
                    })
                    .map(|p| p as i64 + 1)
            }
            _ => None,
        };
        numbers.push(
            n.ok_or_else(|| invalid(field, format!("{d} is not a day of the week (MON…SUN or 1 = Sunday … 7)")))?,
        );
    }
    DaysOfWeek::from_quartz_numbers(&numbers).ok_or_else(|| invalid(field, "day numbers run from 1 (Sunday) to 7"))
}

/// Refuses a repeating simple trigger firing more often than `min` (Quartz accepts any
/// interval of 1 ms or more; a node firing a trigger every millisecond does nothing else).
/// Calendar-interval and daily-time-interval triggers count whole seconds at least.
pub(crate) fn check_interval(tr: &Trigger, min: jiff::SignedDuration) -> Result<(), SchedulerError> {
    match &tr.schedule {
        Schedule::Simple(s) if s.repeat_count != 0 && jiff::SignedDuration::from_millis(s.interval_ms) < min => {
            let interval = jiff::SignedDuration::from_millis(s.interval_ms);
            Err(invalid("simple.interval", kairos_core::repeat::too_short(&format!("{interval:#}"), min)))
        }
        _ => Ok(()),
    }
}

/// The schedule a request asks for (exactly one kind), validated field by field.
fn schedule_of(spec: &TriggerSpec, now: Timestamp) -> Result<Schedule, SchedulerError> {
    let given = [
        spec.cron.is_some(),
        spec.simple.is_some(),
        spec.calendar_interval.is_some(),
        spec.daily_time_interval.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(invalid("schedule", "give exactly one of cron, simple, calendarInterval, dailyTimeInterval"));
    }
    if let Some(c) = &spec.cron {
        let z = zone("cron.timeZone", &c.time_zone)?;
        let expression = kairos_cron::CronExpr::parse(&c.expression).map_err(|e| invalid("cron.expression", e))?;
        return Ok(Schedule::Cron(CronSchedule { expression, time_zone: z }));
    }
    if let Some(s) = &spec.simple {
        let interval = match &s.interval {
            None => jiff::SignedDuration::ZERO,
            Some(text) => {
                let d = kairos_time::IsoDuration::parse(text).map_err(|e| invalid("simple.interval", e))?;
                // A fixed length: months and years have none (use calendarInterval for them).
                if d.has_calendar_units() {
                    return Err(invalid(
                        "simple.interval",
                        format!("'{text}' has days, months or years, whose length varies: use calendarInterval"),
                    ));
                }
                d.to_signed_duration_at(now).map_err(|e| invalid("simple.interval", e))?
            }
        };
        if interval.is_negative() {
            return Err(invalid("simple.interval", "must not be negative"));
        }
        let repeat = s.repeat_count.unwrap_or(if s.interval.is_some() { -1 } else { 0 });
        return Ok(Schedule::Simple(SimpleSchedule::new(repeat, interval)));
    }
    if let Some(c) = &spec.calendar_interval {
        let mut s = CalendarIntervalSchedule::new(c.interval, c.unit, zone("calendarInterval.timeZone", &c.time_zone)?);
        s.preserve_hour_of_day_across_dst = c.preserve_hour_of_day_across_daylight_savings;
        s.skip_day_if_hour_does_not_exist = c.skip_day_if_hour_does_not_exist;
        return Ok(Schedule::CalendarInterval(s));
    }
    let d = spec.daily_time_interval.as_ref().expect("one kind was given");
    let mut s = DailyTimeIntervalSchedule::new(d.interval, d.unit, zone("dailyTimeInterval.timeZone", &d.time_zone)?);
    s.start_time_of_day = time_of_day("dailyTimeInterval.startTimeOfDay", &d.start_time_of_day, TimeOfDay::MIDNIGHT)?;
    s.end_time_of_day = time_of_day("dailyTimeInterval.endTimeOfDay", &d.end_time_of_day, TimeOfDay::LAST_SECOND)?;
    s.days_of_week = days_of_week("dailyTimeInterval.daysOfWeek", &d.days_of_week)?;
    if let Some(n) = d.repeat_count {
        s.repeat_count = n;
    }
    Ok(Schedule::DailyTimeInterval(s))
}

/// The request as a validated trigger (no fire time computed yet), starting at `now` unless it
/// says otherwise. Errors name the request's field.
pub(crate) fn trigger_of(spec: &TriggerSpec, now: Timestamp) -> Result<Trigger, SchedulerError> {
    let group = spec.group.clone().unwrap_or_else(|| DEFAULT_GROUP.into());
    let job_group = spec.job_group.clone().unwrap_or_else(|| DEFAULT_GROUP.into());
    check_name("name", &spec.name)?;
    check_name("group", &group)?;
    check_name("jobName", &spec.job_name)?;
    check_name("jobGroup", &job_group)?;
    if let Some(c) = &spec.calendar_name {
        check_name("calendarName", c)?;
    }
    if spec.description.as_ref().is_some_and(|d| d.chars().count() > 250) {
        return Err(invalid("description", "is longer than 250 characters"));
    }
    for (field, t) in [("startTime", spec.start_time), ("endTime", spec.end_time)] {
        if let Some(t) = t {
            kairos_time::check_accepted_instant(t).map_err(|m| invalid(field, m))?;
        }
    }
    let schedule = schedule_of(spec, now)?;
    let start = spec.start_time.unwrap_or(now);
    let mut tr = Trigger::new(
        TriggerKey::new(spec.name.clone(), group),
        JobKey::new(spec.job_name.clone(), job_group),
        start,
        schedule,
    );
    tr.description = spec.description.clone();
    if let Some(end) = spec.end_time {
        tr = tr.with_end_time(end);
    }
    if let Some(p) = spec.priority {
        tr = tr.with_priority(p);
    }
    if let Some(c) = &spec.calendar_name {
        tr = tr.with_calendar(c.clone());
    }
    if let Some(m) = &spec.misfire_policy {
        let kind = tr.kind();
        let parsed = match m {
            Json::Number(n) => n
                .as_i64()
                .and_then(|c| i32::try_from(c).ok())
                .ok_or_else(|| invalid("misfirePolicy", format!("{n} is not a misfire instruction")))
                .and_then(|c| MisfireInstruction::from_code(c, kind).map_err(|e| invalid("misfirePolicy", e))),
            Json::String(s) => MisfireInstruction::parse(s, kind).map_err(|e| invalid("misfirePolicy", e)),
            other => Err(invalid("misfirePolicy", format!("{other} is not a misfire instruction"))),
        }?;
        tr = tr.with_misfire_instruction(parsed);
    }
    tr.validate().map_err(|e| {
        // The model's field paths (`schedule.interval`, `key.name`) in the request's words.
        let field = match e.field() {
            "key.name" => "name".to_string(),
            "key.group" => "group".to_string(),
            f => f.replacen("schedule.", kind_prefix(tr.kind()), 1),
        };
        SchedulerError::invalid(field, e.to_string())
    })?;
    Ok(tr)
}

fn kind_prefix(k: TriggerKind) -> &'static str {
    match k {
        TriggerKind::Simple => "simple.",
        TriggerKind::Cron => "cron.",
        TriggerKind::CalendarInterval => "calendarInterval.",
        TriggerKind::DailyTimeInterval => "dailyTimeInterval.",
    }
}
