//! Idempotent commands (SPEC C2; seed 002 §8.1 and §25): a start or a task completion may carry
//! a `requestId`, the identity of one user or system command. The command records it in
//! `KAIROS_REQUEST` in its own transaction, so
//! - a retry (the caller never saw the answer: a timeout, a dropped connection) finds the row
//!   and gets the first result instead of a second instance or a 409 for a task it completed;
//! - of two concurrent commands with one requestId exactly one commits: the table's primary key
//!   is the last line of defence ("looking first, then acting" alone is not safe, §25), and
//!   the loser, seeing the key taken, answers with the winner's result;
//! - a requestId reused for a *different* request (another definition, business key, task or
//!   variables) is refused with a conflict naming it, rather than silently answered with the
//!   result of something else. Requests are compared by a SHA-256 fingerprint of their
//!   canonical JSON (keys sorted, so key order does not matter).
//!
//! Rows are kept for [`REQUEST_RETENTION`], then deleted by the history cleanup: a retry later
//! than that runs as a new command.
//!
//! Handlers of synchronous service tasks run before the commit, so two concurrent duplicates
//! may both run them (only one commits); handlers with outside effects belong in async tasks or
//! external workers, where the job's lease decides who runs.

use crate::Error;
use kairos_process::{ErrorKind, ProcessError};
use kairos_store::{Sql, Write};
use kairos_store_engine::process as tables;
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

/// The longest requestId (seed 002's `request_id VARCHAR(64)`).
pub const MAX_REQUEST_ID_CHARS: usize = 64;

/// How long a requestId is remembered.
pub const REQUEST_RETENTION: jiff::SignedDuration = jiff::SignedDuration::from_hours(7 * 24);

/// Refuses a requestId that cannot be stored: empty, longer than [`MAX_REQUEST_ID_CHARS`], or
/// with control characters.
pub fn check_request_id(id: &str) -> Result<(), Error> {
    let chars = id.chars().count();
    if chars == 0 || chars > MAX_REQUEST_ID_CHARS || id.chars().any(char::is_control) {
        return Err(Error::Process(ProcessError {
            kind: ErrorKind::Invalid,
            message: format!(
                "requestId must have 1 to {MAX_REQUEST_ID_CHARS} characters and no control characters (it has {chars})"
            ),
            element_id: Some("requestId".into()),
        }));
    }
    Ok(())
}

/// One command's requestId with what identifies the request behind it.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) id: String,
    command: &'static str,
    fingerprint: String,
}

/// What the table says about a requestId.
#[derive(Debug)]
pub(crate) enum Recorded {
    /// Not used yet (or forgotten): run the command.
    New,
    /// Used by this very request: its first result (the response as JSON, if it had one).
    Done(Option<Json>),
}

impl Request {
    /// `request` is the command's parameters as JSON, `command` its name.
    pub(crate) fn new(id: &str, command: &'static str, request: &Json) -> Result<Request, Error> {
        check_request_id(id)?;
        Ok(Request { id: id.to_string(), command, fingerprint: fingerprint(request) })
    }

    /// A request the engine makes of itself, identified by `parts` (e.g. a delivery job and the
    /// instance it delivers to): a retried job finds what its earlier attempt committed.
    pub(crate) fn derived(command: &'static str, parts: &[&str], request: &Json) -> Request {
        let hex = sha256_hex(&parts.join("\n"));
        let id = format!("{command}:{}", &hex[..MAX_REQUEST_ID_CHARS - command.len() - 1]);
        Request { id, command, fingerprint: fingerprint(request) }
    }

    /// The row that records this request with its `result`; it goes into the command's writes.
    pub(crate) fn record(&self, result: Option<&Json>) -> Write {
        tables::request_insert(&self.id, self.command, &self.fingerprint, result.map(Json::to_string))
    }

