//! Element tree → validated [`Definitions`].
//!
//! The builder never stops at the first problem: it records each one in
//! [`Ctx`] and carries on with a harmless stand-in (a node whose kind could
//! not be read becomes a pass-through), so that one broken event definition
//! does not hide the ten other mistakes in the file. A model is only handed
//! out when no problem was found.

mod compensation;
mod diagram;
mod event;
mod listeners;
mod node;
mod process;
mod validate;
mod vendor;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Display;

use crate::ParseOptions;
use crate::error::{LineIndex, ParseError, ParseErrors, Pos, quote};
use crate::model::{Definitions, ErrorDefinition, Message, Signal};
use crate::ns::Ns;
use crate::xml::Element;

/// State shared by every step: the problems found so far, the declarations
/// references resolve against, and the expressions to hand to the checker.
pub(crate) struct Ctx<'a> {
    lines: &'a LineIndex<'a>,
    errors: Vec<ParseError>,
    messages: BTreeMap<String, Message>,
    signals: BTreeMap<String, Signal>,
    error_defs: BTreeMap<String, ErrorDefinition>,
    /// `<escalation>` declarations: id → `escalationCode`.
    escalations: BTreeMap<String, Option<String>>,
    /// Event definitions declared at the root (`<timerEventDefinition id="…">` beside the
    /// processes), which events name by `eventDefinitionRef`.
    shared_events: HashMap<String, Element>,
    expressions: Vec<ExpressionSite>,
    /// Every id in the document, so that ids made up for elements written
    /// without one ([`Ctx::fresh_id`]) never clash with a real one.
    ids: HashSet<String>,
    /// The caller's expression checker, asked at once where its answer decides what an
    /// attribute means (is `${svc.post(id)}` an expression or a bean method call?).
    check: Option<crate::ExpressionCheck<'a>>,
    /// The caller's script checker.
    script_check: Option<crate::ScriptCheck<'a>>,
}

/// An expression found in the model, remembered with its element so that a
/// checker's complaint can be reported like any other problem.
struct ExpressionSite {
    text: String,
    pos: Pos,
    element: String,
    id: Option<String>,
    what: &'static str,
}

impl<'a> Ctx<'a> {
    pub(crate) fn pos(&self, el: &Element) -> Pos {
        self.lines.pos(el.offset)
    }

    /// Records a problem about `el`.
    pub(crate) fn problem(&mut self, el: &Element, detail: impl Display) {
        let e = ParseError::element(self.pos(el), &el.local, el.id(), detail);
        self.errors.push(e);
    }

    /// Records a problem about `owner`, found at `at` (a child of it), so the
    /// message names the element people know while the line is exact.
    pub(crate) fn problem_at(&mut self, at: &Element, owner: &Element, detail: impl Display) {
        let e = ParseError::element(self.pos(at), &owner.local, owner.id(), detail);
        self.errors.push(e);
    }

    /// Records an element kairos does not execute.
    pub(crate) fn unsupported(&mut self, el: &Element, why: &str) {
        let e = ParseError::unsupported(self.pos(el), &el.local, el.id(), why);
        self.errors.push(e);
    }

    /// Records an unsupported child (`compensateEventDefinition`, a listener)
    /// of `owner`: the error names the owner's id, the line is the child's.
    /// A copy of the event definition declared at the root with `id`.
    pub(crate) fn shared_event(&self, id: &str) -> Option<Element> {
        self.shared_events.get(id).cloned()
    }

    pub(crate) fn unsupported_in(&mut self, child: &str, at: &Element, owner: &Element, why: &str) {
        let id = owner.id().map_or(String::new(), |id| format!(" '{}'", quote(id)));
        let mut message = format!("unsupported element {child} in {}{id}", owner.local);
        if !why.is_empty() {
            message.push_str(": ");
            message.push_str(why);
        }
        let mut e = ParseError::at(self.pos(at), message);
        e.element = Some(owner.local.clone());
        e.element_id = owner.id().map(str::to_owned);
        self.errors.push(e);
    }

    /// An id not used in the document: `base`, else `base_2`, `base_3`…
    /// (for sequence flows written without an id, which nothing can refer to).
    pub(crate) fn fresh_id(&mut self, base: &str) -> String {
        let mut id = base.to_owned();
        let mut n = 1;
        while self.ids.contains(&id) {
            n += 1;
            id = format!("{base}_{n}");
        }
        self.ids.insert(id.clone());
        id
    }

    /// Remembers `text` for the expression checker when it is an expression.
    pub(crate) fn note_expression(&mut self, el: &Element, what: &'static str, text: &str) {
        if is_expression(text) {
            self.expressions.push(ExpressionSite {
                text: text.to_owned(),
                pos: self.pos(el),
                element: el.local.clone(),
                id: el.id().map(str::to_owned),
                what,
            });
        }
    }

