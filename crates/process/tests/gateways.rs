//! Gateways in the pure runtime: which flows a token takes, how a join waits and fires once,
//! and the event-based gateway whose first event wins.

mod support;

use kairos_process::ErrorKind;
use serde_json::json;
use support::Driver;

const EXCLUSIVE: &str = r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="gw"/>
    <exclusiveGateway id="gw" default="fLow"/>
    <sequenceFlow id="fHigh" sourceRef="gw" targetRef="high"><conditionExpression>${amount > 100}</conditionExpression></sequenceFlow>
    <sequenceFlow id="fLow" sourceRef="gw" targetRef="low"/>
    <userTask id="high"/>
    <userTask id="low"/>
    <sequenceFlow id="f3" sourceRef="high" targetRef="end"/>
    <sequenceFlow id="f4" sourceRef="low" targetRef="end"/>
    <endEvent id="end"/>"#;

#[test]
fn an_exclusive_gateway_takes_the_flow_whose_condition_holds() {
    let mut d = Driver::of(EXCLUSIVE);
    d.start(json!({"amount": 500}));
    assert_eq!(d.tasks(), ["high"]);
    assert_eq!(d.tree(), "- scope inactive\n  high");
    assert_eq!(d.trace(), ["start", "gw", "high"]);
    // The gateway and the start event passed: their history rows are closed, the task's open.
    assert_eq!(d.ends_of("gw"), [None]);
    let c = &d.last.changes;
    assert!(c.new_instance);
    assert_eq!(d.inserted_executions(), ["-", "high"]);
    assert_eq!(c.tasks_inserted.len(), 1);
    assert_eq!(
        c.activities_inserted.iter().map(|a| a.activity_id.as_str()).collect::<Vec<_>>(),
        ["start", "gw", "high"]
    );
}

#[test]
fn an_exclusive_gateway_takes_its_default_flow_when_no_condition_holds() {
    let mut d = Driver::of(EXCLUSIVE);
    d.start(json!({"amount": 5}));
    assert_eq!(d.tasks(), ["low"]);
    d.complete("low", json!({}));
    assert!(d.ended());
    assert_eq!(d.trace(), ["start", "gw", "low", "end"]);
}

#[test]
fn an_exclusive_gateway_without_a_flow_to_take_fails_naming_itself() {
    let mut d = Driver::of(&EXCLUSIVE.replace(r#" default="fLow""#, "").replace(
        r#"targetRef="low"/>"#,
        r#"targetRef="low"><conditionExpression>${amount &lt; 0}</conditionExpression></sequenceFlow>"#,
    ));
    let loaded = d.inst.clone();
    let err = d
        .try_run(kairos_process::Command::Start {
            variables: support::vars(json!({"amount": 5})),
            start_user: None,
            start_event: None,
        })
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Model);
    assert_eq!(err.element_id.as_deref(), Some("gw"));
    assert!(err.message.contains("exclusive gateway 'gw'"), "{}", err.message);
    assert_eq!(d.inst, loaded, "nothing of a failed command stays");
}

const PARALLEL: &str = r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="fork"/>
    <parallelGateway id="fork"/>
    <sequenceFlow id="fa" sourceRef="fork" targetRef="a"/>
    <sequenceFlow id="fb" sourceRef="fork" targetRef="b"/>
    <userTask id="a"/>
    <userTask id="b"/>
    <sequenceFlow id="fa2" sourceRef="a" targetRef="join"/>
    <sequenceFlow id="fb2" sourceRef="b" targetRef="join"/>
    <parallelGateway id="join"/>
    <sequenceFlow id="f9" sourceRef="join" targetRef="after"/>
    <userTask id="after"/>
    <sequenceFlow id="f10" sourceRef="after" targetRef="end"/>
    <endEvent id="end"/>"#;

