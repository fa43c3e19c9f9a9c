//! KAIROS_NODE: registration (which frees the leases a previous incarnation of the node id left
//! behind), heartbeats on the database clock, clean stops, and the reaper that declares silent
//! nodes dead and frees their leases at once (SPEC J8).

use super::*;
use crate::NodeRegistration;

fn node(id: &str, workers: i32) -> NodeRegistration {
    NodeRegistration { id: id.into(), host: "host-a".into(), pid: 4242, workers, settings: None }
}

async fn age_heartbeat(store: &dyn Store, id: &str, by: SignedDuration) {
    let at = now(store).await - by;
    let n = fixture(store, "UPDATE KAIROS_NODE SET HEARTBEAT_ = ? WHERE ID_ = ?", &[SqlValue::Timestamp(at), text(id)])
        .await;
    assert_eq!(n, 1, "node {id} should be registered");
}

async fn nodes(store: &dyn Store) -> Vec<kairos_core::NodeInfo> {
    store.node_list().await.expect("node_list")
}

pub async fn node_heartbeat_registers_and_refreshes(store: &dyn Store) {
    assert!(nodes(store).await.is_empty());
    let before = now(store).await;
    let first = store.node_heartbeat(&node("n1", 4)).await.expect("node_heartbeat");
    let after = now(store).await;
    assert_between("the heartbeat's database now", first, before, after);
    let list = nodes(store).await;
    assert_eq!(list.len(), 1);
    let n = &list[0];
    assert_eq!(
        (n.id.as_str(), n.host.as_str(), n.pid, n.workers, n.state.as_str()),
        ("n1", "host-a", 4242, 4, "running")
    );
    assert_between("STARTED_", n.started, first, first);
    assert_between("HEARTBEAT_", n.heartbeat, first, first);

    let second = store.node_heartbeat(&node("n1", 8)).await.expect("node_heartbeat");
    assert!(second >= first);
    let n = nodes(store).await.remove(0);
    assert_eq!(n.workers, 8);
    assert_between("STARTED_ (kept)", n.started, first, first);
    assert_between("HEARTBEAT_ (moved)", n.heartbeat, second, second);

    store.node_heartbeat(&node("n2", 2)).await.expect("node_heartbeat");
    age_heartbeat(store, "n1", SignedDuration::from_mins(1)).await;
    let order: Vec<String> = nodes(store).await.into_iter().map(|n| n.id).collect();
    assert_eq!(order, vec!["n2".to_string(), "n1".to_string()], "most recent heartbeat first");
}

pub async fn node_stop_marks_a_node_stopped_and_out_of_reach_of_the_reaper(store: &dyn Store) {
    store.node_heartbeat(&node("n1", 4)).await.expect("node_heartbeat");
    store.node_stop("n1").await.expect("node_stop");
    assert_eq!(nodes(store).await[0].state, "stopped");
    age_heartbeat(store, "n1", SignedDuration::from_hours(1)).await;
    let dead = store.node_reap_dead(SignedDuration::from_mins(1)).await.expect("node_reap_dead");
    assert!(dead.is_empty(), "a node that left cleanly is not declared dead: {dead:?}");
    assert_eq!(nodes(store).await[0].state, "stopped");
    store.node_heartbeat(&node("n1", 4)).await.expect("node_heartbeat");
    assert_eq!(nodes(store).await[0].state, "running", "a restarted node runs again");
}

