//! `kairos reconcile` and `kairos incidents` through the real binary (SPEC C7): a DRAFT record
//! whose process runs becomes an incident; approved by one user, refused to the same user as
//! executor, executed by another (the row written back), closed — each step in the audit trail.

mod support;

use support::{Kairos, assert_one_line_error};

const ONE_TASK: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="leave" isExecutable="true">
    <startEvent id="start"/><sequenceFlow id="f1" sourceRef="start" targetRef="approve"/>
    <userTask id="approve"/><sequenceFlow id="f2" sourceRef="approve" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
}

/// A DRAFT leave request `id` whose process was started anyway (bound): §32's difference.
fn staged(id: u32) -> Kairos {
    let k = Kairos::new();
    std::fs::write(k.path("leave.bpmn"), ONE_TASK).unwrap();
    k.json(&["deploy", "leave.bpmn"]);
    block_on(async {
        let store = kairos::open_store(&k.db).await.unwrap();
        store
            .sql_execute("CREATE TABLE leave_request (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL)", &[])
            .await
            .unwrap();
        store
            .sql_execute(&format!("INSERT INTO leave_request (id, status) VALUES ({id}, 'DRAFT')"), &[])
            .await
            .unwrap();
    });
    k.json(&["start", "leave", "--bind", &format!("LEAVE:{id}")]);
    k
}

#[test]
fn an_incident_goes_through_its_life_from_the_terminal() {
    let k = staged(42);
    let config = serde_json::json!({"sources": [{"businessType": "LEAVE", "table": "leave_request", "processType": "leave",
        "states": {"DRAFT": ["DRAFT"], "APPROVING": ["APPROVING"], "APPROVED": ["APPROVED"]}}]});
    std::fs::write(k.path("reconcile.json"), config.to_string()).unwrap();

    let dry = k.run(&["reconcile", "--config", "reconcile.json", "--dry-run", "--json"]);
    assert_eq!(dry.status.code(), Some(3), "a difference is exit 3: {}", String::from_utf8_lossy(&dry.stderr));
    let report: serde_json::Value = serde_json::from_slice(&dry.stdout).unwrap();
    assert_eq!((report["dryRun"].as_bool(), report["incidentsOpened"].as_u64()), (Some(true), Some(1)));
    assert_eq!(k.json(&["incidents", "list"]).as_array().unwrap().len(), 0, "a dry run writes nothing");
    let out = k.run(&["reconcile", "--config", "reconcile.json"]);
    assert_eq!(out.status.code(), Some(3));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("LEAVE:42") && table.contains("draft-with-instance"), "{table}");

    let open = k.json(&["incidents", "list", "--status", "OPEN"]);
    let id = open[0]["id"].as_str().unwrap().to_owned();
    k.json(&["incidents", "approve", &id, "--user", "alice", "--plan", "write back APPROVING"]);
    let action = r#"{"type":"write-back","to":"APPROVING"}"#;
    let same =
        k.run(&["incidents", "execute", &id, "--user", "alice", "--action", action, "--config", "reconcile.json"]);
    let line = assert_one_line_error(&same, 2, "the approver executing");
    assert!(line.contains("another person executes it"), "{line}");
    let bad = k.run(&["incidents", "execute", &id, "--user", "bob", "--action", r#"{"type":"jump"}"#]);
    assert_one_line_error(&bad, 2, "an unknown action");
    let done =
        k.json(&["incidents", "execute", &id, "--user", "bob", "--action", action, "--config", "reconcile.json"]);
    assert_eq!((done["status"].as_str(), done["executedBy"].as_str()), (Some("EXECUTED"), Some("bob")));
    k.json(&["incidents", "close", &id, "--user", "carol", "--note", "checked with the requester"]);
    let shown = k.ok(&["incidents", "show", &id]);
    assert!(shown.contains("status:       CLOSED") && shown.contains("\"businessStatus\": \"APPROVING\""), "{shown}");
    block_on(async {
        let store = kairos::open_store(&k.db).await.unwrap();
        let rows = store.sql_query("SELECT status FROM leave_request WHERE id = 42", &[]).await.unwrap();
        assert_eq!(rows[0][0].as_str(), Some("APPROVING"));
    });
    let missing = k.run(&["reconcile", "--config", "nope.json"]);
    assert_one_line_error(&missing, 2, "a missing configuration");
}

/// `kairos serve --reconcile FILE --reconcile-every PT1S`: the scheduler fires passes; the
/// first one opens the incident, later ones leave it frozen (one incident, not one per pass).
#[test]
fn serve_runs_passes_on_its_schedule() {
    let k = staged(7);
    let config = serde_json::json!({"sources": [{"businessType": "LEAVE", "table": "leave_request", "processType": "leave",
        "states": {"DRAFT": ["DRAFT"], "APPROVING": ["APPROVING"]}}]});
    std::fs::write(k.path("reconcile.json"), config.to_string()).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let child = k
        .command()
        .args(["serve", "--listen", &addr, "--reconcile", "reconcile.json", "--reconcile-every", "PT1S"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut guard = support::ChildGuard(child);
    support::first_line(&mut guard.0, std::time::Duration::from_secs(30)).expect("the start line");
    let passes = |n: u64| {
        support::eventually(std::time::Duration::from_secs(30), || {
            let (_, body) = support::http_get(&addr, "/metrics").ok()?;
            let line = body.lines().find(|l| l.starts_with("kairos_reconcile_passes_total "))?;
            (line.rsplit(' ').next()?.parse::<u64>().ok()? >= n).then_some(())
        })
    };
    passes(2).expect("two scheduled passes");
    let (status, body) = support::http_get(&addr, "/incidents?status=OPEN").unwrap();
    assert_eq!(status, 200, "{body}");
    let page: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(page["total"], 1, "one incident however many passes: {page}");
    assert_eq!(page["data"][0]["ruleId"], "draft-with-instance");
    let bad =
        k.run(&["serve", "--listen", "127.0.0.1:0", "--reconcile", "reconcile.json", "--reconcile-every", "soon"]);
    assert_one_line_error(&bad, 2, "a bad --reconcile-every");
}
