//! Flowable's DMN REST (`/dmn-api`) over real HTTP, on SQLite and on PostgreSQL: a `.dmn` file
//! deployed through `/repository/deployments`, its decisions listed and read, and executed by
//! key with Flowable's typed variables — every matched rule, a single result, the version of a
//! parent deployment — with bad requests named and answered 4xx.

mod processes_support;

use processes_support::{Backend, as_map, server};
use serde_json::json;

const INVOICE: &str = include_str!("../../kairos/tests/decisions/invoice.dmn");

async fn deploy_dmn(srv: &processes_support::Server, xml: &str) -> String {
    let r =
        srv.request("POST", "/repository/deployments?name=invoice.dmn", Some("application/xml"), xml.as_bytes()).await;
    r.ok(201)["id"].as_str().expect("a deployment id").to_string()
}

async fn decisions_are_listed_read_and_executed_by_key(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    let first = deploy_dmn(&srv, INVOICE).await;

    let list = srv.get("/dmn-api/dmn-repository/decisions?sort=key").await;
    let list = list.ok(200);
    let keys: Vec<&str> = list["data"].as_array().unwrap().iter().map(|d| d["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["invoice-assign-approver", "invoiceClassification"]);
    assert_eq!(list["total"], json!(2));
    assert_eq!(list["sort"], json!("key"));
    let one = &list["data"][1];
    assert_eq!(one["deploymentId"], json!(first));
    assert_eq!(one["decisionType"], json!("decision_table"));
    assert_eq!(one["version"], json!(1));
    let id = one["id"].as_str().unwrap().to_string();
    assert_eq!(
        srv.get(&format!("/dmn-api/dmn-repository/decisions/{id}")).await.ok(200)["key"],
        json!("invoiceClassification")
    );
    let xml = srv.get(&format!("/dmn-api/dmn-repository/decisions/{id}/resourcedata")).await;
    assert_eq!(xml.status, 200);
    assert!(xml.text.contains("invoiceClassification"), "{}", xml.text);
    let filtered = srv.get("/dmn-api/dmn-repository/decisions?key=invoiceClassification&latest=true").await;
    assert_eq!(filtered.ok(200)["total"], json!(1));

    // One rule matches: a single list of outputs, typed as Flowable types them.
    let input = json!([
        {"name": "amount", "type": "double", "value": 900.5},
        {"name": "invoiceCategory", "type": "string", "value": "Misc"}
    ]);
    let r = srv
        .post(
            "/dmn-api/dmn-rule/execute-decision",
            json!({"decisionKey": "invoiceClassification", "inputVariables": input}),
        )
        .await;
    let body = r.ok(201);
    assert_eq!(
        body["resultVariables"],
        json!([[{"name": "invoiceClassification", "type": "string", "value": "budget"}]])
    );
    assert_eq!(body["url"], json!(format!("dmn-api/dmn-repository/decisions/{id}")));
    let r = srv
        .post(
            "/dmn-api/dmn-rule/execute/single-result",
            json!({"decisionKey": "invoiceClassification", "inputVariables": input}),
        )
        .await;
    assert_eq!(as_map(&r.ok(201)["resultVariables"]), json!({"invoiceClassification": "budget"}));

    // A COLLECT table: every matched rule, in order; a single result refuses two.
    let input = json!([{"name": "invoiceClassification", "type": "string", "value": "day-to-day expense"}]);
    let r = srv
        .post("/dmn-api/dmn-rule/execute", json!({"decisionKey": "invoice-assign-approver", "inputVariables": input}))
        .await;
    let groups: Vec<&str> = r.ok(201)["resultVariables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rule| rule[0]["value"].as_str().unwrap())
        .collect();
    assert_eq!(groups, ["accounting", "sales"]);
    let r = srv
        .post(
            "/dmn-api/dmn-rule/execute-decision/single-result",
            json!({"decisionKey": "invoice-assign-approver", "inputVariables": input}),
        )
        .await;
    assert!(r.refused(400, None).contains("matched 2 rules"), "{}", r.text);

    // A second version; the parent deployment's version is still the one it deployed.
    let second = deploy_dmn(
        &srv,
        &INVOICE.replace(
            r#"<outputEntry id="LiteralExpression_1u4in4u"><text>"budget"</text>"#,
            r#"<outputEntry id="LiteralExpression_1u4in4u"><text>"budget-2"</text>"#,
        ),
    )
    .await;
    assert_ne!(first, second);
    let input = json!([{"name": "amount", "value": 500}, {"name": "invoiceCategory", "value": "Misc"}]);
    let latest = srv
        .post(
            "/dmn-api/dmn-rule/execute-decision",
            json!({"decisionKey": "invoiceClassification", "inputVariables": input}),
        )
        .await;
    assert_eq!(latest.ok(201)["resultVariables"][0][0]["value"], json!("budget-2"));
    let pinned = srv
        .post(
            "/dmn-api/dmn-rule/execute-decision",
            json!({"decisionKey": "invoiceClassification", "parentDeploymentId": first, "inputVariables": input}),
        )
        .await;
    assert_eq!(pinned.ok(201)["resultVariables"][0][0]["value"], json!("budget"));
    // No rule matches: no results.
    let none = srv
        .post("/dmn-api/dmn-rule/execute-decision", json!({"decisionKey": "invoiceClassification", "inputVariables": [{"name": "amount", "value": 5}, {"name": "invoiceCategory", "value": "Food"}]}))
        .await;
    assert_eq!(none.ok(201)["resultVariables"], json!([]));
}

async fn bad_decision_requests_are_named_and_change_nothing(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    deploy_dmn(&srv, INVOICE).await;
    let before = srv.written().await;
    let cases = [
        (json!({"inputVariables": []}), 400, Some("decisionKey")),
        // Deployed with no tenant: tenant acme has no such decision.
        (json!({"decisionKey": "invoiceClassification", "tenantId": "acme"}), 404, None),
        (
            json!({"decisionKey": "invoiceClassification", "inputVariables": [{"name": "amount", "type": "integer", "value": "x"}]}),
            400,
            Some("inputVariables"),
        ),
        (json!({"decisionKey": "invoiceClassification", "inputVariables": 7}), 400, Some("inputVariables")),
        (json!({"decisionKey": "invoiceClassification", "decisionServiceKey": "svc"}), 400, Some("decisionServiceKey")),
        (json!({"decisionKey": "invoiceClassification", "surprise": true}), 400, None),
        (json!({"decisionKey": "nope"}), 404, None),
    ];
    for (body, status, field) in cases {
        let r = srv.post("/dmn-api/dmn-rule/execute-decision", body.clone()).await;
        let msg = r.refused(status, field).to_string();
        assert!(!msg.is_empty(), "{body}: {}", r.text);
    }
    let r = srv.post("/dmn-api/dmn-rule/execute-decision-service", json!({"decisionServiceKey": "svc"})).await;
    r.refused(400, Some("decisionServiceKey"));
    srv.get("/dmn-api/dmn-repository/decisions/nope").await.refused(404, None);
    srv.get("/dmn-api/dmn-repository/decisions?sort=bogus").await.refused(400, Some("sort"));
    srv.get("/dmn-api/dmn-repository/decisions?latest=maybe").await.refused(400, Some("latest"));
    assert_eq!(srv.written().await, before, "nothing was written");
}

on_both_backends!(decisions_are_listed_read_and_executed_by_key, bad_decision_requests_are_named_and_change_nothing,);
