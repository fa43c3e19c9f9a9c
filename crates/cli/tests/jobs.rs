//! `kairos --help`, `migrate` and `jobs`, through the real binary.

mod support;

use clap::CommandFactory;
use support::{Kairos, assert_one_line_error};

/// Every command and subcommand, as the argument paths that reach it.
fn command_paths(cmd: &clap::Command, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(prefix.clone());
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let mut p = prefix.clone();
        p.push(sub.get_name().to_string());
        command_paths(sub, p, out);
    }
}

#[test]
fn every_command_answers_help() {
    let k = Kairos::new();
    let mut paths = Vec::new();
    command_paths(&kairos_cli::cli::Cli::command(), Vec::new(), &mut paths);
    assert!(paths.len() >= 12, "{paths:?}");
    for p in paths {
        let mut args: Vec<&str> = p.iter().map(String::as_str).collect();
        args.push("--help");
        let out = k.run(&args);
        assert_eq!(out.status.code(), Some(0), "kairos {args:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("Usage: kairos"), "kairos {args:?}: {text}");
    }
    assert!(!k.path("kairos.db").exists(), "--help must not open the store");
}

#[test]
fn migrate_creates_the_schema_and_can_run_twice() {
    let k = Kairos::new();
    assert_eq!(k.json(&["migrate"]), serde_json::json!({ "store": "sqlite", "migrated": true }));
    assert!(k.ok(&["migrate"]).contains("up to date"));
    assert!(k.path("kairos.db").exists());
}

#[test]
fn an_enqueued_job_is_listed() {
    let k = Kairos::new();
    let id = k.ok(&["jobs", "enqueue", "--handler", "log", "--payload", r#"{"order":42}"#, "--in", "PT1H"]);
    let id = id.trim();
    let page = k.json(&["jobs"]);
    assert_eq!(page["total"], 1);
    let job = &page["data"][0];
    assert_eq!(job["id"], id);
    assert_eq!(job["type"], "timer");
    assert_eq!(job["handlerType"], "log");
    assert_eq!(job["payload"], serde_json::json!({ "order": 42 }));
    assert_eq!(job["retries"], 3);
    // The table for people names the job too, and filters work.
    assert!(k.ok(&["jobs", "list"]).contains(id));
    assert_eq!(k.json(&["jobs", "--type", "message"])["total"], 0);
    assert_eq!(k.json(&["jobs", "--handler", "log"])["total"], 1);
    assert_eq!(k.json(&["jobs", "--dead"])["total"], 0);

    let job = k.json(&[
        "jobs",
        "enqueue",
        "--handler",
        "sleep",
        "--retry-cycle",
        "R5/PT10M",
        "--exclusive-key",
        "k1",
        "--tenant",
        "acme",
    ]);
    assert_eq!(
        (job["retries"].as_i64(), job["exclusiveKey"].as_str(), job["tenantId"].as_str()),
        (Some(6), Some("k1"), Some("acme"))
    );
    let log = k.json(&["jobs", "log", "--job", id]);
    assert_eq!(log["total"], 0, "nothing ran yet");
}

#[test]
fn bad_input_is_one_line_and_writes_nothing() {
    let k = Kairos::new();
    let id = k.ok(&["jobs", "enqueue", "--handler", "log", "--in", "PT1H"]).trim().to_string();
    let before = k.job_ids();
    let big = k.path("big.json");
    std::fs::write(&big, format!("{{\"blob\":\"{}\"}}", "x".repeat(1024 * 1024 + 10))).unwrap();
    let big_arg = format!("@{}", big.display());
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["jobs", "enqueue", "--handler", "nope"], "unknown handler \"nope\""),
        (
            vec!["jobs", "enqueue", "--handler", "log", "--payload", "{bad"],
            "invalid payload: key must be a string at line 1 column 2",
        ),
        (vec!["jobs", "enqueue", "--handler", "log", "--payload", "[1,"], "invalid payload"),
        (vec!["jobs", "enqueue", "--handler", "log", "--in", "5min"], "'--in <DUR>'"),
        (vec!["jobs", "enqueue", "--handler", "log", "--retries", "-1"], "invalid retries"),
        (vec!["jobs", "enqueue", "--handler", "log", "--retries", "0"], "invalid retries"),
        (vec!["jobs", "enqueue", "--handler", "log", "--payload", &big_arg], "over the limit"),
        (vec!["jobs", "enqueue", "--handler", "log", "--payload", "@/nonexistent/p.json"], "cannot read"),
        (vec!["jobs", "enqueue", "--handler", "log", "--due", "2026-01-01T08:00:00"], "'--due <INSTANT>'"),
        (vec!["jobs", "enqueue", "--handler", "log", "--repeat", "R3/banana"], "'--repeat <CYCLE>'"),
        (
            vec!["jobs", "enqueue", "--handler", "log", "--due", "2026-01-01T08:00:00Z", "--in", "PT5M"],
            "cannot be used with",
        ),
        (vec!["jobs", "enqueue"], "--handler"),
        (vec!["jobs", "retry", "no-such-job"], "no-such-job"),
        (vec!["jobs", "retry", &id, "--retries", "0"], "invalid retries"),
        (vec!["jobs", "stacktrace", "no-such-job"], "no-such-job"),
        (vec!["jobs", "delete", "no-such-job"], "no-such-job"),
        (vec!["jobs", "list", "--size", "0"], "--size"),
        (vec!["jobs", "frobnicate"], "frobnicate"),
        (vec!["serve", "--listen", "localhost"], "HOST:PORT"),
        (vec!["serve", "--lock-time", "5m"], "'--lock-time <DUR>'"),
        (vec!["bench", "jobs", "--jobs", "0"], "--jobs"),
        (vec!["doctor", "--business-key", "a", "--instance", "b"], "cannot be used with"),
        (vec!["--db", "mysql://x/y", "jobs"], "not understood"),
    ];
    for (args, expected) in cases {
        let line = assert_one_line_error(&k.run(&args), 2, &format!("{args:?}"));
        assert!(line.contains(expected), "kairos {args:?}: {line}");
    }
    assert_eq!(k.job_ids(), before, "bad input must not change the job table");
    assert_eq!(k.json(&["jobs", "--dead"])["total"], 0);
}

#[test]
fn an_unreachable_store_is_a_runtime_failure() {
    let k = Kairos::new();
    // A directory that does not exist: the database file cannot be opened.
    let out = k.run(&["--db", "sqlite:///nonexistent-dir/kairos.db", "jobs"]);
    assert_one_line_error(&out, 1, "unreachable store");
}

#[test]
fn jobs_can_be_deleted_and_their_stacktrace_read() {
    let k = Kairos::new();
    let id = k.ok(&["jobs", "enqueue", "--handler", "log", "--in", "PT1H"]).trim().to_string();
    let trace = k.run(&["jobs", "stacktrace", &id]);
    assert_eq!(trace.status.code(), Some(0));
    assert!(trace.stdout.is_empty(), "a job that never failed has no stack trace");
    assert_eq!(k.json(&["jobs", "stacktrace", &id])["stacktrace"], serde_json::Value::Null);
    assert!(k.ok(&["jobs", "delete", &id]).contains(&id));
    assert!(k.job_ids().is_empty());
    assert_one_line_error(&k.run(&["jobs", "delete", &id]), 2, "deleting twice");
}

/// Issue 14 item 1: with a job row kairos cannot read, `kairos jobs` exits 0 and lists the good
/// rows and the bad one (id, column, stored text); `kairos unreadable` names it; a forced
/// delete removes it.
#[test]
fn jobs_lists_an_unreadable_row_beside_the_good_ones_and_deletes_it() {
    let k = Kairos::new();
    let good = k.ok(&["jobs", "enqueue", "--handler", "log"]).trim().to_string();
    let bad = k.ok(&["jobs", "enqueue", "--handler", "log"]).trim().to_string();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let store = kairos::open_store(&k.db).await.unwrap();
        let n = store
            .sql_execute(
                "UPDATE ACT_RU_JOB SET RETRIES_ = 'abc' WHERE ID_ = ?",
                &[kairos::store::SqlValue::Text(bad.clone())],
            )
            .await
            .unwrap();
        assert_eq!(n, 1);
    });

    let text = k.ok(&["jobs"]);
    assert!(text.contains(&good), "{text}");
    let line = text.lines().find(|l| l.contains(&bad)).unwrap_or_else(|| panic!("the bad row is shown: {text}"));
    assert!(line.contains("ACT_RU_JOB") && line.contains("RETRIES_") && line.contains("abc"), "{line}");
    let page = k.json(&["jobs"]);
    assert_eq!(page["data"].as_array().unwrap().len(), 1);
    assert_eq!(page["unreadable"][0]["id"], bad.as_str());
    assert_eq!(page["unreadable"][0]["raw"], "abc");

    let listed = k.json(&["unreadable"]);
    assert_eq!(listed["data"][0]["column"], "RETRIES_", "{listed}");
    k.ok(&["jobs", "delete", "--force", &bad]);
    assert!(k.ok(&["unreadable"]).contains("every stored row can be read"));
    assert_eq!(k.job_ids(), vec![good]);
}
