//! The BPMN corpus (crates/bpmn/tests/corpus) through the whole engine on both backends: each
//! file is deployed, started, and driven along its happy path the way its `<!-- drive: … -->`
//! comment says, by the outside world's means only (completing tasks, correlating messages,
//! broadcasting signals, external workers fetching and completing, timers made due now and run
//! by the executor); then its history (ACT_HI_ACTINST in start order) must be the
//! `<!-- trace: … -->` it states. Service tasks' handlers are registered by name as no-ops
//! (or, where the drive says so, one that throws the BPMN error).

mod common;

use common::{Backend, Fixture};
use kairos::process::{BpmnError, StartRequest};
use kairos::store::SqlValue;
use kairos::{Engine, handler_fn};
use serde_json::{Map, Value as Json};
use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// Files the engine refuses today, with why (each is checked to be refused).
const REFUSED: &[(&str, &str)] = &[];

fn comment(xml: &str, key: &str) -> Option<String> {
    let start = xml.find(&format!("<!-- {key}:"))? + key.len() + 6;
    let end = start + xml[start..].find("-->")?;
    Some(xml[start..end].trim().to_string())
}

fn rows_text(rows: &[Vec<SqlValue>], i: usize) -> Vec<String> {
    rows.iter().map(|r| r[i].as_str().unwrap_or_default().to_string()).collect()
}

/// The drive's `escalate <task> "<code>"` steps: an escalation thrown from that user task
/// (once) while it is open, as `POST /task/{id}/bpmnEscalation` does.
fn escalations(drive: &str) -> Vec<(String, String)> {
    drive
        .split("escalate ")
        .skip(1)
        .filter_map(|rest| {
            let (task, rest) = rest.split_once(" \"")?;
            Some((task.trim().to_string(), rest.split('"').next()?.to_string()))
        })
        .collect()
}

/// Deploys and drives one file; returns the trace or what went wrong.
async fn run_file(fx: &Fixture, xml: &str, dmn: Option<&str>) -> Result<Vec<String>, String> {
    let defs = kairos_bpmn::parse(xml).map_err(|e| e.to_string())?;
    let drive = comment(xml, "drive").unwrap_or_default();
    const ERROR_CODE: &str = "BPMN error code \"";
    let bpmn_error = drive.find(ERROR_CODE).map(|i| {
        let rest = &drive[i + ERROR_CODE.len()..];
        rest[..rest.find('"').unwrap_or(rest.len())].to_string()
    });
    let mut builder = fx.engine("corpus").configure(|c| c.poll_interval = Duration::from_millis(20));
    let mut names = HashSet::new();
    for p in &defs.processes {
        for n in &p.nodes {
            if let kairos_bpmn::NodeKind::ServiceTask(s) = &n.kind
                && let kairos_bpmn::Implementation::Handler { name, .. } = &s.implementation
            {
                names.insert(name.clone());
            }
        }
    }
    for h in names {
        let throws = bpmn_error.clone().filter(|_| drive.contains(&format!("{h} handler")));
        builder = builder.handler(
            h,
            handler_fn(move |_ctx| {
                let throws = throws.clone();
                async move {
                    match throws {
                        Some(code) => Err(Box::new(BpmnError(code)) as kairos::HandlerError),
                        None => Ok(None),
                    }
                }
            }),
        );
    }
    let engine = builder.build().await.map_err(|e| e.to_string())?;
    engine.start().await.map_err(|e| e.to_string())?;
    let result = match dmn {
        Some(dmn) => match engine.processes().deploy("corpus.dmn", dmn).await {
            Ok(_) => drive_file(&engine, &defs, xml, &drive).await,
            Err(e) => Err(format!("the DMN file beside it: {e}")),
        },
        None => drive_file(&engine, &defs, xml, &drive).await,
    };
    engine.shutdown(Duration::from_secs(5)).await;
    result
}

