//! One flow node: its kind, its common attributes, and the children it may
//! have. Anything with execution semantics that kairos does not implement is
//! refused here, so a model never silently runs a different process than
//! the one drawn.

use super::process::{Pending, ScopeKind};
use super::{Ctx, event, vendor};
use crate::error::quote;
use crate::model::{ComplexGateway, NodeKind, ReceiveTask, ScriptTask, SubProcess};
use crate::xml::Element;

/// The flow-node tags kairos executes, as the `'static` names the model keeps.
pub(crate) fn flow_node_tag(local: &str) -> Option<&'static str> {
    const TAGS: &[&str] = &[
        "startEvent",
        "endEvent",
        "userTask",
        "serviceTask",
        "scriptTask",
        "sendTask",
        "businessRuleTask",
        "receiveTask",
        "manualTask",
        "task",
        "exclusiveGateway",
        "parallelGateway",
        "inclusiveGateway",
        "complexGateway",
        "eventBasedGateway",
        "subProcess",
        "transaction",
        "callActivity",
        "boundaryEvent",
        "intermediateCatchEvent",
        "intermediateThrowEvent",
    ];
    TAGS.iter().find(|t| **t == local).copied()
}

/// Why a BPMN element found among the flow elements is refused.
pub(crate) fn unsupported_reason(local: &str) -> &'static str {
    match local {
        "adHocSubProcess" => "ad-hoc sub-processes are not supported",
        "callChoreography" | "subChoreography" | "choreographyTask" => "choreographies are not executable",
        _ => "kairos does not execute this element",
    }
}

/// Children any flow node may have without changing what it does.
const DESCRIPTIVE_CHILDREN: &[&str] = &["documentation", "extensionElements", "incoming", "outgoing"];

/// Children of activities that describe data, not behaviour.
const ACTIVITY_CHILDREN: &[&str] = &[
    "ioSpecification",
    "property",
    "dataInputAssociation",
    "dataOutputAssociation",
    "multiInstanceLoopCharacteristics",
    "standardLoopCharacteristics",
];

/// Children of events besides their event definition.
const EVENT_CHILDREN: &[&str] =
    &["dataInput", "dataOutput", "dataInputAssociation", "dataOutputAssociation", "inputSet", "outputSet"];

/// Children of user tasks naming people.
const USER_TASK_CHILDREN: &[&str] = &["humanPerformer", "potentialOwner", "performer", "resourceRole", "rendering"];

/// True when `local` is a child a sub-process element may have that is not a
/// flow element (those are the scope walker's business).
pub(crate) fn is_activity_child(local: &str) -> bool {
    DESCRIPTIVE_CHILDREN.contains(&local) || ACTIVITY_CHILDREN.contains(&local)
}

/// Reads the kind of `el` (tag `tag`). Problems are recorded in `ctx`;
/// the answer is then a harmless stand-in so validation can go on.
/// The second value is what the node names by text, resolved once every node is known (a
/// boundary event's `attachedToRef`, a link's name, a compensation's `activityRef`).
pub(crate) fn read_kind(
    ctx: &mut Ctx<'_>,
    el: &Element,
    tag: &'static str,
    scope: ScopeKind,
) -> (NodeKind, Option<Pending>) {
    check_children(ctx, el, tag);
    vendor::check_extensions(ctx, el);
    let kind = match tag {
        "startEvent" => event::start_event(ctx, el, scope),
        "endEvent" => return event::end_event(ctx, el),
        "boundaryEvent" => {
            let (kind, attached) = event::boundary_event(ctx, el);
            return (kind, attached.map(Pending::AttachedTo));
        }
        "intermediateCatchEvent" => event::catch_event(ctx, el),
        "intermediateThrowEvent" => return event::throw_event(ctx, el),
        "userTask" => NodeKind::UserTask(vendor::user_task(ctx, el)),
        "serviceTask" | "sendTask" | "businessRuleTask" => service_task(ctx, el, tag),
        "scriptTask" => script_task(ctx, el),
        "receiveTask" => {
            let message = match el.attr("messageRef") {
                Some(r) => event::message_ref(ctx, el, Some(r)),
                None => None,
            };
            NodeKind::ReceiveTask(ReceiveTask { message })
        }
        "exclusiveGateway" => NodeKind::ExclusiveGateway,
        "parallelGateway" => NodeKind::ParallelGateway,
        "inclusiveGateway" => NodeKind::InclusiveGateway,
        "complexGateway" => NodeKind::ComplexGateway(complex_gateway(ctx, el)),
        "eventBasedGateway" => {
            if ctx.boolean(el, "instantiate", el.attr("instantiate"), false) {
                ctx.unsupported(el, "an instantiating event-based gateway is not supported: use message start events");
            }
            NodeKind::EventBasedGateway
        }
        "subProcess" => {
            let triggered_by_event = ctx.boolean(el, "triggeredByEvent", el.attr("triggeredByEvent"), false);
            NodeKind::SubProcess(SubProcess { triggered_by_event, transaction: false })
        }
        // `method` (##Compensate, ##Store, ##Image) names how a transaction is undone:
        // compensation is the one engines run.
        "transaction" => {
            if el.attr("method").is_some_and(|m| !m.trim().is_empty() && m.trim() != "##Compensate") {
                ctx.unsupported(el, "a transaction is undone by compensation: method must be ##Compensate");
            }
            NodeKind::SubProcess(SubProcess { triggered_by_event: false, transaction: true })
        }
        "callActivity" => NodeKind::CallActivity(vendor::call_activity(ctx, el)),
        _ => NodeKind::PassThrough, // manualTask, task
    };
    (kind, None)
}

