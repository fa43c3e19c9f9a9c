//! Requests and views of the scheduler, and [`kairos_schedule::Trigger`] ↔ QRTZ_* rows.
//!
//! The column mapping is Quartz's own (its JDBC delegates'): the common columns in
//! QRTZ_TRIGGERS, then QRTZ_SIMPLE_TRIGGERS, QRTZ_CRON_TRIGGERS, or QRTZ_SIMPROP_TRIGGERS for
//! calendar-interval and daily-time-interval triggers (see 0004_scheduler.sql).

use super::rows::{ms_to_ts, ts_to_ms};
use super::{DEFAULT_GROUP, SchedulerError, TriggerState, b, check_name, i, oi, ot, t, w};
use jiff::Timestamp;
use kairos_schedule::{
    Calendar, CalendarIntervalSchedule, CronSchedule, DailyTimeIntervalSchedule, DaysOfWeek, IntervalUnit, JobKey,
    MisfireInstruction, Schedule, SimpleSchedule, TimeOfDay, Trigger, TriggerKey, TriggerKind, Zone,
};
use kairos_store::{SqlValue, Write};
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

// ----- rows -----------------------------------------------------------------------------------

/// The columns read to rebuild a trigger: QRTZ_TRIGGERS and every type table, joined.
pub(crate) const TRIGGER_SELECT: &str = "SELECT tr.TRIGGER_NAME, tr.TRIGGER_GROUP, tr.JOB_NAME, tr.JOB_GROUP, \
    tr.DESCRIPTION, tr.NEXT_FIRE_TIME, tr.PREV_FIRE_TIME, tr.PRIORITY, tr.TRIGGER_STATE, tr.TRIGGER_TYPE, tr.START_TIME, \
    tr.END_TIME, tr.CALENDAR_NAME, tr.MISFIRE_INSTR, tr.JOB_DATA, \
    st.REPEAT_COUNT, st.REPEAT_INTERVAL, st.TIMES_TRIGGERED, \
    ct.CRON_EXPRESSION, ct.TIME_ZONE_ID, \
    sp.STR_PROP_1, sp.STR_PROP_2, sp.STR_PROP_3, sp.INT_PROP_1, sp.INT_PROP_2, sp.LONG_PROP_1, sp.BOOL_PROP_1, \
    sp.BOOL_PROP_2, sp.TIME_ZONE_ID \
    FROM QRTZ_TRIGGERS tr \
    LEFT JOIN QRTZ_SIMPLE_TRIGGERS st ON st.SCHED_NAME = tr.SCHED_NAME AND st.TRIGGER_NAME = tr.TRIGGER_NAME AND st.TRIGGER_GROUP = tr.TRIGGER_GROUP \
    LEFT JOIN QRTZ_CRON_TRIGGERS ct ON ct.SCHED_NAME = tr.SCHED_NAME AND ct.TRIGGER_NAME = tr.TRIGGER_NAME AND ct.TRIGGER_GROUP = tr.TRIGGER_GROUP \
    LEFT JOIN QRTZ_SIMPROP_TRIGGERS sp ON sp.SCHED_NAME = tr.SCHED_NAME AND sp.TRIGGER_NAME = tr.TRIGGER_NAME AND sp.TRIGGER_GROUP = tr.TRIGGER_GROUP";

/// A stored trigger: the model, its state and its own data.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    pub trigger: Trigger,
    pub state: TriggerState,
    pub data: Map<String, Json>,
}

fn s(v: &SqlValue) -> Option<String> {
    match v {
        SqlValue::Null => None,
        SqlValue::Text(x) => Some(x.clone()),
        other => other.as_i64().map(|n| n.to_string()),
    }
}

