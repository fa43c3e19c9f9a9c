//! `*:executionListener` and `*:taskListener`: what runs when an element starts, ends or is
//! taken, or a user task is created, assigned, updated, completed or deleted. A listener names a handler
//! the way a service task does (`class`, `delegateExpression`, a bean method in `expression`),
//! holds an expression to evaluate, or a `*:script` child. Flowable's process-level
//! `eventListener` (engine events) has no counterpart here and stays refused.

use super::{Ctx, is_expression};
use crate::error::quote;
use crate::model::{Field, HandlerSource, Listener, ListenerAction, ListenerEvent};
use crate::xml::Element;

/// The listeners of `el` (a flow node, a sequence flow or the process), in document order.
pub(crate) fn listeners(ctx: &mut Ctx<'_>, el: &Element) -> Vec<Listener> {
    let mut out = Vec::new();
    let found: Vec<&Element> = el
        .vendor_extensions()
        .filter(|(_, x)| x.local == "executionListener" || x.local == "taskListener")
        .map(|(_, x)| x)
        .collect();
    for l in found {
        if let Some(listener) = listener(ctx, el, l) {
            out.push(listener);
        }
    }
    out
}

fn listener(ctx: &mut Ctx<'_>, owner: &Element, l: &Element) -> Option<Listener> {
    let task = l.local == "taskListener";
    if task && owner.local != "userTask" {
        ctx.problem_at(l, owner, "a taskListener belongs on a userTask");
        return None;
    }
    let flow = owner.local == "sequenceFlow";
    let event = match (l.attr("event").map(str::trim).unwrap_or_default(), task, flow) {
        // A flow's listener runs when it is taken, whatever its event says (as in Camunda).
        (_, false, true) => ListenerEvent::Take,
        ("start", false, false) => ListenerEvent::Start,
        ("end", false, false) => ListenerEvent::End,
        ("create", true, _) => ListenerEvent::Create,
        ("assignment", true, _) => ListenerEvent::Assignment,
        ("complete", true, _) => ListenerEvent::Complete,
        ("delete", true, _) => ListenerEvent::Delete,
        ("update", true, _) => ListenerEvent::Update,
        ("timeout", true, _) => {
            ctx.problem_at(
                l,
                owner,
                "taskListener event 'timeout' is not supported yet: use a timer boundary event on the task",
            );
            return None;
        }
        ("", _, _) => {
            ctx.problem_at(l, owner, format!("the {} has no event", l.local));
            return None;
        }
        (other, true, _) => {
            ctx.problem_at(
                l,
                owner,
                format!(
                    "taskListener event '{}' is not create, assignment, update, complete, delete or timeout",
                    quote(other)
                ),
            );
            return None;
        }
        (other, false, _) => {
            ctx.problem_at(l, owner, format!("executionListener event '{}' is not start or end", quote(other)));
            return None;
        }
    };
    let action = action(ctx, owner, l)?;
    let fields: Vec<Field> = l
        .children
        .iter()
        .filter(|c| matches!(c.ns, crate::ns::Ns::Vendor(_)) && c.local == "field")
        .filter_map(|f| super::vendor::field(ctx, owner, f))
        .collect();
    Some(Listener { event, action, fields, line: ctx.pos(l).line })
}

fn action(ctx: &mut Ctx<'_>, owner: &Element, l: &Element) -> Option<ListenerAction> {
    let script = l.children.iter().find(|c| matches!(c.ns, crate::ns::Ns::Vendor(_)) && c.local == "script");
    if let Some(s) = script {
        let format = s.attr("scriptFormat").unwrap_or_default();
        return ctx.script(s, owner, "the listener's script", format).map(ListenerAction::Script);
    }
    if let Some(class) = l.attr("class").map(str::trim) {
        if class.is_empty() {
            ctx.problem_at(l, owner, "the listener's class is empty");
            return None;
        }
        return Some(handler(class.to_owned(), HandlerSource::Class, Vec::new()));
    }
    for (attr, source) in
        [("delegateExpression", HandlerSource::DelegateExpression), ("expression", HandlerSource::Expression)]
    {
        let Some(text) = l.attr(attr) else { continue };
        if let Some(name) = super::vendor::handler_name_in(text) {
            // `${logger}` as an expression evaluates a variable; as a delegate it names a bean.
            if source == HandlerSource::DelegateExpression || !ctx.evaluable(text) {
                return Some(handler(name.to_owned(), source, Vec::new()));
            }
        }
        if source == HandlerSource::Expression && is_expression(text) && ctx.evaluable(text) {
            ctx.note_expression(owner, "listener expression", text);
            return Some(ListenerAction::Expression(text.trim().to_owned()));
        }
        if let Some((name, arguments)) = super::vendor::method_call_in(text) {
            return Some(handler(name, HandlerSource::Method, arguments));
        }
        ctx.problem_at(
            l,
            owner,
            format!(
                "the listener's {attr} '{}' does not name a handler: write ${{name}} or ${{bean.method(args)}}",
                quote(text)
            ),
        );
        return None;
    }
    ctx.problem_at(l, owner, format!("the {} names no class, delegateExpression, expression or script", l.local));
    None
}

fn handler(name: String, source: HandlerSource, arguments: Vec<String>) -> ListenerAction {
    ListenerAction::Handler { name, source, arguments }
}
