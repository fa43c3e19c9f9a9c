//! An instance's rows: loading them into a [`kairos_process::Instance`] and writing a
//! command's [`Changes`] back, through the store's backend-neutral [`Store::read`] and
//! [`Store::write_all`] (one statement text for SQLite and PostgreSQL; values always bound).
//!
//! Every command on an instance first bumps the root execution's REV_ with the REV_ it loaded
//! (`expect(1)`): two commands on one instance can both compute, but only the first commits;
//! the other gets a conflict and is retried on fresh rows (seed 003 §2.1's optimistic lock,
//! taken for the whole instance, so a parallel join can never lose an arriving token).
//! Every checked write names its row by primary key ([`Write::keyed`]): when a completion
//! batch merges the same write of many jobs into one statement, its count still proves that
//! each of them held.

use jiff::Timestamp;
use kairos_process::*;
use kairos_store::{Dialect, Result as StoreResult, SqlValue, Store, Write};
use serde_json::Value as Json;

fn t(s: &str) -> SqlValue {
    SqlValue::Text(s.to_string())
}
fn ot(s: &Option<String>) -> SqlValue {
    s.as_ref().map_or(SqlValue::Null, |s| SqlValue::Text(s.clone()))
}
fn ts(t: Timestamp) -> SqlValue {
    SqlValue::Timestamp(t)
}
fn ots(t: Option<Timestamp>) -> SqlValue {
    t.map_or(SqlValue::Null, SqlValue::Timestamp)
}
fn b(v: bool) -> SqlValue {
    SqlValue::Bool(v)
}
fn i(v: i64) -> SqlValue {
    SqlValue::Int(v)
}
fn text(v: &SqlValue) -> String {
    v.as_str().unwrap_or_default().to_string()
}
fn otext(v: &SqlValue) -> Option<String> {
    v.as_str().map(str::to_string)
}
fn time(v: &SqlValue) -> Timestamp {
    v.as_timestamp().unwrap_or_default()
}
fn int(v: &SqlValue) -> i64 {
    v.as_i64().unwrap_or_default()
}
fn flag(v: &SqlValue) -> bool {
    v.as_bool().unwrap_or(false)
}

/// A variable's value as (TYPE_, TEXT_, LONG_, DOUBLE_): Activiti's typed columns.
pub fn encode_value(v: &Json) -> (&'static str, SqlValue, SqlValue, SqlValue) {
    match v {
        Json::Null => ("null", SqlValue::Null, SqlValue::Null, SqlValue::Null),
        Json::Bool(x) => ("boolean", SqlValue::Null, i(i64::from(*x)), SqlValue::Null),
        Json::Number(n) if n.is_i64() => ("integer", SqlValue::Null, i(n.as_i64().unwrap_or_default()), SqlValue::Null),
        Json::Number(n) => ("double", SqlValue::Null, SqlValue::Null, SqlValue::Float(n.as_f64().unwrap_or_default())),
        Json::String(s) => ("string", t(s), SqlValue::Null, SqlValue::Null),
        other => ("json", SqlValue::Text(other.to_string()), SqlValue::Null, SqlValue::Null),
    }
}

/// The inverse of [`encode_value`]. A value kairos cannot read — a TYPE_ it does not know
/// (Activiti's `serializable`), a number that is not one, JSON that does not parse — is an
/// error naming the column, never a null: a command would write the null back over it.
pub fn decode_value(
    ty: &str,
    text: &SqlValue,
    long: &SqlValue,
    double: &SqlValue,
) -> Result<Json, (&'static str, &'static str)> {
    const NOT_A_NUMBER: &str = "is not a whole number";
    match ty {
        "null" => Ok(Json::Null),
        "boolean" => long.as_i64().map(|n| Json::Bool(n != 0)).ok_or(("LONG_", NOT_A_NUMBER)),
        "integer" | "long" | "short" => long.as_i64().map(Json::from).ok_or(("LONG_", NOT_A_NUMBER)),
        "double" => double
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map(Json::Number)
            .ok_or(("DOUBLE_", "is not a finite number")),
        "string" | "date" => Ok(text.as_str().map_or(Json::Null, |s| Json::String(s.into()))),
        "json" => text.as_str().and_then(|s| serde_json::from_str(s).ok()).ok_or(("TEXT_", "is not JSON")),
        _ => Err((
            "TYPE_",
            "is not a variable type kairos knows (null, boolean, integer, long, short, double, string, date, json)",
        )),
    }
}

