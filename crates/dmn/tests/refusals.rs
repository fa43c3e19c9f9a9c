//! What kairos refuses in a DMN document, and what the refusal says.

mod common;

use common::{doc, refused, table, text, vars};
use kairos_dmn::{DecisionModel, DmnError};
use serde_json::json;

#[test]
fn juel_input_expression_is_refused_naming_decision_and_language() {
    assert_eq!(
        refused(&text("approve-payment-juel.dmn")),
        (
            Some(6),
            "decision 'approve-payment', input expression: expression language 'juel' is not supported, only FEEL (kairos has no JUEL or scripts in DMN)".into()
        )
    );
}

#[test]
fn non_feel_languages_anywhere_are_refused() {
    let on_definitions = text("approve-payment.dmn")
        .replace("id=\"paymentDecisions\"", "id=\"paymentDecisions\" expressionLanguage=\"juel\"");
    assert!(refused(&on_definitions).1.starts_with("the definitions' expressionLanguage: expression language 'juel'"));
    let on_entry = text("approve-payment.dmn").replace(
        "<outputEntry id=\"knownItemOut\">",
        "<outputEntry id=\"knownItemOut\" expressionLanguage=\"javascript\">",
    );
    assert!(refused(&on_entry).1.contains("'approve-payment', output entry: expression language 'javascript'"));
    // FEEL by its URI is fine.
    let feel_uri = text("approve-payment.dmn").replace(
        "<inputEntry id=\"knownItemEntry\">",
        "<inputEntry id=\"knownItemEntry\" expressionLanguage=\"https://www.omg.org/spec/DMN/20191111/FEEL/\">",
    );
    assert!(DecisionModel::parse(&feel_uri).is_ok());
}

#[test]
fn unknown_decision_id_is_its_own_error() {
    let model = common::model("invoice-dmn11.dmn");
    let error = model.evaluate("Invoice Classification", &vars(json!({}))).unwrap_err();
    assert_eq!(error, DmnError::UnknownDecision("Invoice Classification".into()));
    assert_eq!(error.to_string(), "no decision with id 'Invoice Classification' in this DMN model");
}

#[test]
fn priority_and_output_order_are_refused_as_in_camunda() {
    let (line, message) = refused(&table("PRIORITY", "x", &[("1", "1")]));
    assert_eq!(line, Some(2));
    assert_eq!(
        message,
        "decision 't': hit policy PRIORITY is not supported (Camunda 7 does not support it either); use FIRST or RULE ORDER"
    );
    assert!(refused(&table("OUTPUT ORDER", "x", &[])).1.contains("OUTPUT ORDER is not supported"));
    assert!(refused(&table("SOMETIMES", "x", &[])).1.contains("'SOMETIMES' is not a hit policy"));
}

#[test]
fn decision_logic_beyond_tables_and_literals_is_refused() {
    let context = doc(
        "<decision id=\"c\" name=\"c\"><context><contextEntry><literalExpression><text>1</text></literalExpression></contextEntry></context></decision>",
    );
    assert_eq!(
        refused(&context),
        (
            Some(2),
            "decision 'c' is a <context>: only decision tables and literal expressions are supported, as in Camunda 7"
                .into()
        )
    );
    let bkm = doc(
        "<decision id=\"b\" name=\"b\"><knowledgeRequirement><requiredKnowledge href=\"#k\"/></knowledgeRequirement><literalExpression><text>k(1)</text></literalExpression></decision>",
    );
    assert!(refused(&bkm).1.contains("BKMs are not supported"));
    let empty = doc("<decision id=\"e\" name=\"e\"/>");
    assert_eq!(refused(&empty).1, "decision 'e' has neither a decision table nor a literal expression");
}

#[test]
fn required_decision_cycles_are_refused() {
    let itself = doc(
        "<decision id=\"a\" name=\"a\"><informationRequirement><requiredDecision href=\"#a\"/></informationRequirement><literalExpression><text>1</text></literalExpression></decision>",
    );
    assert_eq!(refused(&itself).1, "required decisions form a cycle: a -> a");
    let pair = doc(concat!(
        "<decision id=\"a\" name=\"a\"><informationRequirement><requiredDecision href=\"#b\"/></informationRequirement><literalExpression><text>1</text></literalExpression></decision>\n",
        "<decision id=\"b\" name=\"b\"><informationRequirement><requiredDecision href=\"#c\"/></informationRequirement><literalExpression><text>1</text></literalExpression></decision>\n",
        "<decision id=\"c\" name=\"c\"><informationRequirement><requiredDecision href=\"#a\"/></informationRequirement><literalExpression><text>1</text></literalExpression></decision>"
    ));
    assert_eq!(refused(&pair).1, "required decisions form a cycle: a -> b -> c -> a");
}