async fn drive_file(
    engine: &Engine,
    defs: &kairos_bpmn::Definitions,
    xml: &str,
    drive: &str,
) -> Result<Vec<String>, String> {
    let p = engine.processes();
    let store = engine.store().clone();
    p.deploy("corpus.bpmn", xml).await.map_err(|e| e.to_string())?;
    let vars: Map<String, Json> =
        comment(xml, "vars").map(|v| serde_json::from_str(&v).expect("vars comment is JSON")).unwrap_or_default();
    let process = &defs.processes[0];
    // Start the way the process starts: its none start, or its message / signal / timer /
    // conditional start.
    let trigger = process.start_events.first().and_then(|&s| process.node(s).kind.trigger().cloned());
    let root = match trigger {
        Some(kairos_bpmn::EventTrigger::Message(m)) => {
            p.message(&m.name, None, Some("BK-1"), vars.clone()).await.map_err(|e| e.to_string())?
        }
        Some(kairos_bpmn::EventTrigger::Conditional(_)) => {
            let started = p
                .evaluate_start_conditions(vars.clone(), Some("BK-1".into()), None)
                .await
                .map_err(|e| e.to_string())?;
            started.first().ok_or("no conditional start event held")?.id.clone()
        }
        Some(kairos_bpmn::EventTrigger::Signal(s)) => {
            p.signal(&s.name, vars.clone()).await.map_err(|e| e.to_string())?;
            p.instances(None, Some(&process.id), None).await.map_err(|e| e.to_string())?[0].id.clone()
        }
        Some(kairos_bpmn::EventTrigger::Timer(_)) => {
            let jobs = store
                .sql_query("SELECT ID_ FROM ACT_RU_JOB WHERE HANDLER_TYPE_ = 'timer-start-event'", &[])
                .await
                .map_err(|e| e.to_string())?;
            store.job_execute_now(jobs[0][0].as_str().unwrap()).await.map_err(|e| e.to_string())?;
            engine.wake();
            wait_for(|| async { !p.instances(None, Some(&process.id), None).await.unwrap().is_empty() }).await?;
            p.instances(None, Some(&process.id), None).await.map_err(|e| e.to_string())?[0].id.clone()
        }
        _ => {
            let req = StartRequest {
                process_definition_key: Some(process.id.clone()),
                business_key: Some("BK-1".into()),
                variables: vars.clone(),
                start_user: Some("kermit".into()),
                ..Default::default()
            };
            p.start(req).await.map_err(|e| e.to_string())?.id
        }
    };
    let mut fired = HashSet::new();
    let started = Instant::now();
    loop {
        if started.elapsed() > Duration::from_secs(30) {
            return Err("did not finish in 30 s".into());
        }
        if p.instance(&root).await.map_err(|e| e.to_string())?.ended {
            break;
        }
        // The instance and the ones it called.
        let mut family = vec![root.clone()];
        let mut i = 0;
        while i < family.len() {
            let subs = store
                .sql_query(
                    "SELECT PROC_INST_ID_ FROM ACT_HI_PROCINST WHERE SUPER_PROCESS_INSTANCE_ID_ = ? AND END_TIME_ IS NULL",
                    &[SqlValue::Text(family[i].clone())],
                )
                .await
                .map_err(|e| e.to_string())?;
            family.extend(rows_text(&subs, 0));
            i += 1;
        }
        let mut acted = false;
        for pi in &family {
            let key = [SqlValue::Text(pi.clone())];
            let subs = store
                .sql_query("SELECT EVENT_TYPE_, EVENT_NAME_ FROM ACT_RU_EVENT_SUBSCR WHERE PROC_INST_ID_ = ? ORDER BY CREATED_", &key)
                .await
                .map_err(|e| e.to_string())?;
            if let Some(s) = subs.iter().find(|s| drive.contains(s[1].as_str().unwrap_or("\u{0}"))) {
                let name = s[1].as_str().unwrap().to_string();
                if s[0].as_str() == Some("message") {
                    p.message(&name, Some(pi), None, Map::new()).await.map_err(|e| e.to_string())?;
                } else {
                    p.signal(&name, Map::new()).await.map_err(|e| e.to_string())?;
                }
                acted = true;
                break;
            }
            let jobs = store
                .sql_query(
                    "SELECT j.ID_, j.HANDLER_TYPE_, j.HANDLER_CFG_, j.ELEMENT_ID_, e.IS_EVENT_SCOPE_, j.LOCK_OWNER_ \
                     FROM ACT_RU_JOB j LEFT JOIN ACT_RU_EXECUTION e ON e.ID_ = j.EXECUTION_ID_ \
                     WHERE j.PROCESS_INSTANCE_ID_ = ? ORDER BY j.DUEDATE_, j.ID_",
                    &key,
                )
                .await
                .map_err(|e| e.to_string())?;
            let is_start = |id: &str| {
                defs.processes
                    .iter()
                    .any(|pr| pr.node_by_id(id).is_some_and(|n| matches!(n.kind, kairos_bpmn::NodeKind::StartEvent(_))))
            };
            let beside = jobs.iter().find(|j| {
                j[1].as_str() == Some("trigger-timer")
                    && !fired.contains(j[0].as_str().unwrap_or_default())
                    && (j[4].as_bool() == Some(true) || is_start(j[3].as_str().unwrap_or_default()))
                    && !drive.contains("before any timer")
            });
            if let Some(j) = beside {
                let id = j[0].as_str().unwrap().to_string();
                fired.insert(id.clone());
                run_now(engine, &id).await?;
                acted = true;
                break;
            }
            let tasks = p.tasks(Some(pi), None, None, None).await.map_err(|e| e.to_string())?;
            let escalate = escalations(drive).into_iter().find_map(|(key, code)| {
                let t =
                    tasks.iter().find(|t| t.task_definition_key == key && !fired.contains(&format!("esc:{}", t.id)))?;
                Some((t.id.clone(), code))
            });
            if let Some((task_id, code)) = escalate {
                fired.insert(format!("esc:{task_id}"));
                p.task_escalation(&task_id, &code, Map::new()).await.map_err(|e| e.to_string())?;
                acted = true;
                break;
            }
            // `trigger <activity>`: the execution waiting in that receive task moves on.
            let execs = p.executions(pi).await.map_err(|e| e.to_string())?;
            let waiting = execs
                .iter()
                .find(|e| e.activity_id.as_deref().is_some_and(|a| drive.contains(&format!("trigger {a}"))));
            if let Some(e) = waiting {
                p.trigger(&e.id, Map::new()).await.map_err(|e| e.to_string())?;
                acted = true;
                break;
            }
            if let Some(t) =
                tasks.iter().min_by_key(|t| (drive.rfind(&t.task_definition_key).unwrap_or(usize::MAX), t.create_time))
            {
                p.complete_task(&t.id, vars.clone()).await.map_err(|e| e.to_string())?;
                acted = true;
                break;
            }
            if let Some(j) = jobs.iter().find(|j| j[1].as_str() == Some("external-worker")) {
                let topic = j[2].as_str().unwrap().to_string();
                let got = p
                    .external_acquire(&topic, kairos::SignedDuration::from_mins(5), 1, "corpus-worker")
                    .await
                    .map_err(|e| e.to_string())?;
                if let Some(t) = got.first() {
                    p.external_complete(&t.id, "corpus-worker", Map::new()).await.map_err(|e| e.to_string())?;
                    acted = true;
                    break;
                }
            }
            if let Some(j) = jobs.iter().find(|j| j[1].as_str() == Some("trigger-timer") && j[5].is_null()) {
                let id = j[0].as_str().unwrap().to_string();
                fired.insert(id.clone());
                run_now(engine, &id).await?;
                acted = true;
                break;
            }
        }
        if !acted {
            // Async continuations run by the executor by themselves.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let hist = p.activity_history(&root).await.map_err(|e| e.to_string())?;
    Ok(hist.into_iter().map(|a| a.activity_id).collect())
}

/// Makes a timer due now and waits until the executor ran it (its attempt count moved, or it is gone).
async fn run_now(engine: &Engine, id: &str) -> Result<(), String> {
    let store = engine.store().clone();
    let before = store.job_get(kairos::JobTable::Runtime, id).await.map_err(|e| e.to_string())?.map(|j| j.attempts);
    store.job_execute_now(id).await.map_err(|e| e.to_string())?;
    engine.wake();
    wait_for(|| async {
        match store.job_get(kairos::JobTable::Runtime, id).await.unwrap() {
            None => true,
            Some(j) => Some(j.attempts) != before && j.lock_owner.is_none(),
        }
    })
    .await
}

async fn wait_for<F, Fut>(mut f: F) -> Result<(), String>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let until = Instant::now() + Duration::from_secs(15);
    while Instant::now() < until {
        if f().await {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Err("timed out waiting".into())
}

async fn every_corpus_file_runs_its_trace_through_the_engine(backend: Backend) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bpmn/tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut failures = Vec::new();
    let mut ran = 0;
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let xml = std::fs::read_to_string(&path).unwrap();
        let Some(want) = comment(&xml, "trace") else { continue };
        let want: Vec<String> = want.split(',').map(|s| s.trim().to_string()).collect();
        let Some(fx) = Fixture::new(backend).await else { return };
        // A DMN file beside it (same name, `.dmn`) is deployed first: its decisions.
        let dmn = std::fs::read_to_string(path.with_extension("dmn")).ok();
        let got = run_file(&fx, &xml, dmn.as_deref()).await;
        if let Some((_, why)) = REFUSED.iter().find(|(f, _)| *f == name) {
            match got {
                Err(e) if e.contains(why) => {}
                other => failures.push(format!("{name}: should be refused with '{why}', got {other:?}")),
            }
            continue;
        }
        ran += 1;
        // Concurrent branches (the file's note says which) may start in either order, e.g. two
        // async continuations run by two workers: then the same activities, start and end fixed.
        let concurrent = comment(&xml, "note").is_some_and(|n| n.contains("concurrently"));
        let same = |got: &Vec<String>| {
            let (mut a, mut b) = (got.clone(), want.clone());
            if concurrent && a.first() == b.first() && a.last() == b.last() {
                a.sort();
                b.sort();
            }
            a == b
        };
        match got {
            Ok(got) if same(&got) => {}
            Ok(got) => failures.push(format!("{name}:\n  want {want:?}\n  got  {got:?}")),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{} of {ran} files failed:\n{}", failures.len(), failures.join("\n"));
}

on_both_backends!(every_corpus_file_runs_its_trace_through_the_engine);