/// Rebuilds a trigger from a [`TRIGGER_SELECT`] row. Errors say which column is wrong (a row
/// written by hand or by another tool); the caller puts the trigger in ERROR, never panics.
pub(crate) fn stored_of(r: &[SqlValue]) -> Result<Stored, String> {
    let name = s(&r[0]).unwrap_or_default();
    let group = s(&r[1]).unwrap_or_default();
    // Instants are epoch milliseconds; text where one should be (SQLite keeps it) is named,
    // not read as 1970.
    for (k, column, required) in
        [(5, "NEXT_FIRE_TIME", false), (6, "PREV_FIRE_TIME", false), (10, "START_TIME", true), (11, "END_TIME", false)]
    {
        let bad = match &r[k] {
            SqlValue::Null => required,
            v => v.as_i64().is_none(),
        };
        if bad {
            let raw = match &r[k] {
                SqlValue::Null => "NULL".to_string(),
                SqlValue::Text(x) => x.clone(),
                other => serde_json::to_string(other).unwrap_or_default(),
            };
            return Err(format!("{column} '{raw}' is not epoch milliseconds"));
        }
    }
    let ms = |k: usize| r[k].as_i64();
    let kind_text = s(&r[9]).unwrap_or_default();
    let kind = TriggerKind::from_quartz_type(&kind_text)
        .ok_or_else(|| format!("TRIGGER_TYPE '{kind_text}' is not one kairos runs (SIMPLE, CRON, CAL_INT, DAILY_I)"))?;
    let unit = |k: usize| -> Result<IntervalUnit, String> {
        let text = s(&r[k]).unwrap_or_default();
        serde_json::from_value(Json::String(text.clone()))
            .map_err(|_| format!("STR_PROP_1 '{text}' is not an interval unit"))
    };
    let schedule = match kind {
        TriggerKind::Simple => Schedule::Simple(SimpleSchedule {
            repeat_count: ms(15).ok_or("QRTZ_SIMPLE_TRIGGERS row missing")? as i32,
            interval_ms: ms(16).unwrap_or(0),
            times_triggered: ms(17).unwrap_or(0) as i32,
        }),
        TriggerKind::Cron => {
            let text = s(&r[18]).ok_or("QRTZ_CRON_TRIGGERS row missing")?;
            let expression =
                kairos_cron::CronExpr::parse(&text).map_err(|e| format!("CRON_EXPRESSION '{text}': {e}"))?;
            let z = s(&r[19]).map(Zone::new).unwrap_or_else(Zone::utc);
            Schedule::Cron(CronSchedule { expression, time_zone: z })
        }
        TriggerKind::CalendarInterval => {
            let mut c = CalendarIntervalSchedule::new(
                ms(23).ok_or("QRTZ_SIMPROP_TRIGGERS row missing")? as i32,
                unit(20)?,
                s(&r[21]).map(Zone::new).unwrap_or_else(Zone::utc),
            );
            c.times_triggered = ms(24).unwrap_or(0) as i32;
            c.preserve_hour_of_day_across_dst = r[26].as_bool().unwrap_or(false);
            c.skip_day_if_hour_does_not_exist = r[27].as_bool().unwrap_or(false);
            Schedule::CalendarInterval(c)
        }
        TriggerKind::DailyTimeInterval => {
            let mut d = DailyTimeIntervalSchedule::new(
                ms(23).ok_or("QRTZ_SIMPROP_TRIGGERS row missing")? as i32,
                unit(20)?,
                s(&r[28]).map(Zone::new).unwrap_or_else(Zone::utc),
            );
            d.times_triggered = ms(24).unwrap_or(0) as i32;
            d.repeat_count = ms(25).unwrap_or(-1) as i32;
            if let Some(days) = s(&r[21]).filter(|x| !x.is_empty()) {
                let nums: Vec<i64> = days.split(',').filter_map(|x| x.trim().parse().ok()).collect();
                d.days_of_week = DaysOfWeek::from_quartz_numbers(&nums)
                    .ok_or(format!("STR_PROP_2 '{days}' is not a set of days"))?;
            }
            if let Some(tod) = s(&r[22]) {
                let p: Vec<u8> = tod.split(',').map(|x| x.trim().parse().unwrap_or(0)).collect();
                if p.len() >= 6 {
                    d.start_time_of_day = TimeOfDay::new(p[0], p[1], p[2]);
                    d.end_time_of_day = TimeOfDay::new(p[3], p[4], p[5]);
                }
            }
            Schedule::DailyTimeInterval(d)
        }
    };
    let start = ms_to_ts(ms(10).unwrap_or(0));
    let mut tr = Trigger::new(
        TriggerKey::new(name, group),
        JobKey::new(s(&r[2]).unwrap_or_default(), s(&r[3]).unwrap_or_default()),
        start,
        schedule,
    );
    tr.description = s(&r[4]);
    tr.next_fire_time = ms(5).map(ms_to_ts);
    tr.previous_fire_time = ms(6).filter(|v| *v >= 0).map(ms_to_ts);
    tr.priority = ms(7).unwrap_or(5) as i32;
    tr.end_time = ms(11).map(ms_to_ts);
    tr.calendar_name = s(&r[12]);
    tr.misfire_instruction =
        MisfireInstruction::from_code(ms(13).unwrap_or(0) as i32, kind).map_err(|e| format!("MISFIRE_INSTR: {e}"))?;
    let state_text = s(&r[8]).unwrap_or_default();
    let state =
        TriggerState::parse(&state_text).ok_or(format!("TRIGGER_STATE '{state_text}' is not one kairos uses"))?;
    let data = s(&r[14]).and_then(|d| serde_json::from_str::<Map<String, Json>>(&d).ok()).unwrap_or_default();
    Ok(Stored { trigger: tr, state, data })
}

