//! The FEEL side: dsntk's parser and evaluator behind the checks that keep a model from
//! overflowing the stack or reaching outside, and the conversions between JSON and FEEL values.

use dsntk_feel::context::FeelContext;
use dsntk_feel::values::Value;
use dsntk_feel::{FeelNumber, FeelScope, Name};
use dsntk_feel_parser::AstNode;
use serde_json::Value as Json;

/// Bytes of one FEEL text at most. dsntk parses iteratively but builds, evaluates and drops its
/// syntax tree recursively; 8 KiB keeps even a degenerate tree (`1+1+…`) droppable on a 2 MiB
/// thread stack, and the depth check below refuses it before it is built.
pub const MAX_FEEL_BYTES: usize = 8 * 1024;

/// Nesting of a FEEL syntax tree at most. dsntk builds and evaluates a tree recursively with
/// large frames (a debug build overflows a 2 MiB stack near depth 300); 64 leaves a wide margin
/// on Tokio's 2 MiB worker stacks, and hand-written expressions stay far below it.
pub const MAX_FEEL_DEPTH: usize = 64;

/// Nesting of a variable's value (objects in arrays in objects …) at most, for the same reason.
pub const MAX_VALUE_DEPTH: usize = 64;

/// Which FEEL grammar a text is: an expression (input expressions, output entries, literal
/// expressions) or unary tests (input entries).
#[derive(Clone, Copy)]
pub(crate) enum Grammar {
    Expression,
    UnaryTests,
}

/// Parses `text` in `scope` (whose names decide how dsntk splits `a - b` or `x.y`) and checks
/// the tree: depth, and no function definitions. A FEEL `function(…)` can call itself without
/// end (dsntk supports recursive context functions) and so overflow the stack, which aborts the
/// process, and an `external` one makes dsntk post to a Java server on 127.0.0.1:22023.
pub(crate) fn parse(scope: &FeelScope, text: &str, grammar: Grammar) -> Result<AstNode, String> {
    if text.len() > MAX_FEEL_BYTES {
        return Err(format!("the FEEL text is {} bytes, more than the limit of {MAX_FEEL_BYTES}", text.len()));
    }
    let parsed = match grammar {
        Grammar::Expression => dsntk_feel_parser::parse_expression(scope, text, false),
        Grammar::UnaryTests => dsntk_feel_parser::parse_unary_tests(scope, text, false),
    };
    let node = parsed.map_err(|error| format!("'{}' is not valid FEEL: {}", excerpt(text), error))?;
    check(&node).map_err(|why| format!("'{}': {why}", excerpt(text)))?;
    Ok(node)
}

fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Walks the tree without recursion.
fn check(root: &AstNode) -> Result<(), String> {
    let mut stack = vec![(root, 1usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth > MAX_FEEL_DEPTH {
            return Err(format!("the expression nests deeper than {MAX_FEEL_DEPTH} levels"));
        }
        if matches!(node, AstNode::FunctionDefinition(..) | AstNode::FunctionBody(..)) {
            return Err(
                "FEEL function definitions are not supported (they allow unbounded recursion and external Java calls)"
                    .into(),
            );
        }
        stack.extend(children(node).into_iter().map(|child| (child, depth + 1)));
    }
    Ok(())
}

/// Whether the tree uses one of `names` (`?` or an input's variable): an input entry that does is
/// a predicate over the input (`? > 5`, `starts with(cellInput, "A")`), not a value to compare.
pub(crate) fn references(root: &AstNode, names: &[&Name]) -> bool {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if let AstNode::Name(name) = node
            && names.contains(&name)
        {
            return true;
        }
        stack.extend(children(node));
    }
    false
}

