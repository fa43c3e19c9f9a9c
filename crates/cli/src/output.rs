//! What the CLI prints on stdout: aligned tables for people, JSON in the shapes of the HTTP API
//! (API.md: camelCase fields, lists as `{"data", "total", "start", "size"}`) for scripts.

use crate::exit::CliError;
use jiff::Timestamp;
use kairos_core::{Job, JobLogEntry};
use kairos_store::Page;
use serde::Serialize;
use std::io::Write;

/// Writes `text` to stdout. A closed pipe (`kairos jobs | head`) is not an error.
pub fn emit(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(CliError::failure(format!("cannot write to stdout: {e}")))
        }
        _ => Ok(()),
    }
}

/// Writes one line to stdout.
pub fn line(text: &str) -> Result<(), CliError> {
    emit(&format!("{text}\n"))
}

/// Writes a value as one line of JSON.
pub fn json(value: &impl Serialize) -> Result<(), CliError> {
    let text = serde_json::to_string(value).map_err(|e| CliError::failure(format!("cannot encode JSON: {e}")))?;
    line(&text)
}

/// A job as `GET /management/jobs/{id}` shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobJson<'a> {
    pub id: &'a str,
    #[serde(rename = "type")]
    pub job_type: &'static str,
    pub handler_type: &'a str,
    pub payload: serde_json::Value,
    pub process_instance_id: Option<&'a str>,
    pub execution_id: Option<&'a str>,
    pub element_id: Option<&'a str>,
    pub due_date: Option<Timestamp>,
    pub retries: i32,
    pub attempts: i32,
    pub exception_message: Option<&'a str>,
    pub lock_owner: Option<&'a str>,
    pub lock_expiration_time: Option<Timestamp>,
    pub exclusive: bool,
    pub exclusive_key: Option<&'a str>,
    pub repeat: Option<&'a str>,
    pub retry_cycle: Option<&'a str>,
    pub tenant_id: Option<&'a str>,
    pub create_time: Timestamp,
}

impl<'a> From<&'a Job> for JobJson<'a> {
    fn from(j: &'a Job) -> Self {
        JobJson {
            id: &j.id,
            job_type: j.job_type.as_str(),
            handler_type: &j.handler_type,
            // HANDLER_CFG_ is JSON text; show it as JSON, or as a string if someone stored text.
            payload: match j.handler_cfg.as_deref() {
                None => serde_json::Value::Null,
                Some(t) => serde_json::from_str(t).unwrap_or_else(|_| serde_json::Value::String(t.to_string())),
            },
            process_instance_id: j.process_instance_id.as_deref(),
            execution_id: j.execution_id.as_deref(),
            element_id: j.element_id.as_deref(),
            due_date: j.duedate,
            retries: j.retries,
            attempts: j.attempts,
            exception_message: j.exception_msg.as_deref(),
            lock_owner: j.lock_owner.as_deref(),
            lock_expiration_time: j.lock_exp_time,
            exclusive: j.exclusive,
            exclusive_key: j.exclusive_key.as_deref(),
            repeat: j.repeat.as_deref(),
            retry_cycle: j.retry_cycle.as_deref(),
            tenant_id: j.tenant_id.as_deref().filter(|t| !t.is_empty()),
            create_time: j.create_time,
        }
    }
}

/// One attempt as `GET /history/job-log` shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobLogJson<'a> {
    pub job_id: &'a str,
    pub attempt: i32,
    pub node: Option<&'a str>,
    pub start: Option<Timestamp>,
    pub end: Option<Timestamp>,
    pub outcome: &'static str,
    pub message: Option<&'a str>,
    pub handler_type: &'a str,
    #[serde(rename = "type")]
    pub job_type: &'static str,
    pub process_instance_id: Option<&'a str>,
    pub due_date: Option<Timestamp>,
}

impl<'a> From<&'a JobLogEntry> for JobLogJson<'a> {
    fn from(e: &'a JobLogEntry) -> Self {
        JobLogJson {
            job_id: &e.job_id,
            attempt: e.attempt,
            node: e.node.as_deref(),
            start: e.start,
            end: e.end,
            outcome: e.outcome.as_str(),
            message: e.message.as_deref(),
            handler_type: &e.handler_type,
            job_type: e.job_type.as_str(),
            process_instance_id: e.process_instance_id.as_deref(),
            due_date: e.duedate,
        }
    }
}

/// A page in the API's list shape, with its rows mapped.
pub fn page_json<'a, T, U: Serialize>(page: &'a Page<T>, f: impl Fn(&'a T) -> U) -> PageJson<U> {
    PageJson {
        data: page.data.iter().map(f).collect(),
        total: page.total,
        start: page.start,
        size: page.size,
        unreadable: page.unreadable.clone(),
    }
}

/// `{"data": [...], "total": N, "start": 0, "size": N}`.
#[derive(Debug, Serialize)]
pub struct PageJson<U> {
    pub data: Vec<U>,
    pub total: u64,
    pub start: u64,
    pub size: u64,
    /// Rows of the page kairos cannot read (not in `data`); absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<kairos_store::Unreadable>,
}

/// Columns aligned with two spaces; the last column is not padded.
#[derive(Debug, Default)]
pub struct Table {
    headers: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(headers: &[&'static str]) -> Self {
        Table { headers: headers.to_vec(), rows: Vec::new() }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let headers: Vec<String> = self.headers.iter().map(|h| h.to_string()).collect();
        for row in std::iter::once(&headers).chain(&self.rows) {
            let last = row.len().saturating_sub(1);
            for (i, cell) in row.iter().enumerate() {
                if i == last {
                    out.push_str(cell);
                } else {
                    let pad = widths[i] - cell.chars().count();
                    out.push_str(cell);
                    out.push_str(&" ".repeat(pad + 2));
                }
            }
            out.truncate(out.trim_end().len());
            out.push('\n');
        }
        out
    }
}

/// An instant for a table: UTC, to the millisecond; `-` when absent.
pub fn instant(t: Option<Timestamp>) -> String {
    match t {
        None => "-".into(),
        Some(t) => t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
    }
}

/// An optional text for a table, on one line and at most `max` characters.
pub fn cell(s: Option<&str>, max: usize) -> String {
    match s.map(crate::exit::one_line) {
        None => "-".into(),
        Some(t) if t.is_empty() => "-".into(),
        Some(t) if t.chars().count() > max => {
            format!("{}...", t.chars().take(max.saturating_sub(3)).collect::<String>())
        }
        Some(t) => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_columns() {
        let mut t = Table::new(&["ID", "TYPE", "NOTE"]);
        t.row(vec!["a".into(), "message".into(), "-".into()]);
        t.row(vec!["bbbb".into(), "timer".into(), "x y".into()]);
        assert_eq!(t.render(), "ID    TYPE     NOTE\na     message  -\nbbbb  timer    x y\n");
    }

    #[test]
    fn cells_are_cut_and_instants_are_millis() {
        assert_eq!(cell(Some("line one\nline two"), 11), "line one...");
        assert_eq!(cell(None, 5), "-");
        let t: Timestamp = "2026-01-01T08:00:00.123456Z".parse().unwrap();
        assert_eq!(instant(Some(t)), "2026-01-01T08:00:00.123Z");
    }
}
