//! Flowable's repository REST over real HTTP, on SQLite and on PostgreSQL: deployments listed,
//! read and deleted (with and without cascade, start events of the version before restored,
//! a timer start firing while its deployment goes), their resources, definitions in Flowable's
//! shape with its filters, suspension with the running instances, and bad input named.

mod processes_support;

use processes_support::{Backend, Server, one_task, server};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A process `key` started by a timer (every `cycle`), by message `go-KEY` or by key, waiting at a
/// user task with a boundary timer; `label` makes versions differ.
fn started_by_events(key: &str, cycle: &str, label: &str) -> String {
    format!(
        r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="urn:events">
  <message id="m" name="go-{key}"/>
  <process id="{key}" name="{label}" isExecutable="true">
    <startEvent id="tick"><timerEventDefinition><timeCycle>{cycle}</timeCycle></timerEventDefinition></startEvent>
    <sequenceFlow id="f0" sourceRef="tick" targetRef="task"/>
    <startEvent id="plain"/>
    <sequenceFlow id="fp" sourceRef="plain" targetRef="task"/>
    <startEvent id="msg"><messageEventDefinition messageRef="m"/></startEvent>
    <sequenceFlow id="f1" sourceRef="msg" targetRef="task"/>
    <userTask id="task" name="Task"/>
    <boundaryEvent id="late" attachedToRef="task"><timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition></boundaryEvent>
    <sequenceFlow id="f3" sourceRef="late" targetRef="end"/>
    <sequenceFlow id="f2" sourceRef="task" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#
    )
}

/// `SELECT COUNT(*) FROM table WHERE condition`.
async fn count(srv: &Server, table: &str, condition: &str) -> i64 {
    srv.rows(&format!("{table} WHERE {condition}")).await
}

/// `'a', 'b'` for an `IN (…)` of ids kairos made (UUIDs, keys and digits only).
fn quoted(ids: &[String]) -> String {
    ids.iter().map(|i| format!("'{i}'")).collect::<Vec<_>>().join(", ")
}

/// Rows anywhere that name one of `definitions` or one of `instances`: what a deleted
/// deployment must not leave behind.
async fn leftovers(srv: &Server, definitions: &[String], instances: &[String]) -> Vec<(String, i64)> {
    let (d, i) = (quoted(definitions), quoted(if instances.is_empty() { &[] } else { instances }));
    let mut checks = vec![
        ("ACT_RE_PROCDEF".to_string(), format!("ID_ IN ({d})")),
        ("ACT_RU_EXECUTION".to_string(), format!("PROC_DEF_ID_ IN ({d})")),
        ("ACT_RU_TASK".to_string(), format!("PROC_DEF_ID_ IN ({d})")),
        ("ACT_RU_EVENT_SUBSCR".to_string(), format!("PROC_DEF_ID_ IN ({d})")),
        ("ACT_RU_IDENTITYLINK".to_string(), format!("PROC_DEF_ID_ IN ({d})")),
        ("ACT_HI_PROCINST".to_string(), format!("PROC_DEF_ID_ IN ({d})")),
        ("ACT_HI_ACTINST".to_string(), format!("PROC_DEF_ID_ IN ({d})")),
        ("ACT_HI_TASKINST".to_string(), format!("PROC_DEF_ID_ IN ({d})")),
    ];
    for table in ["ACT_RU_JOB", "ACT_RU_SUSPENDED_JOB", "ACT_RU_DEADLETTER_JOB"] {
        checks.push((table.to_string(), format!("PROC_DEF_ID_ IN ({d})")));
    }
    if !instances.is_empty() {
        for (table, column) in [
            ("ACT_RU_VARIABLE", "PROC_INST_ID_"),
            ("ACT_HI_VARINST", "PROC_INST_ID_"),
            ("kairos_termination", "process_instance_id"),
            ("ACT_RU_JOB", "PROCESS_INSTANCE_ID_"),
            ("ACT_RU_SUSPENDED_JOB", "PROCESS_INSTANCE_ID_"),
        ] {
            checks.push((table.to_string(), format!("{column} IN ({i})")));
        }
    }
    let mut out = Vec::new();
    for (table, condition) in checks {
        let n = count(srv, &table, &condition).await;
        if n > 0 {
            out.push((format!("{table} WHERE {condition}"), n));
        }
    }
    out
}

