//! Events: their event definitions, timers, and references to declared
//! messages, signals and errors.
//!
//! Which definitions an event may carry depends on where it is (SPEC P4): a
//! start event of the process may wait for a timer but not for an error; an
//! event sub-process start may catch an error but must have a trigger. Each
//! builder below lists what its position allows, so everything else is
//! refused with a message that says what would be accepted.

use std::borrow::Cow;

use kairos_time::{IsoDuration, RepeatCycle, parse_instant};

use super::process::{Pending, ScopeKind};
use super::{Ctx, is_expression};
use crate::error::quote;
use crate::model::{
    BoundaryEvent, CatchEvent, Compensation, Conditional, EndEvent, ErrorRef, EscalationRef, EventTrigger, MessageRef,
    NodeIdx, NodeKind, SignalRef, StartEvent, ThrowEvent, Timer, TimerKind, TimerValue,
};
use crate::xml::Element;

/// Event definitions kairos understands (somewhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Def {
    Timer,
    Message,
    Signal,
    Error,
    Terminate,
    Link,
    Escalation,
    Conditional,
    Compensate,
    Cancel,
}

impl Def {
    fn tag(self) -> &'static str {
        match self {
            Def::Timer => "timerEventDefinition",
            Def::Message => "messageEventDefinition",
            Def::Signal => "signalEventDefinition",
            Def::Error => "errorEventDefinition",
            Def::Terminate => "terminateEventDefinition",
            Def::Link => "linkEventDefinition",
            Def::Escalation => "escalationEventDefinition",
            Def::Conditional => "conditionalEventDefinition",
            Def::Compensate => "compensateEventDefinition",
            Def::Cancel => "cancelEventDefinition",
        }
    }

    fn from_tag(tag: &str) -> Option<Def> {
        [
            Def::Timer,
            Def::Message,
            Def::Signal,
            Def::Error,
            Def::Terminate,
            Def::Link,
            Def::Escalation,
            Def::Conditional,
            Def::Compensate,
            Def::Cancel,
        ]
        .into_iter()
        .find(|d| d.tag() == tag)
    }
}

/// The single event definition of `el`, if any, checked against `allowed`: written inline,
/// or named by an `eventDefinitionRef` to one declared at the root (BPMN 2.0 §10.5.1).
/// `Err(())` means a problem was recorded and the caller should use a stand-in.
fn definition<'e>(ctx: &mut Ctx<'_>, el: &'e Element, allowed: &[Def]) -> Result<Option<(Def, Cow<'e, Element>)>, ()> {
    let defs: Vec<&Element> = el
        .bpmn_children()
        .filter(|c| c.local.ends_with("EventDefinition") || c.local == "eventDefinitionRef")
        .collect();
    let Some(&first) = defs.first() else { return Ok(None) };
    if defs.len() > 1 {
        ctx.problem_at(defs[1], el, format!("has {} event definitions; kairos supports one per event", defs.len()));
        return Err(());
    }
    let def_el: Cow<'e, Element> = if first.local == "eventDefinitionRef" {
        let named = first.text.trim();
        // A QName (`tns:timer1`) names the id after its prefix.
        let id = named.rsplit_once(':').map_or(named, |(_, local)| local);
        match ctx.shared_event(named).or_else(|| ctx.shared_event(id)) {
            Some(shared) => Cow::Owned(shared),
            None => {
                ctx.problem_at(
                    first,
                    el,
                    format!("eventDefinitionRef '{}' names no event definition declared in the document", quote(named)),
                );
                return Err(());
            }
        }
    } else {
        Cow::Borrowed(first)
    };
    match Def::from_tag(&def_el.local) {
        Some(def) if allowed.contains(&def) => Ok(Some((def, def_el))),
        _ => {
            let names: Vec<&str> = allowed.iter().map(|d| d.tag()).collect();
            let accepted = if names.is_empty() { "none".to_owned() } else { names.join(", ") };
            let local = def_el.local.clone();
            ctx.unsupported_in(&local, &def_el, el, &format!("{} accepts: {accepted}", el.local));
            Err(())
        }
    }
}

