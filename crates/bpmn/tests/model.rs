//! What the model says about corpus files: the facts the engine will rely on.

use std::fs;
use std::path::Path;

use kairos_bpmn::{
    Condition, DecisionBinding, DecisionMapping, Definitions, EndEvent, EventTrigger, FlowNode, HandlerSource,
    HistoryTimeToLive, Implementation, NodeKind, ParseOptions, Process, TimerKind, TimerValue, VariableMapping, parse,
    parse_with,
};

fn corpus(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus").join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn load(name: &str) -> Definitions {
    parse(&corpus(name)).unwrap_or_else(|e| panic!("{name}:\n{e}"))
}

fn node<'a>(p: &'a Process, id: &str) -> &'a FlowNode {
    p.node_by_id(id).unwrap_or_else(|| panic!("no node {id}"))
}

fn outgoing_targets<'a>(p: &'a Process, id: &str) -> Vec<&'a str> {
    node(p, id).outgoing.iter().map(|f| p.node(p.flow(*f).target).id.as_str()).collect()
}

#[test]
fn camunda_modeler_export_is_fully_understood() {
    let defs = load("camunda-modeler-order-payment.bpmn");
    assert_eq!(defs.exporter.as_deref(), Some("Camunda Modeler"));
    assert_eq!(defs.exporter_version.as_deref(), Some("5.19.0"));
    let p = defs.process("order-payment").unwrap();
    assert_eq!(p.history_time_to_live, Some(HistoryTimeToLive::Days(180)));
    assert_eq!(p.start_events.len(), 1);
    let NodeKind::StartEvent(start) = &p.node(p.start_events[0]).kind else { panic!() };
    assert_eq!(start.initiator.as_deref(), Some("placedBy"));

    let charge = node(p, "Activity_ChargeCard");
    assert!(charge.async_before && !charge.async_after && charge.exclusive);
    assert_eq!(charge.retry_time_cycle.as_deref(), Some("R3/PT5M"));
    let NodeKind::ServiceTask(task) = &charge.kind else { panic!() };
    assert_eq!(task.implementation, Implementation::External { topic: "charge-card".into() });
    let [boundary] = charge.boundary_events.as_slice() else { panic!() };
    let NodeKind::BoundaryEvent(b) = &p.node(*boundary).kind else { panic!() };
    assert_eq!(b.attached_to, p.node_idx("Activity_ChargeCard").unwrap());
    assert!(b.cancel_activity);
    let EventTrigger::Error(err) = &b.trigger else { panic!() };
    assert_eq!(err.code.as_deref(), Some("CARD_DECLINED"));

    let gw = node(p, "Gateway_Amount");
    assert_eq!(gw.default_flow, p.flow_idx("Flow_Small"));
    assert_eq!(p.flow_by_id("Flow_Large").unwrap().condition, Some(Condition::Expression("${amount > 1000}".into())));
    assert_eq!(p.flow_by_id("Flow_Large").unwrap().name.as_deref(), Some("> 1000 €"));
    assert_eq!(outgoing_targets(p, "Gateway_Amount"), ["Activity_ManualApproval", "Gateway_Merge"]);

    let NodeKind::UserTask(ut) = &node(p, "Activity_ManualApproval").kind else { panic!() };
    assert_eq!(ut.assignee.as_deref(), Some("${salesManager}"));
    assert_eq!(ut.candidate_users, ["demo", "john"]);
    assert_eq!(ut.priority.as_deref(), Some("80"));
    assert!(ut.due_date.as_deref().unwrap().starts_with("${dateTime()"));

    let shape = defs.diagram.shapes["StartEvent_OrderPlaced"];
    assert_eq!((shape.x, shape.y, shape.width, shape.height), (179.0, 159.0, 36.0, 36.0));
    assert_eq!(defs.diagram.edges["Flow_Large"].len(), 3);
    assert_eq!(defs.errors["Error_CardDeclined"].code, "CARD_DECLINED");
}

