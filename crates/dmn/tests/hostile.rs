//! Hostile documents and variables: each gets a clear error, never a panic, an abort or unbounded
//! work in the parser.

mod common;

use common::{doc, refused, run, table, text, vars};
use kairos_dmn::{DecisionModel, DmnError, MAX_DOCUMENT_BYTES};
use serde_json::json;

fn literal(expression: &str) -> String {
    doc(&format!(
        "<decision id=\"f\" name=\"f\"><variable name=\"v\"/><literalExpression><text>{expression}</text></literalExpression></decision>"
    ))
}

#[test]
fn oversized_documents_are_refused_before_parsing() {
    let huge = format!("<definitions>{}</definitions>", " ".repeat(MAX_DOCUMENT_BYTES));
    assert_eq!(
        DecisionModel::parse(&huge).unwrap_err(),
        DmnError::TooLarge { size: huge.len(), limit: MAX_DOCUMENT_BYTES }
    );
}

#[test]
fn dtds_and_entities_are_refused() {
    let laughs = concat!(
        "<?xml version=\"1.0\"?>\n",
        "<!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]>\n",
        "<definitions xmlns=\"https://www.omg.org/spec/DMN/20191111/MODEL/\" id=\"d\" name=\"&lol2;\" namespace=\"n\"/>"
    );
    assert_eq!(
        refused(laughs),
        (Some(2), "a DTD (<!DOCTYPE …>) is not allowed in a DMN document: entities are refused".into())
    );
}

#[test]
fn bad_xml_is_reported_with_its_line() {
    let broken = doc("<decision id=\"a\" name=\"a\">\n<literalExpression><text>1</text>\n</decision>");
    let (line, message) = refused(&broken);
    assert_eq!(line, Some(4));
    assert!(message.starts_with("the document is not well-formed XML: "), "{message}");
    assert!(refused("").1.starts_with("the document is not well-formed XML"));
    assert!(refused("just text").1.starts_with("the document is not well-formed XML"));
}

#[test]
fn every_truncation_of_a_real_model_is_an_error_not_a_panic() {
    let full = text("dish-dmn13.dmn");
    let mut cut = 0;
    while cut < full.len() - 20 {
        if full.is_char_boundary(cut) {
            match DecisionModel::parse(&full[..cut]) {
                Err(DmnError::Parse { message, .. }) => {
                    assert!(!message.contains("internal error"), "cut at {cut}: {message}")
                }
                other => panic!("cut at {cut}: {other:?}"),
            }
        }
        cut += 7;
    }
}

#[test]
fn mutated_models_parse_or_fail_cleanly_and_evaluate_without_panics() {
    let original = text("dish-dmn13.dmn").into_bytes();
    let junk = b"<>\"&[]().9 x-=?,:{}";
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut parsed, mut refused_count) = (0, 0);
    for _ in 0..400 {
        let mut bytes = original.clone();
        for _ in 0..1 + next() % 3 {
            let at = (next() % bytes.len() as u64) as usize;
            bytes[at] = junk[(next() % junk.len() as u64) as usize];
        }
        let Ok(mutated) = String::from_utf8(bytes) else { continue };
        match DecisionModel::parse(&mutated) {
            Ok(model) => {
                parsed += 1;
                for decision in model.decisions() {
                    for variables in [
                        json!({"season": "Fall", "guestCount": 3}),
                        json!({"season": 7, "guestCount": "x", "guestsWithChildren": []}),
                    ] {
                        let _ = model.evaluate(&decision.id, &vars(variables));
                    }
                }
            }
            Err(DmnError::Parse { message, .. }) => {
                refused_count += 1;
                assert!(!message.contains("internal error"), "{message}");
            }
            Err(other) => panic!("{other:?}"),
        }
    }
    assert!(parsed > 0 && refused_count > 0, "parsed {parsed}, refused {refused_count}");
}

#[test]
fn a_panic_inside_dsntk_is_an_error_naming_the_decision() {
    // dsntk's FeelNumber Display unwraps on an infinity.
    let model = DecisionModel::parse(&literal("string(1E6000 * 1E6000)")).unwrap();
    let error = model.evaluate("f", &vars(json!({}))).unwrap_err();
    assert_eq!(
        error,
        DmnError::Evaluation {
            decision: "f".into(),
            message: "the FEEL evaluator failed (internal error in dsntk: called `Option::unwrap()` on a `None` value)"
                .into()
        }
    );
    // The model stays usable afterwards.
    assert!(model.evaluate("f", &vars(json!({}))).is_err());
}

