//! Loading an instance's rows into a [`kairos_process::Instance`], in one statement.

use super::values::row_value;
use crate::{Row, Rows};
use kairos_process::*;
use kairos_store::{Dialect, Error, ErrorKind, Result, Sql, SqlValue};
use serde_json::Value as Json;

/// One table's rows of an instance.
pub(super) struct Part {
    /// The table its rows are named by in errors.
    pub(super) table: &'static str,
    pub(super) from: &'static str,
    /// The select list, in the order of `columns`.
    pub(super) select: &'static str,
    /// The names of the selected columns (without their table alias).
    pub(super) columns: &'static [&'static str],
    /// The filter on the instance id (bound once per part).
    filter: &'static str,
    /// The columns the rows are sorted by.
    sort: &'static [&'static str],
}

pub(super) const EXECUTIONS: usize = 0;

/// The parts of an instance [`instance_load`] reads.
pub(super) const PARTS: [Part; 7] = [
    Part {
        table: "ACT_RU_EXECUTION",
        from: "ACT_RU_EXECUTION e LEFT JOIN ACT_RE_PROCDEF d ON d.ID_ = e.PROC_DEF_ID_ \
               LEFT JOIN ACT_RU_EXECUTION s ON s.ID_ = e.SUPER_EXEC_",
        select: "e.ID_, e.REV_, e.PARENT_ID_, e.SUPER_EXEC_, e.ACT_ID_, e.IS_ACTIVE_, e.IS_CONCURRENT_, e.IS_SCOPE_, \
                 e.IS_EVENT_SCOPE_, e.IS_MI_ROOT_, e.START_TIME_, e.SUSPENSION_STATE_, e.BUSINESS_KEY_, e.PROC_DEF_ID_, \
                 e.TENANT_ID_, e.START_ACT_ID_, e.START_USER_ID_, e.SEQ_, d.KEY_, s.PROC_INST_ID_",
        columns: &[
            "ID_",
            "REV_",
            "PARENT_ID_",
            "SUPER_EXEC_",
            "ACT_ID_",
            "IS_ACTIVE_",
            "IS_CONCURRENT_",
            "IS_SCOPE_",
            "IS_EVENT_SCOPE_",
            "IS_MI_ROOT_",
            "START_TIME_",
            "SUSPENSION_STATE_",
            "BUSINESS_KEY_",
            "PROC_DEF_ID_",
            "TENANT_ID_",
            "START_ACT_ID_",
            "START_USER_ID_",
            "SEQ_",
            "KEY_",
            "PROC_INST_ID_",
        ],
        filter: "e.PROC_INST_ID_ = ?",
        sort: &["START_TIME_", "ID_"],
    },
    Part {
        table: "ACT_RU_TASK",
        from: "ACT_RU_TASK",
        select: "ID_, REV_, EXECUTION_ID_, NAME_, TASK_DEF_KEY_, ASSIGNEE_, PRIORITY_, CREATE_TIME_, DUE_DATE_, FORM_KEY_, \
                 CLAIM_TIME_, SUSPENSION_STATE_, OWNER_, DESCRIPTION_",
        columns: &[
            "ID_",
            "REV_",
            "EXECUTION_ID_",
            "NAME_",
            "TASK_DEF_KEY_",
            "ASSIGNEE_",
            "PRIORITY_",
            "CREATE_TIME_",
            "DUE_DATE_",
            "FORM_KEY_",
            "CLAIM_TIME_",
            "SUSPENSION_STATE_",
            "OWNER_",
            "DESCRIPTION_",
        ],
        filter: "PROC_INST_ID_ = ?",
        sort: &["CREATE_TIME_", "ID_"],
    },
    Part {
        table: "ACT_RU_IDENTITYLINK",
        from: "ACT_RU_IDENTITYLINK",
        select: "TASK_ID_, USER_ID_, GROUP_ID_, ID_",
        columns: &["TASK_ID_", "USER_ID_", "GROUP_ID_", "ID_"],
        filter: "PROC_INST_ID_ = ? AND TYPE_ = 'candidate'",
        sort: &["ID_"],
    },
    Part {
        table: "ACT_RU_VARIABLE",
        from: "ACT_RU_VARIABLE",
        select: "ID_, REV_, NAME_, EXECUTION_ID_, TYPE_, TEXT_, LONG_, DOUBLE_, TASK_ID_",
        columns: &["ID_", "REV_", "NAME_", "EXECUTION_ID_", "TYPE_", "TEXT_", "LONG_", "DOUBLE_", "TASK_ID_"],
        filter: "PROC_INST_ID_ = ?",
        sort: &["ID_"],
    },
    Part {
        table: "ACT_RU_EVENT_SUBSCR",
        from: "ACT_RU_EVENT_SUBSCR",
        select: "ID_, EVENT_TYPE_, EVENT_NAME_, EXECUTION_ID_, ACTIVITY_ID_, CREATED_",
        columns: &["ID_", "EVENT_TYPE_", "EVENT_NAME_", "EXECUTION_ID_", "ACTIVITY_ID_", "CREATED_"],
        filter: "PROC_INST_ID_ = ?",
        sort: &["CREATED_", "ID_"],
    },
    Part {
        table: "ACT_RU_JOB",
        from: "ACT_RU_JOB",
        select: "ID_, HANDLER_TYPE_, HANDLER_CFG_, EXECUTION_ID_, ELEMENT_ID_, DUEDATE_, REPEAT_, EXCLUSIVE_, RETRY_CYCLE_",
        columns: &[
            "ID_",
            "HANDLER_TYPE_",
            "HANDLER_CFG_",
            "EXECUTION_ID_",
            "ELEMENT_ID_",
            "DUEDATE_",
            "REPEAT_",
            "EXCLUSIVE_",
            "RETRY_CYCLE_",
        ],
        filter: "PROCESS_INSTANCE_ID_ = ? AND HANDLER_TYPE_ IN ({process_job_kinds})",
        sort: &["ID_"],
    },
    Part {
        table: "ACT_HI_ACTINST",
        from: "ACT_HI_ACTINST",
        select: "ID_, EXECUTION_ID_, ACT_ID_, ACT_NAME_, ACT_TYPE_, TASK_ID_, ASSIGNEE_, START_TIME_, SEQ_",
        columns: &[
            "ID_",
            "EXECUTION_ID_",
            "ACT_ID_",
            "ACT_NAME_",
            "ACT_TYPE_",
            "TASK_ID_",
            "ASSIGNEE_",
            "START_TIME_",
            "SEQ_",
        ],
        filter: "PROC_INST_ID_ = ? AND END_TIME_ IS NULL",
        sort: &["SEQ_", "ID_"],
    },
];

