//! Models in the shapes of Camunda 7's published examples (the invoice example in DMN 1.1, the
//! dinner decisions and the get-started approve-payment in DMN 1.3 with DMNDI): they must run
//! unchanged and give Camunda's results.

mod common;

use common::{model, run};
use kairos_dmn::DecisionInfo;
use serde_json::json;

#[test]
fn invoice_classification_follows_its_rows() {
    let model = model("invoice-dmn11.dmn");
    let classify = |amount: serde_json::Value, category: &str| {
        run(&model, "invoiceClassification", json!({"amount": amount, "invoiceCategory": category}))
    };
    assert_eq!(classify(json!(249), "Misc"), json!([{"invoiceClassification": "day-to-day expense"}]));
    assert_eq!(classify(json!(249.99), "Misc"), json!([{"invoiceClassification": "day-to-day expense"}]));
    assert_eq!(classify(json!(250), "Misc"), json!([{"invoiceClassification": "budget"}]));
    assert_eq!(classify(json!(1000), "Misc"), json!([{"invoiceClassification": "budget"}]));
    assert_eq!(classify(json!(1000.01), "Misc"), json!([{"invoiceClassification": "exceptional"}]));
    assert_eq!(classify(json!(1000), "Travel Expenses"), json!([{"invoiceClassification": "day-to-day expense"}]));
    assert_eq!(classify(json!(5), "Software License Costs"), json!([{"invoiceClassification": "budget"}]));
    assert_eq!(classify(json!(5), "Office"), json!([]), "no rule for this category");
}

#[test]
fn assign_approver_evaluates_its_required_decision_first() {
    let model = model("invoice-dmn11.dmn");
    // The required decision's output reaches the approver table by its output name.
    assert_eq!(
        run(&model, "invoice-assign-approver", json!({"amount": 100, "invoiceCategory": "Misc"})),
        json!([{"approverGroups": "accounting"}, {"approverGroups": "sales"}])
    );
    assert_eq!(
        run(&model, "invoice-assign-approver", json!({"amount": 2000, "invoiceCategory": "Misc"})),
        json!([{"approverGroups": "management"}])
    );
    assert_eq!(run(&model, "invoice-assign-approver", json!({"amount": 2000, "invoiceCategory": "Office"})), json!([]));
}

#[test]
fn invoice_model_describes_itself() {
    let model = model("invoice-dmn11.dmn");
    assert_eq!(model.namespace(), "http://camunda.org/schema/1.0/dmn");
    assert_eq!(model.name(), Some("Invoice Decisions"));
    assert_eq!(model.id(), Some("invoiceDecisions"));
    assert_eq!(
        model.decisions(),
        [
            DecisionInfo {
                id: "invoiceClassification".into(),
                name: Some("Invoice Classification".into()),
                version_tag: None,
                history_ttl_days: Some(30),
                hit_policy: Some("UNIQUE".into()),
                outputs: vec!["invoiceClassification".into()],
                line: 3,
            },
            DecisionInfo {
                id: "invoice-assign-approver".into(),
                name: Some("Assign Approver Group".into()),
                version_tag: Some("2".into()),
                history_ttl_days: None,
                hit_policy: Some("COLLECT".into()),
                outputs: vec!["approverGroups".into()],
                line: 53,
            },
        ]
    );
}

#[test]
fn dish_is_unique_with_ranges_and_may_match_nothing() {
    let model = model("dish-dmn13.dmn");
    let dish = |season: &str, guests: i64| run(&model, "dish", json!({"season": season, "guestCount": guests}));
    assert_eq!(dish("Fall", 8), json!([{"desiredDish": "Spareribs"}]));
    assert_eq!(dish("Winter", 3), json!([{"desiredDish": "Roastbeef"}]));
    assert_eq!(dish("Spring", 4), json!([{"desiredDish": "Dry Aged Gourmet Steak"}]));
    assert_eq!(dish("Spring", 5), json!([{"desiredDish": "Steak"}]));
    assert_eq!(dish("Spring", 8), json!([{"desiredDish": "Steak"}]));
    // `guests > 8` uses the input's camunda:inputVariable.
    assert_eq!(dish("Winter", 9), json!([{"desiredDish": "Stew"}]));
    assert_eq!(dish("Summer", 40), json!([{"desiredDish": "Light Salad and nice Steak"}]));
    assert_eq!(dish("Monsoon", 4), json!([]), "no rule matches: an empty result");
}

#[test]
fn dish_model_with_dmndi_and_camunda_attributes_describes_itself() {
    let model = model("dish-dmn13.dmn");
    let dish = &model.decisions()[0];
    assert_eq!(dish.history_ttl_days, Some(180), "P180D");
    assert_eq!(dish.version_tag.as_deref(), Some("v3"));
    assert_eq!(dish.outputs, ["desiredDish"]);
    assert_eq!(model.decisions()[1].hit_policy.as_deref(), Some("COLLECT"));
}

#[test]
fn integer_typeref_refuses_a_fraction() {
    let model = model("dish-dmn13.dmn");
    let error = model.evaluate("dish", &common::vars(json!({"season": "Fall", "guestCount": 2.5}))).unwrap_err();
    assert_eq!(
        error.to_string(),
        "decision 'dish' failed: input 'guestInput': value 2.5 is not valid for type 'integer'"
    );
}

#[test]
fn beverages_collect_from_the_required_dish() {
    let model = model("dish-dmn13.dmn");
    assert_eq!(
        run(&model, "beverages", json!({"season": "Fall", "guestCount": 4, "guestsWithChildren": false})),
        json!([{"beverages": "Aecht Schlenkerla Rauchbier"}, {"beverages": "Water"}])
    );
    assert_eq!(
        run(&model, "beverages", json!({"season": "Spring", "guestCount": 6, "guestsWithChildren": true})),
        json!([{"beverages": "Pinot Noir"}, {"beverages": "Apple Juice"}, {"beverages": "Water"}])
    );
}

#[test]
fn approve_payment_decides_by_item() {
    let model = model("approve-payment.dmn");
    assert_eq!(run(&model, "approve-payment", json!({"item": "item-xyz"})), json!([{"approved": true}]));
    assert_eq!(run(&model, "approve-payment", json!({"item": "item-abc"})), json!([{"approved": false}]));
    assert_eq!(model.decisions()[0].history_ttl_days, Some(180));
}

#[test]
fn a_missing_variable_is_null() {
    let model = model("approve-payment.dmn");
    // `not("item-xyz")` holds for null, as in feel-scala.
    assert_eq!(run(&model, "approve-payment", json!({})), json!([{"approved": false}]));
}
