//! Vendor extensions (`activiti:`, `flowable:`, `camunda:`, `kairos:`): the
//! attributes and extension elements that real modelers write (SPEC P2).
//!
//! All four namespaces are read alike, because teams migrate files between
//! these tools and a file should mean the same thing whichever wrote it.

use kairos_time::{IsoDuration, RetryCycle};

use super::{Ctx, is_expression};
use crate::error::quote;
use crate::model::{
    CallActivity, DecisionBinding, DecisionMapping, DecisionRef, Field, HandlerSource, HistoryTimeToLive,
    Implementation, IoMapping, IoParameter, IoValue, MultiInstance, ServiceTask, StandardLoop, UserTask,
    VariableMapping,
};
use crate::ns::Vendor;
use crate::xml::Element;

/// The attributes every flow node may carry.
pub(crate) struct Common {
    pub async_before: bool,
    pub async_after: bool,
    pub exclusive: bool,
    pub retry_time_cycle: Option<String>,
}

pub(crate) fn common(ctx: &mut Ctx<'_>, el: &Element) -> Common {
    let flag = |ctx: &mut Ctx<'_>, local: &str, default: bool| match el.vendor_attr(local) {
        Some((v, value)) => ctx.boolean(el, &format!("{}:{local}", v.prefix()), Some(value), default),
        None => default,
    };
    let async_before = flag(ctx, "async", false) | flag(ctx, "asyncBefore", false);
    let async_after = flag(ctx, "asyncAfter", false);
    let exclusive = flag(ctx, "exclusive", true);
    Common { async_before, async_after, exclusive, retry_time_cycle: retry_time_cycle(ctx, el) }
}

/// `failedJobRetryTimeCycle`, as an extension element (Camunda, Activiti) or
/// an attribute. Checked now: a bad cycle would otherwise surface only when
/// the first job fails, which is the worst moment to learn about it.
fn retry_time_cycle(ctx: &mut Ctx<'_>, el: &Element) -> Option<String> {
    let from_element = el
        .vendor_extensions()
        .find(|(_, c)| c.local == "failedJobRetryTimeCycle")
        .map(|(_, c)| (c, c.text.trim().to_owned()));
    let (at, text) = match from_element {
        Some(found) => found,
        None => (el, el.vendor_attr("failedJobRetryTimeCycle")?.1.trim().to_owned()),
    };
    if is_expression(&text) {
        ctx.note_expression(el, "failedJobRetryTimeCycle", &text);
    } else if let Err(e) = RetryCycle::parse(&text) {
        ctx.problem_at(at, el, format!("failedJobRetryTimeCycle '{}' is invalid: {e}", quote(&text)));
    }
    Some(text)
}

/// Vendor extension elements with execution semantics kairos does not have.
/// Ignoring them would run a different process than the one drawn, so they
/// are refused; every other vendor element (properties, form fields…) is
/// descriptive and ignored.
fn refused_extension(local: &str) -> Option<&'static str> {
    Some(match local {
        "eventListener" => "engine event listeners do not run: use execution or task listeners",
        "connector" => "connectors are not supported: name a handler with kairos:handler",
        "script" => "a script belongs in a scriptTask, a condition or an input/output parameter",
        _ => return None,
    })
}

/// Refuses the extension elements of `el` that kairos cannot honour.
pub(crate) fn check_extensions(ctx: &mut Ctx<'_>, el: &Element) {
    for (v, ext) in el.vendor_extensions() {
        let why = match refused_extension(&ext.local) {
            Some(why) => why,
            None if ext.local == "inputOutput" && !super::node::is_activity(&el.local) => {
                "input/output mappings are supported on activities (tasks, sub-processes, call activities)"
            }
            None => continue,
        };
        ctx.unsupported_in(&format!("{}:{}", v.prefix(), ext.local), ext, el, why);
    }
}

