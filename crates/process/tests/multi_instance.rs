//! Multi-instance activities in the pure runtime: the body and its instances in the tree,
//! the counters, completion conditions, sequential runs and empty collections.

mod support;

use serde_json::{Value, json};
use support::{Driver, vars};

fn reviews(characteristics: &str) -> Driver {
    Driver::of(&format!(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="review"/>
    <userTask id="review" camunda:assignee="${{reviewer}}">{characteristics}</userTask>
    <sequenceFlow id="f1" sourceRef="review" targetRef="after"/>
    <userTask id="after"/>"#
    ))
}

const PARALLEL: &str = r#"<multiInstanceLoopCharacteristics isSequential="false" camunda:collection="${reviewers}" camunda:elementVariable="reviewer"/>"#;

/// The counters on the body execution.
fn counters(d: &Driver) -> [i64; 3] {
    let body = d.inst.executions.iter().find(|e| e.is_mi_root).expect("a body");
    let get = |n: &str| d.inst.scope_variable(&body.id, n).and_then(|v| v.value.as_i64()).unwrap_or(-1);
    [get("nrOfInstances"), get("nrOfCompletedInstances"), get("nrOfActiveInstances")]
}

#[test]
fn a_parallel_multi_instance_makes_a_body_with_one_child_per_item() {
    let mut d = reviews(PARALLEL);
    d.start(json!({"reviewers": ["ann", "bob", "cid"]}));
    assert_eq!(
        d.tree(),
        "- scope inactive\n  review scope concurrent mi-body inactive\n    review concurrent\n    review concurrent\n    review concurrent"
    );
    let assignees: Vec<_> = d.inst.tasks.iter().map(|t| t.assignee.clone().unwrap_or_default()).collect();
    assert_eq!(assignees, ["ann", "bob", "cid"]);
    assert_eq!(
        d.locals_at("review"),
        [
            vars(json!({"loopCounter": 0, "reviewer": "ann"})),
            vars(json!({"loopCounter": 1, "reviewer": "bob"})),
            vars(json!({"loopCounter": 2, "reviewer": "cid"}))
        ]
    );
    assert_eq!(counters(&d), [3, 0, 3]);

    d.complete("review", json!({}));
    assert_eq!(counters(&d), [3, 1, 2]);
    assert_eq!(d.tasks(), ["review", "review"]);
    d.complete("review", json!({})).complete("review", json!({}));
    assert_eq!(d.tasks(), ["after"]);
    assert_eq!(d.tree(), "- scope inactive\n  after");
    assert!(d.inst.variables.iter().all(|v| !v.name.starts_with("nrOf")), "the counters go with the body");
    assert_eq!(d.trace(), ["start", "review", "review", "review", "after"]);
}

#[test]
fn a_completion_condition_that_holds_cancels_the_other_instances() {
    let mut d = reviews(
        r#"<multiInstanceLoopCharacteristics isSequential="false" camunda:collection="${reviewers}" camunda:elementVariable="reviewer"><completionCondition>${nrOfCompletedInstances >= 1}</completionCondition></multiInstanceLoopCharacteristics>"#,
    );
    d.start(json!({"reviewers": ["ann", "bob", "cid"]}));
    d.complete("review", json!({}));
    assert_eq!(d.tasks(), ["after"]);
    let why = Some("multi-instance completion condition held".to_string());
    assert_eq!(d.ends_of("review"), [None, why.clone(), why.clone()]);
    let reasons: Vec<Option<String>> = d.last.ended_tasks.iter().map(|t| t.reason.clone()).collect();
    assert_eq!(reasons, [None, why.clone(), why]);
}