    /// Reads a script held by `at` (a `script`, `conditionExpression` or `camunda:script`
    /// element of `owner`) in `format`, asking the caller's script checker.
    pub(crate) fn script(&mut self, at: &Element, owner: &Element, what: &str, format: &str) -> Option<crate::Script> {
        if at.attr("resource").is_some() || at.vendor_attr("resource").is_some() {
            self.problem_at(at, owner, format!("{what} names an external resource: put the script inline"));
            return None;
        }
        let script = crate::Script::new(format.trim(), at.text.trim());
        if script.format.is_empty() {
            self.problem_at(at, owner, format!("{what} has no scriptFormat"));
            return None;
        }
        if script.source.is_empty() {
            self.problem_at(at, owner, format!("{what} is empty"));
            return None;
        }
        if let Some(check) = self.script_check
            && let Err(why) = check(&script)
        {
            self.problem_at(at, owner, format!("{what}: {why}"));
            return None;
        }
        Some(script)
    }

    /// Whether the caller's expression language evaluates `text` (true when no checker was
    /// given: then nothing is refused for its expressions either).
    pub(crate) fn evaluable(&self, text: &str) -> bool {
        self.check.is_none_or(|check| check(text).is_ok())
    }

    /// Parses an XML Schema boolean attribute value, recording a problem (and
    /// answering `default`) when it is something else.
    pub(crate) fn boolean(&mut self, el: &Element, attr: &str, value: Option<&str>, default: bool) -> bool {
        match value.map(str::trim) {
            None => default,
            Some(v) if v.eq_ignore_ascii_case("true") || v == "1" => true,
            Some(v) if v.eq_ignore_ascii_case("false") || v == "0" => false,
            Some(v) => {
                self.problem(el, format!("{attr} must be true or false, not '{}'", quote(v)));
                default
            }
        }
    }
}

/// True when `text` contains a `${…}` or `#{…}` expression (JUEL style, SPEC
/// P6): such values are only known at run time and cannot be checked here.
pub(crate) fn is_expression(text: &str) -> bool {
    text.contains("${") || text.contains("#{")
}

/// Builds the model from the `<definitions>` root.
pub(crate) fn build(
    root: &Element,
    lines: &LineIndex<'_>,
    options: &ParseOptions<'_>,
) -> Result<Definitions, ParseErrors> {
    if !root.is_bpmn("definitions") {
        let message = if root.local == "definitions" {
            "root element <definitions> is not in the BPMN 2.0 namespace http://www.omg.org/spec/BPMN/20100524/MODEL"
                .to_owned()
        } else {
            format!("root element must be BPMN <definitions>, not <{}>", quote(&root.local))
        };
        return Err(ParseErrors::one(ParseError::at(lines.pos(root.offset), message)));
    }
    let mut ctx = Ctx {
        lines,
        errors: Vec::new(),
        messages: BTreeMap::new(),
        signals: BTreeMap::new(),
        error_defs: BTreeMap::new(),
        escalations: BTreeMap::new(),
        shared_events: HashMap::new(),
        expressions: Vec::new(),
        ids: HashSet::new(),
        check: options.expression_check,
        script_check: options.script_check,
    };
    check_unique_ids(&mut ctx, root);
    read_declarations(&mut ctx, root);
    let mut defs = Definitions {
        id: root.id().map(str::to_owned),
        target_namespace: root.attr("targetNamespace").map(str::to_owned),
        exporter: root.attr("exporter").map(str::to_owned),
        exporter_version: root.attr("exporterVersion").map(str::to_owned),
        processes: Vec::new(),
        skipped_processes: Vec::new(),
        messages: BTreeMap::new(),
        signals: BTreeMap::new(),
        errors: BTreeMap::new(),
        diagram: Default::default(),
    };
    let mut skipped_elements = Vec::new();
    for child in &root.children {
        match child.ns {
            Ns::Bpmn if child.local == "process" => {
                let executable = ctx.boolean(child, "isExecutable", child.attr("isExecutable"), true);
                if executable {
                    if let Some(p) = process::build_process(&mut ctx, child) {
                        defs.processes.push(p);
                    }
                } else {
                    defs.skipped_processes.push(child.id().unwrap_or_default().to_owned());
                    skipped_elements.push(child);
                }
            }
            Ns::Bpmn => check_root_child(&mut ctx, child),
            Ns::BpmnDi if child.local == "BPMNDiagram" => diagram::read(&mut ctx, child, &mut defs.diagram),
            _ => {}
        }
    }
    // Only processes marked isExecutable="false" (a modeler's starter diagram, a reference
    // model): deployed with no definitions, as Camunda and Flowable do, naming what was skipped.
    if defs.processes.is_empty() && skipped_elements.is_empty() && ctx.errors.is_empty() {
        ctx.problem(root, "contains no process");
    }
    check_expressions(&mut ctx, options);
    defs.messages = std::mem::take(&mut ctx.messages);
    defs.signals = std::mem::take(&mut ctx.signals);
    defs.errors = std::mem::take(&mut ctx.error_defs);
    match ParseErrors::from_vec(ctx.errors) {
        Some(errors) => Err(errors),
        None => Ok(defs),
    }
}

