//! The parser's cost is bounded per element: attributes beyond the limit are refused with
//! the element and line, before any per-attribute work piles up.

use kairos_bpmn::limits::MAX_ATTRIBUTES;

fn task_with_attributes(n: usize) -> String {
    let attrs: String = (0..n).map(|i| format!(" a{i}=\"v\"")).collect();
    format!(
        r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL">
  <process id="p" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="t"/>
    <task id="t"{attrs}/>
    <sequenceFlow id="f2" sourceRef="t" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#
    )
}

#[test]
fn an_element_with_sixty_thousand_attributes_is_refused_with_its_line() {
    let err = kairos_bpmn::parse(&task_with_attributes(60_000)).unwrap_err();
    let first = err.iter().next().unwrap();
    assert!(first.message.contains("<task> has more than 256 attributes"), "{err}");
    assert_eq!(first.line, 5, "{err}");
}

#[test]
fn an_element_at_the_attribute_limit_parses() {
    // `id` is one of them.
    let defs = kairos_bpmn::parse(&task_with_attributes(MAX_ATTRIBUTES - 1)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(defs.processes[0].id, "p");
}

#[test]
fn a_repeated_attribute_is_still_refused() {
    let xml = task_with_attributes(2).replace("a1=", "a0=");
    let err = kairos_bpmn::parse(&xml).unwrap_err();
    assert!(err.to_string().contains("attribute a0 is repeated"), "{err}");
}