pub async fn node_reap_dead_expires_the_leases_of_silent_nodes(store: &dyn Store) {
    store.node_heartbeat(&node("n1", 4)).await.expect("node_heartbeat");
    store.node_heartbeat(&node("n2", 4)).await.expect("node_heartbeat");
    let job = insert(store, message("long")).await;
    settle(store, job.duedate.unwrap()).await;
    let held = acquire(store, "n1", None, 10, SignedDuration::from_mins(10)).await;
    assert_eq!(ids(&held), vec![job.id.clone()]);
    assert!(acquire(store, "n2", None, 10, LOCK).await.jobs.is_empty(), "n1's lease is live");
    assert!(
        store.node_reap_dead(SignedDuration::from_mins(1)).await.expect("node_reap_dead").is_empty(),
        "nobody is silent yet"
    );

    age_heartbeat(store, "n1", SignedDuration::from_mins(5)).await;
    let dead = store.node_reap_dead(SignedDuration::from_mins(1)).await.expect("node_reap_dead");
    assert_eq!(dead, vec!["n1".to_string()]);
    let states: Vec<(String, String)> = {
        let mut v: Vec<_> = nodes(store).await.into_iter().map(|n| (n.id, n.state)).collect();
        v.sort();
        v
    };
    assert_eq!(states, vec![("n1".into(), "dead".into()), ("n2".into(), "running".into())]);
    let exp = must_get(store, &job.id).await.lock_exp_time.expect("still owned by n1 until taken over");
    assert!(exp <= now(store).await, "the dead node's lease expired now, not in ten minutes");

    let taken = acquire(store, "n2", None, 10, LOCK).await;
    assert_eq!(ids(&taken), vec![job.id.clone()], "taken over at once");
    assert_eq!(taken.jobs[0].abandoned_by.as_deref(), Some("n1"));
    assert_eq!((taken.jobs[0].job.retries, taken.jobs[0].job.attempts), (2, 2));
    assert!(store.node_reap_dead(SignedDuration::from_mins(1)).await.expect("node_reap_dead").is_empty(), "dead once");
    let late = completion(&held.jobs[0].job, success());
    assert_eq!(complete(store, &[late]).await, vec![false], "the dead node's late completion is refused");
}

fn incarnation(id: &str, host: &str, pid: i64) -> NodeRegistration {
    NodeRegistration { id: id.into(), host: host.into(), pid, workers: 4, settings: None }
}

async fn register(store: &dyn Store, node: &NodeRegistration) -> crate::NodeRegistered {
    store.node_register(node).await.unwrap_or_else(|e| panic!("node_register {}: {e:?}", node.id))
}

async fn lock_exp(store: &dyn Store, id: &str) -> Timestamp {
    must_get(store, id).await.lock_exp_time.unwrap_or_else(|| panic!("job {id} should be locked"))
}

pub async fn node_register_expires_the_live_leases_of_its_own_id_only(store: &dyn Store) {
    store.node_heartbeat(&node("n1", 4)).await.expect("node_heartbeat");
    store.node_heartbeat(&node("n2", 4)).await.expect("node_heartbeat");
    let t0 = ms(now(store).await);
    let later = t0 + SignedDuration::from_mins(10);
    let earlier = t0 - SignedDuration::from_mins(1);
    let mut jobs = Vec::new();
    for _ in 0..4 {
        jobs.push(insert(store, due_at("long", t0 - secs(1))).await.id);
    }
    // n1's previous incarnation left two live leases and one that has already run out; n2, a
    // node that is running, holds a live lease of its own.
    lock_by_hand(store, &jobs[0], "n1", t0, later).await;
    lock_by_hand(store, &jobs[1], "n1", t0, later).await;
    lock_by_hand(store, &jobs[2], "n1", earlier - secs(1), earlier).await;
    lock_by_hand(store, &jobs[3], "n2", t0, later).await;

    let before = now(store).await;
    let reg = register(store, &node("n1", 4)).await;
    let after = now(store).await;
    assert_between("the registration's database now", reg.db_now, before, after);
    assert_eq!(reg.released, 2, "the two live leases under n1's id are released; the expired one is not counted");
    for id in &jobs[..2] {
        let j = must_get(store, id).await;
        assert_eq!(j.lock_owner.as_deref(), Some("n1"), "expired, not cleared: acquisition logs the abandoned attempt");
        assert_between("LOCK_EXP_TIME_ of a released lease", j.lock_exp_time.expect("locked"), reg.db_now, reg.db_now);
        assert_eq!((j.retries, j.attempts), (3, 1), "releasing spends nothing; the takeover does");
    }
    assert_between(
        "LOCK_EXP_TIME_ of a lease that had already run out",
        lock_exp(store, &jobs[2]).await,
        earlier,
        earlier,
    );
    assert_between("LOCK_EXP_TIME_ of another node's lease", lock_exp(store, &jobs[3]).await, later, later);
    assert_eq!(must_get(store, &jobs[3]).await.lock_owner.as_deref(), Some("n2"));

    assert_eq!(register(store, &node("n1", 4)).await.released, 0, "nothing live is left under n1's id");
    let n2 = register(store, &node("n2", 4)).await;
    assert_eq!(n2.released, 1, "n2's own registration releases only its own lease");
    assert_between("LOCK_EXP_TIME_ of n2's released lease", lock_exp(store, &jobs[3]).await, n2.db_now, n2.db_now);
}