/// Reads the trigger of a catching event.
fn trigger(ctx: &mut Ctx<'_>, el: &Element, def: Def, def_el: &Element) -> Option<EventTrigger> {
    match def {
        Def::Timer => timer(ctx, el, def_el).map(EventTrigger::Timer),
        Def::Message => message_ref(ctx, el, def_el.attr("messageRef")).map(EventTrigger::Message),
        Def::Signal => signal_ref(ctx, el, def_el.attr("signalRef")).map(EventTrigger::Signal),
        Def::Error => error_ref(ctx, el, def_el, true).map(EventTrigger::Error),
        Def::Link => link_name(ctx, el, def_el).map(EventTrigger::Link),
        Def::Escalation => Some(EventTrigger::Escalation(escalation_ref(ctx, def_el))),
        Def::Conditional => conditional(ctx, el, def_el).map(EventTrigger::Conditional),
        Def::Compensate => {
            if def_el.attr("activityRef").is_some() {
                ctx.problem_at(def_el, el, "a catching compensateEventDefinition has no activityRef");
            }
            Some(EventTrigger::Compensate)
        }
        Def::Cancel => Some(EventTrigger::Cancel),
        Def::Terminate => None,
    }
}

/// A `conditionalEventDefinition`: its `${…}` condition, and `camunda:variableName`.
/// `camunda:variableEvents` (create / update / delete) is refused: kairos checks the condition
/// after any change, so honouring only some kinds of change is not something it can promise.
fn conditional(ctx: &mut Ctx<'_>, el: &Element, def_el: &Element) -> Option<Conditional> {
    if let Some((v, _)) = def_el.vendor_attr("variableEvents") {
        let why = "the condition is checked after every variable change; remove the attribute";
        ctx.unsupported_in(&format!("{}:variableEvents", v.prefix()), def_el, el, why);
        return None;
    }
    let condition = def_el.bpmn_child("condition");
    let language = condition.and_then(|c| c.attr("language")).map(str::trim).filter(|l| !l.is_empty());
    let variable_name = def_el.vendor_attr("variableName").map(|(_, v)| v.trim().to_owned()).filter(|v| !v.is_empty());
    if let (Some(lang), Some(c)) = (language.filter(|l| !l.eq_ignore_ascii_case("juel")), condition) {
        let script = ctx.script(c, el, "the condition's script", lang)?;
        return Some(Conditional { condition: script.source.clone(), script: Some(script), variable_name });
    }
    let text = condition.map(|c| c.text.trim()).unwrap_or_default();
    if !is_expression(text) {
        let what = if text.is_empty() { "no condition".to_string() } else { format!("condition '{}'", quote(text)) };
        ctx.problem_at(def_el, el, format!("conditionalEventDefinition has {what}; it needs a ${{...}} expression"));
        return None;
    }
    ctx.note_expression(el, "condition", text);
    Some(Conditional { condition: text.to_owned(), script: None, variable_name })
}

/// The `name` of a `linkEventDefinition`: what pairs a throwing link event
/// with its catching one.
fn link_name(ctx: &mut Ctx<'_>, el: &Element, def_el: &Element) -> Option<String> {
    match def_el.attr("name").map(str::trim).filter(|n| !n.is_empty()) {
        Some(name) => Some(name.to_owned()),
        None => {
            ctx.problem_at(def_el, el, "linkEventDefinition has no name, so no link event can pair with it");
            None
        }
    }
}

/// A throwing message event (intermediate or end) behaves as Camunda 7 runs
/// it: a service task when it names a handler or an external topic (on the
/// `messageEventDefinition`, as Camunda Modeler writes it, or on the event),
/// otherwise nothing happens and the token passes on. Sending the message is
/// the handler's business: kairos has no message broker to publish to.
fn message_throw(ctx: &mut Ctx<'_>, el: &Element, def_el: &Element) -> Option<NodeKind> {
    let task = match super::vendor::service_task_in(ctx, def_el, el) {
        Ok(None) => super::vendor::service_task(ctx, el).ok()?,
        found => found.ok()?,
    };
    task.map(NodeKind::ServiceTask)
}

