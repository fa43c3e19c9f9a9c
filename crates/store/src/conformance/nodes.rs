//! KAIROS_NODE: registration, heartbeats on the database clock, clean stops, and the reaper
//! that declares silent nodes dead and frees their leases at once (SPEC J8).

use super::*;
use crate::NodeRegistration;

fn node(id: &str, workers: i32) -> NodeRegistration {
    NodeRegistration { id: id.into(), host: "host-a".into(), pid: 4242, workers }
}

async fn age_heartbeat(store: &dyn Store, id: &str, by: SignedDuration) {
    let at = now(store).await - by;
    let n = fixture(store, "UPDATE KAIROS_NODE SET HEARTBEAT_ = ? WHERE ID_ = ?", &[SqlValue::Timestamp(at), text(id)]).await;
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
    assert_eq!((n.id.as_str(), n.host.as_str(), n.pid, n.workers, n.state.as_str()), ("n1", "host-a", 4242, 4, "running"));
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
    assert!(store.node_reap_dead(SignedDuration::from_mins(1)).await.expect("node_reap_dead").is_empty(), "nobody is silent yet");

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
