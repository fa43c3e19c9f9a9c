//! `kairos doctor`: SPEC J11's diagnosis, printed for people or as JSON.
//!
//! Exit 0 when no finding is a warning or an error, 3 when one is: a cron job or a health check
//! can alert on the status alone, and still tell it from a diagnosis that could not run (1) or
//! bad input (2).

use super::open_engine;
use crate::cli::{DoctorArgs, GlobalArgs};
use crate::exit::{CliError, FINDINGS, SUCCESS};
use crate::output;
use kairos::doctor::{diagnose, DoctorQuery};
use serde_json::Value;

pub async fn run(global: &GlobalArgs, args: DoctorArgs) -> Result<u8, CliError> {
    let engine = open_engine(&global.db).await?;
    let query = DoctorQuery { business_key: args.business_key, process_instance_id: args.instance };
    let report = diagnose(&engine, &query).await?;
    // Rendered from the report's JSON form, the same document `GET /management/doctor` returns.
    let report = serde_json::to_value(&report).map_err(|e| CliError::failure(format!("cannot encode the report: {e}")))?;
    let findings = findings(&report);
    if global.json {
        output::json(&report)?;
    } else {
        output::emit(&render(&findings))?;
    }
    Ok(if findings.iter().any(|f| f.is_problem()) { FINDINGS } else { SUCCESS })
}

/// One finding, read loosely from its JSON form.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Finding {
    severity: String,
    code: String,
    title: String,
    detail: String,
    action: String,
    job_id: Option<String>,
}

impl Finding {
    fn is_problem(&self) -> bool {
        matches!(self.severity.to_ascii_lowercase().as_str(), "warning" | "warn" | "error" | "critical")
    }
}

fn findings(report: &Value) -> Vec<Finding> {
    let list = match report {
        Value::Array(a) => a.as_slice(),
        _ => report.get("findings").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]),
    };
    list.iter()
        .map(|f| {
            let text = |keys: &[&str]| {
                keys.iter()
                    .find_map(|k| f.get(*k))
                    .map(|v| match v {
                        Value::String(s) => s.clone(),
                        Value::Null => String::new(),
                        other => other.to_string(),
                    })
                    .unwrap_or_default()
            };
            let job_id = Some(text(&["jobId", "job_id"])).filter(|s| !s.is_empty());
            Finding {
                severity: text(&["severity"]),
                code: text(&["code"]),
                title: text(&["title"]),
                detail: text(&["detail"]),
                action: text(&["action"]),
                job_id,
            }
        })
        .collect()
}

fn render(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return "no findings: nothing to do\n".into();
    }
    let mut out = String::new();
    for f in findings {
        let code = if f.code.is_empty() { String::new() } else { format!(" [{}]", f.code) };
        out.push_str(&format!("{:<7} {}{code}\n", f.severity.to_ascii_uppercase(), f.title));
        if let Some(id) = &f.job_id {
            out.push_str(&format!("        job:    {id}\n"));
        }
        if !f.detail.is_empty() {
            out.push_str(&format!("        detail: {}\n", crate::exit::one_line(&f.detail)));
        }
        if !f.action.is_empty() {
            out.push_str(&format!("        action: {}\n", crate::exit::one_line(&f.action)));
        }
    }
    let problems = findings.iter().filter(|f| f.is_problem()).count();
    out.push_str(&format!("{} findings, {problems} of them warnings or errors\n", findings.len()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_are_read_from_either_naming() {
        let report = serde_json::json!({ "findings": [
            { "severity": "warning", "code": "expired-lock", "title": "lock expired", "detail": "d", "action": "a", "jobId": "j1" },
            { "severity": "info", "code": "ok", "title": "fine", "detail": "", "action": "", "job_id": null },
        ]});
        let f = findings(&report);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].job_id.as_deref(), Some("j1"));
        assert!(f[0].is_problem() && !f[1].is_problem());
        let text = render(&f);
        assert!(text.starts_with("WARNING lock expired [expired-lock]\n"), "{text}");
        assert!(text.ends_with("2 findings, 1 of them warnings or errors\n"), "{text}");
    }
}