#[test]
fn a_parallel_gateway_splits_into_concurrent_tokens_and_joins_them_once() {
    let mut d = Driver::of(PARALLEL);
    d.start(json!({}));
    assert_eq!(d.tasks(), ["a", "b"]);
    assert_eq!(d.tree(), "- scope inactive\n  a concurrent\n  b concurrent");
    assert_eq!(d.trace(), ["start", "fork", "a", "b"]);

    // The first token waits at the join, inactive; the join is not in history yet.
    let b_token = d.inst.task(&d.task_id("b")).unwrap().execution_id.clone();
    d.complete("a", json!({}));
    assert_eq!(d.tree(), "- scope inactive\n  join concurrent inactive\n  b concurrent");
    assert_eq!(d.trace(), ["start", "fork", "a", "b"]);
    assert_eq!(d.last.changes.tasks_deleted.len(), 1);
    assert!(d.last.changes.executions_deleted.is_empty());

    // The last one goes on alone; the other ends with the join, recorded once.
    d.complete("b", json!({}));
    assert_eq!(d.tree(), "- scope inactive\n  after");
    assert_eq!(d.inst.children(&d.inst.id)[0].id, b_token);
    assert_eq!(d.last.changes.executions_deleted.len(), 1);
    assert_eq!(d.trace(), ["start", "fork", "a", "b", "join", "after"]);
}

const INCLUSIVE: &str = r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="fork"/>
    <inclusiveGateway id="fork" default="fc"/>
    <sequenceFlow id="fa" sourceRef="fork" targetRef="a"><conditionExpression>${x > 0}</conditionExpression></sequenceFlow>
    <sequenceFlow id="fb" sourceRef="fork" targetRef="b"><conditionExpression>${y > 0}</conditionExpression></sequenceFlow>
    <sequenceFlow id="fc" sourceRef="fork" targetRef="c"/>
    <userTask id="a"/>
    <userTask id="b"/>
    <userTask id="c"/>
    <sequenceFlow id="fa2" sourceRef="a" targetRef="join"/>
    <sequenceFlow id="fb2" sourceRef="b" targetRef="join"/>
    <sequenceFlow id="fc2" sourceRef="c" targetRef="join"/>
    <inclusiveGateway id="join"/>
    <sequenceFlow id="f9" sourceRef="join" targetRef="end"/>
    <endEvent id="end"/>"#;

#[test]
fn an_inclusive_gateway_takes_every_flow_that_holds_and_joins_what_can_arrive() {
    let mut d = Driver::of(INCLUSIVE);
    d.start(json!({"x": 1, "y": 1}));
    assert_eq!(d.tasks(), ["a", "b"]);
    d.complete("a", json!({}));
    // b can still reach the join: the token waits.
    assert_eq!(d.tree(), "- scope inactive\n  join concurrent inactive\n  b concurrent");
    d.complete("b", json!({}));
    assert!(d.ended());
    assert_eq!(d.trace(), ["start", "fork", "a", "b", "join", "end"]);
}

#[test]
fn an_inclusive_join_with_one_token_fires_at_once() {
    let mut d = Driver::of(INCLUSIVE);
    d.start(json!({"x": 1, "y": 0}));
    assert_eq!(d.tasks(), ["a"]);
    assert_eq!(d.tree(), "- scope inactive\n  a");
    d.complete("a", json!({}));
    assert!(d.ended());
    assert_eq!(d.trace(), ["start", "fork", "a", "join", "end"]);
}

#[test]
fn an_inclusive_gateway_takes_its_default_when_nothing_holds() {
    let mut d = Driver::of(INCLUSIVE);
    d.start(json!({"x": 0, "y": 0}));
    assert_eq!(d.tasks(), ["c"]);
}

const EVENT_BASED: &str = r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="gw"/>
    <eventBasedGateway id="gw"/>
    <sequenceFlow id="f1" sourceRef="gw" targetRef="onGo"/>
    <sequenceFlow id="f2" sourceRef="gw" targetRef="onTime"/>
    <intermediateCatchEvent id="onGo"><messageEventDefinition messageRef="m1"/></intermediateCatchEvent>
    <intermediateCatchEvent id="onTime"><timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition></intermediateCatchEvent>
    <sequenceFlow id="f3" sourceRef="onGo" targetRef="a"/>
    <sequenceFlow id="f4" sourceRef="onTime" targetRef="b"/>
    <userTask id="a"/>
    <userTask id="b"/>"#;