fn children(node: &AstNode) -> Vec<&AstNode> {
    use AstNode as N;
    match node {
        N::Add(a, b)
        | N::And(a, b)
        | N::ContextEntry(a, b)
        | N::ContextTypeEntry(a, b)
        | N::Div(a, b)
        | N::Eq(a, b)
        | N::Every(a, b)
        | N::Exp(a, b)
        | N::Filter(a, b)
        | N::For(a, b)
        | N::FormalParameter(a, b)
        | N::FunctionDefinition(a, b)
        | N::FunctionInvocation(a, b)
        | N::FunctionType(a, b)
        | N::Ge(a, b)
        | N::Gt(a, b)
        | N::In(a, b)
        | N::InstanceOf(a, b)
        | N::IterationContextSingle(a, b)
        | N::Le(a, b)
        | N::Lt(a, b)
        | N::Mul(a, b)
        | N::NamedParameter(a, b)
        | N::Nq(a, b)
        | N::Or(a, b)
        | N::Out(a, b)
        | N::Path(a, b)
        | N::QuantifiedContext(a, b)
        | N::Range(a, b)
        | N::Some(a, b)
        | N::Sub(a, b) => vec![a, b],
        N::Between(a, b, c) | N::If(a, b, c) | N::IterationContextInterval(a, b, c) => vec![a, b, c],
        N::EvaluatedExpression(a)
        | N::FunctionBody(a, _)
        | N::IntervalEnd(a, _)
        | N::IntervalStart(a, _)
        | N::ListType(a)
        | N::Neg(a)
        | N::RangeType(a)
        | N::Satisfies(a)
        | N::UnaryGe(a)
        | N::UnaryGt(a)
        | N::UnaryLe(a)
        | N::UnaryLt(a)
        | N::UnaryEq(a)
        | N::UnaryNe(a) => vec![a],
        N::CommaList(items)
        | N::Context(items)
        | N::ContextType(items)
        | N::ExpressionList(items)
        | N::FormalParameters(items)
        | N::IterationContexts(items)
        | N::List(items)
        | N::NamedParameters(items)
        | N::NegatedList(items)
        | N::ParameterTypes(items)
        | N::PositionalParameters(items)
        | N::QualifiedName(items)
        | N::QuantifiedContexts(items) => items.iter().collect(),
        N::At(_)
        | N::Boolean(_)
        | N::ContextEntryKey(_)
        | N::ContextTypeEntryKey(_)
        | N::FeelType(_)
        | N::Irrelevant
        | N::Name(_)
        | N::Null
        | N::Numeric(..)
        | N::ParameterName(_)
        | N::QualifiedNameSegment(_)
        | N::String(_) => Vec::new(),
    }
}

/// The variables as a FEEL context. JSON strings stay strings (no date guessing).
pub(crate) fn context_of(variables: &serde_json::Map<String, Json>) -> Result<FeelContext, String> {
    let mut context = FeelContext::default();
    for (name, value) in variables {
        let value = to_feel(value, 1).map_err(|why| format!("variable '{name}': {why}"))?;
        context.set_entry(&Name::from(name.as_str()), value);
    }
    Ok(context)
}

pub(crate) fn to_feel(json: &Json, depth: usize) -> Result<Value, String> {
    if depth > MAX_VALUE_DEPTH {
        return Err(format!("the value nests deeper than {MAX_VALUE_DEPTH} levels"));
    }
    Ok(match json {
        Json::Null => Value::Null(None),
        Json::Bool(value) => Value::Boolean(*value),
        Json::String(value) => Value::String(value.clone()),
        Json::Number(number) => Value::Number(number_to_feel(number)?),
        Json::Array(items) => Value::List(items.iter().map(|item| to_feel(item, depth + 1)).collect::<Result<_, _>>()?),
        Json::Object(entries) => {
            let mut context = FeelContext::default();
            for (key, value) in entries {
                context.set_entry(&Name::from(key.as_str()), to_feel(value, depth + 1)?);
            }
            Value::Context(context)
        }
    })
}

fn number_to_feel(number: &serde_json::Number) -> Result<FeelNumber, String> {
    if let Some(value) = number.as_i64() {
        Ok(FeelNumber::from(value))
    } else if let Some(value) = number.as_u64() {
        Ok(FeelNumber::from(value))
    } else {
        // `{:e}` is exact and short ("1e-1", "1.7976931348623157e308"), and dsntk reads it.
        let value = number.as_f64().unwrap_or(f64::NAN);
        format!("{value:e}").parse::<FeelNumber>().map_err(|_| format!("the number {number} has no FEEL value"))
    }
}