#[test]
fn requirements_must_name_decisions_of_the_document() {
    let unknown = doc(
        "<decision id=\"a\" name=\"a\"><informationRequirement><requiredDecision href=\"#nope\"/></informationRequirement><literalExpression><text>1</text></literalExpression></decision>",
    );
    assert_eq!(
        refused(&unknown),
        (Some(2), "decision 'a' requires '#nope', which is no decision of this document".into())
    );
    let other_file = unknown.replace("#nope", "other.dmn#x");
    assert!(refused(&other_file).1.contains("only decisions of the same document"));
}

#[test]
fn ids_must_exist_and_be_unique() {
    let twice = doc(
        "<decision id=\"a\" name=\"a\"><literalExpression><text>1</text></literalExpression></decision>\n<decision id=\"a\" name=\"b\"><literalExpression><text>2</text></literalExpression></decision>",
    );
    assert_eq!(refused(&twice), (Some(3), "two decisions have the id 'a'".into()));
    let none = doc("<decision name=\"a\"><literalExpression><text>1</text></literalExpression></decision>");
    assert_eq!(refused(&none).1, "a decision has no id (a decision is called by its id)");
}

#[test]
fn documents_that_are_not_dmn_say_so() {
    let bpmn =
        "<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\" id=\"x\"><process id=\"p\"/></definitions>";
    assert!(
        refused(bpmn).1.starts_with(
            "not a DMN model kairos reads: its namespace is 'http://www.omg.org/spec/BPMN/20100524/MODEL'"
        )
    );
    let html = "<html><body/></html>";
    assert!(refused(html).1.starts_with("not a DMN model kairos reads: its root element is 'html'"));
    assert_eq!(refused(&doc("")).1, "the document has no decision");
}

#[test]
fn rules_must_have_one_entry_per_clause() {
    let short = table("UNIQUE", "x", &[("1", "1")]).replace("<inputEntry><text>1</text></inputEntry>", "");
    assert_eq!(
        refused(&short),
        (
            Some(5),
            "decision 't', rule 'r0': 0 input entries and 1 output entries for a table of 1 inputs and 1 outputs"
                .into()
        )
    );
}

#[test]
fn feel_syntax_errors_name_decision_rule_and_line() {
    let (line, message) = refused(&table("UNIQUE", "x", &[("1", "1"), ("[1..", "2")]));
    assert_eq!(line, Some(6));
    assert!(message.starts_with("decision 't': rule 'r1' (line 6): '[1..' is not valid FEEL"), "{message}");
    let (_, message) = refused(&table("UNIQUE", "(x", &[]));
    assert!(message.starts_with("decision 't': input 'in': '(x' is not valid FEEL"), "{message}");
}

#[test]
fn feel_function_definitions_are_refused() {
    let recursive = doc(
        "<decision id=\"f\" name=\"f\"><literalExpression><text>{f: function(n) if n = 0 then 0 else f(n - 1), r: f(100000)}.r</text></literalExpression></decision>",
    );
    assert!(refused(&recursive).1.contains("FEEL function definitions are not supported"));
    let external = doc(
        "<decision id=\"j\" name=\"j\"><literalExpression><text>{m: function(x) external {java: {class: \"java.lang.Math\", method signature: \"max(int,int)\"}}, r: m(1)}.r</text></literalExpression></decision>",
    );
    assert!(refused(&external).1.contains("FEEL function definitions are not supported"));
}

#[test]
fn history_time_to_live_must_be_days() {
    let model = |ttl: &str| {
        doc(&format!(
            "<decision id=\"a\" name=\"a\" camunda:historyTimeToLive=\"{ttl}\"><literalExpression><text>1</text></literalExpression></decision>"
        ))
    };
    assert_eq!(DecisionModel::parse(&model("7")).unwrap().decisions()[0].history_ttl_days, Some(7));
    assert_eq!(DecisionModel::parse(&model("P7D")).unwrap().decisions()[0].history_ttl_days, Some(7));
    assert_eq!(DecisionModel::parse(&model("")).unwrap().decisions()[0].history_ttl_days, None);
    assert_eq!(
        refused(&model("PT5H")).1,
        "decision 'a': historyTimeToLive 'PT5H' is neither a number of days nor a period like P30D"
    );
}

#[test]
fn several_outputs_need_names() {
    let unnamed = doc(
        "<decision id=\"t\" name=\"t\"><decisionTable><output id=\"o1\" name=\"a\"/><output id=\"o2\"/></decisionTable></decision>",
    );
    assert_eq!(refused(&unnamed).1, "decision 't': output 'o2' has no name, which a table with several outputs needs");
    let none = doc("<decision id=\"t\" name=\"t\"><decisionTable></decisionTable></decision>");
    assert_eq!(refused(&none).1, "decision 't': the decision table has no output");
}