/// Top-level elements that describe but do not execute: accepted, ignored.
const IGNORED_ROOT_ELEMENTS: &[&str] = &[
    "collaboration",
    "documentation",
    "extensionElements",
    "itemDefinition",
    "interface",
    "dataStore",
    "resource",
    "category",
    "import",
    "relationship",
    "correlationProperty",
    "partnerEntity",
    "partnerRole",
    "endPoint",
];

fn check_root_child(ctx: &mut Ctx<'_>, child: &Element) {
    let name = child.local.as_str();
    let declared = matches!(name, "message" | "signal" | "error" | "escalation") || name.ends_with("EventDefinition");
    if declared || IGNORED_ROOT_ELEMENTS.contains(&name) {
        return;
    }
    ctx.unsupported(child, "kairos executes processes only");
}

/// Ids must be unique in the whole document: references (`sourceRef`,
/// `attachedToRef`, `bpmnElement`) are document-wide, and a duplicate makes
/// one of them silently point at the wrong element.
fn check_unique_ids(ctx: &mut Ctx<'_>, root: &Element) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut stack = vec![root];
    let mut dups = Vec::new();
    while let Some(el) = stack.pop() {
        if let (Ns::Bpmn | Ns::BpmnDi | Ns::Dc | Ns::Di, Some(id)) = (el.ns, el.id()) {
            // Depth-first in document order: the one already seen came first.
            match seen.get(id) {
                Some(&first) => dups.push((el, first)),
                None => {
                    seen.insert(id, el.offset);
                }
            }
        }
        stack.extend(el.children.iter().rev());
    }
    ctx.ids = seen.into_keys().map(str::to_owned).collect();
    for (el, first) in dups {
        let first_line = ctx.lines.pos(first).line;
        ctx.problem(el, format!("duplicate id (first used on line {first_line})"));
    }
}

/// Reads `<message>`, `<signal>`, `<error>`, `<escalation>` declarations and shared event
/// definitions first, so that
/// references to them resolve wherever they appear in the file.
fn read_declarations(ctx: &mut Ctx<'_>, root: &Element) {
    for child in root.bpmn_children() {
        let kind = child.local.as_str();
        if kind.ends_with("EventDefinition") {
            match child.id() {
                Some(id) => {
                    ctx.shared_events.insert(id.to_owned(), child.clone());
                }
                None => ctx.problem(child, "has no id, so no eventDefinitionRef can name it"),
            }
            continue;
        }
        if !matches!(kind, "message" | "signal" | "error" | "escalation") {
            continue;
        }
        let Some(id) = child.id() else {
            ctx.problem(child, "has no id, so nothing can refer to it");
            continue;
        };
        let id = id.to_owned();
        let name = child.attr("name").map(str::to_owned);
        match kind {
            "message" => {
                ctx.messages.insert(id.clone(), Message { id, name });
            }
            "signal" => {
                ctx.signals.insert(id.clone(), Signal { id, name });
            }
            "escalation" => {
                let code = child.attr("escalationCode").map(str::trim).filter(|c| !c.is_empty()).map(str::to_owned);
                ctx.escalations.insert(id, code);
            }
            _ => {
                let code = child.attr("errorCode").map_or_else(|| id.clone(), str::to_owned);
                ctx.error_defs.insert(id.clone(), ErrorDefinition { id, name, code });
            }
        }
    }
}

/// Hands every collected expression to the caller's checker (the expression
/// language lives in its own crate; this crate only knows where they are).
fn check_expressions(ctx: &mut Ctx<'_>, options: &ParseOptions<'_>) {
    let Some(check) = options.expression_check else { return };
    for site in std::mem::take(&mut ctx.expressions) {
        if let Err(why) = check(&site.text) {
            let detail = format!("{} '{}' is not a valid expression: {why}", site.what, quote(&site.text));
            ctx.errors.push(ParseError::element(site.pos, &site.element, site.id.as_deref(), detail));
        }
    }
}