pub(crate) fn start_event(ctx: &mut Ctx<'_>, el: &Element, scope: ScopeKind) -> NodeKind {
    let allowed: &[Def] = match scope {
        ScopeKind::Process => &[Def::Timer, Def::Message, Def::Signal, Def::Conditional],
        ScopeKind::SubProcess => &[],
        ScopeKind::EventSubProcess => {
            &[Def::Timer, Def::Message, Def::Signal, Def::Error, Def::Escalation, Def::Conditional, Def::Compensate]
        }
    };
    let trigger = match definition(ctx, el, allowed) {
        Ok(Some((def, def_el))) => trigger(ctx, el, def, &def_el).unwrap_or(EventTrigger::None),
        Ok(None) => {
            if scope == ScopeKind::EventSubProcess {
                ctx.problem(
                    el,
                    "the start event of an event sub-process needs a timer, message, signal, error, escalation, conditional or compensate definition",
                );
            }
            EventTrigger::None
        }
        Err(()) => EventTrigger::None,
    };
    if let (ScopeKind::Process, EventTrigger::Conditional(Conditional { script: Some(_), .. })) = (scope, &trigger) {
        ctx.problem(
            el,
            "a process's conditional start event takes an expression such as ${temperature > 30}: it is evaluated over the variables given, outside any instance",
        );
    }
    let interrupting = ctx.boolean(el, "isInterrupting", el.attr("isInterrupting"), true);
    if !interrupting && matches!(trigger, EventTrigger::Error(_)) {
        ctx.problem(el, "an error start event is always interrupting (isInterrupting=\"false\" is not allowed)");
    }
    NodeKind::StartEvent(StartEvent {
        trigger,
        interrupting,
        initiator: el.vendor_attr("initiator").map(|(_, v)| v.to_owned()),
        form_key: el.vendor_attr("formKey").map(|(_, v)| v.to_owned()),
    })
}

/// An end event and, for a compensation with `activityRef`, the raw reference (resolved once
/// every node of the process is known).
pub(crate) fn end_event(ctx: &mut Ctx<'_>, el: &Element) -> (NodeKind, Option<Pending>) {
    let allowed =
        [Def::Terminate, Def::Error, Def::Signal, Def::Message, Def::Escalation, Def::Compensate, Def::Cancel];
    let end = match definition(ctx, el, &allowed) {
        Ok(Some((Def::Terminate, _))) => EndEvent::Terminate,
        Ok(Some((Def::Cancel, _))) => EndEvent::Cancel,
        Ok(Some((Def::Compensate, def_el))) => {
            let (compensation, pending) = compensation(ctx, el, &def_el);
            return (NodeKind::EndEvent(EndEvent::Compensate(compensation)), pending);
        }
        Ok(Some((Def::Signal, def_el))) => {
            signal_ref(ctx, el, def_el.attr("signalRef")).map_or(EndEvent::None, EndEvent::Signal)
        }
        Ok(Some((Def::Message, def_el))) => match message_throw(ctx, el, &def_el) {
            Some(task) => return (task, None),
            None => EndEvent::None,
        },
        Ok(Some((Def::Escalation, def_el))) => EndEvent::Escalation(escalation_ref(ctx, &def_el)),
        Ok(Some((_, def_el))) => match error_ref(ctx, el, &def_el, false) {
            Some(e) => EndEvent::Error(e),
            None => EndEvent::None,
        },
        Ok(None) | Err(()) => EndEvent::None,
    };
    (NodeKind::EndEvent(end), None)
}

/// A throwing `compensateEventDefinition`: its `activityRef` (resolved later) and
/// `waitForCompletion` (BPMN 2.0's default: true).
fn compensation(ctx: &mut Ctx<'_>, el: &Element, def_el: &Element) -> (Compensation, Option<Pending>) {
    let wait_for_completion = ctx.boolean(el, "waitForCompletion", def_el.attr("waitForCompletion"), true);
    let reference = def_el.attr("activityRef").map(str::trim);
    if reference == Some("") {
        ctx.problem_at(def_el, el, "compensateEventDefinition has an empty activityRef");
    }
    let pending = reference.filter(|r| !r.is_empty()).map(|r| Pending::ActivityRef(r.to_owned()));
    (Compensation { activity: None, wait_for_completion }, pending)
}

