//! One case per validation rule: a process body with one mistake, and the
//! problem it must produce (naming the element, on the element's line).

use kairos_bpmn::parse;

/// Wraps `body` in a document with a start event `s`, an end event `e`, a
/// flow between them, and declarations to refer to.
fn doc(body: &str) -> String {
    format!(
        r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" xmlns:flowable="http://flowable.org/bpmn"
    xmlns:kairos="urn:kairos:bpmn" xmlns:bpmndi="http://www.omg.org/spec/BPMN/20100524/DI"
    xmlns:dc="http://www.omg.org/spec/DD/20100524/DC">
  <message id="m_named" name="paid"/>
  <message id="m_anon"/>
  <signal id="sig" name="stop"/>
  <error id="err" errorCode="E1"/>
  <process id="p" camunda:historyTimeToLive="P7D">
    <startEvent id="s"/>
    <sequenceFlow id="se" sourceRef="s" targetRef="e"/>
    <endEvent id="e"/>
{body}
  </process>
</definitions>"#
    )
}

/// `(body, element id, message fragment)`.
const CASES: &[(&str, &str, &str)] = &[
    (
        r#"<subProcess id="esp" triggeredByEvent="true"><startEvent id="es"><messageEventDefinition messageRef="m_named"/></startEvent></subProcess>
           <sequenceFlow id="x" sourceRef="s" targetRef="esp"/>"#,
        "esp",
        "an event sub-process cannot have incoming flows",
    ),
    (
        r#"<subProcess id="sp"><startEvent id="ss"/><task id="inner"/></subProcess>
           <task id="outer"/>
           <boundaryEvent id="b" attachedToRef="inner"><timerEventDefinition><timeDuration>PT1M</timeDuration></timerEventDefinition></boundaryEvent>"#,
        "b",
        "attachedToRef 'inner' is in another scope",
    ),
    (r#"<subProcess id="sp"><startEvent id="a"/><startEvent id="b"/></subProcess>"#, "sp", "has 2 start events"),
    (r#"<startEvent id="s2"/>"#, "p", "has 2 none start events"),
    (r#"<receiveTask id="r" messageRef="m_anon"/>"#, "r", "message 'm_anon' has no name"),
    (
        r#"<subProcess id="sp"><startEvent id="ts"><timerEventDefinition><timeDuration>PT1M</timeDuration></timerEventDefinition></startEvent></subProcess>"#,
        "ts",
        "unsupported element timerEventDefinition in startEvent 'ts': startEvent accepts: none",
    ),
    (r#"<serviceTask id="t" camunda:type="external"/>"#, "t", "camunda:type=\"external\" needs a camunda:topic"),
    (r#"<serviceTask id="t" camunda:topic="x"/>"#, "t", "a topic needs camunda:type=\"external\""),
    (r#"<serviceTask id="t" flowable:type=" "/>"#, "t", "flowable:type is empty"),
    (r#"<serviceTask id="t" kairos:handler="  "/>"#, "t", "kairos:handler is empty"),
    (r#"<task id="t" camunda:asyncBefore="yes"/>"#, "t", "camunda:asyncBefore must be true or false, not 'yes'"),
    (
        r#"<task id="t"><multiInstanceLoopCharacteristics><loopCardinality>many</loopCardinality></multiInstanceLoopCharacteristics></task>"#,
        "t",
        "loopCardinality 'many' must be a whole number or an expression",
    ),
    (
        r#"<intermediateCatchEvent id="c"><timerEventDefinition><timeDuration>PT1M</timeDuration></timerEventDefinition><signalEventDefinition signalRef="sig"/></intermediateCatchEvent>"#,
        "c",
        "has 2 event definitions",
    ),
    (
        r#"<intermediateCatchEvent id="c"><timerEventDefinition><timeDate>2030-01-01T00:00:00Z</timeDate><timeDuration>PT1M</timeDuration></timerEventDefinition></intermediateCatchEvent>"#,
        "c",
        "needs exactly one of timeDate, timeDuration, timeCycle",
    ),
    (
        r#"<intermediateCatchEvent id="c"/>"#,
        "c",
        "needs a timer, message, signal, link or conditional event definition",
    ),
    (r#"<eventBasedGateway id="g" instantiate="true"/>"#, "g", "unsupported element eventBasedGateway 'g'"),
    (
        r#"<task id="t" isForCompensation="true"/>"#,
        "t",
        "no compensation boundary event's association leads to this compensation handler, so it can never run",
    ),
    (
        r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"><compensateEventDefinition/></boundaryEvent>
           <task id="h" isForCompensation="true"/><association id="as" sourceRef="b" targetRef="h" associationDirection="One"/>
           <sequenceFlow id="x" sourceRef="s" targetRef="h"/>"#,
        "h",
        "a compensation handler (isForCompensation=\"true\") has no incoming or outgoing sequence flows",
    ),
    (
        r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"><compensateEventDefinition/></boundaryEvent>"#,
        "b",
        "a compensation boundary event needs an association to its compensation handler",
    ),
    (
        r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"><compensateEventDefinition/></boundaryEvent>
           <task id="h"/><association id="as" sourceRef="b" targetRef="h"/>"#,
        "b",
        "its association leads to task 'h', which is not isForCompensation=\"true\"",
    ),
    (
        r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"><compensateEventDefinition/></boundaryEvent>
           <task id="h" isForCompensation="true"/><association id="as" sourceRef="b" targetRef="h"/>
           <sequenceFlow id="bf" sourceRef="b" targetRef="e"/>"#,
        "b",
        "a compensation boundary event has no outgoing sequence flows",
    ),
    (
        r#"<task id="a"/><boundaryEvent id="b1" attachedToRef="a"><compensateEventDefinition/></boundaryEvent>
           <task id="h" isForCompensation="true"/><association id="as1" sourceRef="b1" targetRef="h"/>
           <boundaryEvent id="b2" attachedToRef="a"><compensateEventDefinition/></boundaryEvent><association id="as2" sourceRef="b2" targetRef="h"/>"#,
        "b2",
        "'a' already has the compensation boundary event 'b1'",
    ),
    (
        r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"><compensateEventDefinition activityRef="a"/></boundaryEvent>
           <task id="h" isForCompensation="true"/><association id="as" sourceRef="b" targetRef="h"/>"#,
        "b",
        "a catching compensateEventDefinition has no activityRef",
    ),
    (
        r#"<intermediateThrowEvent id="x"><compensateEventDefinition activityRef="nope"/></intermediateThrowEvent>"#,
        "x",
        "activityRef 'nope' names no activity of the process",
    ),
    (
        r#"<task id="a"/><intermediateThrowEvent id="x"><compensateEventDefinition activityRef="a"/></intermediateThrowEvent>"#,
        "x",
        "activityRef 'a' is task 'a', which has no compensation handler",
    ),
    (
        r#"<subProcess id="esp" triggeredByEvent="true"><startEvent id="cs"><compensateEventDefinition/></startEvent></subProcess>"#,
        "cs",
        "a compensation start event belongs to an event sub-process inside an embedded sub-process",
    ),
    (r#"<callActivity id="c"/>"#, "c", "has no calledElement"),
    (
        r#"<callActivity id="c" calledElement="x"><extensionElements><camunda:in source="a"/></extensionElements></callActivity>"#,
        "c",
        "camunda:in needs source or sourceExpression with a target",
    ),
    (
        r#"<sequenceFlow id="cond" sourceRef="s" targetRef="e"><conditionExpression>${x}</conditionExpression></sequenceFlow>"#,
        "cond",
        "has a condition but leaves startEvent 's'",
    ),
    (
        r#"<parallelGateway id="g" default="se"/>"#,
        "g",
        "only exclusive, inclusive and complex gateways and activities have a default flow",
    ),
    (r#"<exclusiveGateway id="g" default="nope"/>"#, "g", "default flow 'nope' does not exist"),
    (
        r#"<exclusiveGateway id="g"/><sequenceFlow id="cond" sourceRef="g" targetRef="e"><conditionExpression>u &gt; 0</conditionExpression></sequenceFlow>"#,
        "cond",
        "condition 'u > 0' is plain text, not an expression: write it as ${u > 0}",
    ),
    (
        r#"<startEvent id="cs"><conditionalEventDefinition><condition language="javascript">x &gt; 1</condition></conditionalEventDefinition></startEvent>"#,
        "cs",
        "a process's conditional start event takes an expression such as ${temperature > 30}",
    ),
    (
        r#"<intermediateCatchEvent id="c"><eventDefinitionRef>nope</eventDefinitionRef></intermediateCatchEvent>"#,
        "c",
        "eventDefinitionRef 'nope' names no event definition declared in the document",
    ),
    (
        r#"<complexGateway id="g"><activationCondition>two</activationCondition></complexGateway>"#,
        "g",
        "activationCondition 'two' must be an expression such as ${activationCount >= 2}",
    ),
    (
        r#"<task id="t"><standardLoopCharacteristics/></task>"#,
        "t",
        "standardLoopCharacteristics needs a loopCondition or a loopMaximum: it would never end",
    ),
    (
        r#"<task id="t"><standardLoopCharacteristics><loopCondition>count &lt; 3</loopCondition></standardLoopCharacteristics></task>"#,
        "t",
        "loopCondition 'count < 3' must be an expression such as ${loopCounter < 3}",
    ),
    (
        r#"<subProcess id="esp" triggeredByEvent="true"><standardLoopCharacteristics loopMaximum="2"/><startEvent id="es"><timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition></startEvent></subProcess>"#,
        "esp",
        "an event sub-process runs once per event: it cannot have loop characteristics",
    ),
    (
        r#"<task id="t"><standardLoopCharacteristics loopMaximum="many"/></task>"#,
        "t",
        "loopMaximum 'many' must be a whole number",
    ),
    (
        r#"<task id="t"><standardLoopCharacteristics loopMaximum="2"/><multiInstanceLoopCharacteristics><loopCardinality>2</loopCardinality></multiInstanceLoopCharacteristics></task>"#,
        "t",
        "has both multiInstanceLoopCharacteristics and standardLoopCharacteristics: keep one",
    ),
    (
        r#"<intermediateThrowEvent id="l"><linkEventDefinition name=" "/></intermediateThrowEvent>"#,
        "l",
        "linkEventDefinition has no name, so no link event can pair with it",
    ),
    (
        r#"<intermediateCatchEvent id="c1"><linkEventDefinition name="go"/></intermediateCatchEvent>
           <intermediateCatchEvent id="c2"><linkEventDefinition name="go"/></intermediateCatchEvent>"#,
        "c2",
        "link 'go' is already caught by 'c1' in this scope",
    ),
    (
        r#"<intermediateThrowEvent id="l"><linkEventDefinition name="go"/></intermediateThrowEvent>
           <intermediateCatchEvent id="c"><linkEventDefinition name="go"/></intermediateCatchEvent>
           <sequenceFlow id="out" sourceRef="l" targetRef="e"/>"#,
        "l",
        "a throwing link event cannot have outgoing flows (flow 'out')",
    ),
    (
        r#"<endEvent id="x"><messageEventDefinition messageRef="m_named" camunda:class=" "/></endEvent>"#,
        "x",
        "camunda:class is empty",
    ),
    (
        r#"<endEvent id="x"><messageEventDefinition kairos:handler="notify"/></endEvent>
           <sequenceFlow id="out" sourceRef="x" targetRef="e"/>"#,
        "x",
        "an end event cannot have outgoing flows (flow 'out')",
    ),
    (
        r#"<endEvent id="x"><messageEventDefinition kairos:handler="notify"/></endEvent>
           <boundaryEvent id="b" attachedToRef="x"><timerEventDefinition><timeDuration>PT1M</timeDuration></timerEventDefinition></boundaryEvent>"#,
        "b",
        "attachedToRef 'x' is endEvent; boundary events attach to activities",
    ),
    (
        r#"<boundaryEvent id="b" attachedToRef="nope"><timerEventDefinition><timeDuration>PT1M</timeDuration></timerEventDefinition></boundaryEvent>"#,
        "b",
        "attachedToRef 'nope' does not exist",
    ),
    (
        r#"<task id="t"/><boundaryEvent id="b" attachedToRef="t"><signalEventDefinition signalRef="nope"/></boundaryEvent>"#,
        "b",
        "signalRef 'nope' does not exist",
    ),
    (r#"<endEvent id="x"><errorEventDefinition/></endEvent>"#, "x", "no errorRef, so there is no error code to throw"),
    (
        r#"<endEvent id="x"><signalEventDefinition signalRef="nope"/></endEvent>"#,
        "x",
        "signalRef 'nope' does not exist",
    ),
    (
        r#"<endEvent id="x"><compensateEventDefinition waitForCompletion="no"/></endEvent>"#,
        "x",
        "waitForCompletion must be true or false, not 'no'",
    ),
    (r#"<task id="t"><ioBinding/></task>"#, "t", "unsupported element ioBinding in task 't'"),
    (
        r#"<intermediateCatchEvent id="c"><conditionalEventDefinition><condition>approved</condition></conditionalEventDefinition></intermediateCatchEvent>"#,
        "c",
        "conditionalEventDefinition has condition 'approved'; it needs a ${...} expression",
    ),
    (
        r#"<intermediateCatchEvent id="c"><conditionalEventDefinition camunda:variableEvents="create"><condition>${x}</condition></conditionalEventDefinition></intermediateCatchEvent>"#,
        "c",
        "unsupported element camunda:variableEvents in intermediateCatchEvent 'c'",
    ),
    (
        r#"<intermediateThrowEvent id="x"><extensionElements><camunda:inputOutput/></extensionElements></intermediateThrowEvent>"#,
        "x",
        "unsupported element camunda:inputOutput in intermediateThrowEvent 'x': input/output mappings are supported on activities",
    ),
    (
        r#"<task id="t"><extensionElements><camunda:inputOutput><camunda:inputParameter name="a"><camunda:script scriptFormat="javascript"></camunda:script></camunda:inputParameter></camunda:inputOutput></extensionElements></task>"#,
        "t",
        "the parameter's script is empty",
    ),
    (
        r#"<task id="t"><extensionElements><camunda:inputOutput><camunda:outputParameter>${x}</camunda:outputParameter></camunda:inputOutput></extensionElements></task>"#,
        "t",
        "outputParameter has no name",
    ),
    (r#"<adHocSubProcess id="ah"/>"#, "ah", "unsupported element adHocSubProcess 'ah'"),
    (
        r#"<businessRuleTask id="br" camunda:decisionRef="d" camunda:decisionRefBinding="sometimes"/>"#,
        "br",
        "camunda:decisionRefBinding 'sometimes' is not latest, deployment, version or versionTag",
    ),
    (
        r#"<businessRuleTask id="br" camunda:decisionRef="d" camunda:mapDecisionResult="all"/>"#,
        "br",
        "camunda:mapDecisionResult 'all' is not resultList",
    ),
    (r#"<serviceTask id="fd" flowable:type="dmn"/>"#, "fd", "a dmn task needs the field decisionTableReferenceKey"),
    (
        r#"<sequenceFlow id="fl" sourceRef="s" targetRef="e"><extensionElements><camunda:taskListener class="X" event="create"/></extensionElements></sequenceFlow>"#,
        "fl",
        "a taskListener belongs on a userTask",
    ),
    (
        r#"<userTask id="ut"><extensionElements><camunda:taskListener class="X" event="timeout"/></extensionElements></userTask>"#,
        "ut",
        "taskListener event 'timeout' is not supported yet: use a timer boundary event on the task",
    ),
    (
        r#"<userTask id="ut"><extensionElements><camunda:taskListener class="X" event="created"/></extensionElements></userTask>"#,
        "ut",
        "taskListener event 'created' is not create, assignment, update, complete, delete or timeout",
    ),
    (
        r#"<userTask id="ut"><extensionElements><camunda:executionListener event="start"/></extensionElements></userTask>"#,
        "ut",
        "names no class, delegateExpression, expression or script",
    ),
    (
        r#"<userTask id="ut"><extensionElements><camunda:taskListener delegateExpression="not an expression" event="create"/></extensionElements></userTask>"#,
        "ut",
        "does not name a handler",
    ),
];

#[test]
fn each_rule_reports_the_element_and_its_line() {
    for (body, id, fragment) in CASES {
        let xml = doc(body);
        let errors = parse(&xml).expect_err(body);
        let hit = errors.iter().find(|e| e.message.contains(fragment));
        let Some(hit) = hit else { panic!("{body}\nexpected '{fragment}', got:\n{errors}") };
        assert_eq!(hit.element_id.as_deref(), Some(*id), "{hit}");
        // The reported line is one that mentions the element's id.
        let line = xml.lines().nth(hit.line as usize - 1).unwrap();
        assert!(line.contains(&format!("\"{id}\"")), "{hit} points at: {line}");
        assert_eq!(errors.len(), 1, "{body}\nexpected one problem, got:\n{errors}");
    }
}

#[test]
fn the_wrapper_itself_is_valid() {
    let defs = parse(&doc("")).unwrap();
    assert!(defs.process("p").is_some());
}

#[test]
fn history_time_to_live_is_days_or_a_duration() {
    let bad = doc("").replace("P7D", "forever");
    let errors = parse(&bad).unwrap_err();
    assert!(errors.first().message.contains("historyTimeToLive 'forever' must be a number of days"), "{errors}");
}

#[test]
fn diagram_numbers_must_be_numbers() {
    let xml = doc("").replace(
        "</definitions>",
        r#"<bpmndi:BPMNDiagram id="d"><bpmndi:BPMNPlane id="pl" bpmnElement="p">
  <bpmndi:BPMNShape id="sh" bpmnElement="s"><dc:Bounds x="NaN" y="1" width="2" height="3"/></bpmndi:BPMNShape>
</bpmndi:BPMNPlane></bpmndi:BPMNDiagram></definitions>"#,
    );
    let errors = parse(&xml).unwrap_err();
    assert!(errors.first().message.contains("x 'NaN' is not a number"), "{errors}");
}

#[test]
fn unknown_top_level_elements_are_refused_and_descriptive_ones_ignored() {
    let xml = doc("").replace(
        "<process id=\"p\"",
        r#"<choreography id="ch"/><itemDefinition id="i"/><escalation id="esc"/><dataStore id="ds"/>
  <process id="p""#,
    );
    let errors = parse(&xml).unwrap_err();
    assert_eq!(errors.len(), 1, "{errors}");
    assert!(errors.first().message.starts_with("unsupported element choreography 'ch'"));
}

#[test]
fn an_invalid_is_executable_is_a_problem() {
    let xml = doc("").replace("<process id=\"p\"", "<process id=\"p\" isExecutable=\"maybe\"");
    assert!(parse(&xml).unwrap_err().first().message.contains("isExecutable must be true or false"));
}

#[test]
fn a_large_single_line_model_parses() {
    let mut body = String::new();
    let mut prev = "s".to_owned();
    for i in 0..3000 {
        body.push_str(&format!(r#"<task id="t{i}"/><sequenceFlow id="f{i}" sourceRef="{prev}" targetRef="t{i}"/>"#));
        prev = format!("t{i}");
    }
    let xml = doc(&body).replace('\n', " ");
    let defs = parse(&xml).unwrap();
    assert_eq!(defs.processes[0].nodes.len(), 3002);
    let last = defs.processes[0].node_by_id("t2999").unwrap();
    assert_eq!(last.line, 1);
    assert_eq!(last.column as usize, xml.find(r#"<task id="t2999""#).unwrap() + 1);
}

/// `timeDuration` `PT0S` is valid ISO 8601 and means "now" (Flowable's own tests use it);
/// a cycle of zero would fire forever, so `timeCycle` keeps refusing it.
#[test]
fn a_zero_time_duration_means_now_and_a_zero_cycle_is_refused() {
    let catch = |timer: &str| {
        doc(&format!(
            r#"<intermediateCatchEvent id="w"><timerEventDefinition>{timer}</timerEventDefinition></intermediateCatchEvent>"#
        ))
    };
    let defs = parse(&catch("<timeDuration>PT0S</timeDuration>")).unwrap();
    let w = defs.processes[0].node_by_id("w").unwrap();
    match w.kind.trigger() {
        Some(kairos_bpmn::EventTrigger::Timer(t)) => {
            assert!(matches!(&t.value, kairos_bpmn::TimerValue::Duration(d) if d.is_zero()), "{t:?}")
        }
        other => panic!("{other:?}"),
    }
    for zero in ["P0D", "PT0.000S"] {
        parse(&catch(&format!("<timeDuration>{zero}</timeDuration>"))).unwrap();
    }
    let errors = parse(&catch("<timeCycle>R3/PT0S</timeCycle>")).unwrap_err();
    let hit = errors.first();
    assert_eq!(hit.element_id.as_deref(), Some("w"), "{errors}");
    assert!(hit.message.contains("zero-length durations are not allowed"), "{errors}");
}