/// A `complexGateway`: its `activationCondition`, which must be an expression.
fn complex_gateway(ctx: &mut Ctx<'_>, el: &Element) -> ComplexGateway {
    let activation = el.bpmn_child("activationCondition").map(|c| c.text.trim().to_owned()).filter(|t| !t.is_empty());
    if let Some(a) = &activation {
        if super::is_expression(a) {
            ctx.note_expression(el, "activationCondition", a);
        } else {
            ctx.problem(
                el,
                format!("activationCondition '{}' must be an expression such as ${{activationCount >= 2}}", quote(a)),
            );
        }
    }
    ComplexGateway { activation }
}

/// A `scriptTask`: `scriptFormat`, its `script` child, `*:resultVariable`. Flowable's
/// `autoStoreVariables="true"` (every top-level script variable becomes a process variable)
/// is refused: the sandbox keeps the script's globals to itself; `execution.setVariable` sets.
fn script_task(ctx: &mut Ctx<'_>, el: &Element) -> NodeKind {
    if let Some((_, v)) = el.vendor_attr("autoStoreVariables")
        && v.trim().eq_ignore_ascii_case("true")
    {
        ctx.unsupported(el, "autoStoreVariables is not supported: set variables with execution.setVariable");
    }
    let format = el.attr("scriptFormat").unwrap_or_default();
    let script = match el.bpmn_child("script") {
        Some(s) => ctx.script(s, el, "the script", format),
        None if el.vendor_attr("resource").is_some() => {
            ctx.problem(el, "the script names an external resource: put the script inline");
            None
        }
        None => {
            ctx.problem(el, "a scriptTask needs a script element");
            None
        }
    };
    let result_variable = el.vendor_attr("resultVariable").map(|(_, v)| v.trim().to_owned()).filter(|v| !v.is_empty());
    match script {
        Some(script) => NodeKind::ScriptTask(ScriptTask { script, result_variable }),
        None => NodeKind::PassThrough,
    }
}

fn service_task(ctx: &mut Ctx<'_>, el: &Element, tag: &str) -> NodeKind {
    const HOW: &str = "name a handler (kairos:handler, *:class, *:delegateExpression=\"${name}\") or an external \
                       topic (camunda:type=\"external\" camunda:topic, flowable:type=\"external-worker\" flowable:topic)";
    match vendor::service_task(ctx, el) {
        Ok(Some(task)) => return NodeKind::ServiceTask(task),
        Ok(None) if tag == "serviceTask" => ctx.problem(el, format!("names no handler: {HOW}")),
        Ok(None) => ctx.unsupported(el, &format!("a {tag} runs only when it names a handler or topic: {HOW}")),
        Err(()) => {}
    }
    NodeKind::PassThrough
}

/// True for the activity tags (tasks, sub-processes, call activities).
pub(crate) fn is_activity(tag: &str) -> bool {
    matches!(
        tag,
        "userTask"
            | "serviceTask"
            | "scriptTask"
            | "sendTask"
            | "businessRuleTask"
            | "receiveTask"
            | "manualTask"
            | "task"
            | "subProcess"
            | "transaction"
            | "callActivity"
    )
}

fn is_event(tag: &str) -> bool {
    tag.ends_with("Event")
}

/// Refuses unknown BPMN children of `el`. Flow elements inside a
/// sub-process are left to the scope walker, event definitions to `event`.
fn check_children(ctx: &mut Ctx<'_>, el: &Element, tag: &str) {
    for child in el.bpmn_children() {
        let name = child.local.as_str();
        let allowed = DESCRIPTIVE_CHILDREN.contains(&name)
            || (is_activity(tag) && ACTIVITY_CHILDREN.contains(&name))
            || (is_event(tag)
                && (EVENT_CHILDREN.contains(&name)
                    || name.ends_with("EventDefinition")
                    || name == "eventDefinitionRef"))
            || (tag == "userTask" && USER_TASK_CHILDREN.contains(&name))
            || (tag == "scriptTask" && name == "script")
            || (tag == "complexGateway" && name == "activationCondition")
            || tag == "subProcess"
            || tag == "transaction";
        if !allowed {
            ctx.unsupported_in(name, child, el, "");
        }
    }
}
