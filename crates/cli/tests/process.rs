//! `kairos deploy`, `start`, `tasks`, `complete`, `instances` and `instance` through the real
//! binary, on a SQLite file and (with `KAIROS_TEST_PG_URL`) on PostgreSQL.

mod support;

use serde_json::{Value, json};
use support::{Kairos, assert_one_line_error};

const LEAVE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:activiti="http://activiti.org/bpmn" targetNamespace="t">
  <process id="leaveProcess" name="Leave" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="fill"/>
    <userTask id="fill" name="Fill in" activiti:assignee="${applicant}"/>
    <sequenceFlow id="f2" sourceRef="fill" targetRef="approve"/>
    <userTask id="approve" name="Approve" activiti:candidateGroups="managers" activiti:candidateUsers="gonzo"/>
    <sequenceFlow id="f3" sourceRef="approve" targetRef="gw"/>
    <exclusiveGateway id="gw" default="no"/>
    <sequenceFlow id="yes" sourceRef="gw" targetRef="notify"><conditionExpression>${approved}</conditionExpression></sequenceFlow>
    <sequenceFlow id="no" sourceRef="gw" targetRef="rejected"/>
    <serviceTask id="notify" activiti:class="log"/>
    <sequenceFlow id="f4" sourceRef="notify" targetRef="end"/>
    <endEvent id="end"/>
    <endEvent id="rejected"/>
  </process>
</definitions>"#;

const PARALLEL: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="review" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="fork"/>
    <parallelGateway id="fork"/>
    <sequenceFlow id="f2" sourceRef="fork" targetRef="legal"/>
    <sequenceFlow id="f3" sourceRef="fork" targetRef="finance"/>
    <userTask id="legal"/>
    <userTask id="finance"/>
    <sequenceFlow id="f4" sourceRef="legal" targetRef="join"/>
    <sequenceFlow id="f5" sourceRef="finance" targetRef="join"/>
    <parallelGateway id="join"/>
    <sequenceFlow id="f6" sourceRef="join" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// The tables a process command writes; bad input must leave every count as it was.
const TABLES: [&str; 9] = [
    "ACT_RE_DEPLOYMENT",
    "ACT_RE_PROCDEF",
    "ACT_GE_BYTEARRAY",
    "ACT_RU_EXECUTION",
    "ACT_RU_TASK",
    "ACT_RU_VARIABLE",
    "ACT_HI_PROCINST",
    "ACT_HI_ACTINST",
    "ACT_HI_TASKINST",
];

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
}

/// Row counts of [`TABLES`], read through the library (the CLI has no command for them).
fn counts(k: &Kairos) -> Vec<(&'static str, i64)> {
    block_on(async {
        let store = kairos::open_store(&k.db).await.unwrap();
        let mut out = Vec::new();
        for t in TABLES {
            let rows = store.sql_query(&format!("SELECT COUNT(*) FROM {t}"), &[]).await.unwrap();
            out.push((t, rows[0][0].as_i64().unwrap()));
        }
        out
    })
}

/// A Kairos on a fresh PostgreSQL schema, or `None` without `KAIROS_TEST_PG_URL`.
fn on_postgres() -> Option<Kairos> {
    let db = block_on(kairos_store_postgres::test_support::fresh_schema_url())?;
    Some(Kairos { dir: tempfile::tempdir().unwrap(), db })
}