#[test]
fn handlers_are_named_four_ways() {
    let defs = load("03-service-task-handlers.bpmn");
    let p = &defs.processes[0];
    let handler = |id: &str| match &node(p, id).kind {
        NodeKind::ServiceTask(t) => match &t.implementation {
            Implementation::Handler { name, source } => (name.clone(), *source),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    };
    assert_eq!(handler("validate"), ("validate-order".into(), HandlerSource::KairosHandler));
    assert_eq!(handler("charge"), ("com.acme.billing.ChargeCard".into(), HandlerSource::Class));
    assert_eq!(handler("notify"), ("mailer".into(), HandlerSource::DelegateExpression));
    assert_eq!(handler("archive"), ("archiver".into(), HandlerSource::Expression));
    assert_eq!(node(p, "archive").element, "sendTask");
    let NodeKind::ServiceTask(charge) = &node(p, "charge").kind else { panic!() };
    let fields: Vec<(&str, &str, bool)> =
        charge.fields.iter().map(|f| (f.name.as_str(), f.value.as_str(), f.expression)).collect();
    assert_eq!(
        fields,
        [("currency", "EUR", false), ("amount", "${order.total}", true), ("note", "first charge", false)]
    );
    let NodeKind::ServiceTask(validate) = &node(p, "validate").kind else { panic!() };
    assert_eq!(validate.result_variable.as_deref(), Some("valid"));
}

#[test]
fn kairos_handler_wins_over_a_vendor_class() {
    let xml = corpus("03-service-task-handlers.bpmn").replace(
        r#"activiti:class="com.acme.billing.ChargeCard""#,
        r#"activiti:class="com.acme.billing.ChargeCard" kairos:handler="charge""#,
    );
    let defs = parse(&xml).unwrap();
    let NodeKind::ServiceTask(t) = &node(&defs.processes[0], "charge").kind else { panic!() };
    assert_eq!(
        t.implementation,
        Implementation::Handler { name: "charge".into(), source: HandlerSource::KairosHandler }
    );
}

#[test]
fn prefixes_do_not_matter() {
    let prefixed = corpus("04-external-task-camunda.bpmn");
    let default_ns = prefixed.replace("bpmn:", "").replace("xmlns:bpmn=", "xmlns=");
    let renamed = prefixed.replace("bpmn:", "semantic:").replace("xmlns:bpmn=", "xmlns:semantic=");
    let json = |xml: &str| serde_json::to_value(parse(xml).unwrap().processes).unwrap();
    assert_eq!(json(&prefixed), json(&default_ns));
    assert_eq!(json(&prefixed), json(&renamed));
}

#[test]
fn event_sub_processes_and_their_starts() {
    let defs = load("14-event-subprocess-timer-non-interrupting.bpmn");
    let p = &defs.processes[0];
    let subs: Vec<_> = p.event_sub_processes_in(None).collect();
    assert_eq!(subs, [p.node_idx("reminders").unwrap()]);
    let starts: Vec<_> = p.start_events_in(Some(subs[0])).collect();
    let NodeKind::StartEvent(s) = &p.node(starts[0]).kind else { panic!() };
    assert!(!s.interrupting);
    assert!(matches!(&s.trigger, EventTrigger::Timer(t) if t.kind == TimerKind::Duration && t.text == "PT1H"));
    // The process' own start events exclude the event sub-process start.
    assert_eq!(p.start_events, [p.node_idx("start").unwrap()]);
    assert_eq!(node(p, "sendReminder").scope, Some(subs[0]));

    let defs = load("16-event-subprocess-error.bpmn");
    let p = &defs.processes[0];
    let NodeKind::EndEvent(EndEvent::Error(e)) = &node(p, "invalid").kind else { panic!() };
    assert_eq!(e.code.as_deref(), Some("ORDER_INVALID"));
    let NodeKind::StartEvent(s) = &node(p, "errStart").kind else { panic!() };
    assert!(matches!(&s.trigger, EventTrigger::Error(e) if e.code.as_deref() == Some("ORDER_INVALID")));
}

#[test]
fn timers_are_classified_and_parsed() {
    let timer_of = |file: &str, id: &str| {
        let defs = load(file);
        let p = &defs.processes[0];
        match node(p, id).kind.trigger() {
            Some(EventTrigger::Timer(t)) => t.clone(),
            other => panic!("{other:?}"),
        }
    };
    let t = timer_of("29-timer-start-date.bpmn", "startAt");
    assert!(matches!(t.value, TimerValue::Date(d) if d.to_string() == "2030-01-01T02:00:00Z"));
    let t = timer_of("30-timer-start-cycle.bpmn", "everyDay");
    assert!(matches!(&t.value, TimerValue::Cycle(c) if c.repetitions.is_none() && c.start.is_some()));
    let t = timer_of("31-timer-cron-cycle.bpmn", "weekdays");
    assert_eq!(t.value, TimerValue::Cron("0 0 6 ? * MON-FRI".into()));
    let t = timer_of("37-timer-expression.bpmn", "wait");
    assert_eq!((t.kind, t.value), (TimerKind::Duration, TimerValue::Expression("${delay}".into())));
    let t = timer_of("21-boundary-timer-non-interrupting-cycle.bpmn", "remind");
    assert!(matches!(&t.value, TimerValue::Cycle(c) if c.repetitions == Some(3)));
}

#[test]
fn call_activity_mappings() {
    let defs = load("17-call-activity.bpmn");
    let p = defs.process("callActivity").unwrap();
    let NodeKind::CallActivity(c) = &node(p, "lockStock").kind else { panic!() };
    assert_eq!(c.called_element, "stockLock");
    assert_eq!(c.business_key.as_deref(), Some("#{execution.processBusinessKey}"));
    assert_eq!(
        c.inputs,
        [
            VariableMapping::Variable { source: "orderId".into(), target: "orderId".into(), local: false },
            VariableMapping::Expression { expression: "${items * 2}".into(), target: "units".into(), local: false },
        ]
    );
    assert_eq!(
        c.outputs,
        [
            VariableMapping::Variable { source: "lockId".into(), target: "lockId".into(), local: false },
            VariableMapping::All { local: true },
        ]
    );
    assert!(defs.process("stockLock").is_some());

    let defs = load("flowable-modeler-expense-approval.bpmn");
    let p = defs.process("expenseApproval").unwrap();
    let NodeKind::CallActivity(c) = &node(p, "payoutCall").kind else { panic!() };
    assert!(c.inherit_business_key && c.business_key.is_none());
    assert_eq!(c.inputs.len(), 2);
    let NodeKind::UserTask(t) = &node(p, "approveByFinance").kind else { panic!() };
    assert_eq!(t.candidate_groups, ["finance", "controlling"]);
}

#[test]
fn multi_instance() {
    let defs = load("18-multi-instance-parallel.bpmn");
    let mi = node(&defs.processes[0], "review").multi_instance.clone().unwrap();
    assert!(!mi.sequential);
    assert_eq!(mi.collection.as_deref(), Some("${reviewers}"));
    assert_eq!(mi.element_variable.as_deref(), Some("reviewer"));
    assert!(mi.cardinality.is_none());
    let defs = load("19-multi-instance-sequential-cardinality.bpmn");
    let mi = node(&defs.processes[0], "attempt").multi_instance.clone().unwrap();
    assert!(mi.sequential);
    assert_eq!(mi.cardinality.as_deref(), Some("3"));
    assert_eq!(mi.completion_condition.as_deref(), Some("${loopCounter >= 1}"));
}

#[test]
fn async_flags_and_retry_cycles() {
    let defs = load("36-async-retry-exclusive.bpmn");
    let p = &defs.processes[0];
    assert_eq!(p.history_time_to_live, Some(HistoryTimeToLive::Days(30)));
    let start = node(p, "start");
    assert!(start.async_after && !start.async_before);
    let import = node(p, "importFile");
    assert!(import.async_before && !import.exclusive);
    assert_eq!(import.retry_time_cycle.as_deref(), Some("R5/PT10M"));
    let index = node(p, "indexFile");
    assert!(index.async_before && index.async_after && index.exclusive);
    assert_eq!(index.retry_time_cycle.as_deref(), Some("PT1M,PT5M,PT30M"));
}

#[test]
fn collaborations_skip_non_executable_pools() {
    let defs = load("38-collaboration-non-executable-pool.bpmn");
    assert_eq!(defs.processes.len(), 1);
    assert_eq!(defs.skipped_processes, ["customer"]);
    assert_eq!(defs.processes[0].nodes.len(), 3); // lanes, annotations, data objects are not nodes
}

#[test]
fn activiti_designer_file_keeps_names_and_conditions() {
    let defs = load("activiti-designer-leave-request.bpmn");
    let p = defs.process("leave").unwrap();
    assert_eq!(p.name.as_deref(), Some("请假流程"));
    assert_eq!(node(p, "deptLeaderAudit").name.as_deref(), Some("部门领导审批"));
    assert_eq!(p.flow_by_id("flow4").unwrap().condition, Some(Condition::Expression("${!deptLeaderPass}".into())));
    assert_eq!(defs.diagram.shapes["deptLeaderAudit"].width, 105.0);
    assert_eq!(defs.diagram.edges["flow11"].len(), 3);
}

#[test]
fn every_problem_is_reported_in_document_order() {
    let xml = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL">
  <process id="p">
    <startEvent id="s"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="nowhere"/>
    <scriptTask id="script"/>
    <intermediateCatchEvent id="t"><timerEventDefinition><timeDuration>soon</timeDuration></timerEventDefinition></intermediateCatchEvent>
  </process>
</definitions>"#;
    let errors = parse(xml).unwrap_err();
    let lines: Vec<u32> = errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, [4, 5, 6], "{errors}");
    assert_eq!(errors.first().element_id.as_deref(), Some("f1"));
}

