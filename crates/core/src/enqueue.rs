//! Turning a caller's request into a job row: validation happens here, before anything is
//! written, so that bad input "gets a clear error and changes nothing".

use crate::error::{Error, Result};
use crate::job::{JobType, new_id};
use crate::repeat::Repeat;
use jiff::Timestamp;
use kairos_time::{IsoDuration, RetryCycle};
use serde::{Deserialize, Serialize};

/// The largest payload (HANDLER_CFG_) a job may carry. Jobs are for work, not for data: larger
/// documents belong in the caller's tables, referenced by id from the payload.
pub const MAX_PAYLOAD_BYTES: usize = 1024 * 1024;

/// Default RETRIES_ of a new job: three attempts, as in Activiti.
pub const DEFAULT_RETRIES: i32 = 3;

const MAX_NAME_LEN: usize = 255;

/// What a caller asks for (SPEC J13): the shape of `POST /management/jobs` and
/// `kairos jobs enqueue`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EnqueueRequest {
    pub handler: String,
    #[serde(default)]
    pub payload: Option<serde_json::Value>,
    /// An absolute due instant.
    #[serde(default, deserialize_with = "crate::instant::accepted")]
    pub due_date: Option<Timestamp>,
    /// A due date relative to the database's clock (ISO 8601 duration), e.g. `PT5M`.
    #[serde(default)]
    pub due_in: Option<String>,
    #[serde(default)]
    pub retries: Option<i32>,
    #[serde(default)]
    pub retry_cycle: Option<String>,
    #[serde(default)]
    pub repeat: Option<String>,
    #[serde(default)]
    pub exclusive_key: Option<String>,
    #[serde(default)]
    pub tenant_id: Option<String>,
}

/// When a new job becomes due, resolved against the database's clock inside the inserting
/// transaction (SPEC J9: one clock for the cluster).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Due {
    Now,
    At(Timestamp),
    In(IsoDuration),
    /// The first fire of a repeating cycle or cron.
    Cycle(Repeat),
}

impl Due {
    /// The DUEDATE_ to store, given the database's current instant. `None` when a cycle can
    /// never fire (its end date has passed).
    pub fn resolve(&self, db_now: Timestamp) -> Result<Option<Timestamp>> {
        match self {
            Due::Now => Ok(Some(db_now)),
            Due::At(t) => Ok(Some(*t)),
            Due::In(d) => d.add_to(db_now).map(Some).map_err(|e| Error::invalid("dueIn", e.to_string())),
            Due::Cycle(c) => c.first_due(db_now).map_err(|e| Error::invalid("repeat", e)),
        }
    }
}

/// A validated job, ready to insert. Process-engine fields stay `None` for standalone jobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewJob {
    pub id: String,
    pub job_type: JobType,
    pub due: Due,
    pub exclusive: bool,
    pub exclusive_key: Option<String>,
    pub execution_id: Option<String>,
    pub process_instance_id: Option<String>,
    pub proc_def_id: Option<String>,
    pub element_id: Option<String>,
    pub element_name: Option<String>,
    pub retries: i32,
    pub retry_cycle: Option<String>,
    pub repeat: Option<String>,
    pub handler_type: String,
    pub handler_cfg: Option<String>,
    pub tenant_id: Option<String>,
}

