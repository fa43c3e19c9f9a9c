//! An instance in memory with a row of every kind, and a deployed definition for it.

#![allow(dead_code)]

use jiff::Timestamp;
use kairos_process::*;
use kairos_store::Store;
use kairos_store_engine::process::{self as tables, NewDefinition};
use serde_json::json;

pub fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

/// Deploys definition `key:1` (no XML needed by the tables' functions) and returns its id.
pub async fn deploy(store: &dyn Store, key: &str) -> String {
    let id = format!("{key}:1");
    let now = at("2026-12-01T10:00:00Z");
    let writes = vec![
        tables::deployment_insert(&format!("dep-{key}"), key, now),
        tables::resource_insert(&format!("dep-{key}"), &format!("{key}.bpmn20.xml"), "<definitions/>"),
        tables::definition_insert(&NewDefinition {
            id: &id,
            key,
            version: 1,
            name: Some(format!("The {key}")),
            category: None,
            deployment_id: &format!("dep-{key}"),
            resource_name: &format!("{key}.bpmn20.xml"),
            has_diagram: false,
            history_ttl_days: Some(7),
            tenant: "",
        }),
    ];
    store.write_all(&writes).await.unwrap();
    id
}

fn execution(id: &str, parent: Option<&str>, activity: Option<&str>, start: Timestamp) -> Execution {
    Execution {
        id: id.into(),
        rev: 1,
        parent_id: parent.map(str::to_string),
        super_exec: None,
        activity: activity.map(str::to_string),
        is_active: true,
        is_concurrent: parent.is_some(),
        is_scope: parent.is_none(),
        is_event_scope: false,
        is_mi_root: false,
        start_time: start,
        suspension_state: SuspensionState::Active,
    }
}

/// Instance `pi` of definition `def` (key `key`), as a start leaves it: a root, a token at a
/// user task with candidates, variables of every type, a message wait, an external task and
/// the open activity rows.
pub fn instance(pi: &str, def: &str, key: &str) -> Instance {
    let t0 = at("2026-12-01T10:00:00.125Z");
    let t1 = at("2026-12-01T10:00:01.250Z");
    let token = format!("{pi}-x");
    let var = |n: usize, name: &str, value: serde_json::Value| Variable {
        id: format!("{pi}-v{n}"),
        rev: 1,
        name: name.into(),
        execution_id: pi.into(),
        value,
        task_id: None,
    };
    Instance {
        id: pi.into(),
        definition_id: def.into(),
        definition_key: key.into(),
        business_key: Some(format!("bk-{pi}")),
        tenant_id: String::new(),
        start_time: t0,
        start_activity: Some("start".into()),
        start_user: Some("ann".into()),
        super_exec: None,
        super_instance: None,
        root_rev: 0,
        seq: 2,
        executions: vec![execution(pi, None, None, t0), execution(&token, Some(pi), Some("review"), t1)],
        tasks: vec![Task {
            id: format!("{pi}-t"),
            rev: 1,
            execution_id: token.clone(),
            name: Some("Review".into()),
            task_def_key: "review".into(),
            assignee: None,
            owner: Some("fozzie".into()),
            description: Some("check the numbers".into()),
            priority: 50,
            create_time: t1,
            due_date: Some(at("2026-12-02T10:00:00Z")),
            form_key: Some("form".into()),
            claim_time: None,
            suspension_state: SuspensionState::Active,
            candidate_users: vec!["bob".into()],
            candidate_groups: vec!["clerks".into()],
        }],
        variables: vec![
            var(1, "n", json!(7)),
            var(2, "s", json!("text")),
            var(3, "b", json!(true)),
            var(4, "d", json!(1.5)),
            var(5, "j", json!({"a": [1, 2]})),
            var(6, "z", json!(null)),
        ],
        subscriptions: vec![Subscription {
            id: format!("{pi}-s"),
            event_type: EventType::Message,
            event_name: "poke".into(),
            execution_id: token.clone(),
            activity_id: "review".into(),
            created: t1,
        }],
        jobs: vec![ProcessJob {
            id: format!("{pi}-j"),
            kind: JobKind::External,
            execution_id: token.clone(),
            activity_id: "review".into(),
            due: None,
            repeat: None,
            exclusive: true,
            retry_cycle: None,
            topic: Some("mail".into()),
        }],
        activities: vec![ActivityRecord {
            id: format!("{pi}-a"),
            execution_id: token,
            activity_id: "review".into(),
            activity_name: Some("Review".into()),
            activity_type: "userTask".into(),
            task_id: Some(format!("{pi}-t")),
            assignee: None,
            start: t1,
            end: None,
            delete_reason: None,
            seq: 2,
        }],
        ended: None,
        delete_reason: None,
        suspension_state: SuspensionState::Active,
        ended_tasks: Vec::new(),
        thrown_signals: Vec::new(),
        raised: Vec::new(),
        interrupted_calls: Vec::new(),
        final_variables: Default::default(),
        index: Default::default(),
        variable_log: Vec::new(),
    }
}

/// Stores `inst` as a start does and returns it as it now stands (REV_ 1).
pub async fn started(store: &dyn Store, inst: &Instance) -> Instance {
    store.write_all(&tables::instance_writes(None, inst, tables::HistoryLevel::Full)).await.unwrap();
    Instance { root_rev: 1, ..inst.clone() }
}
