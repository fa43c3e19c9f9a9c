//! What the API sends, in Flowable's camelCase shape (API.md). The core types keep Activiti's
//! column names; these DTOs are the contract, so a renamed core field cannot change the API.

use jiff::{SignedDuration, Timestamp};
use kairos::{Job, JobLogEntry, JobState, JobTable, NodeInfo};
use kairos_store::Page;
use serde::Serialize;

/// A list in the API's shape, Flowable's `DataResponse`: `{"data": [...], "total": N,
/// "start": S, "sort": "id", "order": "asc", "size": N}` where `size` is how many items this
/// page holds and `sort`/`order` say how it was ordered (null where a list has one fixed order).
#[derive(Debug, Serialize)]
pub struct List<T> {
    pub data: Vec<T>,
    pub total: u64,
    pub start: u64,
    pub sort: Option<String>,
    pub order: Option<&'static str>,
    pub size: u64,
}

impl<T> List<T> {
    pub fn new(data: Vec<T>, total: u64, start: u64) -> Self {
        List { size: data.len() as u64, total, start, sort: None, order: None, data }
    }

    pub fn from_page<U>(page: Page<U>, f: impl FnMut(U) -> T) -> Self {
        let data: Vec<T> = page.data.into_iter().map(f).collect();
        List::new(data, page.total, page.start)
    }

    /// The list, saying it is ordered as `s` says.
    pub fn sorted_as(mut self, s: &Sorting) -> Self {
        self.sort = Some(s.field.clone());
        self.order = Some(if s.descending { "desc" } else { "asc" });
        self
    }
}

/// `sort` and `order` of a list query (Flowable's `PaginateRequest`): a property of the items
/// the list allows, ascending unless `order=desc`.
#[derive(Debug, Clone)]
pub struct Sorting {
    pub field: String,
    pub descending: bool,
}

impl Sorting {
    /// Checks `sort` against `allowed` (default `default`) and `order` (asc|desc), naming the
    /// parameter when one is wrong.
    pub fn parse(
        sort: Option<&str>,
        order: Option<&str>,
        allowed: &[&str],
        default: &str,
    ) -> Result<Sorting, crate::ApiError> {
        let field = match sort {
            None | Some("") => default.to_string(),
            Some(s) if allowed.contains(&s) => s.to_string(),
            Some(s) => {
                return Err(crate::ApiError::invalid(
                    "sort",
                    format!("sort must be one of {}, not \"{s}\"", allowed.join(", ")),
                ));
            }
        };
        let descending = match order {
            None | Some("") | Some("asc") => false,
            Some("desc") => true,
            Some(o) => {
                return Err(crate::ApiError::invalid("order", format!("order must be asc or desc, not \"{o}\"")));
            }
        };
        Ok(Sorting { field, descending })
    }

    /// Sorts items held in memory by the property of their JSON form that `field` names
    /// (nulls first, as Flowable's databases order them ascending), ties by `id`.
    pub fn sort<T: Serialize>(&self, items: Vec<T>) -> Vec<T> {
        let mut keyed: Vec<(serde_json::Value, serde_json::Value, T)> = items
            .into_iter()
            .map(|item| {
                let v = serde_json::to_value(&item).unwrap_or_default();
                (v.get(&self.field).cloned().unwrap_or_default(), v.get("id").cloned().unwrap_or_default(), item)
            })
            .collect();
        keyed.sort_by(|a, b| {
            let o = compare(&a.0, &b.0).then_with(|| compare(&a.1, &b.1));
            if self.descending { o.reverse() } else { o }
        });
        keyed.into_iter().map(|(_, _, item)| item).collect()
    }
}

/// An order of JSON values of one property: null first, then booleans, numbers, strings.
fn compare(a: &serde_json::Value, b: &serde_json::Value) -> std::cmp::Ordering {
    use serde_json::Value as V;
    fn rank(v: &V) -> u8 {
        match v {
            V::Null => 0,
            V::Bool(_) => 1,
            V::Number(_) => 2,
            V::String(_) => 3,
            _ => 4,
        }
    }
    match (a, b) {
        (V::Bool(x), V::Bool(y)) => x.cmp(y),
        (V::Number(x), V::Number(y)) => {
            x.as_f64().unwrap_or(0.0).partial_cmp(&y.as_f64().unwrap_or(0.0)).unwrap_or(std::cmp::Ordering::Equal)
        }
        (V::String(x), V::String(y)) => x.cmp(y),
        _ => rank(a).cmp(&rank(b)),
    }
}

/// A page of jobs, and the rows of that page kairos cannot read (each naming its table, id,
/// column and stored text), which are not in `data`.
#[derive(Debug, Serialize)]
pub struct JobList {
    #[serde(flatten)]
    pub list: List<JobDto>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<kairos::store::Unreadable>,
}

