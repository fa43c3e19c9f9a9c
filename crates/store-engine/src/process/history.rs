//! The history a command writes, by history level (as Flowable's history manager): from
//! `activity` up, ACT_HI_ACTINST keeps every activity and ACT_HI_VARINST every variable with
//! its last value; at `full`, ACT_HI_DETAIL also keeps one row per change (TYPE_
//! 'VariableUpdate'); ACT_HI_PROCINST is always written.
//!
//! The rows' diff ([`Changes`]) gives the variables that are still there; the command's
//! [`Instance::variable_log`] gives those it set and removed in one go (the completion that
//! ends the instance sends variables that the end then removes) and every value in between.

use super::values::encode_value;
use super::{HistoryLevel, i, ot, ots, t, ts};
use jiff::Timestamp;
use kairos_process::{Changes, Instance, VariableChange};
use kairos_store::{SqlValue, Write};
use std::collections::{HashMap, HashSet};

const INSERT_VARINST: &str = "INSERT INTO ACT_HI_VARINST (ID_, REV_, PROC_INST_ID_, EXECUTION_ID_, TASK_ID_, NAME_, \
     VAR_TYPE_, TEXT_, LONG_, DOUBLE_, CREATE_TIME_, LAST_UPDATED_TIME_) VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
const UPDATE_VARINST: &str = "UPDATE ACT_HI_VARINST SET REV_ = REV_ + 1, VAR_TYPE_ = ?, TEXT_ = ?, LONG_ = ?, \
     DOUBLE_ = ?, LAST_UPDATED_TIME_ = ? WHERE ID_ = ?";
const INSERT_DETAIL: &str = "INSERT INTO ACT_HI_DETAIL (ID_, TYPE_, PROC_INST_ID_, EXECUTION_ID_, TASK_ID_, \
     ACT_INST_ID_, NAME_, VAR_TYPE_, REV_, TIME_, BYTEARRAY_ID_, DOUBLE_, LONG_, TEXT_, TEXT2_) \
     VALUES (?, 'VariableUpdate', ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, NULL)";

/// A variable's row, as history needs it.
struct VariableRow<'a> {
    id: &'a str,
    name: &'a str,
    execution_id: &'a str,
    task_id: Option<&'a str>,
    value: &'a serde_json::Value,
}

/// The history statements for the variables `before` → `after` changed (`c` is their diff);
/// `now` stamps the rows the diff found.
pub fn variable_writes(
    before: Option<&Instance>,
    after: &Instance,
    c: &Changes,
    level: HistoryLevel,
    now: Timestamp,
) -> Vec<Write> {
    if level < HistoryLevel::Activity {
        return Vec::new();
    }
    let pi = &after.id;
    let mut w = Vec::new();
    for v in &c.variables_inserted {
        let row = VariableRow {
            id: &v.id,
            name: &v.name,
            execution_id: &v.execution_id,
            task_id: v.task_id.as_deref(),
            value: &v.value,
        };
        w.push(insert_varinst(pi, &row, now));
    }
    for v in &c.variables_updated {
        w.push(update_varinst(&v.id, &v.value, now));
    }
    // REV_ of each variable row as loaded: what the diff cannot say about removed rows.
    let loaded: HashMap<&str, i32> =
        before.map(|b| b.variables.iter().map(|v| (v.id.as_str(), v.rev)).collect()).unwrap_or_default();
    for ch in removed_in_this_command(after) {
        let row = VariableRow {
            id: &ch.variable_id,
            name: &ch.name,
            execution_id: &ch.execution_id,
            task_id: ch.task_id.as_deref(),
            value: &ch.value,
        };
        w.push(match loaded.contains_key(row.id) {
            true => update_varinst(row.id, row.value, ch.time),
            false => insert_varinst(pi, &row, ch.time),
        });
    }
    if level >= HistoryLevel::Full {
        for ch in &after.variable_log {
            // REV_: the revision of the variable row this change belongs to (Flowable's).
            let rev = loaded.get(ch.variable_id.as_str()).map_or(1, |rev| i64::from(*rev) + 1);
            w.push(insert_detail(pi, ch, rev));
        }
    }
    w
}

/// The last change of each variable this command set that is gone after it, in the order of
/// those last changes.
fn removed_in_this_command(after: &Instance) -> Vec<&VariableChange> {
    let remaining: HashSet<&str> = after.variables.iter().map(|v| v.id.as_str()).collect();
    let mut seen = HashSet::new();
    let mut last: Vec<&VariableChange> = after
        .variable_log
        .iter()
        .rev()
        .filter(|ch| seen.insert(ch.variable_id.as_str()) && !remaining.contains(ch.variable_id.as_str()))
        .collect();
    last.reverse();
    last
}