/// A row of part `part` that cannot be read: its table, its id (first column), the column at
/// `i` with its text, and what is wrong.
fn bad_row(part: usize, row: &[SqlValue], column: &str, raw: &SqlValue, problem: &str) -> kairos_store::Error {
    let table = PARTS[part].0.split_whitespace().next().unwrap_or_default();
    let raw = match raw {
        SqlValue::Null => None,
        SqlValue::Text(s) => Some(s.clone()),
        other => serde_json::to_value(other).ok().map(|v| v.to_string()),
    };
    kairos_store::Error::unreadable(kairos_store::Unreadable::new(table, text(&row[0]), column, raw, problem))
}

/// Checks that column `i` holds a value `parse` knows (a SUSPENSION_STATE_, an EVENT_TYPE_).
fn known<T>(
    part: usize,
    row: &[SqlValue],
    i: usize,
    parse: impl Fn(&SqlValue) -> kairos_process::Result<T>,
) -> StoreResult<()> {
    parse(&row[i]).map(|_| ()).map_err(|e| bad_row(part, row, column_name(part, i), &row[i], &e.message))
}

/// The name of column `i` of part `part` (without its table alias).
fn column_name(part: usize, i: usize) -> &'static str {
    let name = PARTS[part].1.split(',').nth(i).unwrap_or_default().trim();
    name.split_once('.').map_or(name, |(_, n)| n)
}

/// Checks that the columns at `ints` are whole numbers and at `instants` instants (`opt`:
/// or NULL), so that a row SQLite kept with text in REV_ or garbage in START_TIME_ is named
/// instead of read as 0 or 1970.
fn check(part: usize, row: &[SqlValue], ints: &[usize], instants: &[usize], opt_instants: &[usize]) -> StoreResult<()> {
    for &i in ints {
        if row[i].as_i64().is_none() && !matches!(row[i], SqlValue::Bool(_)) {
            return Err(bad_row(part, row, column_name(part, i), &row[i], "is not a whole number"));
        }
    }
    for &i in instants.iter().chain(opt_instants) {
        let null_ok = opt_instants.contains(&i) && row[i].is_null();
        if !null_ok && row[i].as_timestamp().is_none() {
            return Err(bad_row(part, row, column_name(part, i), &row[i], "is not an instant"));
        }
    }
    Ok(())
}