/// A boundary event and its raw `attachedToRef` (resolved once every node of
/// the scope is known).
pub(crate) fn boundary_event(ctx: &mut Ctx<'_>, el: &Element) -> (NodeKind, Option<String>) {
    let allowed = [
        Def::Timer,
        Def::Error,
        Def::Message,
        Def::Signal,
        Def::Escalation,
        Def::Conditional,
        Def::Compensate,
        Def::Cancel,
    ];
    let trigger = match definition(ctx, el, &allowed) {
        Ok(Some((def, def_el))) => trigger(ctx, el, def, &def_el),
        Ok(None) => {
            ctx.problem(
                el,
                "needs a timer, error, message, signal, escalation, conditional or compensate event definition",
            );
            None
        }
        Err(()) => None,
    };
    let cancel_activity = ctx.boolean(el, "cancelActivity", el.attr("cancelActivity"), true);
    if !cancel_activity && matches!(trigger, Some(EventTrigger::Error(_))) {
        ctx.problem(el, "an error boundary event is always interrupting (cancelActivity=\"false\" is not allowed)");
    }
    if !cancel_activity && matches!(trigger, Some(EventTrigger::Cancel)) {
        ctx.problem(el, "a cancel boundary event is always interrupting (cancelActivity=\"false\" is not allowed)");
    }
    let attached = el.attr("attachedToRef").map(str::to_owned);
    if attached.is_none() {
        ctx.problem(el, "has no attachedToRef");
    }
    let kind = NodeKind::BoundaryEvent(BoundaryEvent {
        // Placeholder until the scope is linked; a model is only returned
        // when every attachedToRef resolved.
        attached_to: NodeIdx(u32::MAX),
        cancel_activity,
        trigger: trigger.unwrap_or(EventTrigger::None),
    });
    (kind, attached)
}

pub(crate) fn catch_event(ctx: &mut Ctx<'_>, el: &Element) -> NodeKind {
    let trigger = match definition(ctx, el, &[Def::Timer, Def::Message, Def::Signal, Def::Link, Def::Conditional]) {
        Ok(Some((def, def_el))) => trigger(ctx, el, def, &def_el),
        Ok(None) => {
            ctx.problem(el, "needs a timer, message, signal, link or conditional event definition");
            None
        }
        Err(()) => None,
    };
    NodeKind::IntermediateCatchEvent(CatchEvent { trigger: trigger.unwrap_or(EventTrigger::None) })
}

/// A throwing intermediate event and, for a link, its raw name (resolved to
/// the catching link event once every node of the scope is known), or a compensation's
/// `activityRef`.
pub(crate) fn throw_event(ctx: &mut Ctx<'_>, el: &Element) -> (NodeKind, Option<Pending>) {
    let (mut signal, mut link, mut escalation, mut compensate) = (None, None, None, None);
    let mut pending = None;
    match definition(ctx, el, &[Def::Signal, Def::Message, Def::Link, Def::Escalation, Def::Compensate]) {
        Ok(Some((Def::Signal, def_el))) => signal = signal_ref(ctx, el, def_el.attr("signalRef")),
        Ok(Some((Def::Compensate, def_el))) => {
            let (c, p) = compensation(ctx, el, &def_el);
            (compensate, pending) = (Some(c), p);
        }
        Ok(Some((Def::Escalation, def_el))) => escalation = Some(escalation_ref(ctx, &def_el)),
        Ok(Some((Def::Message, def_el))) => {
            if let Some(task) = message_throw(ctx, el, &def_el) {
                return (task, None);
            }
        }
        Ok(Some((_, def_el))) => link = link_name(ctx, el, &def_el),
        Ok(None) | Err(()) => {}
    }
    let pending = pending.or(link.map(Pending::Link));
    (NodeKind::IntermediateThrowEvent(ThrowEvent { signal, link: None, escalation, compensate }), pending)
}

/// Reads a `timerEventDefinition`: exactly one of timeDate, timeDuration,
/// timeCycle, validated now when it is a literal.
fn timer(ctx: &mut Ctx<'_>, owner: &Element, def: &Element) -> Option<Timer> {
    let parts: Vec<(TimerKind, &Element)> = def
        .bpmn_children()
        .filter_map(|c| match c.local.as_str() {
            "timeDate" => Some((TimerKind::Date, c)),
            "timeDuration" => Some((TimerKind::Duration, c)),
            "timeCycle" => Some((TimerKind::Cycle, c)),
            _ => None,
        })
        .collect();
    let [(kind, part)] = parts.as_slice() else {
        ctx.problem_at(def, owner, "timerEventDefinition needs exactly one of timeDate, timeDuration, timeCycle");
        return None;
    };
    let text = part.text.trim();
    if text.is_empty() {
        ctx.problem_at(part, owner, format!("{} is empty", part.local));
        return None;
    }
    if is_expression(text) {
        ctx.note_expression(owner, "timer", text);
        return Some(Timer { kind: *kind, text: text.to_owned(), value: TimerValue::Expression(text.to_owned()) });
    }
    let value = match kind {
        TimerKind::Date => parse_instant(text).map(TimerValue::Date).map_err(|e| e.to_string()),
        // A one-shot wait: `PT0S` is valid ISO 8601 and means "now" (Flowable's own tests use it).
        TimerKind::Duration => IsoDuration::parse_delay(text).map(TimerValue::Duration).map_err(|e| e.to_string()),
        // Validated now, so that a typo is refused at deployment with its field and position.
        TimerKind::Cycle if kairos_cron::looks_like_cron(text) => kairos_cron::CronExpr::parse(text)
            .map(|c| TimerValue::Cron(c.as_str().to_owned()))
            .map_err(|e| format!("cron {e}")),
        TimerKind::Cycle => RepeatCycle::parse(text).map(TimerValue::Cycle).map_err(|e| e.to_string()),
    };
    match value {
        Ok(value) => Some(Timer { kind: *kind, text: text.to_owned(), value }),
        Err(e) => {
            ctx.problem_at(part, owner, format!("{} '{}' is invalid: {e}", part.local, quote(text)));
            None
        }
    }
}