/// `camunda:inputOutput` of an activity (other elements refuse it in
/// [`check_extensions`]).
pub(crate) fn io_mapping(ctx: &mut Ctx<'_>, el: &Element) -> Option<IoMapping> {
    if !super::node::is_activity(&el.local) {
        return None;
    }
    let (_, io) = el.vendor_extensions().find(|(_, c)| c.local == "inputOutput")?;
    let mut mapping = IoMapping::default();
    for p in &io.children {
        let into = match (p.ns, p.local.as_str()) {
            (crate::ns::Ns::Vendor(_), "inputParameter") => &mut mapping.inputs,
            (crate::ns::Ns::Vendor(_), "outputParameter") => &mut mapping.outputs,
            _ => {
                ctx.unsupported_in(&p.local, p, el, "an inputOutput holds inputParameter and outputParameter elements");
                continue;
            }
        };
        let Some(name) = p.attr("name").map(str::trim).filter(|n| !n.is_empty()) else {
            ctx.problem_at(p, el, format!("{} has no name", p.local));
            continue;
        };
        if let Some(value) = io_value(ctx, el, p) {
            into.push(IoParameter { name: name.to_owned(), value });
        }
    }
    Some(mapping)
}

/// The value held by a parameter, list item or map entry.
fn io_value(ctx: &mut Ctx<'_>, owner: &Element, holder: &Element) -> Option<IoValue> {
    let Some(child) = holder.children.iter().find(|c| matches!(c.ns, crate::ns::Ns::Vendor(_))) else {
        let text = holder.text.trim();
        if text.is_empty() {
            return Some(IoValue::Null);
        }
        ctx.note_expression(owner, "input/output parameter", text);
        return Some(IoValue::Text(text.to_owned()));
    };
    match child.local.as_str() {
        "list" => {
            let items = child.children.iter().filter(|c| c.local == "value").map(|v| io_value(ctx, owner, v));
            items.collect::<Option<Vec<_>>>().map(IoValue::List)
        }
        "map" => {
            let mut entries = Vec::new();
            for entry in child.children.iter().filter(|c| c.local == "entry") {
                let Some(key) = entry.attr("key") else {
                    ctx.problem_at(entry, owner, "a map entry of an input/output parameter has no key");
                    return None;
                };
                entries.push((key.to_owned(), io_value(ctx, owner, entry)?));
            }
            Some(IoValue::Map(entries))
        }
        "script" => {
            let format = child.attr("scriptFormat").unwrap_or_default();
            ctx.script(child, owner, "the parameter's script", format).map(IoValue::Script)
        }
        other => {
            ctx.unsupported_in(other, child, owner, "a parameter holds text, an expression, a list or a map");
            None
        }
    }
}

/// `*:historyTimeToLive` on a process: whole days or an ISO 8601 duration.
pub(crate) fn history_time_to_live(ctx: &mut Ctx<'_>, el: &Element) -> Option<HistoryTimeToLive> {
    let (_, text) = el.vendor_attr("historyTimeToLive")?;
    let text = text.trim();
    if let Ok(days) = text.parse::<u32>() {
        return Some(HistoryTimeToLive::Days(days));
    }
    match IsoDuration::parse(text) {
        Ok(d) => Some(HistoryTimeToLive::Duration(d)),
        Err(e) => {
            ctx.problem(
                el,
                format!("historyTimeToLive '{}' must be a number of days or an ISO 8601 duration: {e}", quote(text)),
            );
            None
        }
    }
}