/// The parts of an instance [`load`] reads: per part, the table, the columns (in the order the
/// mapping code below indexes them), the filter on the instance id (bound once per part) and
/// the positions among the columns of its sort keys.
const PARTS: [(&str, &str, &str, &[usize]); 7] = [
    (
        "ACT_RU_EXECUTION e LEFT JOIN ACT_RE_PROCDEF d ON d.ID_ = e.PROC_DEF_ID_ \
         LEFT JOIN ACT_RU_EXECUTION s ON s.ID_ = e.SUPER_EXEC_",
        "e.ID_, e.REV_, e.PARENT_ID_, e.SUPER_EXEC_, e.ACT_ID_, e.IS_ACTIVE_, e.IS_CONCURRENT_, e.IS_SCOPE_, \
         e.IS_EVENT_SCOPE_, e.IS_MI_ROOT_, e.START_TIME_, e.SUSPENSION_STATE_, e.BUSINESS_KEY_, e.PROC_DEF_ID_, \
         e.TENANT_ID_, e.START_ACT_ID_, e.START_USER_ID_, e.SEQ_, d.KEY_, s.PROC_INST_ID_",
        "e.PROC_INST_ID_ = ?",
        &[10, 0], // START_TIME_, ID_
    ),
    (
        "ACT_RU_TASK",
        "ID_, REV_, EXECUTION_ID_, NAME_, TASK_DEF_KEY_, ASSIGNEE_, PRIORITY_, CREATE_TIME_, DUE_DATE_, FORM_KEY_, \
         CLAIM_TIME_, SUSPENSION_STATE_",
        "PROC_INST_ID_ = ?",
        &[7, 0], // CREATE_TIME_, ID_
    ),
    ("ACT_RU_IDENTITYLINK", "TASK_ID_, USER_ID_, GROUP_ID_, ID_", "PROC_INST_ID_ = ? AND TYPE_ = 'candidate'", &[3]),
    (
        "ACT_RU_VARIABLE",
        "ID_, REV_, NAME_, EXECUTION_ID_, TYPE_, TEXT_, LONG_, DOUBLE_, TASK_ID_",
        "PROC_INST_ID_ = ?",
        &[0],
    ),
    (
        "ACT_RU_EVENT_SUBSCR",
        "ID_, EVENT_TYPE_, EVENT_NAME_, EXECUTION_ID_, ACTIVITY_ID_, CREATED_",
        "PROC_INST_ID_ = ?",
        &[5, 0], // CREATED_, ID_
    ),
    (
        "ACT_RU_JOB",
        "ID_, HANDLER_TYPE_, HANDLER_CFG_, EXECUTION_ID_, ELEMENT_ID_, DUEDATE_, REPEAT_, EXCLUSIVE_, RETRY_CYCLE_",
        "PROCESS_INSTANCE_ID_ = ? AND HANDLER_TYPE_ IN ({process_job_kinds})",
        &[0],
    ),
    (
        "ACT_HI_ACTINST",
        "ID_, EXECUTION_ID_, ACT_ID_, ACT_NAME_, ACT_TYPE_, TASK_ID_, ASSIGNEE_, START_TIME_, SEQ_",
        "PROC_INST_ID_ = ? AND END_TIME_ IS NULL",
        &[8, 0], // SEQ_, ID_
    ),
];

/// [`load`]'s statement for `dialect`, built once per backend (every command loads).
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

/// [`load`]'s one statement: a row per row of every part, its part's number and its columns as
/// a JSON array. A `UNION ALL` rather than a JSON aggregate per part: PostgreSQL set up seven
/// ordered aggregates on every load (~5 % of its CPU in `kairos bench process --mode async`),
/// and the rows are sorted here instead ([`sort_part`]).
fn build_load_sql(dialect: &Dialect) -> String {
    let kinds =
        [JobKind::ASYNC_CONTINUATION, JobKind::TRIGGER_TIMER, JobKind::EXTERNAL_WORKER].map(|k| format!("'{k}'"));
    let parts: Vec<String> = PARTS
        .iter()
        .enumerate()
        .map(|(i, (from, columns, filter, _))| {
            let filter = filter.replace("{process_job_kinds}", &kinds.join(", "));
            format!("SELECT {i}, CAST({}({columns}) AS TEXT) FROM {from} WHERE {filter}", dialect.json_array)
        })
        .collect();
    parts.join(" UNION ALL ")
}

/// Sorts one part's rows by its keys: numbers as numbers, instants as instants (each backend
/// writes them as text of its own form), other text by bytes, NULL last.
fn sort_part(rows: &mut [Vec<SqlValue>], keys: &[usize]) {
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
    rows.sort_by(|a, b| keys.iter().map(|&k| cmp(&a[k], &b[k])).find(|o| o.is_ne()).unwrap_or(Ordering::Equal));
}