/// A FEEL value as JSON. Numbers that are integral and fit an i64 stay integers unless `float`
/// (a `double` typeRef) asks for a floating-point number; dates, times and durations become their
/// ISO 8601 text; functions, ranges and types have no JSON form and are refused.
pub(crate) fn to_json(value: &Value, float: bool, depth: usize) -> Result<Json, String> {
    if depth > MAX_VALUE_DEPTH {
        return Err(format!("the value nests deeper than {MAX_VALUE_DEPTH} levels"));
    }
    Ok(match value {
        Value::Null(_) => Json::Null,
        Value::Boolean(value) => Json::Bool(*value),
        Value::String(value) => Json::String(value.clone()),
        Value::Number(number) => number_to_json(number, float)?,
        Value::Date(_)
        | Value::DateTime(_)
        | Value::Time(_)
        | Value::DaysAndTimeDuration(_)
        | Value::YearsAndMonthsDuration(_) => Json::String(value.to_string()),
        Value::List(items) => {
            Json::Array(items.iter().map(|item| to_json(item, float, depth + 1)).collect::<Result<_, _>>()?)
        }
        Value::Context(context) => {
            let mut entries = serde_json::Map::new();
            for (name, value) in context.iter() {
                entries.insert(name.to_string(), to_json(value, float, depth + 1)?);
            }
            Json::Object(entries)
        }
        other => return Err(format!("a FEEL {} has no JSON form", other.type_of())),
    })
}

fn number_to_json(number: &FeelNumber, float: bool) -> Result<Json, String> {
    if !float
        && number.is_integer()
        && let Ok(value) = i64::try_from(number)
    {
        return Ok(Json::from(value));
    }
    // dsntk's Debug form is the decimal's own text ("+12345E-2", "+Inf"); its Display panics on
    // an infinity.
    let text = format!("{number:?}");
    text.parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map(Json::Number)
        .ok_or_else(|| format!("the number {text} is out of the range of a JSON number"))
}

/// What dsntk's parser sees of a context: its names, nested contexts and the element types of
/// lists, with every other value null. Parsing depends on nothing else, so a shape keys the cache
/// of compiled decisions, and parsing against it does not copy the variables' data (dsntk clones
/// its whole scope for every text it parses).
pub(crate) fn shape(context: &FeelContext) -> FeelContext {
    let mut shape = FeelContext::default();
    for (name, value) in context.iter() {
        let entry = match value {
            Value::Context(inner) => Value::Context(self::shape(inner)),
            list @ Value::List(_) => Value::FeelType(list.type_of()),
            _ => Value::Null(None),
        };
        shape.set_entry(name, entry);
    }
    shape
}

/// A shape for checking texts at parse time, when the variables are not known: the dotted paths
/// the texts use (`customer.vip` → a context `customer` with an entry `vip`). Without it dsntk
/// reads `customer.vip then …` as one unknown name and fails; plain unknown names parse alike in
/// any scope, so they need no guess.
pub(crate) fn guessed_shape<'a>(texts: impl Iterator<Item = &'a str>) -> FeelContext {
    let mut shape = FeelContext::default();
    for text in texts {
        for path in dotted_paths(text) {
            add_path(&mut shape, &path);
        }
    }
    shape
}

fn add_path(context: &mut FeelContext, path: &[&str]) {
    let Some((first, rest)) = path.split_first() else { return };
    let name = Name::from(*first);
    if rest.is_empty() {
        if !context.contains_entry(&name) {
            context.set_entry(&name, Value::Null(None));
        }
        return;
    }
    let mut inner = match context.get_entry(&name) {
        Some(Value::Context(inner)) => inner.clone(),
        _ => FeelContext::default(),
    };
    add_path(&mut inner, rest);
    context.set_entry(&name, Value::Context(inner));
}

/// `a.b.c` sequences of identifiers outside string literals, at most 8 segments deep.
fn dotted_paths(text: &str) -> Vec<Vec<&str>> {
    let bytes = text.as_bytes();
    let mut paths = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte == b'"' {
            at += 1;
            while at < bytes.len() && bytes[at] != b'"' {
                at += if bytes[at] == b'\\' { 2 } else { 1 };
            }
            at += 1;
        } else if byte.is_ascii_alphabetic() || byte == b'_' {
            let mut path = Vec::new();
            loop {
                let start = at;
                while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
                    at += 1;
                }
                path.push(&text[start..at]);
                let next = bytes.get(at + 1).copied().unwrap_or(b' ');
                if bytes.get(at) == Some(&b'.') && (next.is_ascii_alphabetic() || next == b'_') && path.len() < 8 {
                    at += 1;
                } else {
                    break;
                }
            }
            if path.len() > 1 {
                paths.push(path);
            }
        } else {
            at += 1;
        }
    }
    paths
}
