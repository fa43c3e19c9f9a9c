//! Decisions compiled to dsntk evaluators for one shape of variables (see [`crate::feel::shape`]),
//! cached per decision so that a model called again with variables of the same shape parses
//! nothing.

use crate::feel::{self, Grammar};
use crate::model::{Decision, Logic, Table};
use dsntk_feel::context::FeelContext;
use dsntk_feel::values::Value;
use dsntk_feel::{Evaluator, FeelScope, Name};
use dsntk_feel_parser::AstNode;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Shapes kept per decision; a model called with ever new shapes recompiles, never grows.
const SHAPES_PER_DECISION: usize = 32;

pub(crate) enum Compiled {
    Table(CompiledTable),
    Literal(Evaluator),
}

pub(crate) struct CompiledTable {
    /// One per input; `None` for an empty input expression (its value is null).
    pub inputs: Vec<Option<Evaluator>>,
    pub rules: Vec<CompiledRule>,
}

pub(crate) struct CompiledRule {
    /// One per input.
    pub tests: Vec<Test>,
    /// One per output; `None` for an empty output entry, which Camunda leaves out of the result.
    pub outputs: Vec<Option<Evaluator>>,
}

/// An input entry: matches when any of its items does.
pub(crate) enum Test {
    /// Empty or `-`.
    Any,
    Items(Vec<Item>),
}

pub(crate) enum Item {
    /// Uses `?` or the input variable: true when it evaluates to true (`? > 5`).
    Predicate(Evaluator),
    /// A value, range, list or comparison the input is tested against (`< 250`, `"Misc"`,
    /// `[5..8]`, `not("x")`): dsntk's `in`, evaluated with the input bound to `?`.
    Membership(Evaluator),
}

impl Test {
    pub fn matches(&self, scope: &FeelScope) -> bool {
        match self {
            Test::Any => true,
            Test::Items(items) => items.iter().any(|item| match item {
                Item::Predicate(evaluator) | Item::Membership(evaluator) => evaluator(scope).is_true(),
            }),
        }
    }
}

/// The name under which an input's value is visible to its entries, besides its variable.
pub(crate) fn question_mark() -> Name {
    Name::from("?")
}

/// A compile error, with the line of the rule it is in.
pub(crate) struct Located {
    pub line: Option<u32>,
    pub message: String,
}

impl Located {
    fn anywhere(message: impl Into<String>) -> Self {
        Located { line: None, message: message.into() }
    }
}

/// Compiled forms of one decision by shape key.
#[derive(Default)]
pub(crate) struct Cache(Mutex<HashMap<String, Arc<Compiled>>>);

impl Cache {
    pub fn get_or_compile(&self, decision: &Decision, shape: &FeelContext) -> Result<Arc<Compiled>, String> {
        let key = format!("{shape:?}");
        if let Some(compiled) = self.lock().get(&key) {
            return Ok(Arc::clone(compiled));
        }
        // Compiled without the lock: a slow compile never blocks other callers.
        let compiled = Arc::new(compile(decision, shape).map_err(|located| located.message)?);
        let mut shapes = self.lock();
        if shapes.len() >= SHAPES_PER_DECISION {
            shapes.clear();
        }
        shapes.insert(key, Arc::clone(&compiled));
        Ok(compiled)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Compiled>>> {
        // A panic while holding the lock leaves a map that is still whole: keep using it.
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cache({} shapes)", self.lock().len())
    }
}

/// Compiles a decision against `shape`. At parse time the shape is empty: that checks syntax and
/// safety once, with line numbers, before the model is accepted.
pub(crate) fn compile(decision: &Decision, shape: &FeelContext) -> Result<Compiled, Located> {
    let scope = FeelScope::from(shape.clone());
    match &decision.logic {
        Logic::Literal(literal) => {
            if literal.text.trim().is_empty() {
                return Err(Located::anywhere("the literal expression is empty"));
            }
            let node = feel::parse(&scope, &literal.text, Grammar::Expression).map_err(Located::anywhere)?;
            Ok(Compiled::Literal(dsntk_feel_evaluator::prepare(&node)))
        }
        Logic::Table(table) => compile_table(table, &scope).map(Compiled::Table),
    }
}

fn compile_table(table: &Table, scope: &FeelScope) -> Result<CompiledTable, Located> {
    let mut inputs = Vec::with_capacity(table.inputs.len());
    for input in &table.inputs {
        inputs.push(if input.expression.trim().is_empty() {
            None
        } else {
            let node = feel::parse(scope, &input.expression, Grammar::Expression)
                .map_err(|why| Located::anywhere(format!("input '{}': {why}", input.id)))?;
            Some(dsntk_feel_evaluator::prepare(&node))
        });
    }
    // Input entries see `?` and the input's variable besides the variables.
    let entry_scopes: Vec<(Name, FeelScope)> = table
        .inputs
        .iter()
        .map(|input| {
            let variable = Name::from(input.variable.as_str());
            let mut names = FeelContext::default();
            names.set_entry(&question_mark(), Value::Null(None));
            names.set_entry(&variable, Value::Null(None));
            let entry_scope = FeelScope::from(scope.peek().unwrap_or_default());
            entry_scope.push(names);
            (variable, entry_scope)
        })
        .collect();
    let mut rules = Vec::with_capacity(table.rules.len());
    for rule in &table.rules {
        let at = |why: String| Located {
            line: Some(rule.line),
            message: format!("rule '{}' (line {}): {why}", rule.id, rule.line),
        };
        let mut tests = Vec::with_capacity(rule.input_entries.len());
        for (text, (variable, entry_scope)) in rule.input_entries.iter().zip(&entry_scopes) {
            tests.push(compile_test(text, variable, entry_scope).map_err(at)?);
        }
        let mut outputs = Vec::with_capacity(rule.output_entries.len());
        for text in &rule.output_entries {
            outputs.push(if text.trim().is_empty() {
                None
            } else {
                let node = feel::parse(scope, text, Grammar::Expression).map_err(at)?;
                Some(dsntk_feel_evaluator::prepare(&node))
            });
        }
        rules.push(CompiledRule { tests, outputs });
    }
    Ok(CompiledTable { inputs, rules })
}

fn compile_test(text: &str, variable: &Name, scope: &FeelScope) -> Result<Test, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed == "-" {
        return Ok(Test::Any);
    }
    let node = feel::parse(scope, trimmed, Grammar::UnaryTests)?;
    let question = question_mark();
    let names = [&question, variable];
    let membership = |item: AstNode| {
        Item::Membership(dsntk_feel_evaluator::prepare(&AstNode::In(
            Box::new(AstNode::Name(question_mark())),
            Box::new(item),
        )))
    };
    Ok(match node {
        AstNode::Irrelevant => Test::Any,
        AstNode::ExpressionList(items) => Test::Items(
            items
                .into_iter()
                .map(|item| {
                    if !is_unary_form(&item) && feel::references(&item, &names) {
                        Item::Predicate(dsntk_feel_evaluator::prepare(&item))
                    } else {
                        membership(item)
                    }
                })
                .collect(),
        ),
        other => Test::Items(vec![membership(other)]),
    })
}

/// The unary-test forms whose meaning is "compare the input with this".
fn is_unary_form(node: &AstNode) -> bool {
    matches!(
        node,
        AstNode::UnaryGe(_)
            | AstNode::UnaryGt(_)
            | AstNode::UnaryLe(_)
            | AstNode::UnaryLt(_)
            | AstNode::UnaryEq(_)
            | AstNode::UnaryNe(_)
            | AstNode::Range(..)
            | AstNode::NegatedList(_)
            | AstNode::Irrelevant
    )
}