#[test]
fn a_sequential_multi_instance_runs_one_instance_at_a_time() {
    let mut d = reviews(r#"<multiInstanceLoopCharacteristics isSequential="true"><loopCardinality>2</loopCardinality></multiInstanceLoopCharacteristics>"#.replace("${reviewer}", "").as_str());
    d.start(json!({"reviewer": "ann"}));
    assert_eq!(d.tree(), "- scope inactive\n  review scope concurrent mi-body inactive\n    review concurrent");
    assert_eq!(counters(&d), [2, 0, 1]);
    assert_eq!(d.locals_at("review"), [vars(json!({"loopCounter": 0}))]);
    d.complete("review", json!({}));
    assert_eq!(d.locals_at("review"), [vars(json!({"loopCounter": 1}))]);
    assert_eq!(counters(&d), [2, 1, 1]);
    d.complete("review", json!({}));
    assert_eq!(d.tasks(), ["after"]);
}

#[test]
fn an_empty_collection_passes_through_the_activity() {
    let mut d = reviews(PARALLEL);
    d.start(json!({"reviewers": []}));
    assert_eq!(d.tasks(), ["after"]);
    assert_eq!(d.trace(), ["start", "after"]);
}

#[test]
fn a_collection_that_is_not_a_list_fails_naming_the_activity() {
    let mut d = reviews(PARALLEL);
    let err = d
        .try_run(kairos_process::Command::Start {
            variables: vars(json!({"reviewers": "ann"})),
            start_user: None,
            start_event: None,
        })
        .unwrap_err();
    assert_eq!(err.element_id.as_deref(), Some("review"));
    assert_eq!(
        err.message,
        format!("multi-instance collection '${{reviewers}}' of 'review' is not a list but {}", Value::from("ann"))
    );
}

/// A standard loop on `review`, with `sign` after it and an interrupting timer on `review`
/// that leads back to it.
fn standard_loop(characteristics: &str) -> Driver {
    Driver::of(&format!(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="review"/>
    <userTask id="review">{characteristics}</userTask>
    <boundaryEvent id="late" attachedToRef="review"><timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition></boundaryEvent>
    <sequenceFlow id="f2" sourceRef="late" targetRef="review"/>
    <sequenceFlow id="f1" sourceRef="review" targetRef="sign"/>
    <userTask id="sign"/>"#
    ))
}

#[test]
fn a_do_while_standard_loop_runs_until_its_condition_fails_counting_its_runs() {
    let mut d = standard_loop(
        r#"<standardLoopCharacteristics><loopCondition>${loopCounter &lt; 3 &amp;&amp; !approved}</loopCondition></standardLoopCharacteristics>"#,
    );
    d.start(json!({"approved": false}));
    assert_eq!(d.locals_at("review"), [vars(json!({"loopCounter": 0}))]);
    d.complete("review", json!({}));
    assert_eq!(d.locals_at("review"), [vars(json!({"loopCounter": 1}))]);
    // Broken off by the timer and entered again: the count starts over.
    d.fire_timer("late");
    assert_eq!(d.locals_at("review"), [vars(json!({"loopCounter": 0}))]);
    d.complete("review", json!({}));
    d.complete("review", json!({"approved": true}));
    assert_eq!(d.tasks(), ["sign"]);
    assert_eq!(d.locals_at("sign"), [vars(json!({}))], "the counter goes with the loop");
    assert_eq!(d.trace(), ["start", "review", "review", "late", "review", "review", "sign"]);
}

#[test]
fn a_while_standard_loop_tests_first_and_stops_at_its_maximum() {
    let mut d = standard_loop(
        r#"<standardLoopCharacteristics testBefore="true" loopMaximum="2"><loopCondition>${go}</loopCondition></standardLoopCharacteristics>"#,
    );
    d.start(json!({"go": false}));
    assert_eq!(d.tasks(), ["sign"], "passed over: the condition is false on arrival");
    assert_eq!(d.trace(), ["start", "sign"]);

    let mut d = standard_loop(
        r#"<standardLoopCharacteristics testBefore="true" loopMaximum="2"><loopCondition>${go}</loopCondition></standardLoopCharacteristics>"#,
    );
    d.start(json!({"go": true}));
    d.complete("review", json!({}));
    assert_eq!(d.tasks(), ["review"]);
    d.complete("review", json!({}));
    assert_eq!(d.tasks(), ["sign"], "two runs, the maximum");
    assert_eq!(d.trace(), ["start", "review", "review", "sign"]);
}
