//! `kairos triggers` through the real binary: add (with its job), list, pause and resume a
//! trigger and a group; bad input exits 2 with one line naming the field and writes nothing.

mod support;

use support::{Kairos, assert_one_line_error};

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
}

fn count(k: &Kairos, table: &str) -> i64 {
    block_on(async {
        let store = kairos::open_store(&k.db).await.unwrap();
        store.sql_query(&format!("SELECT COUNT(*) FROM {table}"), &[]).await.unwrap()[0][0].as_i64().unwrap()
    })
}

#[test]
fn triggers_are_added_listed_paused_and_resumed() {
    let k = Kairos::new();
    let t =
        k.json(&["triggers", "add", "nightly", "--handler", "log", "--cron", "0 0 2 * * ?", "--tz", "Europe/Berlin"]);
    assert_eq!(
        (t["name"].as_str(), t["state"].as_str(), t["type"].as_str()),
        (Some("nightly"), Some("WAITING"), Some("CRON")),
        "{t}"
    );
    let next: jiff::Timestamp = t["nextFireTime"].as_str().unwrap().parse().unwrap();
    let local = next.to_zoned(jiff::tz::TimeZone::get("Europe/Berlin").unwrap());
    assert_eq!((local.hour(), local.minute(), local.second()), (2, 0, 0), "02:00 Berlin time: {local}");

    k.ok(&["triggers", "add", "poll", "--handler", "log", "--every", "PT1H", "--group", "polling"]);
    let list = k.json(&["triggers"]);
    assert_eq!(list["total"], 2, "{list}");
    let text = k.ok(&["triggers", "--group", "polling"]);
    assert!(text.contains("poll") && !text.contains("nightly"), "{text}");

    let p = k.json(&["triggers", "pause", "nightly"]);
    assert_eq!(p["state"].as_str(), Some("PAUSED"), "{p}");
    k.ok(&["triggers", "pause", "--group", "polling"]);
    let paused = k.json(&["triggers", "--state", "paused"]);
    assert_eq!(paused["total"], 2, "{paused}");
    // A trigger added to a paused group starts paused.
    let late = k.json(&["triggers", "add", "late", "--job", "poll", "--every", "PT1H", "--group", "polling"]);
    assert_eq!(late["state"].as_str(), Some("PAUSED"), "{late}");
    k.ok(&["triggers", "resume", "--group", "polling"]);
    k.ok(&["triggers", "resume", "nightly"]);
    assert_eq!(k.json(&["triggers", "--state", "WAITING"])["total"], 3);
    assert_eq!(count(&k, "QRTZ_PAUSED_TRIGGER_GRPS"), 0);
}

#[test]
fn bad_triggers_exit_2_and_write_nothing() {
    let k = Kairos::new();
    k.ok(&["migrate"]);
    let cases: [(&[&str], &str); 6] = [
        (&["triggers", "add", "t", "--handler", "log", "--cron", "0 0 25 * * ?"], "position"),
        (&["triggers", "add", "t", "--handler", "log", "--cron", "0 0 2 * * ?", "--tz", "Nowhere/City"], "timeZone"),
        (&["triggers", "add", "t", "--handler", "no-such-handler", "--every", "PT1S"], "handler"),
        (&["triggers", "add", "t", "--job", "missing", "--every", "PT1S"], "jobName"),
        (
            &[
                "triggers",
                "add",
                "t",
                "--handler",
                "log",
                "--every",
                "PT1S",
                "--start",
                "2030-01-02T00:00:00Z",
                "--end",
                "2030-01-01T00:00:00Z",
            ],
            "endTime",
        ),
        (&["triggers", "add", "t", "--handler", "log"], "--cron"),
    ];
    for (args, what) in cases {
        let out = k.run(args);
        let line = assert_one_line_error(&out, 2, what);
        assert!(line.contains(what), "{args:?}: {line}");
    }
    assert_eq!(count(&k, "QRTZ_TRIGGERS"), 0);
    assert_eq!(count(&k, "QRTZ_JOB_DETAILS"), 0, "a refused trigger leaves no job behind");
    let out = k.run(&["triggers", "pause", "nope"]);
    assert_one_line_error(&out, 2, "nope");
}