fn write(k: &Kairos, name: &str, text: &str) -> String {
    let path = k.path(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn str_of(v: &Value) -> String {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}")).to_string()
}

/// deploy → start → tasks → complete → complete → the instance has ended, with its history.
fn a_leave_request_runs_to_its_end(k: &Kairos) {
    let file = write(k, "leave.bpmn", LEAVE);
    let d = k.json(&["deploy", &file]);
    let dep = &d["deployments"][0];
    assert_eq!((dep["created"].as_bool(), dep["name"].as_str()), (Some(true), Some("leave.bpmn")), "{d}");
    let def = &dep["processDefinitions"][0];
    assert_eq!((def["key"].as_str(), def["version"].as_i64()), (Some("leaveProcess"), Some(1)), "{d}");

    let inst = k.json(&[
        "start",
        "leaveProcess",
        "--business-key",
        "LEAVE-1",
        "--var",
        "applicant=kermit",
        "--vars-json",
        r#"{"days": 3, "applicant": "piggy"}"#,
        "--user",
        "kermit",
    ]);
    let pi = str_of(&inst["id"]);
    assert_eq!((inst["ended"].as_bool(), inst["businessKey"].as_str()), (Some(false), Some("LEAVE-1")), "{inst}");

    // --var wins over --vars-json: the assignee expression saw "kermit".
    let tasks = k.json(&["tasks", "--instance", &pi]);
    assert_eq!(tasks["total"], 1, "{tasks}");
    let fill = &tasks["data"][0];
    assert_eq!((fill["taskDefinitionKey"].as_str(), fill["assignee"].as_str()), (Some("fill"), Some("kermit")));
    assert_eq!(k.json(&["tasks", "--assignee", "kermit"])["total"], 1);
    assert_eq!(k.json(&["tasks", "--assignee", "piggy"])["total"], 0);
    let table = k.ok(&["tasks"]);
    assert!(table.starts_with("ID") && table.contains("Fill in") && table.contains(&pi), "{table}");

    let done = k.json(&["complete", &str_of(&fill["id"])]);
    assert_eq!(done["processInstance"]["ended"], false, "{done}");
    let approve = k.json(&["tasks", "--candidate-group", "managers"]);
    assert_eq!(approve["data"][0]["taskDefinitionKey"], "approve", "{approve}");
    assert_eq!(k.json(&["tasks", "--candidate-user", "gonzo"])["total"], 1);
    assert_eq!(k.json(&["tasks", "--candidate-group", "clerks"])["total"], 0);
    let line = k.ok(&["complete", &str_of(&approve["data"][0]["id"]), "--var", "approved=true"]);
    assert!(line.contains("has ended") && line.contains(&pi), "{line}");

    assert_eq!(k.json(&["instances"])["total"], 0, "running instances only by default");
    let all = k.json(&["instances", "--all", "--key", "leaveProcess", "--business-key", "LEAVE-1"]);
    assert_eq!((all["total"].as_u64(), all["data"][0]["ended"].as_bool()), (Some(1), Some(true)), "{all}");
    assert!(k.ok(&["instances", "--all"]).contains("ended"));

    let shown = k.json(&["instance", &pi]);
    assert_eq!(shown["executions"], json!([]), "an ended instance has no executions");
    assert_eq!(shown["variables"], Value::Null);
    let trail: Vec<&str> =
        shown["activities"].as_array().unwrap().iter().map(|a| a["activityId"].as_str().unwrap()).collect();
    assert_eq!(trail, ["start", "fill", "approve", "gw", "notify", "end"], "{shown}");
    let text = k.ok(&["instance", &pi]);
    assert!(text.contains("none: the instance has ended") && text.contains("notify"), "{text}");
}

#[test]
fn a_process_runs_from_deploy_to_end_on_sqlite() {
    a_leave_request_runs_to_its_end(&Kairos::new());
}

#[test]
fn a_process_runs_from_deploy_to_end_on_postgres() {
    let Some(k) = on_postgres() else { return };
    a_leave_request_runs_to_its_end(&k);
}

#[test]
fn an_unchanged_redeploy_creates_no_version() {
    let k = Kairos::new();
    let file = write(&k, "leave.bpmn", LEAVE);
    let first = k.json(&["deploy", &file]);
    let again = k.ok(&["deploy", &file]);
    assert!(again.contains("no new version was created"), "{again}");
    assert!(again.contains("unchanged") && again.contains("leaveProcess"), "{again}");
    let json = k.json(&["deploy", &file]);
    assert_eq!(json["deployments"][0]["created"], false);
    assert_eq!(json["deployments"][0]["processDefinitions"][0]["created"], false);
    assert_eq!(json["deployments"][0]["id"], first["deployments"][0]["id"]);
    assert_eq!(json["deployments"][0]["processDefinitions"][0]["version"], 1);

    let changed = write(&k, "leave.bpmn", &LEAVE.replace("name=\"Leave\"", "name=\"Leave v2\""));
    let parallel = write(&k, "review.bpmn", PARALLEL);
    let text = k.ok(&["deploy", &changed, &parallel]);
    assert!(text.contains("deployed") && !text.contains("no new version"), "{text}");
    let v2 = k.json(&["deploy", &changed, &parallel]);
    let versions: Vec<(bool, i64)> = v2["deployments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["created"].as_bool().unwrap(), d["processDefinitions"][0]["version"].as_i64().unwrap()))
        .collect();
    assert_eq!(versions, [(false, 2), (false, 1)], "{v2}");
}

#[test]
fn the_instance_shows_its_execution_tree() {
    let k = Kairos::new();
    k.ok(&["deploy", &write(&k, "review.bpmn", PARALLEL)]);
    let pi = str_of(&k.json(&["start", "review"])["id"]);
    let shown = k.json(&["instance", &pi]);
    let execs = shown["executions"].as_array().unwrap();
    assert_eq!(execs.len(), 3, "the root and two concurrent children: {shown}");
    let root = execs.iter().find(|e| e["id"] == pi.as_str()).unwrap();
    assert_eq!((root["isScope"].as_bool(), root["parentId"].is_null()), (Some(true), true), "{root}");
    let mut children: Vec<(&str, bool, bool)> = execs
        .iter()
        .filter(|e| e["parentId"] == pi.as_str())
        .map(|e| {
            (e["activityId"].as_str().unwrap(), e["isConcurrent"].as_bool().unwrap(), e["isActive"].as_bool().unwrap())
        })
        .collect();
    children.sort();
    assert_eq!(children, [("finance", true, true), ("legal", true, true)], "{shown}");
    assert_eq!(shown["instance"]["processDefinitionKey"], "review");
    assert_eq!(shown["variables"], json!({}));

    let text = k.ok(&["instance", &pi]);
    for needle in ["IS_ACTIVE_", "IS_CONCURRENT_", "IS_SCOPE_", "IS_EVENT_SCOPE_", "execution tree", "legal"] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    // The children are indented under the root.
    let child_line = text.lines().find(|l| l.contains("legal") && l.contains("  1")).unwrap();
    assert!(child_line.starts_with("    "), "{text}");
}

#[test]
fn an_instance_moves_to_a_new_version() {
    let k = Kairos::new();
    k.ok(&["deploy", &write(&k, "leave.bpmn", LEAVE)]);
    let pi = str_of(&k.json(&["start", "leaveProcess", "--var", "applicant=kermit"])["id"]);
    let v2 = LEAVE.replace("\"fill\"", "\"fillIn\"");
    let v2_id =
        str_of(&k.json(&["deploy", &write(&k, "leave2.bpmn", &v2)])["deployments"][0]["processDefinitions"][0]["id"]);
    let refused = assert_one_line_error(&k.run(&["migrate-instance", &pi]), 2, "no mapping");
    assert!(refused.contains("activity 'fill' is active"), "{refused}");
    let moved = k.json(&["migrate-instance", &pi, "--map", "fill=fillIn"]);
    assert_eq!(moved["processDefinitionId"], v2_id.as_str());
    assert_eq!(k.json(&["tasks", "--instance", &pi])["data"][0]["taskDefinitionKey"], "fillIn");
    let text = k.ok(&["migrate-instance", &pi]);
    assert!(text.contains(&format!("now runs on {v2_id}")), "{text}");
    // Every instance of a version at once: both of version 2 move to version 3.
    k.ok(&["start", "leaveProcess", "--var", "applicant=gonzo"]);
    let v3 = v2.replace("name=\"Leave\"", "name=\"Leave v3\"");
    k.ok(&["deploy", &write(&k, "leave3.bpmn", &v3)]);
    let batch = k.json(&["migrate-instance", "--all-of", &v2_id]);
    assert_eq!((batch["migrated"].as_u64(), batch["failed"].as_u64()), (Some(2), Some(0)), "{batch}");
    let again = k.ok(&["migrate-instance", "--all-of", &v2_id]);
    assert!(again.contains("0 moved, 0 not moved"), "{again}");
}

#[test]
fn bad_input_is_one_line_and_writes_nothing() {
    let k = Kairos::new();
    let good = write(&k, "leave.bpmn", LEAVE);
    k.ok(&["deploy", &good]);
    let pi = str_of(&k.json(&["start", "leaveProcess", "--var", "applicant=kermit"])["id"]);
    let task = str_of(&k.json(&["tasks", "--instance", &pi])["data"][0]["id"]);
    let before = counts(&k);

    let broken = write(&k, "broken.bpmn", &PARALLEL.replace("targetRef=\"legal\"/>", "targetRef=\"nowhere\"/>"));
    let not_xml = write(&k, "not-xml.bpmn", "<definitions>\n  <process id=\"p\">\n</definitions>");
    let unknown_handler =
        write(&k, "handler.bpmn", &LEAVE.replace("activiti:class=\"log\"", "activiti:class=\"nope\""));
    let new_version = write(&k, "leave2.bpmn", &LEAVE.replace("name=\"Leave\"", "name=\"Leave v2\""));
    let missing = k.path("missing.bpmn").display().to_string();
    let array_file = write(&k, "vars.json", "[1, 2]");
    let array_arg = format!("@{array_file}");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["deploy", &broken], "line 7"),
        (vec!["deploy", &broken], "nowhere"),
        (vec!["deploy", &not_xml], "line "),
        (vec!["deploy", &unknown_handler], "handler 'nope' (class) is not registered"),
        (vec!["deploy", &missing], "cannot read"),
        (vec!["deploy", &missing], "missing.bpmn"),
        // The good file first: it must not be deployed when the second is refused.
        (vec!["deploy", &new_version, &broken], "broken.bpmn"),
        (vec!["deploy", &new_version, &missing], "missing.bpmn"),
        (vec!["deploy"], "FILE"),
        (vec!["start", "noSuchProcess"], "noSuchProcess"),
        (vec!["start", "leaveProcess", "--var", "applicant"], "NAME=VALUE"),
        (vec!["start", "leaveProcess", "--var", "=kermit"], "variable name"),
        (vec!["start", "leaveProcess", "--var", "a=1", "--var", "a=2"], "given twice"),
        (vec!["start", "leaveProcess", "--vars-json", "[1]"], "expected a JSON object"),
        (vec!["start", "leaveProcess", "--vars-json", "\"text\""], "a string"),
        (vec!["start", "leaveProcess", "--vars-json", "{bad"], "invalid --vars-json: key must be a string"),
        (vec!["start", "leaveProcess", "--vars-json", &array_arg], "an array"),
        (vec!["start", "leaveProcess", "--vars-json", "@/nonexistent/v.json"], "cannot read"),
        (vec!["complete", "no-such-task"], "no-such-task"),
        (vec!["complete", &task, "--var", "oops"], "NAME=VALUE"),
        (vec!["complete", &task, "--vars-json", "42"], "a number"),
        (vec!["instance", "no-such-instance"], "no-such-instance"),
        (vec!["instances", "--size", "0"], "--size"),
        (vec!["migrate-instance", &pi, "--map", "fill"], "FROM=TO"),
        (vec!["migrate-instance", &pi, "--to-version", "7"], "no version 7"),
        (vec!["migrate-instance", &pi, "--map", "nope=fill"], "fromActivityId 'nope'"),
        (vec!["migrate-instance", "no-such-instance"], "no-such-instance"),
    ];
    for (args, expected) in cases {
        let line = assert_one_line_error(&k.run(&args), 2, &format!("{args:?}"));
        assert!(line.contains(expected), "kairos {args:?}: {line}");
    }
    assert_eq!(counts(&k), before, "bad input must not change the process tables");
    assert_eq!(k.json(&["tasks", "--instance", &pi])["data"][0]["id"], task.as_str(), "the task is still open");
    let defs = k.json(&["deploy", &good]);
    assert_eq!(defs["deployments"][0]["processDefinitions"][0]["version"], 1, "no second version: {defs}");
}