/// The statements inserting a new trigger's rows.
pub(crate) fn trigger_insert(sched: &str, tr: &Trigger, state: TriggerState, data: &Map<String, Json>) -> Vec<Write> {
    let key = &tr.key;
    let data = if data.is_empty() { SqlValue::Null } else { SqlValue::Text(Json::Object(data.clone()).to_string()) };
    let mut out = vec![w(
        "INSERT INTO QRTZ_TRIGGERS (SCHED_NAME, TRIGGER_NAME, TRIGGER_GROUP, JOB_NAME, JOB_GROUP, DESCRIPTION, NEXT_FIRE_TIME, \
         PREV_FIRE_TIME, PRIORITY, TRIGGER_STATE, TRIGGER_TYPE, START_TIME, END_TIME, CALENDAR_NAME, MISFIRE_INSTR, JOB_DATA) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        vec![
            t(sched),
            t(&key.name),
            t(&key.group),
            t(&tr.job_key.name),
            t(&tr.job_key.group),
            ot(&tr.description),
            oi(tr.next_fire_time.map(ts_to_ms)),
            i(tr.previous_fire_time.map(ts_to_ms).unwrap_or(-1)),
            i(tr.priority.into()),
            t(state.as_str()),
            t(tr.kind().quartz_type()),
            i(ts_to_ms(tr.start_time)),
            oi(tr.end_time.map(ts_to_ms)),
            ot(&tr.calendar_name),
            i(tr.misfire_instruction.code().into()),
            data,
        ],
    )
    .expect(1)];
    let k = || vec![t(sched), t(&key.name), t(&key.group)];
    match &tr.schedule {
        Schedule::Simple(s) => out.push(w(
            "INSERT INTO QRTZ_SIMPLE_TRIGGERS (SCHED_NAME, TRIGGER_NAME, TRIGGER_GROUP, REPEAT_COUNT, REPEAT_INTERVAL, TIMES_TRIGGERED) \
             VALUES (?, ?, ?, ?, ?, ?)",
            [k(), vec![i(s.repeat_count.into()), i(s.interval_ms), i(s.times_triggered.into())]].concat(),
        )),
        Schedule::Cron(c) => out.push(w(
            "INSERT INTO QRTZ_CRON_TRIGGERS (SCHED_NAME, TRIGGER_NAME, TRIGGER_GROUP, CRON_EXPRESSION, TIME_ZONE_ID) VALUES (?, ?, ?, ?, ?)",
            [k(), vec![t(c.expression.as_str()), t(c.time_zone.name())]].concat(),
        )),
        Schedule::CalendarInterval(c) => out.push(w(
            "INSERT INTO QRTZ_SIMPROP_TRIGGERS (SCHED_NAME, TRIGGER_NAME, TRIGGER_GROUP, STR_PROP_1, STR_PROP_2, INT_PROP_1, INT_PROP_2, \
             BOOL_PROP_1, BOOL_PROP_2) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                k(),
                vec![
                    t(c.unit.quartz_name()),
                    t(c.time_zone.name()),
                    i(c.interval.into()),
                    i(c.times_triggered.into()),
                    b(c.preserve_hour_of_day_across_dst),
                    b(c.skip_day_if_hour_does_not_exist),
                ],
            ]
            .concat(),
        )),
        Schedule::DailyTimeInterval(d) => {
            let days: Vec<String> = d.days_of_week.quartz_numbers().iter().map(|n| n.to_string()).collect();
            let (a, z) = (d.start_time_of_day, d.end_time_of_day);
            out.push(w(
                "INSERT INTO QRTZ_SIMPROP_TRIGGERS (SCHED_NAME, TRIGGER_NAME, TRIGGER_GROUP, STR_PROP_1, STR_PROP_2, STR_PROP_3, \
                 INT_PROP_1, INT_PROP_2, LONG_PROP_1, TIME_ZONE_ID) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    k(),
                    vec![
                        t(d.unit.quartz_name()),
                        t(&days.join(",")),
                        t(&format!("{},{},{},{},{},{}", a.hour, a.minute, a.second, z.hour, z.minute, z.second)),
                        i(d.interval.into()),
                        i(d.times_triggered.into()),
                        i(d.repeat_count.into()),
                        t(d.time_zone.name()),
                    ],
                ]
                .concat(),
            ))
        }
    }
    out
}