fn ids_of(list: &Value) -> Vec<String> {
    list["data"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {list}"))
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect()
}

async fn deployments_are_listed_read_and_their_resources_served(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    let a = srv.deployed("alpha-deployment", &one_task("alpha")).await;
    let id = a["id"].as_str().unwrap().to_string();
    // Flowable's DeploymentResponse, kairos's processDefinitions in Flowable's shape.
    assert_eq!(a["name"], "alpha-deployment");
    assert_eq!(a["parentDeploymentId"], id.as_str());
    assert_eq!(a["url"], format!("/repository/deployments/{id}"));
    assert_eq!((&a["tenantId"], &a["category"]), (&json!(""), &Value::Null), "{a}");
    let time = a["deploymentTime"].as_str().unwrap();
    assert!(time.len() == 24 && time.ends_with('Z') && time.as_bytes()[19] == b'.', "Flowable's date: {time}");
    let def = &a["processDefinitions"][0];
    let def_id = def["id"].as_str().unwrap();
    assert_eq!(def["deploymentUrl"], format!("/repository/deployments/{id}"));
    assert_eq!(def["resource"], format!("/repository/deployments/{id}/resources/alpha-deployment.bpmn20.xml"));
    assert_eq!((&def["category"], &def["tenantId"], &def["diagramResource"]), (&json!("t"), &json!(""), &Value::Null));
    assert_eq!((&def["graphicalNotationDefined"], &def["startFormDefined"]), (&json!(false), &json!(false)));

    // The same document again: the same deployment, as it was made.
    let again = srv.deployed("alpha-deployment", &one_task("alpha")).await;
    assert_eq!((&again["id"], &again["deploymentTime"]), (&a["id"], &a["deploymentTime"]), "{again}");

    // A resource name with a slash, sent as Flowable's clients send it.
    let beta = one_task("beta");
    let r = srv
        .request(
            "POST",
            "/repository/deployments?deploymentName=diagrams/beta.bpmn20.xml&deploymentKey=b-key&tenantId=",
            Some("application/xml"),
            beta.as_bytes(),
        )
        .await;
    let b = r.ok(201).clone();
    let bid = b["id"].as_str().unwrap().to_string();
    assert_eq!(r.header("location"), Some(format!("/repository/deployments/{bid}").as_str()));
    let c = srv.deployed("gamma", &one_task("gamma")).await;

    let all = srv.get("/repository/deployments").await.ok(200).clone();
    assert_eq!(
        (all["total"].as_u64(), all["sort"].as_str(), all["order"].as_str()),
        (Some(3), Some("id"), Some("asc"))
    );
    let mut want = vec![id.clone(), bid.clone(), c["id"].as_str().unwrap().to_string()];
    want.sort();
    assert_eq!(ids_of(&all), want);
    let by = |q: &str| {
        let (srv, q) = (&srv, q.to_string());
        async move { ids_of(srv.get(&format!("/repository/deployments?{q}")).await.ok(200)) }
    };
    assert_eq!(by("name=gamma").await, [c["id"].as_str().unwrap()]);
    assert_eq!(by("nameLike=%25deployment").await, [id.as_str()]);
    assert_eq!(by("nameLike=Alpha%25").await.len(), 0, "LIKE is case-sensitive on both stores");
    assert_eq!(by("nameLike=diagrams/%25").await, [bid.as_str()]);
    assert_eq!(by("category=x").await.len(), 0);
    assert_eq!(by("categoryNotEquals=x").await.len(), 3);
    assert_eq!(by(&format!("parentDeploymentId={bid}")).await, [bid.as_str()]);
    assert_eq!(by("tenantId=").await.len(), 3);
    assert_eq!(by("tenantId=acme").await.len(), 0);
    assert_eq!(by("tenantIdLike=%25").await.len(), 3);
    assert_eq!(by("withoutTenantId=true").await.len(), 3);
    assert_eq!(
        by("sort=name&order=desc").await,
        [c["id"].as_str().unwrap(), bid.as_str(), id.as_str()],
        "gamma, diagrams/…, alpha-…"
    );
    let by_time = srv.get("/repository/deployments?sort=deployTime&start=1&size=1").await.ok(200).clone();
    assert_eq!(
        (by_time["sort"].as_str(), by_time["total"].as_u64(), by_time["size"].as_u64()),
        (Some("deployTime"), Some(3), Some(1))
    );
    assert_eq!(ids_of(&by_time), [bid.as_str()]);

    // One deployment; its resources.
    let one = srv.get(&format!("/repository/deployments/{bid}")).await.ok(200).clone();
    assert_eq!((one["name"].as_str(), one["id"].as_str()), (Some("diagrams/beta.bpmn20.xml"), Some(bid.as_str())));
    let res = srv.get(&format!("/repository/deployments/{bid}/resources")).await.ok(200).clone();
    let want = json!([{
        "id": "diagrams/beta.bpmn20.xml",
        "url": format!("/repository/deployments/{bid}/resources/diagrams%2Fbeta.bpmn20.xml"),
        "contentUrl": format!("/repository/deployments/{bid}/resourcedata/diagrams%2Fbeta.bpmn20.xml"),
        "mediaType": "text/xml",
        "type": "processDefinition",
    }]);
    assert_eq!(res, want);
    let url = res[0]["url"].as_str().unwrap();
    assert_eq!(srv.get(url).await.ok(200), &want[0]);
    let data = srv.get(res[0]["contentUrl"].as_str().unwrap()).await;
    assert_eq!((data.status, data.content_type.as_str(), data.text.as_str()), (200, "text/xml", beta.as_str()));
    let def = srv.get(&format!("/repository/process-definitions/{def_id}")).await.ok(200).clone();
    assert_eq!(srv.get(def["resource"].as_str().unwrap()).await.ok(200)["type"], "processDefinition");

    // Not there, and bad input naming the parameter.
    srv.get("/repository/deployments/nope").await.refused(404, None);
    srv.get("/repository/deployments/nope/resources").await.refused(404, None);
    let m = srv.get(&format!("/repository/deployments/{bid}/resources/other.xml")).await.refused(404, None).to_string();
    assert!(m.contains("other.xml"), "{m}");
    srv.get(&format!("/repository/deployments/{bid}/resourcedata/other.xml")).await.refused(404, None);
    srv.get("/repository/deployments?sort=deploymentTime").await.refused(400, Some("sort"));
    srv.get("/repository/deployments?order=up").await.refused(400, Some("order"));
    srv.get("/repository/deployments?size=1001").await.refused(400, Some("size"));
    srv.get("/repository/deployments?start=-1").await.refused(400, Some("start"));
    srv.get("/repository/deployments?withoutTenantId=yes").await.refused(400, Some("withoutTenantId"));
    let m = srv.get("/repository/deployments?nameLik=a").await.refused(400, None).to_string();
    assert!(m.contains("nameLik"), "names the unknown parameter: {m}");
    // A deployment for a tenant: its definitions are the tenant's, its versions its own.
    let acme =
        srv.request("POST", "/repository/deployments?tenantId=acme", Some("application/xml"), beta.as_bytes()).await;
    let acme = acme.ok(201);
    assert_eq!((&acme["tenantId"], &acme["processDefinitions"][0]["version"]), (&json!("acme"), &json!(1)), "{acme}");
    let listed = srv.get("/repository/deployments?tenantId=acme").await.ok(200).clone();
    assert_eq!(ids_of(&listed), [acme["id"].as_str().unwrap()]);
    let none = srv.get("/repository/deployments?withoutTenantId=true").await.ok(200).clone();
    assert_eq!(ids_of(&none).len(), 3, "the acme deployment has a tenant: {none}");
    srv.request("POST", "/repository/deployments?name=a&deploymentName=b", Some("application/xml"), beta.as_bytes())
        .await
        .refused(400, Some("deploymentName"));
}

async fn definitions_answer_in_flowable_shape_with_its_filters(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    let first = srv.deployed("a1", &one_task("alpha")).await;
    let second = srv
        .deployed(
            "a2",
            &one_task("alpha")
                .replace("<userTask id=\"task\"", "<userTask id=\"task2\"")
                .replace("targetRef=\"task\"", "targetRef=\"task2\"")
                .replace("sourceRef=\"task\"", "sourceRef=\"task2\""),
        )
        .await;
    let events = srv.deployed("ev", &started_by_events("ticker", "R/PT1H", "Ticker")).await;
    let (a1, a2) = (
        first["processDefinitions"][0]["id"].as_str().unwrap(),
        second["processDefinitions"][0]["id"].as_str().unwrap(),
    );
    let ticker = events["processDefinitions"][0]["id"].as_str().unwrap();
    assert_eq!(second["processDefinitions"][0]["version"], 2);
    let by = |q: String| {
        let srv = &srv;
        async move {
            let list = srv.get(&format!("/repository/process-definitions?{q}")).await.ok(200).clone();
            let mut ids = ids_of(&list);
            ids.sort();
            ids
        }
    };
    let sorted = |mut v: Vec<&str>| {
        v.sort();
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    assert_eq!(by("key=alpha".into()).await, sorted(vec![a1, a2]));
    assert_eq!(by("keyLike=al%25".into()).await, sorted(vec![a1, a2]));
    assert_eq!(by("keyLike=%25ck%25".into()).await, sorted(vec![ticker]));
    assert_eq!(by("name=Ticker".into()).await, sorted(vec![ticker]));
    assert_eq!(by("nameLike=T_cker".into()).await, sorted(vec![ticker]));
    assert_eq!(by("nameLike=t%25".into()).await.len(), 0);
    assert_eq!(by("nameLikeIgnoreCase=t%25".into()).await, sorted(vec![ticker]));
    assert_eq!(by("category=urn:events".into()).await, sorted(vec![ticker]));
    assert_eq!(by("categoryLike=urn%25".into()).await, sorted(vec![ticker]));
    assert_eq!(by("categoryNotEquals=urn:events".into()).await, sorted(vec![a1, a2]));
    assert_eq!(by("resourceName=a2.bpmn20.xml".into()).await, sorted(vec![a2]));
    assert_eq!(by("resourceNameLike=a%25".into()).await, sorted(vec![a1, a2]));
    let dep = first["id"].as_str().unwrap();
    assert_eq!(by(format!("deploymentId={dep}")).await, sorted(vec![a1]));
    assert_eq!(by("version=2".into()).await, sorted(vec![a2]));
    assert_eq!(by("key=alpha&latest=true".into()).await, sorted(vec![a2]));
    assert_eq!(by("latest=true".into()).await, sorted(vec![a2, ticker]));
    assert_eq!(by("tenantId=".into()).await.len(), 3);
    assert_eq!(by("tenantId=acme".into()).await.len(), 0);
    assert_eq!(by("withoutTenantId=true".into()).await.len(), 3);
    srv.put(&format!("/repository/process-definitions/{a1}"), json!({"action": "suspend"})).await.ok(200);
    assert_eq!(by("suspended=true".into()).await, sorted(vec![a1]));
    assert_eq!(by("suspended=false".into()).await, sorted(vec![a2, ticker]));
    let list = srv.get("/repository/process-definitions?sort=version&order=desc&size=1").await.ok(200).clone();
    assert_eq!(
        (list["sort"].as_str(), list["order"].as_str(), list["total"].as_u64()),
        (Some("version"), Some("desc"), Some(3))
    );
    assert_eq!(ids_of(&list), [a2]);

    // One definition: Flowable's fields beside kairos's.
    let d = srv.get(&format!("/repository/process-definitions/{ticker}")).await.ok(200).clone();
    let keys: BTreeSet<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
    for k in [
        "id",
        "url",
        "key",
        "version",
        "name",
        "description",
        "tenantId",
        "category",
        "deploymentId",
        "deploymentUrl",
        "resource",
        "diagramResource",
        "graphicalNotationDefined",
        "suspended",
        "startFormDefined",
        "resourceName",
    ] {
        assert!(keys.contains(k), "{k} in {d}");
    }
    assert_eq!(d["url"], format!("/repository/process-definitions/{}", ticker.replace(':', "%3A")));

    // Bad values name their parameter.
    for (q, field) in [
        ("version=0", "version"),
        ("version=two", "version"),
        ("latest=yes", "latest"),
        ("suspended=1", "suspended"),
        ("sort=resourceName", "sort"),
        ("size=5000", "size"),
    ] {
        srv.get(&format!("/repository/process-definitions?{q}")).await.refused(400, Some(field));
    }
    let m = srv.get("/repository/process-definitions?startableByUser=kermit").await.refused(400, None).to_string();
    assert!(m.contains("startableByUser"), "{m}");
    let m = srv
        .get(&format!("/repository/process-definitions?keyLike={}", "%25".repeat(4001)))
        .await
        .refused(400, Some("keyLike"))
        .to_string();
    assert!(m.contains("4000"), "{m}");
}

async fn a_definition_is_suspended_with_its_running_instances(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    let d = srv.deployed("ev", &started_by_events("held", "R/PT1H", "Held")).await;
    let def = d["processDefinitions"][0]["id"].as_str().unwrap().to_string();
    let path = format!("/repository/process-definitions/{def}");
    let mut instances = Vec::new();
    for i in 0..3 {
        instances.push(srv.started("held", &format!("H-{i}"), json!({})).await["id"].as_str().unwrap().to_string());
    }
    let boundary_timers = |suspended: bool| {
        let table = if suspended { "ACT_RU_SUSPENDED_JOB" } else { "ACT_RU_JOB" };
        let srv = &srv;
        async move { count(srv, table, "ELEMENT_ID_ = 'late'").await }
    };
    assert_eq!(boundary_timers(false).await, 3);

    // Without includeProcessInstances the running instances go on.
    let r = srv.put(&path, json!({"action": "suspend", "includeProcessInstances": false, "date": null})).await;
    assert_eq!(r.ok(200)["suspended"], true);
    assert_eq!(srv.get(&format!("/runtime/process-instances/{}", instances[0])).await.ok(200)["suspended"], false);
    srv.put(&path, json!({"action": "activate"})).await.ok(200);

    let before = srv.written().await;
    for (body, field) in [
        (json!({"action": "suspend", "includeProcessInstances": true, "date": "2030-01-01T00:00:00Z"}), "date"),
        (json!({"action": "pause"}), "action"),
        (json!({"includeProcessInstances": true}), "action"),
    ] {
        srv.put(&path, body).await.refused(400, Some(field));
    }
    let m = srv.put(&path, json!({"action": "suspend", "cascade": true})).await.refused(400, None).to_string();
    assert!(m.contains("cascade"), "{m}");
    srv.put(&path, json!({"action": "suspend", "includeProcessInstances": "yes"})).await.refused(400, None);
    srv.put("/repository/process-definitions/nope", json!({"action": "suspend", "includeProcessInstances": true}))
        .await
        .refused(404, None);
    assert_eq!(srv.written().await, before, "nothing written");
    assert_eq!(boundary_timers(true).await, 0);

    let r = srv.put(&path, json!({"action": "suspend", "includeProcessInstances": true})).await;
    assert_eq!(r.ok(200)["suspended"], true);
    for pi in &instances {
        assert_eq!(srv.get(&format!("/runtime/process-instances/{pi}")).await.ok(200)["suspended"], true, "{pi}");
    }
    assert_eq!((boundary_timers(false).await, boundary_timers(true).await), (0, 3), "their jobs are held");
    let task = srv.tasks_of(&instances[0]).await[0]["id"].as_str().unwrap().to_string();
    srv.post(&format!("/runtime/tasks/{task}"), json!({"action": "complete"})).await.refused(409, None);

    let r = srv.put(&path, json!({"action": "activate", "includeProcessInstances": true})).await;
    assert_eq!(r.ok(200)["suspended"], false);
    for pi in &instances {
        assert_eq!(srv.get(&format!("/runtime/process-instances/{pi}")).await.ok(200)["suspended"], false, "{pi}");
    }
    assert_eq!((boundary_timers(false).await, boundary_timers(true).await), (3, 0));
    srv.post(&format!("/runtime/tasks/{task}"), json!({"action": "complete"})).await.ok(204);
}

async fn deleting_a_deployment_takes_everything_of_it_or_nothing(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    // Two versions of a key started by events: the second holds the timer and the message.
    let v1 = srv.deployed("v1", &started_by_events("ticker", "R/PT1H", "one")).await;
    let v2 = srv.deployed("v2", &started_by_events("ticker", "R/PT2H", "two")).await;
    let (d1, d2) =
        (v1["processDefinitions"][0]["id"].as_str().unwrap(), v2["processDefinitions"][0]["id"].as_str().unwrap());
    let starts = |def: &str| {
        let (srv, def) = (&srv, def.to_string());
        async move {
            (
                count(srv, "ACT_RU_JOB", &format!("HANDLER_TYPE_ = 'timer-start-event' AND PROC_DEF_ID_ = '{def}'"))
                    .await,
                count(srv, "ACT_RU_EVENT_SUBSCR", &format!("EXECUTION_ID_ IS NULL AND PROC_DEF_ID_ = '{def}'")).await,
            )
        }
    };
    assert_eq!((starts(d1).await, starts(d2).await), ((0, 0), (1, 1)));

    // Instances of v2: one started by its message, two by key, one suspended (its jobs held).
    let r = srv.post("/runtime/messages", json!({"messageName": "go-ticker"})).await;
    let mut instances = vec![r.ok(200)["processInstanceId"].as_str().unwrap().to_string()];
    for i in 0..2 {
        let pi = srv.started("ticker", &format!("T-{i}"), json!({"n": i})).await;
        instances.push(pi["id"].as_str().unwrap().to_string());
    }
    srv.put(&format!("/runtime/process-instances/{}", instances[2]), json!({"action": "suspend"})).await.ok(200);
    // An ended one has history only.
    let ended = srv.started("ticker", "T-ended", json!({})).await["id"].as_str().unwrap().to_string();
    let task = srv.tasks_of(&ended).await[0]["id"].as_str().unwrap().to_string();
    srv.post(&format!("/runtime/tasks/{task}"), json!({"action": "complete"})).await.ok(204);
    instances.push(ended);

    let dep = v2["id"].as_str().unwrap().to_string();
    let path = format!("/repository/deployments/{dep}");
    // Without cascade: refused, naming the running instances; nothing changes.
    let before = srv.written().await;
    let r = srv.delete(&path).await;
    let m = r.refused(409, None).to_string();
    assert!(instances[..3].iter().all(|pi| m.contains(pi.as_str())) && m.contains("cascade"), "{m}");
    srv.delete(&format!("{path}?cascade=false")).await.refused(409, None);
    srv.delete(&format!("{path}?cascade=yes")).await.refused(400, Some("cascade"));
    srv.delete(&format!("{path}?force=true")).await.refused(400, None);
    srv.delete("/repository/deployments/nope?cascade=true").await.refused(404, None);
    assert_eq!(srv.written().await, before, "nothing written");
    assert_eq!(starts(d2).await, (1, 1));

    // The guard itself: the deployment's delete statements with an instance running roll back.
    let writes = kairos_store_engine::process::deployment_delete(&dep, vec![]);
    let e = srv.engine.store().write_all(&writes).await.unwrap_err();
    assert_eq!(e.kind, kairos::store::ErrorKind::Conflict, "{e}");
    assert_eq!(srv.written().await, before, "rolled back whole");
    assert_eq!(starts(d2).await, (1, 1), "its timer start job too");

    // With cascade: 204, its instances deleted through the engine (history, termination
    // records and held jobs with them), the version before starts by its events again.
    let r = srv.delete(&format!("{path}?cascade=true")).await;
    assert_eq!((r.status, r.header("kairos-deleted-instances")), (204, Some("3")), "{}", r.text);
    assert_eq!(leftovers(&srv, &[d2.to_string()], &instances).await, vec![]);
    srv.get(&path).await.refused(404, None);
    srv.get(&format!("{path}/resources")).await.refused(404, None);
    srv.get(&format!("/repository/process-definitions/{d2}")).await.refused(404, None);
    assert_eq!(count(&srv, "ACT_GE_BYTEARRAY", &format!("DEPLOYMENT_ID_ = '{dep}'")).await, 0);
    assert_eq!(starts(d1).await, (1, 1), "v1 starts by timer and message again");
    let r = srv.post("/runtime/messages", json!({"messageName": "go-ticker"})).await;
    let pi = r.ok(200)["processInstanceId"].as_str().unwrap().to_string();
    assert_eq!(srv.get(&format!("/runtime/process-instances/{pi}")).await.ok(200)["processDefinitionId"], d1);
    let repeat = srv
        .engine
        .store()
        .sql_query(
            &format!(
                "SELECT REPEAT_ FROM ACT_RU_JOB WHERE PROC_DEF_ID_ = '{d1}' AND HANDLER_TYPE_ = 'timer-start-event'"
            ),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(repeat[0][0].as_str(), Some("R/PT1H"), "v1's own cycle");

    // v1 has no running instance but one now: without cascade refused, then the only
    // version goes with cascade and nothing of the key is left.
    let dep1 = v1["id"].as_str().unwrap();
    srv.delete(&format!("/repository/deployments/{dep1}")).await.refused(409, None);
    srv.delete(&format!("/repository/deployments/{dep1}?cascade=true")).await.ok(204);
    assert_eq!(leftovers(&srv, &[d1.to_string()], &[pi]).await, vec![]);
    assert_eq!(count(&srv, "ACT_RU_JOB", "HANDLER_TYPE_ = 'timer-start-event'").await, 0);
    srv.post("/runtime/process-instances", json!({"processDefinitionKey": "ticker"})).await.refused(404, None);

    // A deployment without instances goes without cascade.
    let plain = srv.deployed("plain", &one_task("plain")).await;
    srv.delete(&format!("/repository/deployments/{}", plain["id"].as_str().unwrap())).await.ok(204);
    assert_eq!(srv.get("/repository/deployments").await.ok(200)["total"], 0);
}

/// A real executor firing a timer start every second while the deployment is deleted: a start
/// that commits first is deleted with the rest (the guard sends the deletion round again), one
/// that comes after finds its job gone; either way nothing of the deployment is left, and no
/// instance starts afterwards.
async fn a_timer_start_firing_while_its_deployment_goes_leaves_nothing(backend: Backend) {
    let Some(url) = (match backend {
        Backend::Sqlite => None,
        Backend::Postgres => kairos_store_postgres::test_support::fresh_schema_url().await,
    })
    .or_else(|| matches!(backend, Backend::Sqlite).then(String::new)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = if url.is_empty() { format!("sqlite://{}/k.db", dir.path().display()) } else { url };
    let engine = Arc::new(
        kairos::Engine::builder(url)
            .node_id("timer-node")
            .executor_enabled(true)
            .workers(4)
            .configure(|c| c.poll_interval = Duration::from_millis(50))
            .build()
            .await
            .unwrap(),
    );
    engine.start().await.unwrap();
    let node = Node::serve(engine.clone()).await;
    for round in 0..3u64 {
        let key = format!("fast{round}");
        let xml = started_by_events(&key, "R/PT1S", "fast");
        let d = node.call("POST", &format!("/repository/deployments?name={key}"), xml.as_bytes()).await;
        let d = d.ok(201).clone();
        let def = d["processDefinitions"][0]["id"].as_str().unwrap().to_string();
        let running = |condition: String| {
            let engine = engine.clone();
            async move {
                let sql = format!("SELECT COUNT(*) FROM ACT_RU_EXECUTION WHERE {condition}");
                engine.store().sql_query(&sql, &[]).await.unwrap()[0][0].as_i64().unwrap()
            }
        };
        // Wait until the timer has started an instance, then delete while it goes on firing.
        let deadline = Instant::now() + Duration::from_secs(20);
        while running(format!("PROC_DEF_ID_ = '{def}'")).await == 0 {
            assert!(Instant::now() < deadline, "the timer start never fired");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Into the next firing's neighbourhood: the deletion races it.
        tokio::time::sleep(Duration::from_millis(900 + 30 * round)).await;
        let path = format!("/repository/deployments/{}?cascade=true", d["id"].as_str().unwrap());
        let r = node.call("DELETE", &path, b"").await;
        assert_eq!(r.status, 204, "{}", r.text);
        // Two more periods: a firing in flight has finished, and none may follow.
        tokio::time::sleep(Duration::from_millis(2100)).await;
        let mut left = Vec::new();
        for table in ["ACT_RE_PROCDEF", "ACT_RU_EXECUTION", "ACT_RU_JOB", "ACT_RU_EVENT_SUBSCR", "ACT_HI_PROCINST"] {
            let column = if table == "ACT_RE_PROCDEF" { "ID_" } else { "PROC_DEF_ID_" };
            let sql = format!("SELECT COUNT(*) FROM {table} WHERE {column} = '{def}'");
            let n = engine.store().sql_query(&sql, &[]).await.unwrap()[0][0].as_i64().unwrap();
            if n > 0 {
                left.push((table, n));
            }
        }
        assert_eq!(left, vec![], "round {round}");
        assert_eq!(running("1 = 1".into()).await, 0, "no instance of a deleted definition");
    }
    engine.shutdown(Duration::from_secs(5)).await;
}

/// A node with its executor running, served on 127.0.0.1 until dropped.
struct Node {
    addr: std::net::SocketAddr,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Node {
    async fn serve(engine: Arc<kairos::Engine>) -> Node {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(kairos_server::serve(engine, listener, async {
            let _ = stopped.await;
        }));
        Node { addr, _stop: stop }
    }

    async fn call(&self, method: &str, path: &str, body: &[u8]) -> processes_support::Reply {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = tokio::net::TcpStream::connect(self.addr).await.unwrap();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/xml\r\nContent-Length: {}\r\n\r\n",
            self.addr,
            body.len()
        );
        s.write_all(head.as_bytes()).await.unwrap();
        s.write_all(body).await.unwrap();
        let mut raw = Vec::new();
        tokio::time::timeout(Duration::from_secs(60), s.read_to_end(&mut raw)).await.expect("an answer").unwrap();
        processes_support::parse_response(&raw)
    }
}

on_both_backends!(
    deployments_are_listed_read_and_their_resources_served,
    definitions_answer_in_flowable_shape_with_its_filters,
    a_definition_is_suspended_with_its_running_instances,
    deleting_a_deployment_takes_everything_of_it_or_nothing,
    a_timer_start_firing_while_its_deployment_goes_leaves_nothing,
);