/// [`instance_load`]'s statement for `dialect`, built once per backend (every command loads).
fn load_sql(dialect: &'static Dialect) -> &'static str {
    static BUILT: std::sync::Mutex<Vec<(&str, &str)>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, sql)) = built.iter().find(|(key, _)| *key == dialect.json_array) {
        return sql;
    }
    // At most one string per backend, kept for the life of the process.
    let sql: &'static str = Box::leak(build_load_sql(dialect).into_boxed_str());
    built.push((dialect.json_array, sql));
    sql
}

/// [`instance_load`]'s one statement: a row per row of every part, its part's number and its
/// columns as a JSON array. A `UNION ALL` rather than a JSON aggregate per part: PostgreSQL set
/// up seven ordered aggregates on every load (~5 % of its CPU in `kairos bench process --mode
/// async`), and the rows are sorted here instead ([`sort_part`]).
fn build_load_sql(dialect: &Dialect) -> String {
    let kinds =
        [JobKind::ASYNC_CONTINUATION, JobKind::TRIGGER_TIMER, JobKind::EXTERNAL_WORKER].map(|k| format!("'{k}'"));
    let parts: Vec<String> = PARTS
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let filter = p.filter.replace("{process_job_kinds}", &kinds.join(", "));
            format!("SELECT {i}, CAST({}({}) AS TEXT) FROM {} WHERE {filter}", dialect.json_array, p.select, p.from)
        })
        .collect();
    parts.join(" UNION ALL ")
}