#[test]
fn the_expression_hook_sees_every_expression() {
    let xml = corpus("camunda-modeler-order-payment.bpmn");
    let seen = std::cell::RefCell::new(Vec::new());
    let check = |e: &str| -> Result<(), String> {
        seen.borrow_mut().push(e.to_owned());
        if e.contains("dateTime()") { Err("functions are not supported".into()) } else { Ok(()) }
    };
    let errors = parse_with(&xml, &ParseOptions::default().with_expression_check(&check)).unwrap_err();
    assert!(seen.borrow().contains(&"${amount > 1000}".to_owned()));
    assert!(seen.borrow().contains(&"${salesManager}".to_owned()));
    let [e] = errors.as_slice() else { panic!("{errors}") };
    assert_eq!(e.element_id.as_deref(), Some("Activity_ManualApproval"));
    assert!(
        e.message.contains("dueDate '${dateTime().plusDays(2).toDate()}' is not a valid expression: functions"),
        "{e}"
    );
}

#[test]
fn the_model_serializes_to_json() {
    let defs = load("08-exclusive-gateway.bpmn");
    let json = serde_json::to_value(&defs).unwrap();
    let gw = &json["processes"][0]["nodes"][1];
    assert_eq!(gw["id"], "decide");
    assert_eq!(gw["element"], "exclusiveGateway");
    assert_eq!(gw["kind"], "exclusiveGateway");
    let timer = serde_json::to_value(load("25-intermediate-timer.bpmn")).unwrap();
    assert_eq!(
        timer["processes"][0]["nodes"][1]["kind"]["intermediateCatchEvent"]["trigger"]["timer"]["value"]["duration"],
        "PT5M"
    );
}