#[test]
fn an_event_based_gateway_waits_for_every_branch_and_the_first_event_wins() {
    let mut d = Driver::of(EVENT_BASED);
    d.start(json!({}));
    assert_eq!(d.tree(), "- scope inactive\n  gw");
    assert_eq!(d.subscriptions(), ["message:go@onGo"]);
    assert_eq!(d.jobs(), ["trigger-timer@onTime due 2026-01-05T10:00:00Z"]);

    d.message("go");
    assert_eq!(d.tasks(), ["a"]);
    assert!(d.subscriptions().is_empty());
    assert!(d.jobs().is_empty(), "the timer of the losing branch goes");
    assert_eq!(d.last.changes.jobs_deleted.len(), 1);
    assert_eq!(d.last.changes.subscriptions_deleted.len(), 1);
    assert_eq!(d.trace(), ["start", "gw", "onGo", "a"]);
    assert_eq!(d.ends_of("gw"), [None]);
}

#[test]
fn an_event_based_gateway_branch_won_by_its_timer() {
    let mut d = Driver::of(EVENT_BASED);
    d.start(json!({}));
    d.fire_timer("onTime");
    assert_eq!(d.tasks(), ["b"]);
    assert!(d.subscriptions().is_empty(), "the message of the losing branch is no longer awaited");
    assert_eq!(d.trace(), ["start", "gw", "onTime", "b"]);
    assert_eq!(d.inst.tasks[0].create_time.to_string(), "2026-01-05T10:00:00Z");
}

/// Two branches into a complex join that fires on the first token, in a loop.
const COMPLEX: &str = r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="round"/>
    <exclusiveGateway id="round"/>
    <sequenceFlow id="f1" sourceRef="round" targetRef="fork"/>
    <parallelGateway id="fork"/>
    <sequenceFlow id="fa" sourceRef="fork" targetRef="a"/>
    <sequenceFlow id="fb" sourceRef="fork" targetRef="b"/>
    <userTask id="a"/>
    <userTask id="b"/>
    <sequenceFlow id="fa2" sourceRef="a" targetRef="first"/>
    <sequenceFlow id="fb2" sourceRef="b" targetRef="first"/>
    <complexGateway id="first"><activationCondition>${activationCount >= 1}</activationCondition></complexGateway>
    <sequenceFlow id="f5" sourceRef="first" targetRef="review"/>
    <userTask id="review"/>
    <sequenceFlow id="f6" sourceRef="review" targetRef="again"/>
    <exclusiveGateway id="again" default="f8"/>
    <sequenceFlow id="f7" sourceRef="again" targetRef="round"><conditionExpression>${again}</conditionExpression></sequenceFlow>
    <sequenceFlow id="f8" sourceRef="again" targetRef="end"/>
    <endEvent id="end"/>"#;

#[test]
fn a_complex_join_fires_on_its_activation_condition_and_absorbs_the_late_tokens() {
    let mut d = Driver::of(COMPLEX);
    d.start(json!({"again": true}));
    d.complete("a", json!({}));
    // Fired on the first token; one marker waits for b's token, which is still on its way.
    assert_eq!(d.tasks(), ["b", "review"]);
    assert_eq!(d.tree(), "- scope inactive\n  review concurrent\n  b concurrent\n  first event-scope inactive");
    d.complete("b", json!({}));
    assert_eq!(d.tasks(), ["review"]);
    assert_eq!(d.tree(), "- scope inactive\n  review", "b's token was absorbed and took the marker");
    // The next round: the review token can reach the gateway again, but the marker counted
    // only b's token, so this round's first token fires again.
    d.complete("review", json!({}));
    assert_eq!(d.tasks(), ["a", "b"]);
    d.complete("b", json!({"again": false}));
    assert_eq!(d.tasks(), ["a", "review"]);
    d.complete("review", json!({}));
    d.complete("a", json!({}));
    assert!(d.ended(), "{}", d.tree());
    assert_eq!(
        d.trace(),
        [
            "start", "round", "fork", "a", "b", "first", "review", "again", "round", "fork", "a", "b", "first",
            "review", "again", "end"
        ]
    );
}

#[test]
fn a_complex_join_that_can_never_fire_fails_naming_itself() {
    let mut d = Driver::of(&COMPLEX.replace("activationCount >= 1", "activationCount >= 3"));
    d.start(json!({"again": false}));
    d.complete("a", json!({}));
    let loaded = d.inst.clone();
    let err = d
        .try_run(kairos_process::Command::CompleteTask { task_id: d.task_id("b"), variables: Default::default() })
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Model);
    assert_eq!(err.element_id.as_deref(), Some("first"));
    assert!(err.message.contains("false with 2 token(s) waiting, and no other can arrive"), "{}", err.message);
    assert_eq!(d.inst, loaded, "nothing of a failed command stays");
}