/// Sorts one part's rows by its keys: numbers as numbers, instants as instants (each backend
/// writes them as text of its own form), other text by bytes, NULL last.
fn sort_part(rows: &mut [Vec<SqlValue>], part: &Part) {
    use std::cmp::Ordering;
    fn cmp(a: &SqlValue, b: &SqlValue) -> Ordering {
        match (a, b) {
            (SqlValue::Null, SqlValue::Null) => Ordering::Equal,
            (SqlValue::Null, _) => Ordering::Greater,
            (_, SqlValue::Null) => Ordering::Less,
            (SqlValue::Int(x), SqlValue::Int(y)) => x.cmp(y),
            _ => match (a.as_timestamp(), b.as_timestamp()) {
                (Some(x), Some(y)) => x.cmp(&y),
                _ => a.as_str().unwrap_or_default().cmp(b.as_str().unwrap_or_default()),
            },
        }
    }
    let keys: Vec<usize> = part.sort.iter().filter_map(|k| part.columns.iter().position(|c| c == k)).collect();
    rows.sort_by(|a, b| keys.iter().map(|&k| cmp(&a[k], &b[k])).find(|o| o.is_ne()).unwrap_or(Ordering::Equal));
}

/// One row of a part, from its JSON array: values as [`Sql::read`] gives them (instants as
/// text, which [`SqlValue::as_timestamp`] reads in either backend's form).
pub(super) fn json_row(v: &SqlValue) -> Result<Vec<SqlValue>> {
    let s = v.as_str().unwrap_or("[]");
    let row: Vec<Json> =
        serde_json::from_str(s).map_err(|e| Error::new(ErrorKind::Other, format!("instance rows: {e}")))?;
    Ok(row
        .into_iter()
        .map(|v| match v {
            Json::Null => SqlValue::Null,
            Json::Bool(b) => SqlValue::Bool(b),
            Json::Number(n) => {
                n.as_i64().map_or_else(|| SqlValue::Float(n.as_f64().unwrap_or_default()), SqlValue::Int)
            }
            Json::String(s) => SqlValue::Text(s),
            other => SqlValue::Text(other.to_string()),
        })
        .collect())
}