#[test]
fn flows_without_ids_get_unique_ones_from_their_ends() {
    let defs = load("flowable-tutorial-holiday-request.bpmn");
    let p = defs.process("holidayRequest").unwrap();
    assert_eq!(outgoing_targets(p, "decision"), ["externalSystemCall", "sendRejectionMail"]);
    assert!(p.flow_by_id("flow_decision_externalSystemCall").is_some());
    // Two flows between the same ends, and a made-up id already taken by a real element.
    let xml = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL">
  <process id="p">
    <startEvent id="s"/>
    <sequenceFlow sourceRef="s" targetRef="g"/>
    <parallelGateway id="g"/>
    <sequenceFlow sourceRef="g" targetRef="j"/>
    <sequenceFlow sourceRef="g" targetRef="j"/>
    <parallelGateway id="j"/>
    <sequenceFlow id="flow_j_e" sourceRef="j" targetRef="e"/>
    <endEvent id="e"/>
  </process>
</definitions>"#;
    let defs = parse(xml).unwrap();
    let p = defs.process("p").unwrap();
    let ids: Vec<&str> = p.flows.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["flow_s_g", "flow_g_j", "flow_g_j_2", "flow_j_e"]);
}

#[test]
fn link_events_pair_by_name_within_their_scope() {
    let defs = load("39-link-events.bpmn");
    let p = defs.process("linkEvents").unwrap();
    let NodeKind::IntermediateThrowEvent(t) = &node(p, "toJoinB").kind else { panic!("not a throw event") };
    let link = t.link.as_ref().expect("resolved link");
    assert_eq!((link.name.as_str(), p.node(link.target).id.as_str()), ("B", "fromB"));
    assert_eq!(node(p, "fromB").kind.trigger(), Some(&EventTrigger::Link("B".into())));
}