pub async fn node_register_again_starts_a_new_incarnation(store: &dyn Store) {
    let before = now(store).await;
    let first = register(store, &incarnation("n1", "host-a", 4242)).await;
    let after = now(store).await;
    assert_between("the registration's database now", first.db_now, before, after);
    assert_eq!(first.released, 0, "a new node has no leases");
    let n = nodes(store).await.remove(0);
    assert_eq!(
        (n.id.as_str(), n.host.as_str(), n.pid, n.workers, n.state.as_str()),
        ("n1", "host-a", 4242, 4, "running")
    );
    assert_between("STARTED_", n.started, first.db_now, first.db_now);
    assert_between("HEARTBEAT_", n.heartbeat, first.db_now, first.db_now);

    // Heartbeats of the same process keep STARTED_.
    settle(store, first.db_now + millis(5)).await;
    let beat = store.node_heartbeat(&incarnation("n1", "host-a", 4242)).await.expect("node_heartbeat");
    let n = nodes(store).await.remove(0);
    assert_between("STARTED_ (kept by a heartbeat)", n.started, first.db_now, first.db_now);
    assert_between("HEARTBEAT_", n.heartbeat, beat, beat);

    // The same id registers again while its row still says `running` (restarted under a fixed
    // node id, on another host): a new incarnation.
    settle(store, beat + millis(5)).await;
    let second = register(store, &incarnation("n1", "host-b", 777)).await;
    assert!(second.db_now > beat, "{} should be after {beat}", second.db_now);
    let list = nodes(store).await;
    assert_eq!(list.len(), 1, "one row per node id");
    let n = &list[0];
    assert_eq!((n.host.as_str(), n.pid, n.state.as_str()), ("host-b", 777, "running"));
    assert_between("STARTED_ (refreshed)", n.started, second.db_now, second.db_now);
    assert_between("HEARTBEAT_ (refreshed)", n.heartbeat, second.db_now, second.db_now);

    // A node that was declared dead or stopped runs again once it registers.
    store.node_stop("n1").await.expect("node_stop");
    let third = register(store, &incarnation("n1", "host-b", 778)).await;
    let n = nodes(store).await.remove(0);
    assert_eq!((n.pid, n.state.as_str()), (778, "running"));
    assert_between("STARTED_ (after a stop)", n.started, third.db_now, third.db_now);
}