impl EnqueueRequest {
    /// Validates the request against the handlers this engine knows. Every error names the
    /// field that was wrong.
    pub fn validate(&self, handler_known: impl Fn(&str) -> bool) -> Result<NewJob> {
        check_name("handler", &self.handler, true)?;
        if !handler_known(&self.handler) {
            return Err(Error::UnknownHandler(self.handler.clone()));
        }
        let handler_cfg = match &self.payload {
            None | Some(serde_json::Value::Null) => None,
            Some(v) => {
                let text = serde_json::to_string(v).map_err(|e| Error::invalid("payload", e.to_string()))?;
                if text.len() > MAX_PAYLOAD_BYTES {
                    return Err(Error::invalid(
                        "payload",
                        format!(
                            "{} bytes is over the limit of {} bytes (1 MiB); keep large data in your own tables and pass its id",
                            text.len(),
                            MAX_PAYLOAD_BYTES
                        ),
                    ));
                }
                Some(text)
            }
        };
        let retry_cycle = match &self.retry_cycle {
            None => None,
            Some(s) => Some(RetryCycle::parse(s).map_err(|e| Error::invalid("retryCycle", e.to_string()))?),
        };
        let retries = match (self.retries, &retry_cycle) {
            (Some(r), _) if r < 1 => {
                return Err(Error::invalid(
                    "retries",
                    format!("{r} is not allowed: retries counts attempts and must be at least 1"),
                ));
            }
            (Some(r), _) => r,
            (None, Some(c)) => i32::try_from(c.retries()).unwrap_or(i32::MAX - 1).saturating_add(1),
            (None, None) => DEFAULT_RETRIES,
        };
        let repeat = match &self.repeat {
            None => None,
            Some(s) => Some(Repeat::parse(s).map_err(|e| Error::invalid("repeat", e))?),
        };
        if let Some(t) = self.due_date {
            kairos_time::check_accepted_instant(t).map_err(|m| Error::invalid("dueDate", m))?;
        }
        if let Some(Repeat::Cycle(c)) = &repeat {
            for t in c.start.iter().chain(c.end.iter()) {
                kairos_time::check_accepted_instant(*t).map_err(|m| Error::invalid("repeat", m))?;
            }
        }
        if self.due_date.is_some() && self.due_in.is_some() {
            return Err(Error::invalid("dueIn", "give either dueDate or dueIn, not both"));
        }
        let due = match (&self.due_date, &self.due_in, &repeat) {
            (Some(t), _, _) => Due::At(*t),
            (None, Some(d), _) => Due::In(IsoDuration::parse(d).map_err(|e| Error::invalid("dueIn", e.to_string()))?),
            (None, None, Some(c)) => Due::Cycle(c.clone()),
            (None, None, None) => Due::Now,
        };
        if let Some(k) = &self.exclusive_key {
            check_name("exclusiveKey", k, true)?;
        }
        if let Some(t) = &self.tenant_id {
            check_name("tenantId", t, false)?;
        }
        let job_type = if repeat.is_some() || !matches!(due, Due::Now) { JobType::Timer } else { JobType::Message };
        let job = NewJob {
            id: new_id(),
            job_type,
            due,
            exclusive: self.exclusive_key.is_some(),
            exclusive_key: self.exclusive_key.clone(),
            execution_id: None,
            process_instance_id: None,
            proc_def_id: None,
            element_id: None,
            element_name: None,
            retries,
            retry_cycle: retry_cycle.map(|c| c.to_string()),
            repeat: repeat.map(|c| c.to_string()),
            handler_type: self.handler.clone(),
            handler_cfg,
            tenant_id: self.tenant_id.clone(),
        };
        job.check_columns()?;
        Ok(job)
    }
}

/// The text columns of ACT_RU_JOB a [`NewJob`] fills, by the field that names it in the API,
/// with their width in characters (PostgreSQL's VARCHAR(n) counts characters; SQLite keeps any
/// length, so both stores check these first and refuse the same values).
const JOB_COLUMN_WIDTHS: [(&str, usize); 11] = [
    ("id", 64),
    ("executionId", 64),
    ("processInstanceId", 64),
    ("processDefinitionId", 64),
    ("elementId", 255),
    ("elementName", 255),
    ("exclusiveKey", 255),
    ("retryCycle", 255),
    ("repeat", 255),
    ("handler", 255),
    ("tenantId", 255),
];