/// Loads process instance `id`, or `None` when it has no root execution (ended or unknown).
///
/// One statement reads every row of the instance: one round trip, and one snapshot of it (a
/// command never sees the tasks of one commit beside the executions of another). A JSON array
/// per row is what lets one statement return rows of seven tables. A row kairos cannot read
/// fails the load (naming it): every command on this instance, and no other instance.
pub async fn instance_load(store: &dyn Sql, id: &str) -> Result<Option<Instance>> {
    let keys = vec![SqlValue::Text(id.to_string()); PARTS.len()];
    let mut parts: [Vec<Vec<SqlValue>>; 7] = Default::default();
    for row in store.read(load_sql(store.dialect()), &keys).await? {
        let part = row.first().and_then(SqlValue::as_i64).and_then(|p| parts.get_mut(p as usize));
        let (Some(part), Some(columns)) = (part, row.get(1)) else {
            return Err(Error::new(ErrorKind::Other, "instance rows: unexpected row"));
        };
        part.push(json_row(columns)?);
    }
    let mut named = Vec::with_capacity(PARTS.len());
    for (mut rows, part) in parts.into_iter().zip(&PARTS) {
        sort_part(&mut rows, part);
        named.push(Rows::new(part.table, part.columns, rows)?);
    }
    let [execs, task_rows, link_rows, var_rows, sub_rows, job_rows, act_rows] =
        <[Rows; 7]>::try_from(named).map_err(|_| Error::new(ErrorKind::Other, "instance rows: parts"))?;
    let Some(root) = execs.iter().find(|r| r.value("ID_").ok().and_then(SqlValue::as_str) == Some(id)) else {
        return Ok(None);
    };
    let executions = execs.iter().map(|r| execution(&r)).collect::<Result<Vec<_>>>()?;
    let mut tasks = task_rows.iter().map(|r| task(&r)).collect::<Result<Vec<_>>>()?;
    for r in link_rows.iter() {
        let task_id = r.text("TASK_ID_")?;
        if let Some(task) = tasks.iter_mut().find(|tk| tk.id == task_id) {
            task.candidate_users.extend(r.opt_text("USER_ID_")?);
            task.candidate_groups.extend(r.opt_text("GROUP_ID_")?);
        }
    }
    let variables = var_rows.iter().map(|r| variable(&r)).collect::<Result<Vec<_>>>()?;
    let subscriptions = sub_rows
        .iter()
        .map(|r| {
            Ok(Subscription {
                id: r.text("ID_")?,
                event_type: event_type(&r, "EVENT_TYPE_")?,
                event_name: r.text("EVENT_NAME_")?,
                execution_id: r.text("EXECUTION_ID_")?,
                activity_id: r.text("ACTIVITY_ID_")?,
                created: r.instant("CREATED_")?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut jobs = Vec::with_capacity(job_rows.len());
    for r in job_rows.iter() {
        let config = r.opt_text("HANDLER_CFG_")?;
        let Some(kind) = JobKind::from_row(&r.text("HANDLER_TYPE_")?, config.as_deref()) else { continue };
        jobs.push(ProcessJob {
            topic: if kind == JobKind::External { Some(config.unwrap_or_default()) } else { None },
            id: r.text("ID_")?,
            kind,
            execution_id: r.text("EXECUTION_ID_")?,
            activity_id: r.text("ELEMENT_ID_")?,
            due: r.opt_instant("DUEDATE_")?,
            repeat: r.opt_text("REPEAT_")?,
            exclusive: r.flag("EXCLUSIVE_")?,
            retry_cycle: r.opt_text("RETRY_CYCLE_")?,
        });
    }
    let activities = act_rows
        .iter()
        .map(|r| {
            Ok(ActivityRecord {
                id: r.text("ID_")?,
                execution_id: r.text("EXECUTION_ID_")?,
                activity_id: r.text("ACT_ID_")?,
                activity_name: r.opt_text("ACT_NAME_")?,
                activity_type: r.text("ACT_TYPE_")?,
                task_id: r.opt_text("TASK_ID_")?,
                assignee: r.opt_text("ASSIGNEE_")?,
                start: r.instant("START_TIME_")?,
                end: None,
                delete_reason: None,
                seq: r.int("SEQ_")?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(Instance {
        id: id.to_string(),
        definition_id: root.text("PROC_DEF_ID_")?,
        definition_key: root.text("KEY_")?,
        business_key: root.opt_text("BUSINESS_KEY_")?,
        tenant_id: root.text("TENANT_ID_")?,
        start_time: root.instant("START_TIME_")?,
        start_activity: root.opt_text("START_ACT_ID_")?,
        start_user: root.opt_text("START_USER_ID_")?,
        super_exec: root.opt_text("SUPER_EXEC_")?,
        super_instance: root.opt_text("PROC_INST_ID_")?,
        root_rev: int32(&root, "REV_")?,
        seq: root.int("SEQ_")?,
        suspension_state: suspension(&root, "SUSPENSION_STATE_")?,
        executions,
        tasks,
        variables,
        subscriptions,
        jobs,
        activities,
        ended: None,
        delete_reason: None,
        ended_tasks: Vec::new(),
        thrown_signals: Vec::new(),
        raised: Vec::new(),
        interrupted_calls: Vec::new(),
        final_variables: Default::default(),
        index: Default::default(),
        variable_log: Vec::new(),
    }))
}

/// A whole number that fits an `i32` (REV_, SUSPENSION_STATE_, PRIORITY_).
fn int32(r: &Row<'_>, column: &str) -> Result<i32> {
    i32::try_from(r.int(column)?).map_err(|_| r.unreadable(column, "is out of range"))
}

/// A SUSPENSION_STATE_: 1 or 2; any other number is named, never read as active.
fn suspension(r: &Row<'_>, column: &str) -> Result<SuspensionState> {
    SuspensionState::from_i32(int32(r, column)?)
        .map_err(|_| r.unreadable(column, "is neither 1 (active) nor 2 (suspended)"))
}

/// An EVENT_TYPE_ kairos knows; another word is named, never skipped.
fn event_type(r: &Row<'_>, column: &str) -> Result<EventType> {
    EventType::parse(&r.text(column)?)
        .map_err(|_| r.unreadable(column, "is not an event type kairos knows (message, signal, conditional)"))
}

pub(super) fn execution(r: &Row<'_>) -> Result<Execution> {
    Ok(Execution {
        id: r.text("ID_")?,
        rev: int32(r, "REV_")?,
        parent_id: r.opt_text("PARENT_ID_")?,
        super_exec: r.opt_text("SUPER_EXEC_")?,
        activity: r.opt_text("ACT_ID_")?,
        is_active: r.flag("IS_ACTIVE_")?,
        is_concurrent: r.flag("IS_CONCURRENT_")?,
        is_scope: r.flag("IS_SCOPE_")?,
        is_event_scope: r.flag("IS_EVENT_SCOPE_")?,
        is_mi_root: r.flag("IS_MI_ROOT_")?,
        start_time: r.instant("START_TIME_")?,
        suspension_state: suspension(r, "SUSPENSION_STATE_")?,
    })
}

fn task(r: &Row<'_>) -> Result<Task> {
    Ok(Task {
        id: r.text("ID_")?,
        rev: int32(r, "REV_")?,
        execution_id: r.text("EXECUTION_ID_")?,
        name: r.opt_text("NAME_")?,
        task_def_key: r.text("TASK_DEF_KEY_")?,
        assignee: r.opt_text("ASSIGNEE_")?,
        owner: r.opt_text("OWNER_")?,
        description: r.opt_text("DESCRIPTION_")?,
        priority: int32(r, "PRIORITY_")?,
        create_time: r.instant("CREATE_TIME_")?,
        due_date: r.opt_instant("DUE_DATE_")?,
        form_key: r.opt_text("FORM_KEY_")?,
        claim_time: r.opt_instant("CLAIM_TIME_")?,
        suspension_state: suspension(r, "SUSPENSION_STATE_")?,
        candidate_users: Vec::new(),
        candidate_groups: Vec::new(),
    })
}

fn variable(r: &Row<'_>) -> Result<Variable> {
    let name = r.text("NAME_")?;
    Ok(Variable {
        id: r.text("ID_")?,
        rev: int32(r, "REV_")?,
        value: row_value(r, "TYPE_", Some(&name))?,
        name,
        execution_id: r.text("EXECUTION_ID_")?,
        task_id: r.opt_text("TASK_ID_")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of every part are those of its select list, in order.
    #[test]
    fn each_part_names_the_columns_it_selects() {
        for p in &PARTS {
            let selected: Vec<&str> =
                p.select.split(',').map(|c| c.trim()).map(|c| c.split_once('.').map_or(c, |(_, n)| n)).collect();
            assert_eq!(selected, p.columns, "{}", p.table);
            assert!(p.sort.iter().all(|k| p.columns.contains(k)), "{}", p.table);
        }
    }
}