fn insert_varinst(pi: &str, v: &VariableRow<'_>, at: Timestamp) -> Write {
    let (ty, text, long, double) = encode_value(v.value);
    Write::new(
        INSERT_VARINST,
        vec![
            t(v.id),
            t(pi),
            t(v.execution_id),
            v.task_id.map_or(SqlValue::Null, t),
            t(v.name),
            t(ty),
            text,
            long,
            double,
            SqlValue::Timestamp(at),
            SqlValue::Timestamp(at),
        ],
    )
}

fn update_varinst(id: &str, value: &serde_json::Value, at: Timestamp) -> Write {
    let (ty, text, long, double) = encode_value(value);
    Write::new(UPDATE_VARINST, vec![t(ty), text, long, double, SqlValue::Timestamp(at), t(id)])
}

fn insert_detail(pi: &str, ch: &VariableChange, rev: i64) -> Write {
    let (ty, text, long, double) = encode_value(&ch.value);
    let opt = |s: &Option<String>| s.as_deref().map_or(SqlValue::Null, t);
    Write::new(
        INSERT_DETAIL,
        vec![
            t(&kairos_core::new_id()),
            t(pi),
            t(&ch.execution_id),
            opt(&ch.task_id),
            opt(&ch.activity_instance_id),
            t(&ch.name),
            t(ty),
            SqlValue::Int(rev),
            SqlValue::Timestamp(ch.time),
            double,
            long,
            text,
        ],
    )
}

/// The statements of ACT_HI_ACTINST (from `activity` up) and ACT_HI_PROCINST for `c`.
pub(super) fn instance_history_writes(
    before: Option<&Instance>,
    after: &Instance,
    c: &Changes,
    level: HistoryLevel,
) -> Vec<Write> {
    let pi = &after.id;
    let mut w = Vec::new();
    if level >= HistoryLevel::Activity {
        for a in &c.activities_inserted {
            w.push(Write::new(
                "INSERT INTO ACT_HI_ACTINST (ID_, REV_, PROC_DEF_ID_, PROC_INST_ID_, EXECUTION_ID_, ACT_ID_, TASK_ID_, ACT_NAME_, \
                 ACT_TYPE_, ASSIGNEE_, START_TIME_, END_TIME_, DURATION_, DELETE_REASON_, TENANT_ID_, SEQ_) \
                 VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                vec![
                    t(&a.id),
                    t(&after.definition_id),
                    t(pi),
                    t(&a.execution_id),
                    t(&a.activity_id),
                    ot(&a.task_id),
                    ot(&a.activity_name),
                    t(&a.activity_type),
                    ot(&a.assignee),
                    ts(a.start),
                    ots(a.end),
                    a.end.map_or(SqlValue::Null, |e| i(ms_between(a.start, e))),
                    ot(&a.delete_reason),
                    t(&after.tenant_id),
                    i(a.seq),
                ],
            ));
        }
        for a in &c.activities_closed {
            w.push(Write::new(
                "UPDATE ACT_HI_ACTINST SET END_TIME_ = ?, DURATION_ = ?, DELETE_REASON_ = ?, ASSIGNEE_ = ? WHERE ID_ = ?",
                vec![
                    ots(a.end),
                    a.end.map_or(SqlValue::Null, |e| i(ms_between(a.start, e))),
                    ot(&a.delete_reason),
                    ot(&a.assignee),
                    t(&a.id),
                ],
            ));
        }
    }
    if c.new_instance {
        w.push(Write::new(
            "INSERT INTO ACT_HI_PROCINST (ID_, REV_, PROC_INST_ID_, BUSINESS_KEY_, PROC_DEF_ID_, PROC_DEF_KEY_, START_TIME_, \
             START_USER_ID_, START_ACT_ID_, SUPER_PROCESS_INSTANCE_ID_, TENANT_ID_) VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                t(pi),
                t(pi),
                ot(&after.business_key),
                t(&after.definition_id),
                t(&after.definition_key),
                ts(after.start_time),
                ot(&after.start_user),
                ot(&after.start_activity),
                ot(&after.super_instance),
                t(&after.tenant_id),
            ],
        ));
    } else if before.is_some_and(|b| b.business_key != after.business_key) {
        w.push(Write::new(
            "UPDATE ACT_HI_PROCINST SET BUSINESS_KEY_ = ? WHERE ID_ = ?",
            vec![ot(&after.business_key), t(pi)],
        ));
    }
    if let Some((end, end_act)) = &after.ended {
        w.push(Write::new(
            "UPDATE ACT_HI_PROCINST SET END_TIME_ = ?, DURATION_ = ?, END_ACT_ID_ = ?, DELETE_REASON_ = ? WHERE ID_ = ?",
            vec![ts(*end), i(ms_between(after.start_time, *end)), ot(end_act), ot(&after.delete_reason), t(pi)],
        ));
    }
    w
}

pub(super) fn ms_between(a: Timestamp, b: Timestamp) -> i64 {
    b.duration_since(a).as_millis() as i64
}