/// Resolves a `messageRef`. Messages are correlated by name, so a message
/// without one could never arrive: that is refused too.
pub(crate) fn message_ref(ctx: &mut Ctx<'_>, el: &Element, reference: Option<&str>) -> Option<MessageRef> {
    let Some(id) = reference else {
        ctx.problem(el, "messageEventDefinition has no messageRef");
        return None;
    };
    match ctx.messages.get(id).map(|m| m.name.clone()) {
        None => ctx.problem(el, format!("messageRef '{}' does not exist", quote(id))),
        Some(None) => ctx.problem(el, format!("message '{}' has no name, so it can never be correlated", quote(id))),
        Some(Some(name)) => return Some(MessageRef { id: id.to_owned(), name }),
    }
    None
}

/// Resolves a `signalRef` (signals are broadcast by name).
pub(crate) fn signal_ref(ctx: &mut Ctx<'_>, el: &Element, reference: Option<&str>) -> Option<SignalRef> {
    let Some(id) = reference else {
        ctx.problem(el, "signalEventDefinition has no signalRef");
        return None;
    };
    match ctx.signals.get(id).map(|s| s.name.clone()) {
        None => ctx.problem(el, format!("signalRef '{}' does not exist", quote(id))),
        Some(None) => ctx.problem(el, format!("signal '{}' has no name, so it can never be sent", quote(id))),
        Some(Some(name)) => return Some(SignalRef { id: id.to_owned(), name }),
    }
    None
}

/// Resolves an `escalationRef`: a declared escalation's `escalationCode`, or
/// (undeclared) the reference itself as the code, as for errors. Without one
/// a catch catches every escalation and a throw raises one no coded catch
/// takes.
fn escalation_ref(ctx: &Ctx<'_>, def_el: &Element) -> EscalationRef {
    match def_el.attr("escalationRef").map(str::trim).filter(|r| !r.is_empty()) {
        None => EscalationRef { id: None, code: None },
        Some(id) => match ctx.escalations.get(id) {
            Some(code) => EscalationRef { id: Some(id.to_owned()), code: code.clone() },
            None => EscalationRef { id: None, code: Some(id.to_owned()) },
        },
    }
}

/// Resolves an `errorRef`. A catching event without one catches any error;
/// a throwing end event must say which error it throws. An `errorRef` that
/// names no `<error>` declaration is the error code itself, as Flowable and
/// Camunda read it (their test and example files rely on that), so it is
/// accepted rather than refused.
fn error_ref(ctx: &mut Ctx<'_>, el: &Element, def_el: &Element, catching: bool) -> Option<ErrorRef> {
    let variable = |local| {
        let name = def_el.vendor_attr(local).map(|(_, v)| v.trim()).filter(|v| !v.is_empty());
        name.filter(|_| catching).map(str::to_owned)
    };
    let (code_variable, message_variable) = (variable("errorCodeVariable"), variable("errorMessageVariable"));
    let Some(id) = def_el.attr("errorRef") else {
        if catching {
            return Some(ErrorRef { id: None, code: None, code_variable, message_variable });
        }
        ctx.problem(el, "errorEventDefinition has no errorRef, so there is no error code to throw");
        return None;
    };
    let id = id.trim();
    if id.is_empty() {
        ctx.problem(el, "errorEventDefinition has an empty errorRef");
        return None;
    }
    let (id, code) = match ctx.error_defs.get(id) {
        Some(e) => (Some(id.to_owned()), e.code.clone()),
        None => (None, id.to_owned()),
    };
    Some(ErrorRef { id, code: Some(code), code_variable, message_variable })
}