/// Splits a comma list (`candidateGroups="sales, management"`).
fn comma_list(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

fn vendor_string(ctx: &mut Ctx<'_>, el: &Element, local: &'static str) -> Option<String> {
    let (_, value) = el.vendor_attr(local)?;
    ctx.note_expression(el, local, value);
    Some(value.to_owned())
}

/// The form fields of a user task: Camunda's `formData/formField` (with `validation/constraint`
/// `required` and `readonly`, and `value` children of an enum), Flowable's and Activiti's
/// `formProperty` (`required`, `readable`, `writable`, `default`, `datePattern`, `value`s).
fn form_fields(el: &Element) -> Vec<crate::model::FormField> {
    use crate::model::FormField;
    let flag = |e: &Element, name: &str, default: bool| e.attr(name).map_or(default, |v| v.trim() == "true");
    let values = |e: &Element| -> Vec<(String, Option<String>)> {
        e.children
            .iter()
            .filter(|c| c.local == "value")
            .filter_map(|c| Some((c.attr("id")?.to_owned(), c.attr("name").map(str::to_owned))))
            .collect()
    };
    let mut out = Vec::new();
    for (_, ext) in el.vendor_extensions() {
        match ext.local.as_str() {
            "formData" => {
                for f in ext.children.iter().filter(|c| c.local == "formField") {
                    let Some(id) = f.attr("id") else { continue };
                    let constraints: Vec<&str> = f
                        .children
                        .iter()
                        .filter(|c| c.local == "validation")
                        .flat_map(|v| v.children.iter().filter(|c| c.local == "constraint"))
                        .filter_map(|c| c.attr("name"))
                        .collect();
                    out.push(FormField {
                        id: id.to_owned(),
                        label: f.attr("label").map(str::to_owned),
                        field_type: f.attr("type").unwrap_or("string").to_owned(),
                        default_value: f.attr("defaultValue").map(str::to_owned),
                        required: constraints.contains(&"required"),
                        readable: true,
                        writable: !constraints.contains(&"readonly"),
                        values: values(f),
                        date_pattern: f.attr("datePattern").map(str::to_owned),
                    });
                }
            }
            "formProperty" => {
                let Some(id) = ext.attr("id") else { continue };
                out.push(FormField {
                    id: id.to_owned(),
                    label: ext.attr("name").map(str::to_owned),
                    field_type: ext.attr("type").unwrap_or("string").to_owned(),
                    default_value: ext.attr("default").map(str::to_owned),
                    required: flag(ext, "required", false),
                    readable: flag(ext, "readable", true),
                    writable: flag(ext, "writable", true),
                    values: values(ext),
                    date_pattern: ext.attr("datePattern").map(str::to_owned),
                });
            }
            _ => {}
        }
    }
    out
}

pub(crate) fn user_task(ctx: &mut Ctx<'_>, el: &Element) -> UserTask {
    let mut task = UserTask {
        assignee: vendor_string(ctx, el, "assignee"),
        candidate_users: vendor_string(ctx, el, "candidateUsers").map(|s| comma_list(&s)).unwrap_or_default(),
        candidate_groups: vendor_string(ctx, el, "candidateGroups").map(|s| comma_list(&s)).unwrap_or_default(),
        form_key: el.vendor_attr("formKey").map(|(_, v)| v.to_owned()),
        due_date: vendor_string(ctx, el, "dueDate"),
        priority: vendor_string(ctx, el, "priority"),
        form_fields: form_fields(el),
    };
    // The standard BPMN forms, as Activiti reads them: humanPerformer names
    // the assignee, potentialOwner lists `user(x)`, `group(y)` or bare groups.
    for role in el.bpmn_children() {
        let Some(expr) = role
            .bpmn_child("resourceAssignmentExpression")
            .and_then(|r| r.bpmn_child("formalExpression"))
            .map(|f| f.text.trim())
        else {
            continue;
        };
        match role.local.as_str() {
            "humanPerformer" if task.assignee.is_none() => task.assignee = Some(expr.to_owned()),
            "potentialOwner" => {
                for item in comma_list(expr) {
                    if let Some(u) = item.strip_prefix("user(").and_then(|s| s.strip_suffix(')')) {
                        task.candidate_users.push(u.trim().to_owned());
                    } else if let Some(g) = item.strip_prefix("group(").and_then(|s| s.strip_suffix(')')) {
                        task.candidate_groups.push(g.trim().to_owned());
                    } else {
                        task.candidate_groups.push(item);
                    }
                }
            }
            _ => {}
        }
    }
    task
}

/// The handler or topic of a service task (and of a send / business rule
/// task). `Ok(None)` when it names neither: the caller reports that, because
/// what to say depends on the tag. `Err(())`: a problem was recorded.
pub(crate) fn service_task(ctx: &mut Ctx<'_>, el: &Element) -> Result<Option<ServiceTask>, ()> {
    service_task_in(ctx, el, el)
}

/// [`service_task`] read from `el`, a part of the flow node `owner` (a throwing
/// event's `messageEventDefinition`): problems name the owner.
pub(crate) fn service_task_in(ctx: &mut Ctx<'_>, el: &Element, owner: &Element) -> Result<Option<ServiceTask>, ()> {
    if el.local == "businessRuleTask" && el.vendor_attr("decisionRef").is_some() {
        return camunda_decision(ctx, el).map(Some);
    }
    let Some((mut implementation, arguments)) = implementation(ctx, el, owner)? else { return Ok(None) };
    let fields: Vec<Field> =
        el.vendor_extensions().filter(|(_, f)| f.local == "field").filter_map(|(_, f)| field(ctx, owner, f)).collect();
    if matches!(&implementation, Implementation::Handler { name, source: HandlerSource::Type } if name == "dmn") {
        implementation = Implementation::Decision(flowable_decision(ctx, el, &fields)?);
    }
    for a in &arguments {
        ctx.note_expression(owner, "argument", a);
    }
    Ok(Some(ServiceTask {
        implementation,
        result_variable: vendor_string(ctx, el, "resultVariable"),
        fields,
        arguments,
    }))
}

/// A Camunda business rule task: `camunda:decisionRef` (a decision id or an expression),
/// `decisionRefBinding` (latest, deployment, version + `decisionRefVersion`, versionTag +
/// `decisionRefVersionTag`), `mapDecisionResult` and `resultVariable`.
fn camunda_decision(ctx: &mut Ctx<'_>, el: &Element) -> Result<ServiceTask, ()> {
    let key = el.vendor_attr("decisionRef").map(|(_, k)| k.trim().to_owned()).unwrap_or_default();
    if key.is_empty() {
        ctx.problem(el, "camunda:decisionRef is empty");
        return Err(());
    }
    ctx.note_expression(el, "decisionRef", &key);
    let attr = |local: &str| el.vendor_attr(local).map(|(_, v)| v.trim().to_owned()).filter(|v| !v.is_empty());
    let binding = match attr("decisionRefBinding").as_deref().unwrap_or("latest") {
        "latest" => DecisionBinding::Latest,
        "deployment" => DecisionBinding::Deployment,
        "version" => match attr("decisionRefVersion") {
            Some(v) => {
                ctx.note_expression(el, "decisionRefVersion", &v);
                DecisionBinding::Version(v)
            }
            None => {
                ctx.problem(el, "camunda:decisionRefBinding=\"version\" needs camunda:decisionRefVersion");
                return Err(());
            }
        },
        "versionTag" => match attr("decisionRefVersionTag") {
            Some(v) => DecisionBinding::VersionTag(v),
            None => {
                ctx.problem(el, "camunda:decisionRefBinding=\"versionTag\" needs camunda:decisionRefVersionTag");
                return Err(());
            }
        },
        other => {
            ctx.problem(
                el,
                format!(
                    "camunda:decisionRefBinding '{}' is not latest, deployment, version or versionTag",
                    quote(other)
                ),
            );
            return Err(());
        }
    };
    if attr("decisionRefTenantId").is_some() {
        ctx.unsupported(
            el,
            "camunda:decisionRefTenantId: a decision is always found in the instance's own tenant; leave it out",
        );
        return Err(());
    }
    let mapping = match attr("mapDecisionResult").as_deref().unwrap_or("resultList") {
        "resultList" => DecisionMapping::ResultList,
        "singleEntry" => DecisionMapping::SingleEntry,
        "singleResult" => DecisionMapping::SingleResult,
        "collectEntries" => DecisionMapping::CollectEntries,
        other => {
            ctx.problem(
                el,
                format!(
                    "camunda:mapDecisionResult '{}' is not resultList, singleEntry, singleResult or collectEntries",
                    quote(other)
                ),
            );
            return Err(());
        }
    };
    Ok(ServiceTask {
        implementation: Implementation::Decision(DecisionRef { key, binding, mapping }),
        result_variable: vendor_string(ctx, el, "resultVariable"),
        fields: Vec::new(),
        arguments: Vec::new(),
    })
}

/// Flowable's decision task (`flowable:type="dmn"`): the fields `decisionTableReferenceKey`,
/// `decisionTaskThrowErrorOnNoHits` and `sameDeployment`.
fn flowable_decision(ctx: &mut Ctx<'_>, el: &Element, fields: &[Field]) -> Result<DecisionRef, ()> {
    let get = |name: &str| fields.iter().find(|f| f.name == name);
    if get("decisionServiceReferenceKey").is_some() {
        ctx.unsupported(
            el,
            "a decision service (decisionServiceReferenceKey): name a decision with decisionTableReferenceKey",
        );
        return Err(());
    }
    let Some(key) = get("decisionTableReferenceKey").map(|f| f.value.trim().to_owned()).filter(|k| !k.is_empty())
    else {
        ctx.problem(el, "a dmn task needs the field decisionTableReferenceKey naming its decision");
        return Err(());
    };
    let flag = |name: &str| get(name).is_some_and(|f| !f.expression && f.value.trim().eq_ignore_ascii_case("true"));
    if let Some(f) = fields
        .iter()
        .find(|f| f.expression && matches!(f.name.as_str(), "decisionTaskThrowErrorOnNoHits" | "sameDeployment"))
    {
        ctx.problem(el, format!("the field {} must be true or false, not an expression", f.name));
        return Err(());
    }
    Ok(DecisionRef {
        key,
        binding: if flag("sameDeployment") { DecisionBinding::Deployment } else { DecisionBinding::Latest },
        mapping: DecisionMapping::Flowable { throw_on_no_hits: flag("decisionTaskThrowErrorOnNoHits") },
    })
}

/// Who does a service task's work, and the arguments of a bean method call naming it.
type Named = (Implementation, Vec<String>);

fn implementation(ctx: &mut Ctx<'_>, el: &Element, owner: &Element) -> Result<Option<Named>, ()> {
    let topic = el.vendor_attr("topic").map(|(_, t)| t.trim().to_owned());
    match el.vendor_attr("type") {
        Some((v, t @ ("external" | "external-worker"))) => {
            return match topic.filter(|t| !t.is_empty()) {
                Some(topic) => Ok(Some((Implementation::External { topic }, Vec::new()))),
                None => {
                    ctx.problem_at(el, owner, format!("{}:type=\"{t}\" needs a {}:topic", v.prefix(), v.prefix()));
                    Err(())
                }
            };
        }
        // Flowable's mail, http, shell, camel … tasks: the type names a handler the engine binds
        // (`kairos serve --bind-handler mail=topic:send-mail`); its fields are the configuration.
        Some((v, other)) => {
            return non_empty(ctx, (el, owner), &format!("{}:type", v.prefix()), other, HandlerSource::Type);
        }
        None if topic.is_some() => {
            ctx.problem_at(el, owner, "a topic needs camunda:type=\"external\" or flowable:type=\"external-worker\"");
            return Err(());
        }
        None => {}
    }
    if let Some(name) = el.attrs.iter().find(|a| a.ns == crate::ns::Ns::Vendor(Vendor::Kairos) && a.local == "handler")
    {
        return non_empty(ctx, (el, owner), "kairos:handler", &name.value, HandlerSource::KairosHandler);
    }
    if let Some((v, class)) = el.vendor_attr("class") {
        return non_empty(ctx, (el, owner), &format!("{}:class", v.prefix()), class, HandlerSource::Class);
    }
    for (local, source) in
        [("delegateExpression", HandlerSource::DelegateExpression), ("expression", HandlerSource::Expression)]
    {
        if let Some((v, text)) = el.vendor_attr(local) {
            if let Some(name) = handler_name_in(text) {
                return Ok(Some((Implementation::Handler { name: name.to_owned(), source }, Vec::new())));
            }
            // Flowable's and Camunda's expression service task: evaluated when the expression
            // language can; a bean method call it cannot make (`${svc.post(id)}`) names a
            // handler the engine binds, its arguments evaluated and passed as input.
            let evaluable = source == HandlerSource::Expression && is_expression(text) && ctx.evaluable(text);
            if !evaluable && let Some((name, arguments)) = method_call_in(text) {
                return Ok(Some((Implementation::Handler { name, source: HandlerSource::Method }, arguments)));
            }
            if source == HandlerSource::Expression && is_expression(text) {
                ctx.note_expression(owner, "expression", text);
                return Ok(Some((Implementation::Expression { text: text.trim().to_owned() }, Vec::new())));
            }
            ctx.problem_at(
                el,
                owner,
                format!(
                    "{}:{local} '{}' does not name a handler: write ${{name}} or ${{bean.method(args)}}, or use kairos:handler",
                    v.prefix(),
                    quote(text)
                ),
            );
            return Err(());
        }
    }
    // The BPMN attribute, as Activiti 7 uses it for connectors: `##WebService`,
    // `##unspecified` and URIs name technologies, not handlers.
    if let Some(name) = el.attr("implementation").map(str::trim)
        && !name.is_empty()
        && !name.starts_with("##")
        && !name.contains("://")
        && !name.eq_ignore_ascii_case("webService")
    {
        return non_empty(ctx, (el, owner), "implementation", name, HandlerSource::Implementation);
    }
    Ok(None)
}

fn non_empty(
    ctx: &mut Ctx<'_>,
    (el, owner): (&Element, &Element),
    attr: &str,
    value: &str,
    source: HandlerSource,
) -> Result<Option<Named>, ()> {
    let name = value.trim();
    if name.is_empty() {
        ctx.problem_at(el, owner, format!("{attr} is empty"));
        return Err(());
    }
    Ok(Some((Implementation::Handler { name: name.to_owned(), source }, Vec::new())))
}

/// `NAME` in `${NAME}` / `#{NAME}`, where NAME is a dotted identifier. Method
/// calls (`${bean.run(execution)}`) are not names: the expression language
/// cannot reach the host (SPEC P6), so such a value must be rewritten. Nor are
/// the expression language's literals (`${true}`, `${null}`).
pub(crate) fn handler_name_in(text: &str) -> Option<&str> {
    let inner = expression_body(text)?;
    let ok = !matches!(inner, "true" | "false" | "null") && is_dotted_name(inner);
    ok.then_some(inner)
}

fn expression_body(text: &str) -> Option<&str> {
    let text = text.trim();
    let inner = text.strip_prefix("${").or_else(|| text.strip_prefix("#{"))?.strip_suffix('}')?.trim();
    (!inner.is_empty()).then_some(inner)
}

fn is_dotted_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && !s.ends_with('.')
        && s.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '$'))
}

