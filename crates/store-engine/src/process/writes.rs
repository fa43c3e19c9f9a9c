//! A command's [`Changes`] as statements: the runtime rows of the instance (executions, tasks
//! and their candidates, variables, subscriptions, jobs) and, through [`super::history`], its
//! history rows.
//!
//! Every command on an instance first bumps the root execution's REV_ with the REV_ it loaded
//! (`expect(1)`): two commands on one instance can both compute, but only the first commits;
//! the other gets a conflict and is retried on fresh rows (seed 003 §2.1's optimistic lock,
//! taken for the whole instance, so a parallel join can never lose an arriving token).
//! Every checked write names its row by primary key ([`Write::keyed`]): when a completion
//! batch merges the same write of many jobs into one statement, its count still proves that
//! each of them held.

use super::values::encode_value;
use super::{HistoryLevel, b, i, ot, ots, t, ts};
use kairos_process::*;
use kairos_store::{SqlValue, Write};
/// The statements that take the rows from `before` to `after` (see the module docs).
pub fn instance_writes(before: Option<&Instance>, after: &Instance, level: HistoryLevel) -> Vec<Write> {
    // Tasks from `audit` up; activities from `activity`, variables in `history::variable_writes`.
    let history = level >= HistoryLevel::Audit;
    let c = changes(before, after);
    let pi = &after.id;
    let mut w = Vec::new();
    let root_deleted = c.executions_deleted.iter().any(|(id, _)| id == pi);
    if !c.new_instance && !root_deleted {
        // The instance lock: this command's view of the instance is still the current one.
        let root = after.execution(pi);
        w.push(
            Write::new(
                "UPDATE ACT_RU_EXECUTION SET REV_ = REV_ + 1, SEQ_ = ?, ACT_ID_ = ?, IS_ACTIVE_ = ?, IS_CONCURRENT_ = ?, \
                 IS_SCOPE_ = ?, SUSPENSION_STATE_ = ?, BUSINESS_KEY_ = ? WHERE ID_ = ? AND REV_ = ?",
                vec![
                    i(after.seq),
                    ot(&root.and_then(|r| r.activity.clone())),
                    b(root.is_some_and(|r| r.is_active)),
                    b(false),
                    b(true),
                    i(i64::from(after.suspension_state.as_i32())),
                    ot(&after.business_key),
                    t(pi),
                    i(i64::from(after.root_rev)),
                ],
            )
            .expect(1)
            .keyed(),
        );
    }
    if root_deleted {
        w.push(
            Write::new(
                "DELETE FROM ACT_RU_EXECUTION WHERE ID_ = ? AND REV_ = ?",
                vec![t(pi), i(i64::from(after.root_rev))],
            )
            .expect(1)
            .keyed(),
        );
    }
    for e in &c.executions_inserted {
        w.push(Write::new(
            "INSERT INTO ACT_RU_EXECUTION (ID_, REV_, PROC_INST_ID_, BUSINESS_KEY_, PARENT_ID_, PROC_DEF_ID_, SUPER_EXEC_, \
             ROOT_PROC_INST_ID_, ACT_ID_, IS_ACTIVE_, IS_CONCURRENT_, IS_SCOPE_, IS_EVENT_SCOPE_, IS_MI_ROOT_, \
             SUSPENSION_STATE_, TENANT_ID_, START_ACT_ID_, START_TIME_, START_USER_ID_, SEQ_) \
             VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                t(&e.id),
                t(pi),
                ot(&after.business_key),
                ot(&e.parent_id),
                t(&after.definition_id),
                if e.id == *pi { ot(&after.super_exec) } else { ot(&e.super_exec) },
                t(pi),
                ot(&e.activity),
                b(e.is_active),
                b(e.is_concurrent),
                b(e.is_scope),
                b(e.is_event_scope),
                b(e.is_mi_root),
                i(i64::from(e.suspension_state.as_i32())),
                t(&after.tenant_id),
                if e.id == *pi { ot(&after.start_activity) } else { SqlValue::Null },
                ts(e.start_time),
                if e.id == *pi { ot(&after.start_user) } else { SqlValue::Null },
                i(if e.id == *pi { after.seq } else { 0 }),
            ],
        ));
    }
    for e in c.executions_updated.iter().filter(|e| e.id != *pi) {
        w.push(
            Write::new(
                "UPDATE ACT_RU_EXECUTION SET REV_ = REV_ + 1, PARENT_ID_ = ?, ACT_ID_ = ?, IS_ACTIVE_ = ?, IS_CONCURRENT_ = ?, \
                 IS_SCOPE_ = ?, IS_EVENT_SCOPE_ = ?, IS_MI_ROOT_ = ?, SUSPENSION_STATE_ = ?, BUSINESS_KEY_ = ? \
                 WHERE ID_ = ? AND REV_ = ?",
                vec![
                    ot(&e.parent_id),
                    ot(&e.activity),
                    b(e.is_active),
                    b(e.is_concurrent),
                    b(e.is_scope),
                    b(e.is_event_scope),
                    b(e.is_mi_root),
                    i(i64::from(e.suspension_state.as_i32())),
                    ot(&after.business_key),
                    t(&e.id),
                    i(i64::from(e.rev)),
                ],
            )
            .expect(1)
            .keyed(),
        );
    }
    for (id, rev) in c.executions_deleted.iter().filter(|(id, _)| id != pi) {
        w.push(
            Write::new("DELETE FROM ACT_RU_EXECUTION WHERE ID_ = ? AND REV_ = ?", vec![t(id), i(i64::from(*rev))])
                .expect(1)
                .keyed(),
        );
    }
    for tk in &c.tasks_inserted {
        w.push(Write::new(
            "INSERT INTO ACT_RU_TASK (ID_, REV_, EXECUTION_ID_, PROC_INST_ID_, PROC_DEF_ID_, NAME_, TASK_DEF_KEY_, ASSIGNEE_, \
             PRIORITY_, CREATE_TIME_, DUE_DATE_, SUSPENSION_STATE_, TENANT_ID_, FORM_KEY_, CLAIM_TIME_, OWNER_, DESCRIPTION_) \
             VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                t(&tk.id),
                t(&tk.execution_id),
                t(pi),
                t(&after.definition_id),
                ot(&tk.name),
                t(&tk.task_def_key),
                ot(&tk.assignee),
                i(i64::from(tk.priority)),
                ts(tk.create_time),
                ots(tk.due_date),
                i(i64::from(tk.suspension_state.as_i32())),
                t(&after.tenant_id),
                ot(&tk.form_key),
                ots(tk.claim_time),
                ot(&tk.owner),
                ot(&tk.description),
            ],
        ));
        w.extend(candidate_links(pi, &after.definition_id, tk));
        if history {
            w.push(Write::new(
                "INSERT INTO ACT_HI_TASKINST (ID_, REV_, PROC_DEF_ID_, TASK_DEF_KEY_, PROC_INST_ID_, EXECUTION_ID_, NAME_, \
                 ASSIGNEE_, START_TIME_, PRIORITY_, DUE_DATE_, FORM_KEY_, TENANT_ID_, LAST_UPDATED_TIME_) \
                 VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                vec![
                    t(&tk.id),
                    t(&after.definition_id),
                    t(&tk.task_def_key),
                    t(pi),
                    t(&tk.execution_id),
                    ot(&tk.name),
                    ot(&tk.assignee),
                    ts(tk.create_time),
                    i(i64::from(tk.priority)),
                    ots(tk.due_date),
                    ot(&tk.form_key),
                    t(&after.tenant_id),
                    ts(tk.create_time),
                ],
            ));
        }
    }
    for tk in &c.tasks_updated {
        w.push(
            Write::new(
                "UPDATE ACT_RU_TASK SET REV_ = REV_ + 1, ASSIGNEE_ = ?, CLAIM_TIME_ = ?, SUSPENSION_STATE_ = ?, NAME_ = ?, \
                 PRIORITY_ = ?, DUE_DATE_ = ?, OWNER_ = ?, DESCRIPTION_ = ? WHERE ID_ = ? AND REV_ = ?",
                vec![
                    ot(&tk.assignee),
                    ots(tk.claim_time),
                    i(i64::from(tk.suspension_state.as_i32())),
                    ot(&tk.name),
                    i(i64::from(tk.priority)),
                    ots(tk.due_date),
                    ot(&tk.owner),
                    ot(&tk.description),
                    t(&tk.id),
                    i(i64::from(tk.rev)),
                ],
            )
            .expect(1)
            .keyed(),
        );
        // The candidates as they are now: the task's candidate links are rewritten (a task has
        // a handful; rewriting is simpler and as cheap as diffing them).
        w.push(Write::new(
            "DELETE FROM ACT_RU_IDENTITYLINK WHERE TASK_ID_ = ? AND TYPE_ = 'candidate'",
            vec![t(&tk.id)],
        ));
        w.extend(candidate_links(pi, &after.definition_id, tk));
        if history {
            w.push(Write::new(
                "UPDATE ACT_HI_TASKINST SET ASSIGNEE_ = ?, CLAIM_TIME_ = ?, NAME_ = ?, PRIORITY_ = ?, DUE_DATE_ = ?, OWNER_ = ?, \
                 DESCRIPTION_ = ? WHERE ID_ = ?",
                vec![
                    ot(&tk.assignee),
                    ots(tk.claim_time),
                    ot(&tk.name),
                    i(i64::from(tk.priority)),
                    ots(tk.due_date),
                    ot(&tk.owner),
                    ot(&tk.description),
                    t(&tk.id),
                ],
            ));
        }
    }
    for (id, rev) in &c.tasks_deleted {
        w.push(
            Write::new("DELETE FROM ACT_RU_TASK WHERE ID_ = ? AND REV_ = ?", vec![t(id), i(i64::from(*rev))])
                .expect(1)
                .keyed(),
        );
        w.push(Write::new("DELETE FROM ACT_RU_IDENTITYLINK WHERE TASK_ID_ = ?", vec![t(id)]));
    }
    if history {
        for e in &after.ended_tasks {
            w.push(Write::new(
                "UPDATE ACT_HI_TASKINST SET END_TIME_ = ?, DURATION_ = ?, DELETE_REASON_ = ?, LAST_UPDATED_TIME_ = ? WHERE ID_ = ?",
                vec![ts(e.end), i(super::history::ms_between(e.start, e.end)), ot(&e.reason), ts(e.end), t(&e.id)],
            ));
        }
    }
    let now = after
        .ended
        .as_ref()
        .map(|(at, _)| *at)
        .or_else(|| after.activities.iter().map(|a| a.start).max())
        .unwrap_or(after.start_time);
    for v in &c.variables_inserted {
        let (ty, text_v, long_v, double_v) = encode_value(&v.value);
        w.push(Write::new(
            "INSERT INTO ACT_RU_VARIABLE (ID_, REV_, TYPE_, NAME_, EXECUTION_ID_, PROC_INST_ID_, TASK_ID_, TEXT_, LONG_, DOUBLE_) \
             VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                t(&v.id),
                t(ty),
                t(&v.name),
                t(&v.execution_id),
                t(pi),
                ot(&v.task_id),
                text_v,
                long_v,
                double_v,
            ],
        ));
    }
    for v in &c.variables_updated {
        let (ty, text_v, long_v, double_v) = encode_value(&v.value);
        w.push(
            Write::new(
                "UPDATE ACT_RU_VARIABLE SET REV_ = REV_ + 1, TYPE_ = ?, TEXT_ = ?, LONG_ = ?, DOUBLE_ = ? WHERE ID_ = ? AND REV_ = ?",
                vec![t(ty), text_v, long_v, double_v, t(&v.id), i(i64::from(v.rev))],
            )
            .expect(1)
            .keyed(),
        );
    }
    w.extend(super::history::variable_writes(before, after, &c, level, now));
    for (id, rev) in &c.variables_deleted {
        w.push(
            Write::new("DELETE FROM ACT_RU_VARIABLE WHERE ID_ = ? AND REV_ = ?", vec![t(id), i(i64::from(*rev))])
                .expect(1)
                .keyed(),
        );
    }
    for s in &c.subscriptions_inserted {
        w.push(Write::new(
            "INSERT INTO ACT_RU_EVENT_SUBSCR (ID_, REV_, EVENT_TYPE_, EVENT_NAME_, EXECUTION_ID_, PROC_INST_ID_, ACTIVITY_ID_, \
             CREATED_, PROC_DEF_ID_, TENANT_ID_) VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                t(&s.id),
                t(s.event_type.as_str()),
                t(&s.event_name),
                t(&s.execution_id),
                t(pi),
                t(&s.activity_id),
                ts(s.created),
                t(&after.definition_id),
                t(&after.tenant_id),
            ],
        ));
    }
    for id in &c.subscriptions_deleted {
        w.push(Write::new("DELETE FROM ACT_RU_EVENT_SUBSCR WHERE ID_ = ?", vec![t(id)]));
    }
    for j in &c.jobs_inserted {
        let retries = j
            .retry_cycle
            .as_deref()
            .and_then(|c| kairos_time::RetryCycle::parse(c).ok())
            .map_or(3, |c| i64::from(c.retries()) + 1);
        w.push(Write::new(
            "INSERT INTO ACT_RU_JOB (ID_, REV_, TYPE_, EXCLUSIVE_, EXCLUSIVE_KEY_, EXECUTION_ID_, PROCESS_INSTANCE_ID_, \
             PROC_DEF_ID_, ELEMENT_ID_, RETRIES_, INITIAL_RETRIES_, ATTEMPTS_, DUEDATE_, REPEAT_, RETRY_CYCLE_, HANDLER_TYPE_, \
             HANDLER_CFG_, CREATE_TIME_, TENANT_ID_) VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                t(&j.id),
                t(j.kind.job_type()),
                b(j.exclusive),
                if j.exclusive { t(pi) } else { SqlValue::Null },
                t(&j.execution_id),
                t(pi),
                t(&after.definition_id),
                t(&j.activity_id),
                i(retries),
                i(retries),
                ots(j.due),
                ot(&j.repeat),
                ot(&j.retry_cycle),
                t(j.kind.handler_type()),
                // An external-worker job's HANDLER_CFG_ is its topic (what fetch-and-lock matches).
                match &j.topic {
                    Some(topic) => t(topic),
                    None => t(&j.kind.config(&j.activity_id)),
                },
                ts(now),
                t(&after.tenant_id),
            ],
        ));
    }
    for id in &c.jobs_deleted {
        // An external task's failure may have left its errorDetails in ACT_GE_BYTEARRAY
        // (`external_fail_writes`); they go with it. Other jobs keep their one statement.
        let external = before.is_some_and(|b| b.jobs.iter().any(|j| &j.id == id && j.topic.is_some()));
        if external {
            w.push(super::external::external_details_delete(id));
        }
        w.push(Write::new("DELETE FROM ACT_RU_JOB WHERE ID_ = ?", vec![t(id)]));
    }
    // A thrown signal reaches other instances through a job committed with this command: it
    // is delivered after the commit, and never lost (super::SIGNAL_THROW). Not the instance's
    // job: no execution, so suspending or ending the thrower does not hold it back.
    for name in &after.thrown_signals {
        w.push(Write::new(
            "INSERT INTO ACT_RU_JOB (ID_, REV_, TYPE_, EXCLUSIVE_, PROC_DEF_ID_, RETRIES_, ATTEMPTS_, HANDLER_TYPE_, \
             HANDLER_CFG_, CREATE_TIME_, TENANT_ID_) VALUES (?, 1, 'message', ?, ?, 3, 0, ?, ?, ?, ?)",
            vec![
                t(&kairos_core::new_id()),
                b(false),
                t(&after.definition_id),
                t(super::SIGNAL_THROW),
                t(&serde_json::json!({"signal": name, "from": pi}).to_string()),
                ts(now),
                t(&after.tenant_id),
            ],
        ));
    }
    w.extend(super::history::instance_history_writes(before, after, &c, level));
    // Another job's effects reach this instance's rows only past the instance lock (the root's
    // REV_ check or its checked delete, written here too): a new instance's rows are fresh.
    // The instance's business binding, if it has one, ends with it (SPEC C3): its one row is
    // this instance's, guarded by the instance lock like the rest, so it commutes.
    // (A new instance's binding is written by its start, with the status it ends the start in.)
    if let Some((at, _)) = &after.ended
        && before.is_some_and(|b| b.ended.is_none())
    {
        w.push(crate::business::binding_end(pi, after.delete_reason.is_some(), *at));
    }
    w.into_iter().map(Write::commutes).collect()
}

/// The candidate links of task `tk` (ACT_RU_IDENTITYLINK, TYPE_ 'candidate'), one per user and
/// group, with ids made from the task's.
fn candidate_links(pi: &str, definition_id: &str, tk: &kairos_process::Task) -> Vec<Write> {
    let links =
        tk.candidate_users.iter().map(|u| (Some(u), None)).chain(tk.candidate_groups.iter().map(|g| (None, Some(g))));
    links
        .enumerate()
        .map(|(n, (user, group))| {
            Write::new(
                "INSERT INTO ACT_RU_IDENTITYLINK (ID_, REV_, GROUP_ID_, TYPE_, USER_ID_, TASK_ID_, PROC_INST_ID_, PROC_DEF_ID_) \
                 VALUES (?, 1, ?, 'candidate', ?, ?, ?, ?)",
                vec![
                    t(&format!("{}-c{n}", tk.id)),
                    group.map_or(SqlValue::Null, |g| t(g)),
                    user.map_or(SqlValue::Null, |u| t(u)),
                    t(&tk.id),
                    t(pi),
                    t(definition_id),
                ],
            )
        })
        .collect()
}
