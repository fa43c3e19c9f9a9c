//! Concurrency and idempotency over real HTTP, on SQLite and on PostgreSQL: two concurrent
//! completions of one task (one wins), requestIds on starts and completions (SPEC C2).

mod processes_support;

use processes_support::{Backend, one_task, server};
use serde_json::json;

async fn two_concurrent_completions_of_one_task_one_wins(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    srv.deployed("race", &one_task("race")).await;
    let pi = srv.started("race", "RACE-1", json!({})).await["id"].as_str().unwrap().to_string();
    let task = srv.tasks_of(&pi).await[0]["id"].as_str().unwrap().to_string();
    let path = format!("/runtime/tasks/{task}");
    let (a, b) = tokio::join!(
        srv.post(&path, json!({"action": "complete", "variables": {"by": "a"}})),
        srv.post(&path, json!({"action": "complete", "variables": {"by": "b"}})),
    );
    let mut statuses = [a.status, b.status];
    statuses.sort_unstable();
    let won = statuses.iter().filter(|s| **s == 200 || **s == 204).count();
    let lost = statuses.iter().filter(|s| **s == 409 || **s == 404).count();
    assert_eq!((won, lost), (1, 1), "one wins, one is refused: {} {} / {} {}", a.status, a.text, b.status, b.text);
    let loser = if a.status >= 400 { &a } else { &b };
    assert!(matches!(loser.json["error"]["code"].as_str(), Some("conflict" | "not-found")), "{}", loser.text);
    let r = srv.get(&format!("/history/historic-process-instances?processInstanceId={pi}")).await;
    assert_eq!(r.ok(200)["data"][0]["ended"], true);
    let r = srv.get(&format!("/history/historic-activity-instances?processInstanceId={pi}")).await;
    let n = r.ok(200)["data"].as_array().unwrap().iter().filter(|a| a["activityId"] == "task").count();
    assert_eq!(n, 1, "the task was done once: {}", r.text);
}

/// SPEC C2 over HTTP: a start or completion retried with its requestId gets the first result;
/// concurrent duplicates have one effect; a requestId reused for another request is a 409.
async fn request_ids_make_starts_and_completions_idempotent(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    srv.deployed("idem", &one_task("idem")).await;
    let start = |bk: &str, rid: &str| json!({"processDefinitionKey": "idem", "businessKey": bk, "requestId": rid});

    // A retried start: the first instance, the same answer, one instance.
    let first = srv.post("/runtime/process-instances", start("IDEM-1", "s-1")).await.ok(201).clone();
    let again = srv.post("/runtime/process-instances", start("IDEM-1", "s-1")).await.ok(201).clone();
    assert_eq!(first, again, "a retry gets the first answer");
    let running = srv.get("/runtime/process-instances?businessKey=IDEM-1").await;
    assert_eq!(running.ok(200)["total"], 1, "{}", running.text);

    // Concurrent duplicates: every caller gets the one instance that was started.
    let path = "/runtime/process-instances";
    let (a, b, c, d) = tokio::join!(
        srv.post(path, start("IDEM-2", "s-2")),
        srv.post(path, start("IDEM-2", "s-2")),
        srv.post(path, start("IDEM-2", "s-2")),
        srv.post(path, start("IDEM-2", "s-2")),
    );
    let ids: Vec<&str> = [&a, &b, &c, &d].iter().map(|r| r.ok(201)["id"].as_str().unwrap()).collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "one instance for all: {ids:?}");
    let running = srv.get("/runtime/process-instances?businessKey=IDEM-2").await;
    assert_eq!(running.ok(200)["total"], 1, "{}", running.text);

    // A requestId reused for another request: 409 naming it, nothing written.
    let before = srv.written().await;
    let r = srv.post(path, start("IDEM-3", "s-1")).await;
    let msg = r.refused(409, Some("requestId")).to_string();
    assert!(msg.contains("s-1") && msg.contains("other parameters"), "{msg}");
    for bad in [String::new(), "x".repeat(65)] {
        srv.post(path, start("IDEM-4", &bad)).await.refused(400, Some("requestId"));
    }
    assert_eq!(srv.written().await, before, "nothing written");

    // A retried completion succeeds again; a completion without it is a conflict.
    let pi = first["id"].as_str().unwrap();
    let task = srv.tasks_of(pi).await[0]["id"].as_str().unwrap().to_string();
    let task_path = format!("/runtime/tasks/{task}");
    let complete = |rid: &str, by: &str| json!({"action": "complete", "variables": {"by": by}, "requestId": rid});
    assert_eq!(srv.post(&task_path, complete("c-1", "a")).await.status, 204);
    assert_eq!(srv.post(&task_path, complete("c-1", "a")).await.status, 204, "a retry succeeds");
    srv.post(&task_path, json!({"action": "complete"})).await.refused(409, None);
    srv.post(&task_path, complete("c-1", "b")).await.refused(409, Some("requestId"));
    srv.post(&task_path, complete("s-1", "a")).await.refused(409, Some("requestId"));

    // Concurrent duplicate completions: both succeed, the task was done once.
    let pi = ids[0];
    let task = srv.tasks_of(pi).await[0]["id"].as_str().unwrap().to_string();
    let task_path = format!("/runtime/tasks/{task}");
    let (a, b) = tokio::join!(srv.post(&task_path, complete("c-2", "a")), srv.post(&task_path, complete("c-2", "a")));
    assert_eq!((a.status, b.status), (204, 204), "{} / {}", a.text, b.text);
    let r = srv.get(&format!("/history/historic-activity-instances?processInstanceId={pi}")).await;
    let n = r.ok(200)["data"].as_array().unwrap().iter().filter(|a| a["activityId"] == "task").count();
    assert_eq!(n, 1, "the task was done once: {}", r.text);
    assert_eq!(srv.rows("KAIROS_REQUEST").await, 4, "s-1, s-2, c-1, c-2");

    // Signals and messages take one too: a retried broadcast answers as the first did.
    let signal = |rid: &str| json!({"signalName": "nobody-listens", "requestId": rid});
    let first = srv.post("/runtime/signals", signal("g-1")).await;
    first.ok(204);
    let again = srv.post("/runtime/signals", signal("g-1")).await;
    again.ok(204);
    assert_eq!(again.header("kairos-received"), first.header("kairos-received"));
    srv.post("/runtime/signals", signal(&"x".repeat(65))).await.refused(400, Some("requestId"));
    let message = json!({"messageName": "nobody-waits", "requestId": "s-1"});
    srv.post("/runtime/messages", message).await.refused(409, Some("requestId"));
}

on_both_backends!(two_concurrent_completions_of_one_task_one_wins, request_ids_make_starts_and_completions_idempotent,);