/// A bean method call, `${bean.method(a, b)}`: the handler name `bean.method` and each
/// argument as an expression of its own (`${a}`, `${b}`). The implicit objects (`execution`,
/// `task`) are no beans: `${execution.setVariable(…)}` is the expression language's business.
/// Arguments split at top-level commas, outside brackets and string literals.
pub(crate) fn method_call_in(text: &str) -> Option<(String, Vec<String>)> {
    let inner = expression_body(text)?;
    let open = inner.find('(')?;
    let (name, rest) = (inner[..open].trim(), inner[open + 1..].strip_suffix(')')?);
    let root = name.split('.').next().unwrap_or_default();
    if !name.contains('.') || !is_dotted_name(name) || matches!(root, "execution" | "task") {
        return None;
    }
    let mut args = Vec::new();
    let (mut depth, mut quote, mut start) = (0usize, None::<char>, 0usize);
    for (i, c) in rest.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth = depth.checked_sub(1)?,
            (None, ',') if depth == 0 => {
                args.push(rest[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 || quote.is_some() {
        return None;
    }
    let last = rest[start..].trim();
    if !last.is_empty() || !args.is_empty() {
        args.push(last);
    }
    if args.iter().any(|a| a.is_empty()) {
        return None;
    }
    Some((name.to_owned(), args.into_iter().map(|a| format!("${{{a}}}")).collect()))
}

/// One `*:field` injection: `stringValue` / `expression` attributes or
/// `<*:string>` / `<*:expression>` children.
pub(crate) fn field(ctx: &mut Ctx<'_>, owner: &Element, f: &Element) -> Option<Field> {
    let Some(name) = f.attr("name") else {
        ctx.problem_at(f, owner, "field has no name");
        return None;
    };
    let child = |local: &str| f.children.iter().find(|c| matches!(c.ns, crate::ns::Ns::Vendor(_)) && c.local == local);
    let (value, expression) = if let Some(v) = f.attr("stringValue").or_else(|| f.attr("string")) {
        (v.to_owned(), false)
    } else if let Some(v) = f.attr("expression") {
        (v.to_owned(), true)
    } else if let Some(c) = child("string") {
        (c.text.trim().to_owned(), false)
    } else if let Some(c) = child("expression") {
        (c.text.trim().to_owned(), true)
    } else {
        ctx.problem_at(f, owner, format!("field '{}' has no value", quote(name)));
        return None;
    };
    if expression {
        ctx.note_expression(owner, "field", &value);
    }
    Some(Field { name: name.to_owned(), value, expression })
}

/// `multiInstanceLoopCharacteristics`, with the vendor attributes or the
/// standard `loopDataInputRef` / `inputDataItem`.
pub(crate) fn multi_instance(ctx: &mut Ctx<'_>, el: &Element) -> Option<MultiInstance> {
    let mi = el.bpmn_child("multiInstanceLoopCharacteristics")?;
    let text_of = |local: &str| mi.bpmn_child(local).map(|c| c.text.trim().to_owned()).filter(|t| !t.is_empty());
    let sequential = ctx.boolean(mi, "isSequential", mi.attr("isSequential"), false);
    let collection =
        mi.vendor_attr("collection").map(|(_, v)| v.trim().to_owned()).or_else(|| text_of("loopDataInputRef"));
    let element_variable = mi
        .vendor_attr("elementVariable")
        .map(|(_, v)| v.trim().to_owned())
        .or_else(|| mi.bpmn_child("inputDataItem").and_then(|i| i.attr("name")).map(str::to_owned));
    let cardinality = text_of("loopCardinality");
    let completion_condition = text_of("completionCondition");
    // Flowable's `<flowable:collection flowable:class="…">`: a Java class makes the collection.
    if let Some((v, c)) = mi.vendor_extensions().find(|(_, c)| c.local == "collection") {
        let why = "a collection made by a Java collection handler is not supported: give the collection as an expression or a variable name in the collection attribute";
        ctx.unsupported_in(&format!("{}:collection", v.prefix()), c, el, why);
        return None;
    }
    if collection.is_none() && cardinality.is_none() {
        ctx.problem_at(mi, el, "multiInstanceLoopCharacteristics needs a collection or a loopCardinality");
    }
    if let Some(c) = &cardinality {
        if is_expression(c) {
            ctx.note_expression(el, "loopCardinality", c);
        } else if c.parse::<u32>().is_err() {
            ctx.problem_at(mi, el, format!("loopCardinality '{}' must be a whole number or an expression", quote(c)));
        }
    }
    for (what, text) in [("collection", &collection), ("completionCondition", &completion_condition)] {
        if let Some(t) = text {
            ctx.note_expression(el, what, t);
        }
    }
    Some(MultiInstance { sequential, collection, element_variable, cardinality, completion_condition })
}

/// `standardLoopCharacteristics`: `loopCondition` (an expression), `loopMaximum` and
/// `testBefore`. A loop with neither a condition nor a maximum would never end, so it
/// is refused.
pub(crate) fn standard_loop(ctx: &mut Ctx<'_>, el: &Element) -> Option<StandardLoop> {
    let sl = el.bpmn_child("standardLoopCharacteristics")?;
    let test_before = ctx.boolean(sl, "testBefore", sl.attr("testBefore"), false);
    let condition = sl.bpmn_child("loopCondition").map(|c| c.text.trim().to_owned()).filter(|t| !t.is_empty());
    if let Some(c) = &condition {
        if is_expression(c) {
            ctx.note_expression(el, "loopCondition", c);
        } else {
            ctx.problem_at(
                sl,
                el,
                format!("loopCondition '{}' must be an expression such as ${{loopCounter < 3}}", quote(c)),
            );
        }
    }
    let maximum = match sl.attr("loopMaximum").map(str::trim) {
        None => None,
        Some(m) => match m.parse::<u32>() {
            Ok(n) => Some(n),
            Err(_) => {
                ctx.problem_at(sl, el, format!("loopMaximum '{}' must be a whole number", quote(m)));
                None
            }
        },
    };
    if condition.is_none() && sl.attr("loopMaximum").is_none() {
        ctx.problem_at(
            sl,
            el,
            "standardLoopCharacteristics needs a loopCondition or a loopMaximum: it would never end",
        );
    }
    Some(StandardLoop { condition, maximum, test_before })
}

/// `callActivity`: the called process and the `*:in` / `*:out` mappings.
pub(crate) fn call_activity(ctx: &mut Ctx<'_>, el: &Element) -> CallActivity {
    let called_element = el.attr("calledElement").map(str::trim).unwrap_or_default().to_owned();
    if called_element.is_empty() {
        ctx.problem(el, "has no calledElement (the key of the process to call)");
    }
    ctx.note_expression(el, "calledElement", &called_element);
    let mut call = CallActivity {
        called_element,
        inputs: Vec::new(),
        outputs: Vec::new(),
        business_key: None,
        inherit_business_key: false,
    };
    call.inherit_business_key = match el.vendor_attr("inheritBusinessKey") {
        Some((v, value)) => ctx.boolean(el, &format!("{}:inheritBusinessKey", v.prefix()), Some(value), false),
        None => false,
    };
    if let Some((v, value)) = el.vendor_attr("inheritVariables")
        && ctx.boolean(el, &format!("{}:inheritVariables", v.prefix()), Some(value), false)
    {
        call.inputs.push(VariableMapping::All { local: false });
    }
    for (v, m) in el.vendor_extensions() {
        let is_in = match m.local.as_str() {
            "in" => true,
            "out" => false,
            _ => continue,
        };
        if let (true, Some(key)) = (is_in, m.attr("businessKey")) {
            ctx.note_expression(el, "businessKey", key);
            call.business_key = Some(key.to_owned());
            continue;
        }
        if let Some(mapping) = mapping(ctx, el, v, m) {
            if is_in { call.inputs.push(mapping) } else { call.outputs.push(mapping) }
        }
    }
    call
}

fn mapping(ctx: &mut Ctx<'_>, owner: &Element, v: Vendor, m: &Element) -> Option<VariableMapping> {
    let local = ctx.boolean(m, "local", m.attr("local"), false);
    if m.attr("variables") == Some("all") {
        return Some(VariableMapping::All { local });
    }
    let target = m.attr("target").map(str::to_owned);
    match (m.attr("source"), m.attr("sourceExpression"), target) {
        (Some(source), None, Some(target)) => {
            Some(VariableMapping::Variable { source: source.to_owned(), target, local })
        }
        (None, Some(expression), Some(target)) => {
            ctx.note_expression(owner, "sourceExpression", expression);
            Some(VariableMapping::Expression { expression: expression.to_owned(), target, local })
        }
        _ => {
            ctx.problem_at(
                m,
                owner,
                format!(
                    "{}:{} needs source or sourceExpression with a target, variables=\"all\", or businessKey",
                    v.prefix(),
                    m.local
                ),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handler_names_come_from_simple_expressions_only() {
        assert_eq!(handler_name_in("${mailer}"), Some("mailer"));
        assert_eq!(handler_name_in(" #{ billing.charge } "), Some("billing.charge"));
        assert_eq!(handler_name_in("${bean.run(execution)}"), None);
        assert_eq!(handler_name_in("${}"), None);
        assert_eq!(handler_name_in("${true}"), None, "a literal, not a name");
        assert_eq!(handler_name_in("${null}"), None);
        assert_eq!(handler_name_in("mailer"), None);
    }

    #[test]
    fn bean_method_calls_name_their_handler_and_split_their_arguments() {
        let call = |t: &str| method_call_in(t).map(|(n, a)| (n, a.join(" | ")));
        assert_eq!(call("${svc.post(id)}"), Some(("svc.post".into(), "${id}".into())));
        assert_eq!(
            call("#{mail.send(order.customer, 'a, (b)', f(1, 2))}"),
            Some(("mail.send".into(), "${order.customer} | ${'a, (b)'} | ${f(1, 2)}".into()))
        );
        assert_eq!(call("${svc.ping()}"), Some(("svc.ping".into(), String::new())));
        assert_eq!(call("${execution.setVariable('a', 1)}"), None, "the implicit objects are no beans");
        assert_eq!(call("${post(id)}"), None, "a function, not a bean's method");
        assert_eq!(call("${svc.post(id, )}"), None);
        assert_eq!(call("${svc.post(id}"), None);
        assert_eq!(call("${svc.post('x)}"), None);
    }

    #[test]
    fn comma_lists_trim_and_drop_empties() {
        assert_eq!(comma_list(" a, b ,,c "), ["a", "b", "c"]);
        assert!(comma_list("").is_empty());
    }
}
