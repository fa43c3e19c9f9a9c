//! Evaluating a decision as Camunda 7's `DefaultDmnDecisionContext` does: the required decisions
//! first, each adding its result to the variables, then the decision itself.

use crate::compile::{Cache, Compiled, CompiledTable, question_mark};
use crate::feel;
use crate::hit_policy::{self, RuleResult};
use crate::model::{Decision, Literal, Logic, Table};
use crate::types::Target;
use dsntk_feel::context::FeelContext;
use dsntk_feel::values::Value;
use dsntk_feel::{FeelScope, Name};
use serde_json::{Map, Value as Json};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// One rule result: output name → value (Camunda's `DmnDecisionResultEntries`).
pub(crate) type Entries = Map<String, Json>;

/// What a failed step says; the caller names the decision.
pub(crate) struct Failure {
    pub decision: String,
    pub message: String,
}

fn fail(decision: &Decision, message: impl Into<String>) -> Failure {
    Failure { decision: decision.info.id.clone(), message: message.into() }
}

pub(crate) fn evaluate(
    decisions: &[Decision],
    caches: &[Cache],
    root: usize,
    variables: &Map<String, Json>,
) -> Result<Vec<Entries>, Failure> {
    let mut context = feel::context_of(variables).map_err(|why| fail(&decisions[root], why))?;
    let mut result = Vec::new();
    for &index in &decisions[root].order {
        let decision = &decisions[index];
        // A panic in dsntk (its number's Display unwraps on an infinity: `string(1E6000 * 1E6000)`)
        // becomes an error naming the decision that ran into it.
        result = catch_unwind(AssertUnwindSafe(|| evaluate_one(decision, &caches[index], &context))).unwrap_or_else(
            |panic| {
                Err(fail(
                    decision,
                    format!("the FEEL evaluator failed (internal error in dsntk: {})", crate::panic_text(&panic)),
                ))
            },
        )?;
        if index != root {
            add_to_variables(decision, &result, &mut context)?;
        }
    }
    Ok(result)
}

/// Camunda's `addResultToVariableContext`: a single result's entries become variables by their
/// output names; several results, or a RULE ORDER / plain COLLECT table, make each output name
/// a list of its values.
fn add_to_variables(decision: &Decision, results: &[Entries], context: &mut FeelContext) -> Result<(), Failure> {
    let lists = matches!(&decision.logic, Logic::Table(table) if table.hit_policy.yields_lists());
    let mut set = |name: &str, json: &Json| -> Result<(), Failure> {
        let value = feel::to_feel(json, 1).map_err(|why| fail(decision, format!("output '{name}': {why}")))?;
        context.set_entry(&Name::from(name), value);
        Ok(())
    };
    match results {
        [] => {}
        [single] if !lists => {
            for (name, value) in single {
                set(name, value)?;
            }
        }
        _ => {
            let mut names: Vec<&String> = Vec::new();
            for entries in results {
                for name in entries.keys() {
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
            }
            for name in names {
                let values: Vec<Json> = results.iter().filter_map(|entries| entries.get(name).cloned()).collect();
                set(name, &Json::Array(values))?;
            }
        }
    }
    Ok(())
}

fn evaluate_one(decision: &Decision, cache: &Cache, context: &FeelContext) -> Result<Vec<Entries>, Failure> {
    let compiled = cache.get_or_compile(decision, &feel::shape(context)).map_err(|why| fail(decision, why))?;
    let scope = FeelScope::from(context.clone());
    match (&decision.logic, compiled.as_ref()) {
        (Logic::Table(table), Compiled::Table(compiled)) => evaluate_table(decision, table, compiled, &scope),
        (Logic::Literal(literal), Compiled::Literal(evaluator)) => {
            evaluate_literal(decision, literal, evaluator(&scope))
        }
        _ => Err(fail(decision, "internal error: compiled form does not match the decision")),
    }
}

fn evaluate_literal(decision: &Decision, literal: &Literal, value: Value) -> Result<Vec<Entries>, Failure> {
    let target = Target::of(literal.type_ref.as_deref());
    let value =
        target.convert(value).map_err(|why| fail(decision, format!("variable '{}': {why}", literal.variable)))?;
    let json = feel::to_json(&value, target == Target::Double, 1).map_err(|why| fail(decision, why))?;
    let mut entries = Entries::new();
    entries.insert(literal.variable.clone(), json);
    Ok(vec![entries])
}

/// Camunda's `DecisionTableEvaluationHandler`: each input is evaluated once and converted to its
/// typeRef, the rules still matching are filtered input by input, and the matching rules'
/// non-empty output entries are evaluated and converted.
fn evaluate_table(
    decision: &Decision,
    table: &Table,
    compiled: &CompiledTable,
    scope: &FeelScope,
) -> Result<Vec<Entries>, Failure> {
    let mut matching: Vec<usize> = (0..table.rules.len()).collect();
    for (index, input) in table.inputs.iter().enumerate() {
        let value = compiled.inputs[index].as_ref().map_or(Value::Null(None), |evaluator| evaluator(scope));
        let value = Target::of(input.type_ref.as_deref())
            .convert(value)
            .map_err(|why| fail(decision, format!("input '{}': {why}", input.id)))?;
        let mut bound = FeelContext::default();
        bound.set_entry(&question_mark(), value.clone());
        bound.set_entry(&Name::from(input.variable.as_str()), value);
        scope.push(bound);
        matching.retain(|&rule| compiled.rules[rule].tests[index].matches(scope));
        scope.pop();
    }
    let mut results = Vec::with_capacity(matching.len());
    for rule_index in matching {
        let rule = &table.rules[rule_index];
        let mut entries = Entries::new();
        for (output, evaluator) in table.outputs.iter().zip(&compiled.rules[rule_index].outputs) {
            let Some(evaluator) = evaluator else { continue };
            let target = Target::of(output.type_ref.as_deref());
            let at = |why: String| fail(decision, format!("rule '{}', output '{}': {why}", rule.id, output.name));
            let value = target.convert(evaluator(scope)).map_err(at)?;
            entries.insert(output.name.clone(), feel::to_json(&value, target == Target::Double, 1).map_err(at)?);
        }
        results.push(RuleResult { rule: &rule.id, entries });
    }
    hit_policy::apply(table, results).map_err(|why| fail(decision, why))
}