/// `kairos start --bind TYPE:ID` twice makes one instance (SPEC C3); `kairos bindings` shows it.
#[test]
fn a_bound_start_run_twice_makes_one_instance() {
    let k = Kairos::new();
    let file = write(&k, "leave.bpmn", LEAVE);
    k.json(&["deploy", &file]);
    let args = ["start", "leaveProcess", "--bind", "LEAVE:42", "--var", "applicant=kermit"];
    let first = k.json(&args);
    let again = k.json(&args);
    assert_eq!(first["id"], again["id"], "the lifecycle's instance is the answer");
    assert_eq!(str_of(&first["businessKey"]), "42");
    let rows = k.json(&["bindings", "LEAVE:42"]);
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{rows}");
    assert_eq!((rows[0]["lifecycleNo"].as_i64(), rows[0]["bindingStatus"].as_str()), (Some(1), Some("ACTIVE")));
    let table = k.ok(&["bindings", "--instance", &str_of(&first["id"])]);
    assert!(table.contains("LEAVE") && table.contains("ACTIVE"), "{table}");
    let out = k.run(&["start", "leaveProcess", "--bind", "no-colon"]);
    let line = assert_one_line_error(&out, 2, "a --bind without a colon");
    assert!(line.contains("TYPE:ID"), "{line}");
}

