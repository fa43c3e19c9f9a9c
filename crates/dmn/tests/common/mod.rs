//! Helpers shared by the test files: the model fixtures and JSON variables.
#![allow(dead_code)]

use kairos_dmn::DecisionModel;
use serde_json::{Map, Value};

pub fn text(file: &str) -> String {
    let path = format!("{}/tests/models/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

pub fn model(file: &str) -> DecisionModel {
    DecisionModel::parse(&text(file)).unwrap_or_else(|error| panic!("{file}: {error}"))
}

/// `json!({...})` as the variables map.
pub fn vars(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("variables must be an object, not {other}"),
    }
}

/// The results as one JSON array, for compact assertions.
pub fn run(model: &DecisionModel, decision: &str, variables: Value) -> Value {
    let results = model.evaluate(decision, &vars(variables)).unwrap_or_else(|error| panic!("{decision}: {error}"));
    Value::Array(results.into_iter().map(Value::Object).collect())
}

/// A DMN 1.3 document around `body`; the body starts on line 2.
pub fn doc(body: &str) -> String {
    format!(
        "<definitions xmlns=\"https://www.omg.org/spec/DMN/20191111/MODEL/\" xmlns:camunda=\"http://camunda.org/schema/1.0/dmn\" id=\"d\" name=\"d\" namespace=\"test\">\n{body}\n</definitions>"
    )
}

/// A one-input, one-output table decision `t` with the given rules (`(input entry, output entry)`).
pub fn table(hit_policy: &str, input: &str, rules: &[(&str, &str)]) -> String {
    let rules: String = rules
        .iter()
        .enumerate()
        .map(|(n, (test, out))| {
            format!("<rule id=\"r{n}\"><inputEntry><text>{test}</text></inputEntry><outputEntry><text>{out}</text></outputEntry></rule>\n")
        })
        .collect();
    doc(&format!(
        "<decision id=\"t\" name=\"T\"><decisionTable hitPolicy=\"{hit_policy}\">\n<input id=\"in\"><inputExpression><text>{input}</text></inputExpression></input>\n<output id=\"out\" name=\"out\"/>\n{rules}</decisionTable></decision>"
    ))
}

/// The parse error's (line, message), failing the test when the document parsed.
pub fn refused(xml: &str) -> (Option<u32>, String) {
    match DecisionModel::parse(xml) {
        Err(kairos_dmn::DmnError::Parse { line, message }) => (line, message),
        Err(other) => panic!("expected a parse error, got {other:?}"),
        Ok(_) => panic!("expected a parse error, the document parsed"),
    }
}