pub async fn node_register_lets_another_node_take_over_the_previous_incarnations_jobs(store: &dyn Store) {
    assert_eq!(register(store, &node("n1", 4)).await.released, 0);
    register(store, &node("n2", 4)).await;
    let job = insert(store, message("long")).await;
    settle(store, job.duedate.unwrap()).await;
    let held = acquire(store, "n1", None, 10, SignedDuration::from_mins(10)).await;
    assert_eq!(ids(&held), vec![job.id.clone()]);
    assert!(acquire(store, "n2", None, 10, LOCK).await.jobs.is_empty(), "n1's lease is live");

    // n1 is killed and restarted under the same id: its heartbeat never went stale, so only the
    // registration can free the job before LOCK_EXP_TIME_.
    let reg = register(store, &incarnation("n1", "host-a", 5151)).await;
    assert_eq!(reg.released, 1);
    assert!(
        store.node_reap_dead(SignedDuration::from_mins(1)).await.expect("node_reap_dead").is_empty(),
        "nobody is dead"
    );

    let taken = acquire(store, "n2", None, 10, LOCK).await;
    assert_eq!(ids(&taken), vec![job.id.clone()], "taken over at once, not in ten minutes");
    let a = &taken.jobs[0];
    assert_eq!(a.abandoned_by.as_deref(), Some("n1"));
    assert_eq!(a.job.lock_owner.as_deref(), Some("n2"));
    assert_eq!((a.job.retries, a.job.attempts), (2, 2), "the abandoned attempt spends a retry");
    let log = log_of(store, &job.id).await;
    assert_eq!(log.len(), 1, "one log row for the abandoned attempt: {log:?}");
    assert_eq!(log[0].outcome, kairos_core::JobLogOutcome::Abandoned);
    assert_eq!((log[0].attempt, log[0].node.as_deref()), (1, Some("n1")));
    let late = completion(&held.jobs[0].job, success());
    assert_eq!(complete(store, &[late]).await, vec![false], "the old incarnation's late completion is refused");
    assert_eq!(register(store, &node("n1", 4)).await.released, 0, "n2's lease is not n1's to release");
    assert_eq!(must_get(store, &job.id).await.lock_owner.as_deref(), Some("n2"));
}

/// Issue 14 item 10: a node's settings are written when it registers and read back as they were
/// given, so the doctor run as a tool judges leases and liveness by them; a heartbeat without
/// settings keeps them, and a row without any reads as `None`.
pub async fn node_register_records_the_settings_the_node_runs_with(store: &dyn Store) {
    let settings = kairos_core::NodeSettings {
        lock_time: SignedDuration::from_secs(7),
        heartbeat_interval: SignedDuration::from_millis(1500),
        dead_after: SignedDuration::from_secs(4),
        lookahead: SignedDuration::from_millis(250),
        poll_interval: SignedDuration::from_millis(300),
        time_zone: "Asia/Shanghai".into(),
    };
    let with = NodeRegistration { settings: Some(settings.clone()), ..node("n1", 4) };
    register(store, &with).await;
    store.node_heartbeat(&node("n2", 2)).await.expect("node_heartbeat");
    let by_id = |list: Vec<kairos_core::NodeInfo>, id: &str| list.into_iter().find(|n| n.id == id).unwrap();
    assert_eq!(by_id(nodes(store).await, "n1").settings.as_ref(), Some(&settings));
    assert_eq!(by_id(nodes(store).await, "n2").settings, None, "a node that gave none has none");

    store.node_heartbeat(&node("n1", 4)).await.expect("node_heartbeat");
    assert_eq!(by_id(nodes(store).await, "n1").settings.as_ref(), Some(&settings), "kept by a bare heartbeat");
    let changed = kairos_core::NodeSettings { lock_time: SignedDuration::from_mins(5), ..settings.clone() };
    store.node_heartbeat(&NodeRegistration { settings: Some(changed.clone()), ..node("n2", 2) }).await.unwrap();
    assert_eq!(by_id(nodes(store).await, "n2").settings, Some(changed), "written by a heartbeat too");

    // Written at registration only: a heartbeat of a node that has them leaves them alone (a
    // running node's settings never change), here seen through a column changed by hand.
    fixture(store, "UPDATE KAIROS_NODE SET LOCK_TIME_MS_ = 1234 WHERE ID_ = 'n1'", &[]).await;
    store.node_heartbeat(&with).await.expect("node_heartbeat");
    let kept = by_id(nodes(store).await, "n1").settings.expect("n1 has settings");
    assert_eq!(kept.lock_time, SignedDuration::from_millis(1234), "not rewritten by a heartbeat");
    register(store, &with).await;
    assert_eq!(by_id(nodes(store).await, "n1").settings.as_ref(), Some(&settings), "written again at registration");
}
