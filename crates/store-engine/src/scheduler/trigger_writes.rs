//! Writing triggers: a new trigger's rows, a trigger moved on after a fire or a misfire, its
//! state changes (pause, error, the blocked ones) and its deletion. Each function builds the
//! statements; the caller commits them (the firing path stages them with its trigger job's
//! completion) and decides, by `kairos::scheduler::state`'s table, which transition it makes.

use super::{TRIGGER_HANDLER, TriggerState, WORK_HANDLER, b, i, oi, ot, scope_type, t, ts_to_ms, w};
use jiff::Timestamp;
use kairos_schedule::{Schedule, Trigger, TriggerKind};
use kairos_store::{SqlValue, Write};
use serde_json::{Map, Value as Json};

/// The statements inserting a new trigger's rows, in `state` (WAITING, or PAUSED in a paused
/// group).
pub fn trigger_insert(sched: &str, tr: &Trigger, state: TriggerState, data: &Map<String, Json>) -> Vec<Write> {
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

/// The statements moving a trigger on after a fire or a misfire, into `state` (WAITING, or
/// BLOCKED), conditional on the trigger still being `WAITING` at `was` (its NEXT_FIRE_TIME
/// when loaded): the one check that makes each fire time fire once cluster-wide.
pub fn trigger_advance(sched: &str, tr: &Trigger, was: Option<Timestamp>, state: TriggerState) -> Vec<Write> {
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

/// Inside a trigger's own trigger job, after its last fire: its type row, then its row —
/// conditional on the fire time loaded (the once-per-fire-time check) — and its job when that
/// is not `durable` and no other trigger points at it (Quartz deletes both). The trigger job
/// itself is deleted by its completion.
pub fn trigger_finish(sched: &str, tr: &Trigger, was: Option<Timestamp>, durable: bool) -> Vec<Write> {
    let (key, job) = (&tr.key, &tr.job_key);
    let k = || vec![t(sched), t(&key.name), t(&key.group)];
    let table = match tr.kind() {
        TriggerKind::Simple => "QRTZ_SIMPLE_TRIGGERS",
        TriggerKind::Cron => "QRTZ_CRON_TRIGGERS",
        _ => "QRTZ_SIMPROP_TRIGGERS",
    };
    let mut out = vec![
        w(&format!("DELETE FROM {table} WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ?"), k()),
        w(
            "DELETE FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ? \
             AND TRIGGER_STATE = ? AND NEXT_FIRE_TIME = ?",
            [k(), vec![t(TriggerState::Waiting.as_str()), SqlValue::Int(was.map(ts_to_ms).unwrap_or(-1))]].concat(),
        )
        .expect(1)
        .keyed(),
    ];
    if !durable {
        out.push(super::orphan_job_delete(sched, &job.group, &job.name));
    }
    out
}

/// Puts a WAITING trigger in ERROR (its row cannot be used); an operator resumes it.
pub fn trigger_error(sched: &str, group: &str, name: &str) -> Write {
    w(
        "UPDATE QRTZ_TRIGGERS SET TRIGGER_STATE = 'ERROR' WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ? \
         AND TRIGGER_STATE = 'WAITING'",
        vec![t(sched), t(name), t(group)],
    )
}

/// PAUSED_BLOCKED → BLOCKED (a resume of a trigger whose job is still busy).
pub fn trigger_resume_blocked(sched: &str, group: &str, name: &str) -> Write {
    w(
        "UPDATE QRTZ_TRIGGERS SET TRIGGER_STATE = 'BLOCKED' WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ? \
         AND TRIGGER_STATE = 'PAUSED_BLOCKED'",
        vec![t(sched), t(name), t(group)],
    )
}

/// PAUSED_BLOCKED → PAUSED (the busy firing of a paused trigger's job ended).
pub fn trigger_unblock_paused(sched: &str, group: &str, name: &str) -> Write {
    w(
        "UPDATE QRTZ_TRIGGERS SET TRIGGER_STATE = 'PAUSED' WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ? \
         AND TRIGGER_STATE = 'PAUSED_BLOCKED'",
        vec![t(sched), t(name), t(group)],
    )
}

/// Which triggers a pause is about.
#[derive(Debug, Clone, Copy)]
pub enum PauseScope<'a> {
    /// One trigger: (group, name).
    Trigger(&'a str, &'a str),
    /// Every trigger of a group.
    Group(&'a str),
}

/// Pauses one trigger or every trigger of a group: WAITING → PAUSED with the trigger job
/// deleted first (a job some node is running loses its lease: that firing is dropped), the
/// firings committed ahead of their time and not started cancelled, BLOCKED → PAUSED_BLOCKED.
pub fn trigger_pause(sched: &str, scope: PauseScope<'_>, now: Timestamp) -> Vec<Write> {
    let (filter, job_filter, binds): (&str, &str, Vec<SqlValue>) = match scope {
        PauseScope::Trigger(g, n) => {
            ("TRIGGER_GROUP = ? AND TRIGGER_NAME = ?", "SCOPE_DEFINITION_ID_ = ? AND SCOPE_ID_ = ?", vec![t(g), t(n)])
        }
        PauseScope::Group(g) => ("TRIGGER_GROUP = ?", "SCOPE_DEFINITION_ID_ = ?", vec![t(g)]),
    };
    let with = |head: Vec<SqlValue>| [head, binds.clone()].concat();
    let mut out = early_firings_cancel(sched, filter, job_filter, &binds, now);
    out.extend([
        w(
            &format!(
                "DELETE FROM ACT_RU_JOB WHERE SCOPE_TYPE_ = ? AND HANDLER_TYPE_ = ? AND {job_filter} AND EXISTS \
                 (SELECT 1 FROM QRTZ_TRIGGERS tr WHERE tr.SCHED_NAME = ? AND tr.TRIGGER_GROUP = ACT_RU_JOB.SCOPE_DEFINITION_ID_ \
                 AND tr.TRIGGER_NAME = ACT_RU_JOB.SCOPE_ID_ AND tr.TRIGGER_STATE = 'WAITING')"
            ),
            [vec![t(&scope_type(sched)), t(TRIGGER_HANDLER)], binds.clone(), vec![t(sched)]].concat(),
        ),
        w(
            &format!(
                "UPDATE QRTZ_TRIGGERS SET TRIGGER_STATE = 'PAUSED' WHERE SCHED_NAME = ? AND {filter} AND TRIGGER_STATE = 'WAITING'"
            ),
            with(vec![t(sched)]),
        ),
        w(
            &format!(
                "UPDATE QRTZ_TRIGGERS SET TRIGGER_STATE = 'PAUSED_BLOCKED' WHERE SCHED_NAME = ? AND {filter} AND TRIGGER_STATE = 'BLOCKED'"
            ),
            with(vec![t(sched)]),
        ),
    ]);
    out
}

/// Puts `group` in QRTZ_PAUSED_TRIGGER_GRPS (once): triggers added to it later start PAUSED.
pub fn paused_group_insert(sched: &str, group: &str) -> Vec<Write> {
    vec![
        paused_group_delete(sched, group),
        w("INSERT INTO QRTZ_PAUSED_TRIGGER_GRPS (SCHED_NAME, TRIGGER_GROUP) VALUES (?, ?)", vec![t(sched), t(group)]),
    ]
}

/// Takes `group` out of QRTZ_PAUSED_TRIGGER_GRPS.
pub fn paused_group_delete(sched: &str, group: &str) -> Write {
    w("DELETE FROM QRTZ_PAUSED_TRIGGER_GRPS WHERE SCHED_NAME = ? AND TRIGGER_GROUP = ?", vec![t(sched), t(group)])
}

/// The statements deleting one trigger's rows, its trigger job and its firings committed ahead
/// of their time that have not started (not the work of firings under way); the last one
/// deletes the trigger row.
///
/// The trigger job goes first: a fire of the trigger completes by updating that ACT_RU_JOB row
/// and then the QRTZ_* rows, so a delete that took the QRTZ_* rows first and the job row last
/// would deadlock with it on PostgreSQL (seen: 40P01 between an unschedule and a 0.2 s simple
/// trigger's fire). Both now lock in one order: the job row, then the trigger's rows.
pub fn trigger_delete(sched: &str, group: &str, name: &str, now: Timestamp) -> Vec<Write> {
    let key = || vec![t(sched), t(name), t(group)];
    let mut out = vec![trigger_job_delete(sched, group, name)];
    out.extend(early_firings_cancel(
        sched,
        "TRIGGER_GROUP = ? AND TRIGGER_NAME = ?",
        "SCOPE_DEFINITION_ID_ = ? AND SCOPE_ID_ = ?",
        &[t(group), t(name)],
        now,
    ));
    out.extend(
        ["QRTZ_SIMPLE_TRIGGERS", "QRTZ_CRON_TRIGGERS", "QRTZ_SIMPROP_TRIGGERS", "QRTZ_BLOB_TRIGGERS"].iter().map(
            |table| {
                w(
                    &format!("DELETE FROM {table} WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ?"),
                    key(),
                )
            },
        ),
    );
    out.push(w("DELETE FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ?", key()));
    out
}

/// Cancels firings committed ahead of their fire time (`SchedulerSettings::fire_ahead`) that no
/// node has started: their work jobs (due after `now`, never acquired), then the
/// QRTZ_FIRED_TRIGGERS rows left without a work job. `fired_filter` selects the triggers by
/// QRTZ_FIRED_TRIGGERS' columns, `job_filter` the same triggers by ACT_RU_JOB's scope columns;
/// `binds` serve both.
fn early_firings_cancel(
    sched: &str,
    fired_filter: &str,
    job_filter: &str,
    binds: &[SqlValue],
    now: Timestamp,
) -> Vec<Write> {
    vec![
        w(
            &format!(
                "DELETE FROM ACT_RU_JOB WHERE SCOPE_TYPE_ = ? AND HANDLER_TYPE_ = ? AND {job_filter} \
                 AND LOCK_OWNER_ IS NULL AND ATTEMPTS_ = 0 AND DUEDATE_ > ?"
            ),
            [vec![t(&scope_type(sched)), t(WORK_HANDLER)], binds.to_vec(), vec![SqlValue::Timestamp(now)]].concat(),
        ),
        w(
            &format!(
                "DELETE FROM QRTZ_FIRED_TRIGGERS WHERE SCHED_NAME = ? AND {fired_filter} AND NOT EXISTS \
                 (SELECT 1 FROM ACT_RU_JOB j WHERE j.ID_ = QRTZ_FIRED_TRIGGERS.ENTRY_ID)"
            ),
            [vec![t(sched)], binds.to_vec()].concat(),
        ),
    ]
}

/// Deletes a trigger's trigger job, if it has one.
pub fn trigger_job_delete(sched: &str, group: &str, name: &str) -> Write {
    w(
        "DELETE FROM ACT_RU_JOB WHERE SCOPE_ID_ = ? AND SCOPE_TYPE_ = ? AND SCOPE_DEFINITION_ID_ = ? AND HANDLER_TYPE_ = ?",
        vec![t(name), t(&scope_type(sched)), t(group), t(TRIGGER_HANDLER)],
    )
}