#[test]
fn a_tenant_deploys_and_starts_its_own_versions() {
    let k = Kairos::new();
    let file = write(&k, "leave.bpmn", LEAVE);
    k.json(&["deploy", &file]);
    k.json(&["deploy", &write(&k, "leave2.bpmn", &LEAVE.replace("name=\"Leave\"", "name=\"Leave v2\""))]);
    // acme's first deployment of the key is acme's version 1, beside version 2 of no tenant.
    let acme = k.json(&["deploy", &file, "--tenant", "acme"]);
    let def = &acme["deployments"][0]["processDefinitions"][0];
    assert_eq!((def["version"].as_i64(), def["tenantId"].as_str()), (Some(1), Some("acme")), "{acme}");
    let started = k.json(&["start", "leaveProcess", "--tenant", "acme", "--var", "applicant=ann"]);
    assert_eq!((started["tenantId"].as_str(), &started["processDefinitionId"]), (Some("acme"), &def["id"]));
    let plain = k.json(&["start", "leaveProcess", "--var", "applicant=ann"]);
    assert_eq!(plain["tenantId"], "", "no tenant: the latest of no tenant");
    assert_ne!(plain["processDefinitionId"], def["id"]);
    let out = k.run(&["start", "leaveProcess", "--tenant", "globex"]);
    assert!(assert_one_line_error(&out, 2, "a key no tenant globex deployed").contains("globex"));
}