#[test]
fn a_complex_join_without_an_activation_condition_joins_as_an_inclusive_one() {
    let mut d = Driver::of(&COMPLEX.replace("<activationCondition>${activationCount >= 1}</activationCondition>", ""));
    d.start(json!({"again": false}));
    d.complete("a", json!({}));
    assert_eq!(d.tasks(), ["b"]);
    d.complete("b", json!({}));
    assert_eq!(d.tasks(), ["review"]);
}

#[test]
fn an_inclusive_join_fires_when_the_token_it_waited_for_ends_elsewhere() {
    // b's token may reach the join or end on its own at `dropped`.
    let mut d = Driver::of(&INCLUSIVE.replace(
        r#"<sequenceFlow id="fb2" sourceRef="b" targetRef="join"/>"#,
        r#"<sequenceFlow id="fb2" sourceRef="b" targetRef="keep"/>
    <exclusiveGateway id="keep" default="fb3"/>
    <sequenceFlow id="fb3" sourceRef="keep" targetRef="join"/>
    <sequenceFlow id="fb4" sourceRef="keep" targetRef="dropped"><conditionExpression>${drop}</conditionExpression></sequenceFlow>
    <endEvent id="dropped"/>"#,
    ));
    d.start(json!({"x": 1, "y": 1}));
    d.complete("a", json!({}));
    assert_eq!(d.tree(), "- scope inactive\n  join concurrent inactive\n  b concurrent");
    d.complete("b", json!({"drop": true}));
    assert!(d.ended(), "the join fired once nothing could reach it: {}", d.tree());
    assert_eq!(d.trace(), ["start", "fork", "a", "b", "keep", "dropped", "join", "end"]);
}

#[test]
fn an_async_inclusive_join_counts_a_token_waiting_for_its_job_as_on_its_way() {
    let mut d = Driver::of(
        &INCLUSIVE
            .replace(r#"<inclusiveGateway id="join"/>"#, r#"<inclusiveGateway id="join" camunda:asyncBefore="true"/>"#),
    );
    d.start(json!({"x": 1, "y": 1}));
    d.complete("a", json!({}));
    d.complete("b", json!({}));
    assert_eq!(d.jobs(), ["async-continuation@join", "async-continuation@join"], "{}", d.tree());
    d.run_job("join", kairos_process::JobKind::AsyncBefore);
    assert!(!d.ended(), "the other token's job has not run: it is still on its way");
    d.run_job("join", kairos_process::JobKind::AsyncBefore);
    assert!(d.ended(), "{}", d.tree());
    assert!(d.jobs().is_empty());
    assert_eq!(d.trace(), ["start", "fork", "a", "b", "join", "end"]);
}

#[test]
fn a_fired_complex_join_lets_go_of_the_marker_of_a_token_that_ended_elsewhere() {
    let mut d = Driver::of(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="fork"/>
    <parallelGateway id="fork"/>
    <sequenceFlow id="fa" sourceRef="fork" targetRef="a"/>
    <sequenceFlow id="fb" sourceRef="fork" targetRef="b"/>
    <userTask id="a"/>
    <userTask id="b"/>
    <sequenceFlow id="fa2" sourceRef="a" targetRef="first"/>
    <sequenceFlow id="fb2" sourceRef="b" targetRef="keep"/>
    <exclusiveGateway id="keep" default="fb3"/>
    <sequenceFlow id="fb3" sourceRef="keep" targetRef="first"/>
    <sequenceFlow id="fb4" sourceRef="keep" targetRef="dropped"><conditionExpression>${drop}</conditionExpression></sequenceFlow>
    <endEvent id="dropped"/>
    <complexGateway id="first"><activationCondition>${activationCount >= 1}</activationCondition></complexGateway>
    <sequenceFlow id="f5" sourceRef="first" targetRef="review"/>
    <userTask id="review"/>"#,
    );
    d.start(json!({}));
    d.complete("a", json!({}));
    assert_eq!(d.tree(), "- scope inactive\n  review concurrent\n  b concurrent\n  first event-scope inactive");
    d.complete("b", json!({"drop": true}));
    assert_eq!(d.tree(), "- scope inactive\n  review", "nothing can reach the gateway: its marker went");
}