#[test]
fn message_throw_events_run_as_service_tasks_only_when_they_name_one() {
    let defs = load("40-signal-end-message-throw.bpmn");
    let p = defs.process("signalEndMessageThrow").unwrap();
    let NodeKind::ServiceTask(notify) = &node(p, "notify").kind else { panic!("notify is not a service task") };
    assert_eq!(notify.implementation, Implementation::External { topic: "notify".into() });
    assert_eq!(node(p, "notify").element, "intermediateThrowEvent");
    assert!(
        matches!(&node(p, "confirm").kind, NodeKind::IntermediateThrowEvent(t) if t.link.is_none() && t.signal.is_none())
    );
    assert!(matches!(&node(p, "archived").kind, NodeKind::ServiceTask(_)));
    assert!(matches!(&node(p, "finished").kind, NodeKind::EndEvent(EndEvent::Signal(s)) if s.name == "allDone"));
}

/// `*:expression` that is more than a name is Flowable's and Camunda's expression service task
/// (evaluated, its value in `resultVariable`), not a handler named `true`; `${name}` still
/// names a handler; every expression reaches the deployment's expression check, which refuses
/// a bean method call naming the element.
#[test]
fn expression_service_tasks_are_evaluated_not_handlers() {
    let xml = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:flowable="http://flowable.org/bpmn"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" xmlns:activiti="http://activiti.org/bpmn">
  <process id="p">
    <startEvent id="s"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="yes"/>
    <serviceTask id="yes" flowable:expression="${true}" flowable:resultVariable="ok"/>
    <sequenceFlow id="f2" sourceRef="yes" targetRef="double"/>
    <serviceTask id="double" camunda:expression="${amount * 2}" camunda:resultVariable="doubled"/>
    <sequenceFlow id="f3" sourceRef="double" targetRef="plain"/>
    <serviceTask id="plain" activiti:expression=" ${'done'} "/>
    <sequenceFlow id="f4" sourceRef="plain" targetRef="named"/>
    <serviceTask id="named" flowable:expression="${archiver}"/>
    <sequenceFlow id="f5" sourceRef="named" targetRef="e"/>
    <endEvent id="e"/>
  </process>
</definitions>"#;
    let defs = parse(xml).unwrap();
    let p = &defs.processes[0];
    let task = |id: &str| match &node(p, id).kind {
        NodeKind::ServiceTask(t) => (t.implementation.clone(), t.result_variable.clone()),
        other => panic!("{other:?}"),
    };
    let expr = |t: &str| Implementation::Expression { text: t.into() };
    assert_eq!(task("yes"), (expr("${true}"), Some("ok".into())));
    assert_eq!(task("double"), (expr("${amount * 2}"), Some("doubled".into())));
    assert_eq!(task("plain"), (expr("${'done'}"), None));
    assert_eq!(task("named").0, Implementation::Handler { name: "archiver".into(), source: HandlerSource::Expression });

    let bean = xml.replace("${amount * 2}", "${myBean.doIt()}");
    let check = |text: &str| if text.contains('(') { Err("method calls are not allowed".to_string()) } else { Ok(()) };
    // What the expression language cannot evaluate, a bean method call, names a handler.
    let defs = parse_with(&bean, &ParseOptions::default().with_expression_check(&check)).unwrap();
    match &node(&defs.processes[0], "double").kind {
        NodeKind::ServiceTask(t) => {
            assert_eq!(
                t.implementation,
                Implementation::Handler { name: "myBean.doIt".into(), source: HandlerSource::Method }
            );
            assert!(t.arguments.is_empty());
        }
        other => panic!("{other:?}"),
    }
    let args = xml.replace("${amount * 2}", "${svc.post(order.id, 'x')}");
    let defs = parse_with(&args, &ParseOptions::default().with_expression_check(&check)).unwrap();
    match &node(&defs.processes[0], "double").kind {
        NodeKind::ServiceTask(t) => assert_eq!(t.arguments, ["${order.id}", "${'x'}"]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn non_executable_processes_deploy_as_nothing_and_are_named() {
    let xml = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="defs">
  <process id="sketch" isExecutable="false"><startEvent id="s"/></process>
  <process id="partner" isExecutable="false"/>
</definitions>"#;
    let defs = parse(xml).unwrap();
    assert!(defs.processes.is_empty());
    assert_eq!(defs.skipped_processes, ["sketch", "partner"]);
    let none = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="defs"/>"#;
    assert!(parse(none).unwrap_err().to_string().contains("contains no process"));
}

#[test]
fn types_and_the_implementation_attribute_name_handlers_and_topics_rebind_them() {
    let xml = r###"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:flowable="http://flowable.org/bpmn" id="d">
  <process id="p">
    <startEvent id="s"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="mail"/>
    <serviceTask id="mail" flowable:type="mail"/>
    <sequenceFlow id="f2" sourceRef="mail" targetRef="conn"/>
    <serviceTask id="conn" implementation="send-email-connector"/>
    <sequenceFlow id="f3" sourceRef="conn" targetRef="ws"/>
    <serviceTask id="ws" implementation="##WebService" flowable:expression="${svc.post(a, 2)}"/>
    <sequenceFlow id="f4" sourceRef="ws" targetRef="e"/>
    <endEvent id="e"/>
  </process>
</definitions>"###;
    let check = |text: &str| if text.contains('(') { Err("no method calls".to_string()) } else { Ok(()) };
    let mut defs = parse_with(xml, &ParseOptions::default().with_expression_check(&check)).unwrap();
    let handler = |defs: &kairos_bpmn::Definitions, id: &str| match &node(&defs.processes[0], id).kind {
        NodeKind::ServiceTask(t) => t.implementation.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(handler(&defs, "mail"), Implementation::Handler { name: "mail".into(), source: HandlerSource::Type });
    assert_eq!(
        handler(&defs, "conn"),
        Implementation::Handler { name: "send-email-connector".into(), source: HandlerSource::Implementation }
    );
    assert_eq!(defs.bind_topics(|n| (n != "mail").then(|| format!("t-{n}"))), 2);
    assert_eq!(handler(&defs, "mail"), Implementation::Handler { name: "mail".into(), source: HandlerSource::Type });
    assert_eq!(handler(&defs, "conn"), Implementation::External { topic: "t-send-email-connector".into() });
    assert_eq!(handler(&defs, "ws"), Implementation::External { topic: "t-svc.post".into() });
    // A bound method's arguments are an input parameter of the task.
    let io = node(&defs.processes[0], "ws").io.clone().unwrap();
    assert_eq!(io.inputs[0].name, "arguments");
}

#[test]
fn compensation_links_each_activity_to_its_handler_and_each_throw_to_its_activity() {
    let defs = load("45-compensation-one-activity.bpmn");
    let p = defs.process("compensateOneActivity").unwrap();
    let handler = |id: &str| node(p, id).compensation_handler.map(|h| p.node(h).id.as_str());
    assert_eq!((handler("bookHotel"), handler("bookFlight")), (Some("cancelHotel"), Some("cancelFlight")));
    assert!(node(p, "cancelHotel").for_compensation && !node(p, "bookHotel").for_compensation);
    assert_eq!(node(p, "hotelBooked").kind.trigger(), Some(&EventTrigger::Compensate));
    let NodeKind::IntermediateThrowEvent(t) = &node(p, "undoHotel").kind else { panic!() };
    let c = t.compensate.as_ref().expect("a compensation throw");
    assert_eq!(c.activity.map(|a| p.node(a).id.as_str()), Some("bookHotel"));
    assert!(defs.diagram.edges.contains_key("Association_1"), "the association's edge is drawn");

    let defs = load("46-compensation-whole-scope.bpmn");
    let p = defs.process("compensateWholeScope").unwrap();
    let NodeKind::EndEvent(EndEvent::Compensate(c)) = &node(p, "compensateAll").kind else { panic!() };
    assert_eq!(c.activity, None, "no activityRef: the whole scope");

    let defs = load("48-compensation-event-subprocess.bpmn");
    let p = defs.process("compensationEventSubProcess").unwrap();
    let order = p.node_idx("order").unwrap();
    assert_eq!(p.compensation_event_sub_process(order).map(|e| p.node(e).id.as_str()), Some("compensation"));
    assert_eq!(p.compensation_event_sub_process(p.node_idx("compensation").unwrap()), None);
}

#[test]
fn business_rule_tasks_name_decisions_the_camunda_and_flowable_ways() {
    let xml = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" xmlns:flowable="http://flowable.org/bpmn">
  <process id="p">
    <startEvent id="s"/>
    <businessRuleTask id="classify" camunda:decisionRef="invoiceClassification" camunda:resultVariable="c"
        camunda:mapDecisionResult="singleEntry"/>
    <businessRuleTask id="assign" camunda:decisionRef="${which}" camunda:decisionRefBinding="version"
        camunda:decisionRefVersion="2" camunda:resultVariable="groups" camunda:mapDecisionResult="collectEntries"/>
    <businessRuleTask id="tagged" camunda:decisionRef="d" camunda:decisionRefBinding="versionTag"
        camunda:decisionRefVersionTag="v1"/>
    <serviceTask id="flow" flowable:type="dmn">
      <extensionElements>
        <flowable:field name="decisionTableReferenceKey"><flowable:string>approve</flowable:string></flowable:field>
        <flowable:field name="decisionTaskThrowErrorOnNoHits"><flowable:string>true</flowable:string></flowable:field>
        <flowable:field name="sameDeployment"><flowable:string>true</flowable:string></flowable:field>
      </extensionElements>
    </serviceTask>
  </process>
</definitions>"#;
    let defs = kairos_bpmn::parse(xml).unwrap();
    let p = &defs.processes[0];
    let decision = |id: &str| match &node(p, id).kind {
        NodeKind::ServiceTask(s) => match &s.implementation {
            Implementation::Decision(d) => (d.clone(), s.result_variable.clone()),
            other => panic!("{id}: {other:?}"),
        },
        other => panic!("{id}: {other:?}"),
    };
    let (d, var) = decision("classify");
    assert_eq!(
        (d.key.as_str(), &d.binding, d.mapping),
        ("invoiceClassification", &DecisionBinding::Latest, DecisionMapping::SingleEntry)
    );
    assert_eq!(var.as_deref(), Some("c"));
    let (d, var) = decision("assign");
    assert_eq!(
        (d.key.as_str(), &d.binding, d.mapping),
        ("${which}", &DecisionBinding::Version("2".into()), DecisionMapping::CollectEntries)
    );
    assert_eq!(var.as_deref(), Some("groups"));
    let (d, var) = decision("tagged");
    assert_eq!(
        (&d.binding, d.mapping, var),
        (&DecisionBinding::VersionTag("v1".into()), DecisionMapping::ResultList, None)
    );
    let (d, _) = decision("flow");
    assert_eq!(
        (d.key.as_str(), &d.binding, d.mapping),
        ("approve", &DecisionBinding::Deployment, DecisionMapping::Flowable { throw_on_no_hits: true })
    );
}

/// Early Camunda Modeler versions and many of Camunda 7's engine test models declare the
/// extensions as `http://camunda.org/bpmn`: read as Camunda's, not silently dropped.
#[test]
fn the_early_camunda_namespace_is_camundas() {
    let xml = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/bpmn">
  <process id="p">
    <startEvent id="s"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="t"/>
    <userTask id="t" camunda:assignee="${assignee}" camunda:asyncBefore="true"/>
  </process>
</definitions>"#;
    let defs = parse(xml).unwrap();
    let t = node(&defs.processes[0], "t");
    assert!(t.async_before);
    assert!(matches!(&t.kind, NodeKind::UserTask(u) if u.assignee.as_deref() == Some("${assignee}")), "{:?}", t.kind);
}

/// A user task's form fields, as Camunda Modeler and the Activiti designer write them.
#[test]
fn user_task_form_fields_of_both_vendors() {
    let fields = |file: &str, task: &str| {
        let defs = load(file);
        let node = defs.processes[0].node_by_id(task).unwrap().clone();
        match node.kind {
            NodeKind::UserTask(t) => t.form_fields,
            other => panic!("{task} is {other:?}"),
        }
    };
    let camunda = fields("camunda-modeler-order-payment.bpmn", "Activity_ManualApproval");
    assert_eq!(camunda.len(), 1);
    assert_eq!(
        (camunda[0].id.as_str(), camunda[0].label.as_deref(), camunda[0].field_type.as_str()),
        ("approved", Some("Approved?"), "boolean")
    );
    assert!(camunda[0].writable && !camunda[0].required);
    let activiti = fields("activiti-designer-leave-request.bpmn", "deptLeaderAudit");
    assert_eq!(activiti.len(), 1);
    let f = &activiti[0];
    assert_eq!((f.id.as_str(), f.field_type.as_str(), f.required), ("deptLeaderPass", "enum", true));
    assert_eq!(
        f.values,
        [("true".to_string(), Some("同意".to_string())), ("false".to_string(), Some("拒绝".to_string()))]
    );
    assert!(fields("activiti-designer-leave-request.bpmn", "hrAudit").is_empty());
}