/// The statements moving a trigger on after a fire or a misfire, conditional on the trigger
/// still being `WAITING` at `was` (its NEXT_FIRE_TIME when loaded): the one check that makes
/// each fire time fire once cluster-wide.
pub(crate) fn trigger_advance(sched: &str, tr: &Trigger, was: Option<Timestamp>, state: TriggerState) -> Vec<Write> {
    let key = &tr.key;
    let mut out = vec![w(
        "UPDATE QRTZ_TRIGGERS SET NEXT_FIRE_TIME = ?, PREV_FIRE_TIME = ?, TRIGGER_STATE = ?, START_TIME = ? \
         WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ? AND TRIGGER_STATE = 'WAITING' AND NEXT_FIRE_TIME = ?",
        vec![
            oi(tr.next_fire_time.map(ts_to_ms)),
            i(tr.previous_fire_time.map(ts_to_ms).unwrap_or(-1)),
            t(state.as_str()),
            // A "reschedule now" misfire instruction restarts the trigger.
            i(ts_to_ms(tr.start_time)),
            t(sched),
            t(&key.name),
            t(&key.group),
            oi(was.map(ts_to_ms)),
        ],
    )
    .expect(1)];
    let k = vec![t(sched), t(&key.name), t(&key.group)];
    match &tr.schedule {
        Schedule::Simple(s) => out.push(w(
            "UPDATE QRTZ_SIMPLE_TRIGGERS SET TIMES_TRIGGERED = ?, REPEAT_COUNT = ? WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? \
             AND TRIGGER_GROUP = ?",
            [vec![i(s.times_triggered.into()), i(s.repeat_count.into())], k].concat(),
        )),
        Schedule::CalendarInterval(c) => out.push(w(
            "UPDATE QRTZ_SIMPROP_TRIGGERS SET INT_PROP_2 = ? WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ?",
            [vec![i(c.times_triggered.into())], k].concat(),
        )),
        Schedule::DailyTimeInterval(d) => out.push(w(
            "UPDATE QRTZ_SIMPROP_TRIGGERS SET INT_PROP_2 = ? WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ?",
            [vec![i(d.times_triggered.into())], k].concat(),
        )),
        Schedule::Cron(_) => {}
    }
    out
}

/// Reads a stored calendar (with its base chain, embedded when it was stored).
pub(crate) fn calendar_of(json: &str) -> Result<Calendar, String> {
    serde_json::from_str(json).map_err(|e| format!("stored calendar does not parse: {e}"))
}