    /// Looks the requestId up: new, done by this request, or a conflict when another request
    /// used it.
    pub(crate) async fn recorded(&self, store: &dyn Sql) -> Result<Recorded, Error> {
        let Some(row) = tables::request_get(store, &self.id).await? else { return Ok(Recorded::New) };
        let (command, fingerprint) = (row.command.as_str(), row.fingerprint.as_str());
        if command != self.command || fingerprint != self.fingerprint {
            let what = if command == self.command { "with other parameters" } else { "by another command" };
            return Err(Error::Process(ProcessError {
                kind: ErrorKind::Conflict,
                message: format!(
                    "requestId '{}' was already used {what} ({command}); a retry must repeat its request \
                     unchanged, a new request needs a new requestId",
                    self.id
                ),
                element_id: Some("requestId".into()),
            }));
        }
        let result = match row.result.as_deref() {
            None => None,
            Some(text) => Some(serde_json::from_str(text).map_err(|e| {
                Error::Process(ProcessError::new(
                    ErrorKind::Model,
                    format!("the stored result of requestId '{}' does not parse: {e}", self.id),
                ))
            })?),
        };
        Ok(Recorded::Done(result))
    }

    /// After a command with this request failed with `error`: the first result when the failure
    /// was losing to a concurrent duplicate (the key was taken; the task it completed was gone,
    /// a conflict, or without task history not found at all), else `error` itself.
    pub(crate) async fn settle(&self, store: &dyn Sql, error: Error) -> Result<Option<Json>, Error> {
        let lost = match &error {
            Error::Store(e) => e.kind == kairos_store::ErrorKind::Conflict,
            Error::Process(e) => matches!(e.kind, ErrorKind::Conflict | ErrorKind::NotFound),
            _ => false,
        };
        if !lost {
            return Err(error);
        }
        match self.recorded(store).await? {
            Recorded::Done(result) => Ok(result),
            Recorded::New => Err(error),
        }
    }
}

/// SHA-256 of a request's canonical JSON (object keys sorted at every level, whatever order
/// the map keeps: an embedding program may turn on serde_json's `preserve_order`), in hex.
fn fingerprint(request: &Json) -> String {
    let mut text = String::new();
    canonical(request, &mut text);
    sha256_hex(&text)
}

fn canonical(value: &Json, out: &mut String) {
    match value {
        Json::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Json::String(k.clone()).to_string());
                out.push(':');
                canonical(v, out);
            }
            out.push('}');
        }
        Json::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_fingerprint_ignores_key_order_and_sees_any_change() {
        let a = Request::new("r", "start", &json!({"key": "order", "variables": {"a": 1, "b": 2}})).unwrap();
        let b =
            Request::new("r", "start", &serde_json::from_str(r#"{"variables":{"b":2,"a":1},"key":"order"}"#).unwrap())
                .unwrap();
        let c = Request::new("r", "start", &json!({"key": "order", "variables": {"a": 1, "b": 3}})).unwrap();
        assert_eq!(a.fingerprint, b.fingerprint);
        assert_ne!(a.fingerprint, c.fingerprint);
        assert_eq!(a.fingerprint.len(), 64);
    }

    #[test]
    fn derived_request_ids_fit_the_column_and_differ_by_their_parts() {
        let a = Request::derived("signal", &["job-1", "instance-1"], &json!({}));
        let b = Request::derived("signal", &["job-1", "instance-2"], &json!({}));
        assert_eq!(a.id.chars().count(), MAX_REQUEST_ID_CHARS);
        assert!(a.id.starts_with("signal:"), "{}", a.id);
        assert_ne!(a.id, b.id);
        assert!(check_request_id(&a.id).is_ok());
    }

    #[test]
    fn request_ids_are_bounded_and_named_in_the_error() {
        for bad in ["", "\n", &"x".repeat(MAX_REQUEST_ID_CHARS + 1)] {
            let e = Request::new(bad, "start", &json!({})).unwrap_err();
            let Error::Process(p) = e else { panic!("{e:?}") };
            assert_eq!((p.kind, p.element_id.as_deref()), (ErrorKind::Invalid, Some("requestId")));
        }
        assert!(Request::new(&"é".repeat(MAX_REQUEST_ID_CHARS), "start", &json!({})).is_ok());
    }
}
