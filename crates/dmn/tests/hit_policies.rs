//! Hit policies, aggregations, literal expressions and typeRefs, as Camunda 7's handlers give them.

mod common;

use common::{model, run, vars};
use kairos_dmn::DmnError;
use serde_json::json;

#[test]
fn unique_refuses_two_matching_rules_and_names_them() {
    let model = model("scoring-dmn12.dmn");
    assert_eq!(run(&model, "risk", json!({"score": 4})), json!([{"risk": "elevated"}]));
    assert_eq!(run(&model, "risk", json!({"score": 1})), json!([{"risk": "low"}]));
    let error = model.evaluate("risk", &vars(json!({"score": 7}))).unwrap_err();
    assert_eq!(
        error,
        DmnError::Evaluation {
            decision: "risk".into(),
            message: "hit policy UNIQUE allows one matching rule, but rules 'high', 'elevated' matched".into(),
        }
    );
}

#[test]
fn any_needs_equal_outputs() {
    let model = model("scoring-dmn12.dmn");
    assert_eq!(run(&model, "review", json!({"score": 7})), json!([{"review": true}]), "two rules agree: one result");
    assert_eq!(run(&model, "review", json!({"score": 2})), json!([]));
    let error = model.evaluate("review", &vars(json!({"score": 9}))).unwrap_err();
    assert_eq!(
        error.to_string(),
        "decision 'review' failed: hit policy ANY needs the matching rules to have equal outputs, but rules 'reviewHigh', 'reviewMedium', 'reviewAudit' differ"
    );
}

#[test]
fn rule_order_keeps_every_match_and_leaves_out_empty_output_entries() {
    let model = model("scoring-dmn12.dmn");
    // `? >= 4 and ? < 100` and `even(cellInput)` are predicates over the input.
    assert_eq!(
        run(&model, "checks", json!({"score": 6})),
        json!([
            {"check": "identity", "weight": 1.0},
            {"check": "income"},
            {"check": "debts", "weight": 1.5},
        ])
    );
    assert_eq!(run(&model, "checks", json!({"score": 3})), json!([{"check": "identity", "weight": 1.0}]));
}

#[test]
fn double_typeref_gives_floating_point_numbers() {
    let model = model("scoring-dmn12.dmn");
    let results = model.evaluate("checks", &vars(json!({"score": 3}))).unwrap();
    assert!(results[0]["weight"].is_f64(), "{results:?}");
}

#[test]
fn collect_sum_gives_one_entry_named_by_the_output() {
    let model = model("scoring-dmn12.dmn");
    assert_eq!(run(&model, "fees", json!({"order": {"amount": 50}})), json!([{"fee": 10}]));
    assert_eq!(run(&model, "fees", json!({"order": {"amount": 500}})), json!([{"fee": 30}]));
    assert_eq!(
        run(&model, "fees", json!({"order": {"amount": 2000}})),
        json!([{"fee": 60}]),
        "integral and untyped: an integer"
    );
    assert_eq!(run(&model, "fees", json!({"order": {"amount": 0}})), json!([]), "nothing matched: no result");
}

#[test]
fn collect_count_and_max() {
    let model = model("scoring-dmn12.dmn");
    assert_eq!(run(&model, "feeCount", json!({"order": {"amount": 500}})), json!([{"fees": 2}]));
    assert_eq!(run(&model, "feeCount", json!({"order": {"amount": -1}})), json!([{"fees": 0}]));
    assert_eq!(run(&model, "feeRange", json!({"order": {"amount": 500}})), json!([{"highestFee": 7.0}]));
    assert_eq!(run(&model, "feeRange", json!({"order": {"amount": 5}})), json!([{"highestFee": 1.5}]));
    assert_eq!(run(&model, "feeRange", json!({"order": {"amount": -5}})), json!([]));
}

#[test]
fn literal_expression_gives_its_variable() {
    let model = model("scoring-dmn12.dmn");
    let discount = |vip: bool| run(&model, "discount", json!({"customer": {"vip": vip}, "order": {"amount": 200}}));
    assert_eq!(discount(true), json!([{"discount": 20.0}]));
    assert_eq!(discount(false), json!([{"discount": 0.0}]));
    let info = model.decisions().iter().find(|info| info.id == "discount").unwrap();
    assert_eq!((info.hit_policy.clone(), info.outputs.clone()), (None, vec!["discount".to_string()]));
}

#[test]
fn dates_come_back_as_iso_text_and_strings_stay_strings() {
    let model = model("scoring-dmn12.dmn");
    assert_eq!(
        run(&model, "deadline", json!({"received": "2024-02-28T10:00:00Z"})),
        json!([{"deadline": "2024-03-01T10:00:00Z"}])
    );
}

#[test]
fn required_literal_and_table_results_become_variables() {
    let model = model("scoring-dmn12.dmn");
    // fees (COLLECT SUM: one value), discount (literal), checks (RULE ORDER: lists by output).
    assert_eq!(
        run(&model, "total", json!({"order": {"amount": 500}, "customer": {"vip": true}, "score": 6})),
        json!([{"total": {"amount": 480, "checks": ["identity", "income", "debts"], "count": 3}}])
    );
}

#[test]
fn integers_stay_integers_and_large_numbers_become_floats() {
    let xml = r#"<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="n" name="n" namespace="n">
      <decision id="big" name="big"><variable name="big"/><literalExpression><text>[x * 2, x / 3, 10 ** 30, -7]</text></literalExpression></decision>
    </definitions>"#;
    let model = kairos_dmn::DecisionModel::parse(xml).unwrap();
    let results = model.evaluate("big", &vars(json!({"x": 4_000_000_000_i64}))).unwrap();
    assert_eq!(results[0]["big"][0], json!(8_000_000_000_i64));
    assert!((results[0]["big"][1].as_f64().unwrap() - 4e9 / 3.0).abs() < 1.0);
    assert_eq!(results[0]["big"][2], json!(1e30));
    assert_eq!(results[0]["big"][3], json!(-7));
}

#[test]
fn names_are_resolved_against_each_evaluations_variables() {
    // dsntk reads `a - b` as one name when neither is known: expressions are compiled per shape of
    // the variables, and the cached form for one shape is not used for another.
    let xml = common::doc(
        "<decision id=\"f\" name=\"f\"><variable name=\"v\"/><literalExpression><text>a - b</text></literalExpression></decision>",
    );
    let model = kairos_dmn::DecisionModel::parse(&xml).unwrap();
    assert_eq!(run(&model, "f", json!({"a": 5, "b": 2})), json!([{"v": 3}]));
    assert_eq!(run(&model, "f", json!({"a-b": 9})), json!([{"v": 9}]));
    assert_eq!(run(&model, "f", json!({"x": 1})), json!([{"v": null}]));
    assert_eq!(run(&model, "f", json!({"a": 7, "b": 2})), json!([{"v": 5}]));
}

#[test]
fn a_model_is_shared_across_threads() {
    fn shared<T: Send + Sync + Clone>() {}
    shared::<kairos_dmn::DecisionModel>();
    let model = model("scoring-dmn12.dmn");
    let handles: Vec<_> = (0..4)
        .map(|n| {
            let model = model.clone();
            std::thread::spawn(move || run(&model, "fees", json!({"order": {"amount": 50 + n * 100}})))
        })
        .collect();
    let fees: Vec<_> = handles.into_iter().map(|handle| handle.join().unwrap()).collect();
    assert_eq!(fees, [json!([{"fee": 10}]), json!([{"fee": 30}]), json!([{"fee": 30}]), json!([{"fee": 30}])]);
}