impl NewJob {
    /// Checks every string against its ACT_RU_JOB column before any write: too long for it, or
    /// holding a NUL (which PostgreSQL cannot store), is [`Error::Invalid`] naming the field.
    /// Both stores call this on every insert, so they accept and refuse the same jobs and no
    /// database error reaches the caller as its mistake (docs/limits.md).
    pub fn check_columns(&self) -> Result<()> {
        let values = [
            Some(self.id.as_str()),
            self.execution_id.as_deref(),
            self.process_instance_id.as_deref(),
            self.proc_def_id.as_deref(),
            self.element_id.as_deref(),
            self.element_name.as_deref(),
            self.exclusive_key.as_deref(),
            self.retry_cycle.as_deref(),
            self.repeat.as_deref(),
            Some(self.handler_type.as_str()),
            self.tenant_id.as_deref(),
        ];
        for ((field, width), value) in JOB_COLUMN_WIDTHS.iter().zip(values) {
            let Some(value) = value else { continue };
            let chars = value.chars().count();
            if chars > *width {
                return Err(Error::invalid(
                    field,
                    format!("is {chars} characters long; at most {width} fit its column"),
                ));
            }
            if value.contains('\0') {
                return Err(Error::invalid(field, "contains a NUL character, which cannot be stored"));
            }
        }
        if self.handler_cfg.as_deref().is_some_and(|c| c.contains('\0')) {
            return Err(Error::invalid("payload", "contains a NUL character, which cannot be stored"));
        }
        Ok(())
    }
}

fn check_name(field: &'static str, value: &str, non_empty: bool) -> Result<()> {
    if non_empty && value.trim().is_empty() {
        return Err(Error::invalid(field, "must not be empty"));
    }
    if value.len() > MAX_NAME_LEN {
        return Err(Error::invalid(field, format!("is {} bytes long; at most {MAX_NAME_LEN}", value.len())));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(handler: &str) -> EnqueueRequest {
        EnqueueRequest { handler: handler.into(), ..Default::default() }
    }
    fn known(h: &str) -> bool {
        h == "log"
    }

    #[test]
    fn a_plain_request_becomes_a_message_job_due_now_with_three_retries() {
        let j = req("log").validate(known).unwrap();
        assert_eq!(j.job_type, JobType::Message);
        assert_eq!(j.due, Due::Now);
        assert_eq!(j.retries, DEFAULT_RETRIES);
    }

    #[test]
    fn unknown_handler_is_refused_by_name() {
        let e = req("nope").validate(known).unwrap_err();
        assert_eq!(e, Error::UnknownHandler("nope".into()));
        assert!(e.to_string().contains("\"nope\""));
    }

    #[test]
    fn retries_below_one_are_refused() {
        for r in [-1, 0] {
            let e = EnqueueRequest { retries: Some(r), ..req("log") }.validate(known).unwrap_err();
            assert!(matches!(e, Error::Invalid { field: "retries", .. }), "{e}");
        }
    }

    #[test]
    fn payload_over_one_mebibyte_is_refused() {
        let big = "x".repeat(MAX_PAYLOAD_BYTES);
        let e = EnqueueRequest { payload: Some(serde_json::json!({ "b": big })), ..req("log") }
            .validate(known)
            .unwrap_err();
        assert!(matches!(e, Error::Invalid { field: "payload", .. }), "{e}");
    }

    #[test]
    fn a_retry_cycle_sets_the_attempts() {
        let j = EnqueueRequest { retry_cycle: Some("R5/PT10M".into()), ..req("log") }.validate(known).unwrap();
        assert_eq!(j.retries, 6, "the first attempt plus five retries");
        let j = EnqueueRequest { retry_cycle: Some("PT1M, PT5M".into()), ..req("log") }.validate(known).unwrap();
        assert_eq!(j.retries, 3);
    }

    #[test]
    fn bad_iso_values_name_their_field() {
        let cases = [
            (EnqueueRequest { retry_cycle: Some("R5/PT10X".into()), ..req("log") }, "retryCycle"),
            (EnqueueRequest { repeat: Some("R3/banana".into()), ..req("log") }, "repeat"),
            (EnqueueRequest { due_in: Some("5 minutes".into()), ..req("log") }, "dueIn"),
        ];
        for (r, field) in cases {
            match r.validate(known).unwrap_err() {
                Error::Invalid { field: f, .. } => assert_eq!(f, field),
                e => panic!("{e}"),
            }
        }
    }

    #[test]
    fn a_repeat_makes_a_timer_due_after_one_period() {
        let j = EnqueueRequest { repeat: Some("R3/PT1S".into()), ..req("log") }.validate(known).unwrap();
        assert_eq!(j.job_type, JobType::Timer);
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        assert_eq!(j.due.resolve(now).unwrap(), Some("2026-01-01T00:00:01Z".parse().unwrap()));
    }
}