#[test]
fn numbers_beyond_json_are_errors() {
    let model = DecisionModel::parse(&literal("x * 1E6000")).unwrap();
    assert_eq!(
        model.evaluate("f", &vars(json!({"x": 1e308}))).unwrap_err().to_string(),
        "decision 'f' failed: the number +Inf is out of the range of a JSON number"
    );
    assert_eq!(run(&model, "f", json!({"x": 0})), json!([{"v": 0}]));
}

#[test]
fn feel_nesting_is_bounded_and_the_bound_is_safe_on_a_small_stack() {
    let sum = |terms: usize| vec!["1"; terms].join("+");
    assert!(refused(&literal(&sum(65))).1.contains("the expression nests deeper than 64 levels"));
    let nested = format!("{}1{}", "[".repeat(70), "]".repeat(70));
    assert!(refused(&literal(&nested)).1.contains("nests deeper than 64 levels"));
    assert!(refused(&literal(&"1+".repeat(4200))).1.contains("more than the limit of 8192"));
    // The deepest accepted expressions run on a 2 MiB stack (Tokio's worker size) in a debug build.
    let deepest =
        [sum(64), format!("{}1{}", "[".repeat(62), "]".repeat(62)), format!("{}1{}", "{a:".repeat(31), "}".repeat(31))];
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            for expression in deepest {
                let model = DecisionModel::parse(&literal(&expression)).unwrap();
                model.evaluate("f", &vars(json!({}))).unwrap();
            }
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn deeply_nested_variables_are_refused() {
    let mut value = json!(1);
    for _ in 0..100 {
        value = json!([value]);
    }
    let model = DecisionModel::parse(&literal("v")).unwrap();
    assert_eq!(
        model.evaluate("f", &vars(json!({"deep": value}))).unwrap_err().to_string(),
        "decision 'f' failed: variable 'deep': the value nests deeper than 64 levels"
    );
}

#[test]
fn empty_tables_and_tables_without_inputs() {
    let empty = DecisionModel::parse(&table("UNIQUE", "x", &[])).unwrap();
    assert_eq!(run(&empty, "t", json!({"x": 1})), json!([]));
    let no_inputs = doc(
        "<decision id=\"t\" name=\"t\"><decisionTable><output id=\"o\" name=\"o\"/><rule id=\"r\"><outputEntry><text>42</text></outputEntry></rule></decisionTable></decision>",
    );
    assert_eq!(run(&DecisionModel::parse(&no_inputs).unwrap(), "t", json!({})), json!([{"o": 42}]));
}

#[test]
fn values_of_the_wrong_type() {
    let dish = common::model("dish-dmn13.dmn");
    // A number for a string input is converted (Camunda's String.valueOf) and matches nothing.
    assert_eq!(run(&dish, "dish", json!({"season": 5, "guestCount": 3})), json!([]));
    let error = dish
        .evaluate("beverages", &vars(json!({"season": "Fall", "guestCount": 3, "guestsWithChildren": "yes"})))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "decision 'beverages' failed: input 'childrenInput': value \"yes\" is not valid for type 'boolean'"
    );
    let payment = common::model("approve-payment.dmn");
    let error = payment.evaluate("approve-payment", &vars(json!({"item": [1, 2]}))).unwrap_err();
    assert!(error.to_string().contains("is not valid for type 'string'"), "{error}");
    // A string compared with numbers matches nothing instead of failing (FEEL: null).
    let invoice = common::model("invoice-dmn11.dmn");
    let error = invoice
        .evaluate("invoiceClassification", &vars(json!({"amount": "lots", "invoiceCategory": "Misc"})))
        .unwrap_err();
    assert!(error.to_string().contains("value \"lots\" is not valid for type 'double'"), "{error}");
}

#[test]
fn collect_aggregation_needs_numbers() {
    let strings = table("COLLECT", "x", &[("-", "\"a\"")])
        .replace("hitPolicy=\"COLLECT\"", "hitPolicy=\"COLLECT\" aggregation=\"SUM\"");
    let model = DecisionModel::parse(&strings).unwrap();
    assert_eq!(
        model.evaluate("t", &vars(json!({}))).unwrap_err().to_string(),
        "decision 't' failed: aggregation SUM needs numbers, but an output is \"a\""
    );
}
