//! Bounded cost: a parallel multi-instance activity's collection is capped (a 4xx naming the
//! variable beyond it) and creating its instances is linear in their number.

use jiff::Timestamp;
use kairos_bpmn::Definitions;
use kairos_process::*;
use serde_json::{Map, json};

fn model(seq: bool) -> Definitions {
    let xml = format!(
        r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn">
  <process id="p">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="each"/>
    <userTask id="each" camunda:assignee="${{item}}"><multiInstanceLoopCharacteristics isSequential="{seq}" camunda:collection="items" camunda:elementVariable="item"/></userTask>
    <sequenceFlow id="f2" sourceRef="each" targetRef="end"/><endEvent id="end"/>
  </process>
</definitions>"#
    );
    kairos_bpmn::parse(&xml).unwrap_or_else(|e| panic!("{e}"))
}

/// Starts an instance with `items` (as strings), returning the result of the start.
fn start(defs: &Definitions, n: usize) -> Result<Instance> {
    let mut next = 0u64;
    let mut ids = move || {
        next += 1;
        format!("id-{next:08}")
    };
    let now: Timestamp = "2026-01-05T09:00:00Z".parse().unwrap();
    let mut env = Env { definitions: defs, process: &defs.processes[0], now, ids: &mut ids };
    let inst = Runtime::new_instance(&mut env, "def-1", None);
    let mut rt = Runtime::new(env, inst);
    let items: Vec<_> = (0..n).map(|i| json!(format!("user{i}"))).collect();
    let mut variables = Map::new();
    variables.insert("items".into(), json!(items));
    rt.apply(Command::Start { variables, start_user: None, start_event: None })?;
    Ok(rt.into_instance())
}

#[test]
fn a_big_parallel_collection_below_the_cap_starts_every_instance() {
    let defs = model(false);
    let t = std::time::Instant::now();
    let inst = start(&defs, 10_000).unwrap();
    eprintln!("{:?}", t.elapsed());
    assert_eq!(inst.tasks.len(), 10_000);
    let c = changes(None, &inst);
    assert_eq!(c.tasks_inserted.len(), 10_000);
}

#[test]
fn a_collection_beyond_the_cap_is_refused_naming_the_variable() {
    for seq in [false, true] {
        let err = start(&model(seq), MAX_MULTI_INSTANCE + 1).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Model, "{err}");
        assert_eq!(err.element_id.as_deref(), Some("each"));
        assert!(err.message.contains("collection 'items'") && err.message.contains("limit is 10000"), "{err}");
    }
}
