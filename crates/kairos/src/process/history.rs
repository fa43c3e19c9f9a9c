//! The variable history a command writes, by history level (as Flowable's history manager):
//! from `activity` up, ACT_HI_VARINST keeps every variable with its last value; at `full`,
//! ACT_HI_DETAIL also keeps one row per change (TYPE_ 'VariableUpdate'), read back by
//! [`super::Processes::historic_details`] (Flowable's `GET /history/historic-detail`).
//!
//! The rows' diff ([`Changes`]) gives the variables that are still there; the command's
//! [`Instance::variable_log`] gives those it set and removed in one go (the completion that
//! ends the instance sends variables that the end then removes) and every value in between.

use super::HistoryLevel;
use super::rows::encode_value;
use jiff::Timestamp;
use kairos_process::{Changes, Instance, VariableChange};
use kairos_store::{SqlValue, Write};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

const INSERT_VARINST: &str = "INSERT INTO ACT_HI_VARINST (ID_, REV_, PROC_INST_ID_, EXECUTION_ID_, TASK_ID_, NAME_, \
     VAR_TYPE_, TEXT_, LONG_, DOUBLE_, CREATE_TIME_, LAST_UPDATED_TIME_) VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
const UPDATE_VARINST: &str = "UPDATE ACT_HI_VARINST SET REV_ = REV_ + 1, VAR_TYPE_ = ?, TEXT_ = ?, LONG_ = ?, \
     DOUBLE_ = ?, LAST_UPDATED_TIME_ = ? WHERE ID_ = ?";
const INSERT_DETAIL: &str = "INSERT INTO ACT_HI_DETAIL (ID_, TYPE_, PROC_INST_ID_, EXECUTION_ID_, TASK_ID_, \
     ACT_INST_ID_, NAME_, VAR_TYPE_, REV_, TIME_, BYTEARRAY_ID_, DOUBLE_, LONG_, TEXT_, TEXT2_) \
     VALUES (?, 'VariableUpdate', ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, NULL)";

/// A variable's row, as history needs it.
struct Row<'a> {
    id: &'a str,
    name: &'a str,
    execution_id: &'a str,
    task_id: Option<&'a str>,
    value: &'a serde_json::Value,
}

/// The history statements for the variables `before` → `after` changed (`c` is their diff);
/// `now` stamps the rows the diff found.
pub(super) fn variable_writes(
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
        let row = Row {
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
        let row = Row {
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

fn insert_varinst(pi: &str, v: &Row<'_>, at: Timestamp) -> Write {
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

fn t(s: &str) -> SqlValue {
    SqlValue::Text(s.to_string())
}

/// A row of ACT_HI_DETAIL in Flowable's REST shape (`HistoricDetailResponse`): a variable
/// update (kairos has no form properties, so `propertyId` and `propertyValue` stay null).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoricDetail {
    pub id: String,
    /// `variableUpdate` (Flowable's name for TYPE_ 'VariableUpdate').
    pub detail_type: &'static str,
    pub process_instance_id: Option<String>,
    pub execution_id: Option<String>,
    pub activity_instance_id: Option<String>,
    pub task_id: Option<String>,
    pub time: Option<Timestamp>,
    /// REV_: the revision of the variable row this change belongs to.
    pub revision: Option<i64>,
    pub variable: DetailVariable,
    pub property_id: Option<String>,
    pub property_value: Option<String>,
}

/// The variable of a [`HistoricDetail`], as Flowable's `RestVariable`: its value as set.
#[derive(Debug, Clone, Serialize)]
pub struct DetailVariable {
    pub name: String,
    #[serde(rename = "type")]
    pub var_type: String,
    pub value: serde_json::Value,
}

/// Which ACT_HI_DETAIL rows `GET /history/historic-detail` lists (all filters optional).
#[derive(Debug, Clone, Default)]
pub struct DetailQuery {
    pub id: Option<String>,
    pub process_instance_id: Option<String>,
    pub execution_id: Option<String>,
    pub activity_instance_id: Option<String>,
    pub task_id: Option<String>,
}

const DETAIL_WHERE: &str = "WHERE (CAST(? AS VARCHAR(64)) IS NULL OR ID_ = ?) \
     AND (CAST(? AS VARCHAR(64)) IS NULL OR PROC_INST_ID_ = ?) \
     AND (CAST(? AS VARCHAR(64)) IS NULL OR EXECUTION_ID_ = ?) \
     AND (CAST(? AS VARCHAR(64)) IS NULL OR ACT_INST_ID_ = ?) \
     AND (CAST(? AS VARCHAR(64)) IS NULL OR TASK_ID_ = ?)";

impl super::Processes {
    /// A page of ACT_HI_DETAIL (oldest change first) and how many rows match in all.
    pub async fn historic_details(
        &self,
        q: &DetailQuery,
        start: u64,
        size: u64,
    ) -> Result<(Vec<HistoricDetail>, u64), crate::Error> {
        let mut binds = Vec::new();
        for f in [&q.id, &q.process_instance_id, &q.execution_id, &q.activity_instance_id, &q.task_id] {
            let v = f.as_deref().map_or(SqlValue::Null, t);
            binds.extend([v.clone(), v]);
        }
        let count = self.store.read(&format!("SELECT COUNT(*) FROM ACT_HI_DETAIL {DETAIL_WHERE}"), &binds).await?;
        let total = count.first().and_then(|r| r[0].as_i64()).unwrap_or(0).max(0) as u64;
        binds.push(SqlValue::Int(i64::try_from(size).unwrap_or(i64::MAX)));
        binds.push(SqlValue::Int(i64::try_from(start).unwrap_or(i64::MAX)));
        let rows = self
            .store
            .read(
                &format!(
                    "SELECT ID_, PROC_INST_ID_, EXECUTION_ID_, ACT_INST_ID_, TASK_ID_, TIME_, REV_, NAME_, VAR_TYPE_, \
                     TEXT_, LONG_, DOUBLE_ FROM ACT_HI_DETAIL {DETAIL_WHERE} ORDER BY TIME_, ID_ LIMIT ? OFFSET ?"
                ),
                &binds,
            )
            .await?;
        Ok((rows.iter().map(|r| detail_row(r)).collect::<kairos_store::Result<_>>()?, total))
    }
}

/// One ACT_HI_DETAIL row; a value kairos cannot read is named, not shown as null.
fn detail_row(r: &[SqlValue]) -> kairos_store::Result<HistoricDetail> {
    let text = |i: usize| r[i].as_str().map(str::to_string);
    let var_type = text(8).unwrap_or_default();
    let value = super::rows::decode_value(&var_type, &r[9], &r[10], &r[11]).map_err(|(column, problem)| {
        let raw = match column {
            "TYPE_" => Some(var_type.clone()),
            "LONG_" => serde_json::to_value(&r[10]).ok().map(|v| v.to_string()),
            "DOUBLE_" => serde_json::to_value(&r[11]).ok().map(|v| v.to_string()),
            _ => text(9),
        };
        kairos_store::Error::unreadable(kairos_store::Unreadable::new(
            "ACT_HI_DETAIL",
            text(0).unwrap_or_default(),
            column,
            raw,
            problem,
        ))
    })?;
    Ok(HistoricDetail {
        id: text(0).unwrap_or_default(),
        detail_type: "variableUpdate",
        process_instance_id: text(1),
        execution_id: text(2),
        activity_instance_id: text(3),
        task_id: text(4),
        time: r[5].as_timestamp(),
        revision: r[6].as_i64(),
        variable: DetailVariable { name: text(7).unwrap_or_default(), value, var_type },
        property_id: None,
        property_value: None,
    })
}