/// A job of ACT_RU_JOB, ACT_RU_DEADLETTER_JOB or ACT_RU_SUSPENDED_JOB.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobDto {
    pub id: String,
    #[serde(rename = "type")]
    pub job_type: &'static str,
    /// `waiting`, `executable`, `running`, `dead-letter` or `suspended`, by the database clock.
    pub state: &'static str,
    pub handler_type: String,
    pub process_instance_id: Option<String>,
    pub process_definition_id: Option<String>,
    pub execution_id: Option<String>,
    pub element_id: Option<String>,
    pub element_name: Option<String>,
    pub due_date: Option<Timestamp>,
    pub retries: i32,
    pub attempts: i32,
    pub exception_message: Option<String>,
    pub lock_owner: Option<String>,
    pub lock_expiration_time: Option<Timestamp>,
    pub exclusive: bool,
    pub exclusive_key: Option<String>,
    pub repeat: Option<String>,
    pub retry_cycle: Option<String>,
    pub tenant_id: Option<String>,
    pub create_time: Timestamp,
    /// HANDLER_CFG_ as JSON (a string if it is not JSON).
    pub payload: serde_json::Value,
}

impl JobDto {
    pub fn new(job: Job, table: JobTable, db_now: Timestamp) -> Self {
        let state = state_name(JobState::of(Some((&job, table)), db_now));
        let payload = match job.handler_cfg {
            None => serde_json::Value::Null,
            Some(text) => serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
        };
        JobDto {
            id: job.id,
            job_type: job.job_type.as_str(),
            state,
            handler_type: job.handler_type,
            process_instance_id: job.process_instance_id,
            process_definition_id: job.proc_def_id,
            execution_id: job.execution_id,
            element_id: job.element_id,
            element_name: job.element_name,
            due_date: job.duedate,
            retries: job.retries,
            attempts: job.attempts,
            exception_message: job.exception_msg,
            lock_owner: job.lock_owner,
            lock_expiration_time: job.lock_exp_time,
            exclusive: job.exclusive,
            exclusive_key: job.exclusive_key,
            repeat: job.repeat,
            retry_cycle: job.retry_cycle,
            // Activiti stores "no tenant" as ''.
            tenant_id: job.tenant_id.filter(|t| !t.is_empty()),
            create_time: job.create_time,
            payload,
        }
    }
}

fn state_name(s: JobState) -> &'static str {
    match s {
        JobState::Waiting => "waiting",
        JobState::Executable => "executable",
        JobState::Running => "running",
        JobState::DeadLetter => "dead-letter",
        JobState::Suspended => "suspended",
        JobState::Done => "done",
    }
}

/// One attempt of one job (ACT_HI_JOB_LOG).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobLogDto {
    pub id: String,
    pub job_id: String,
    pub attempt: i32,
    pub node: Option<String>,
    pub start: Option<Timestamp>,
    pub end: Option<Timestamp>,
    pub outcome: &'static str,
    pub message: Option<String>,
    pub handler_type: String,
    #[serde(rename = "type")]
    pub job_type: &'static str,
    pub process_instance_id: Option<String>,
    pub element_id: Option<String>,
    pub exclusive_key: Option<String>,
    pub due_date: Option<Timestamp>,
    pub tenant_id: Option<String>,
}

impl From<JobLogEntry> for JobLogDto {
    fn from(e: JobLogEntry) -> Self {
        JobLogDto {
            id: e.id,
            job_id: e.job_id,
            attempt: e.attempt,
            node: e.node,
            start: e.start,
            end: e.end,
            outcome: e.outcome.as_str(),
            message: e.message,
            handler_type: e.handler_type,
            job_type: e.job_type.as_str(),
            process_instance_id: e.process_instance_id,
            element_id: e.element_id,
            exclusive_key: e.exclusive_key,
            due_date: e.duedate,
            tenant_id: e.tenant_id.filter(|t| !t.is_empty()),
        }
    }
}

/// A node of the cluster with its last heartbeat.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeDto {
    pub id: String,
    pub host: String,
    pub pid: i64,
    pub workers: i32,
    pub started: Timestamp,
    pub last_heartbeat: Timestamp,
    /// Seconds since the last heartbeat, by the database clock.
    pub heartbeat_age_seconds: f64,
    /// `running`, `stopped` or `dead` as recorded.
    pub state: String,
    /// Running with a heartbeat fresher than the dead-node threshold.
    pub alive: bool,
}

impl NodeDto {
    /// `dead_after` is this node's, used only for a node that recorded no settings of its own.
    pub fn new(n: NodeInfo, db_now: Timestamp, dead_after: SignedDuration) -> Self {
        let dead_after = n.settings.as_ref().map_or(dead_after, |s| s.dead_after);
        let age = db_now.duration_since(n.heartbeat);
        NodeDto {
            alive: n.state == "running" && age <= dead_after,
            heartbeat_age_seconds: (age.as_millis() as f64 / 1000.0).max(0.0),
            id: n.id,
            host: n.host,
            pid: n.pid,
            workers: n.workers,
            started: n.started,
            last_heartbeat: n.heartbeat,
            state: n.state,
        }
    }
}

/// A user task of ACT_HI_TASKINST, open or done.
pub use kairos::process::HistoricTask as HistoricTaskDto;