/// One row of a part, from its JSON array: values as [`Store::read`] gives them (instants as
/// text, which [`SqlValue::as_timestamp`] reads in either backend's form).
fn json_row(v: &SqlValue) -> StoreResult<Vec<SqlValue>> {
    let s = v.as_str().unwrap_or("[]");
    let row: Vec<Json> = serde_json::from_str(s)
        .map_err(|e| kairos_store::Error::new(kairos_store::ErrorKind::Other, format!("instance rows: {e}")))?;
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
/// per row is what lets one statement return rows of seven tables.
pub async fn load(store: &dyn Store, id: &str) -> StoreResult<Option<Instance>> {
    let keys = vec![t(id); PARTS.len()];
    let mut parts: [Vec<Vec<SqlValue>>; 7] = Default::default();
    for row in store.read(load_sql(store.dialect()), &keys).await? {
        let part = row.first().and_then(SqlValue::as_i64).and_then(|p| parts.get_mut(p as usize));
        let (Some(part), Some(columns)) = (part, row.get(1)) else {
            return Err(kairos_store::Error::new(kairos_store::ErrorKind::Other, "instance rows: unexpected row"));
        };
        part.push(json_row(columns)?);
    }
    for (rows, (.., keys)) in parts.iter_mut().zip(PARTS) {
        sort_part(rows, keys);
    }
    let [execs, task_rows, link_rows, var_rows, sub_rows, job_rows, act_rows] = parts;
    let Some(root) = execs.iter().find(|r| text(&r[0]) == id) else { return Ok(None) };
    // Every row this instance's commands would write back is checked first: one kairos cannot
    // read fails every command on this instance (naming it), and no other instance.
    for r in &execs {
        check(0, r, &[1, 11], &[10], &[])?;
        known(0, r, 11, |v| SuspensionState::from_i32(int(v) as i32))?;
    }
    for r in &task_rows {
        check(1, r, &[1, 6, 11], &[7], &[8, 10])?;
        known(1, r, 11, |v| SuspensionState::from_i32(int(v) as i32))?;
    }
    for r in &sub_rows {
        check(4, r, &[], &[5], &[])?;
        known(4, r, 1, |v| EventType::parse(&text(v)))?;
    }
    let mut variables = Vec::with_capacity(var_rows.len());
    for r in &var_rows {
        check(3, r, &[1], &[], &[])?;
        let value = decode_value(&text(&r[4]), &r[5], &r[6], &r[7]).map_err(|(column, problem)| {
            let at = ["TYPE_", "TEXT_", "LONG_", "DOUBLE_"].iter().position(|c| *c == column).unwrap_or(0);
            let problem = format!("{problem} (variable {:?})", text(&r[2]));
            bad_row(3, r, column, &r[4 + at], &problem)
        })?;
        variables.push(Variable {
            id: text(&r[0]),
            rev: int(&r[1]) as i32,
            name: text(&r[2]),
            execution_id: text(&r[3]),
            value,
            task_id: otext(&r[8]),
        });
    }
    let executions = execs
        .iter()
        .map(|r| Execution {
            id: text(&r[0]),
            rev: int(&r[1]) as i32,
            parent_id: otext(&r[2]),
            super_exec: otext(&r[3]),
            activity: otext(&r[4]),
            is_active: flag(&r[5]),
            is_concurrent: flag(&r[6]),
            is_scope: flag(&r[7]),
            is_event_scope: flag(&r[8]),
            is_mi_root: flag(&r[9]),
            start_time: time(&r[10]),
            suspension_state: SuspensionState::from_i32(int(&r[11]) as i32).unwrap_or_default(),
        })
        .collect();
    let mut tasks: Vec<Task> = task_rows
        .iter()
        .map(|r| Task {
            id: text(&r[0]),
            rev: int(&r[1]) as i32,
            execution_id: text(&r[2]),
            name: otext(&r[3]),
            task_def_key: text(&r[4]),
            assignee: otext(&r[5]),
            priority: int(&r[6]) as i32,
            create_time: time(&r[7]),
            due_date: r[8].as_timestamp(),
            form_key: otext(&r[9]),
            claim_time: r[10].as_timestamp(),
            suspension_state: SuspensionState::from_i32(int(&r[11]) as i32).unwrap_or_default(),
            candidate_users: Vec::new(),
            candidate_groups: Vec::new(),
        })
        .collect();
    for r in link_rows {
        if let Some(task) = tasks.iter_mut().find(|tk| tk.id == text(&r[0])) {
            task.candidate_users.extend(otext(&r[1]));
            task.candidate_groups.extend(otext(&r[2]));
        }
    }
    let subscriptions = sub_rows
        .iter()
        .filter_map(|r| {
            Some(Subscription {
                id: text(&r[0]),
                event_type: EventType::parse(&text(&r[1])).ok()?,
                event_name: text(&r[2]),
                execution_id: text(&r[3]),
                activity_id: text(&r[4]),
                created: time(&r[5]),
            })
        })
        .collect();
    let jobs = job_rows
        .iter()
        .filter_map(|r| {
            let kind = JobKind::from_row(&text(&r[1]), r[2].as_str())?;
            Some(ProcessJob {
                topic: (kind == JobKind::External).then(|| text(&r[2])),
                id: text(&r[0]),
                kind,
                execution_id: text(&r[3]),
                activity_id: text(&r[4]),
                due: r[5].as_timestamp(),
                repeat: otext(&r[6]),
                exclusive: flag(&r[7]),
                retry_cycle: otext(&r[8]),
            })
        })
        .collect();
    let activities = act_rows
        .iter()
        .map(|r| ActivityRecord {
            id: text(&r[0]),
            execution_id: text(&r[1]),
            activity_id: text(&r[2]),
            activity_name: otext(&r[3]),
            activity_type: text(&r[4]),
            task_id: otext(&r[5]),
            assignee: otext(&r[6]),
            start: time(&r[7]),
            end: None,
            delete_reason: None,
            seq: int(&r[8]),
        })
        .collect();
    Ok(Some(Instance {
        id: id.to_string(),
        definition_id: text(&root[13]),
        definition_key: text(&root[18]),
        business_key: otext(&root[12]),
        tenant_id: text(&root[14]),
        start_time: time(&root[10]),
        start_activity: otext(&root[15]),
        start_user: otext(&root[16]),
        super_exec: otext(&root[3]),
        super_instance: otext(&root[19]),
        root_rev: int(&root[1]) as i32,
        seq: int(&root[17]),
        suspension_state: SuspensionState::from_i32(int(&root[11]) as i32).unwrap_or_default(),
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
        interrupted_calls: Vec::new(),
        final_variables: Default::default(),
        index: Default::default(),
        variable_log: Vec::new(),
    }))
}

/// Variable and execution rows (of any instance) that cannot be read, at most `limit`: what
/// [`load`] would refuse. Variables are narrowed by SQL (a TYPE_ kairos does not know, a
/// number column NULL); executions are few per instance and all read.
pub async fn unreadable(store: &dyn Store, limit: usize) -> StoreResult<Vec<kairos_store::Unreadable>> {
    let mut found = Vec::new();
    let vars = store
        .read(
            "SELECT ID_, REV_, NAME_, EXECUTION_ID_, TYPE_, TEXT_, LONG_, DOUBLE_, TASK_ID_ FROM ACT_RU_VARIABLE \
             WHERE TYPE_ NOT IN ('null', 'boolean', 'integer', 'long', 'short', 'double', 'string', 'date', 'json') \
             OR (TYPE_ IN ('boolean', 'integer', 'long', 'short') AND LONG_ IS NULL) \
             OR (TYPE_ = 'double' AND DOUBLE_ IS NULL) OR (TYPE_ = 'json' AND TEXT_ IS NULL) ORDER BY ID_",
            &[],
        )
        .await?;
    for r in &vars {
        if let Err((column, problem)) = decode_value(&text(&r[4]), &r[5], &r[6], &r[7]) {
            let at = ["TYPE_", "TEXT_", "LONG_", "DOUBLE_"].iter().position(|c| *c == column).unwrap_or(0);
            let problem = format!("{problem} (variable {:?})", text(&r[2]));
            found.extend(bad_row(3, r, column, &r[4 + at], &problem).unreadable.map(|u| *u));
        }
    }
    // As JSON, as [`load`] reads them: an instant the driver cannot decode (PostgreSQL's
    // `infinity`) arrives as text to be named.
    let sql = format!(
        "SELECT CAST({}({}) AS TEXT) FROM {} ORDER BY e.ID_",
        store.dialect().json_array,
        PARTS[0].1,
        PARTS[0].0
    );
    let execs =
        store.read(&sql, &[]).await?.iter().filter_map(|r| r.first().map(json_row)).collect::<StoreResult<Vec<_>>>()?;
    for r in &execs {
        if let Err(e) = check(0, r, &[1, 11], &[10], &[]) {
            found.extend(e.unreadable.map(|u| *u));
        }
    }
    found.truncate(limit);
    Ok(found)
}

/// The statements that take the rows from `before` to `after` (see the module docs).
pub fn writes(before: Option<&Instance>, after: &Instance, level: super::HistoryLevel) -> Vec<Write> {
    // Tasks from `audit` up; activities from `activity`, variables in `history::variable_writes`.
    let history = level >= super::HistoryLevel::Audit;
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
             PRIORITY_, CREATE_TIME_, DUE_DATE_, SUSPENSION_STATE_, TENANT_ID_, FORM_KEY_, CLAIM_TIME_) \
             VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            ],
        ));
        let links = tk
            .candidate_users
            .iter()
            .map(|u| (Some(u), None))
            .chain(tk.candidate_groups.iter().map(|g| (None, Some(g))));
        for (n, (user, group)) in links.enumerate() {
            w.push(Write::new(
                "INSERT INTO ACT_RU_IDENTITYLINK (ID_, REV_, GROUP_ID_, TYPE_, USER_ID_, TASK_ID_, PROC_INST_ID_, PROC_DEF_ID_) \
                 VALUES (?, 1, ?, 'candidate', ?, ?, ?, ?)",
                vec![
                    t(&format!("{}-c{n}", tk.id)),
                    group.map_or(SqlValue::Null, |g| t(g)),
                    user.map_or(SqlValue::Null, |u| t(u)),
                    t(&tk.id),
                    t(pi),
                    t(&after.definition_id),
                ],
            ));
        }
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
                "UPDATE ACT_RU_TASK SET REV_ = REV_ + 1, ASSIGNEE_ = ?, CLAIM_TIME_ = ?, SUSPENSION_STATE_ = ? WHERE ID_ = ? AND REV_ = ?",
                vec![ot(&tk.assignee), ots(tk.claim_time), i(i64::from(tk.suspension_state.as_i32())), t(&tk.id), i(i64::from(tk.rev))],
            )
            .expect(1)
            .keyed(),
        );
        if history {
            w.push(Write::new(
                "UPDATE ACT_HI_TASKINST SET ASSIGNEE_ = ?, CLAIM_TIME_ = ? WHERE ID_ = ?",
                vec![ot(&tk.assignee), ots(tk.claim_time), t(&tk.id)],
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
                vec![ts(e.end), i(ms_between(e.start, e.end)), ot(&e.reason), ts(e.end), t(&e.id)],
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
    if level >= super::HistoryLevel::Activity {
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
    // Another job's effects reach this instance's rows only past the instance lock (the root's
    // REV_ check or its checked delete, written here too): a new instance's rows are fresh.
    w.into_iter().map(Write::commutes).collect()
}

fn ms_between(a: Timestamp, b: Timestamp) -> i64 {
    b.duration_since(a).as_millis() as i64
}
