//! Camunda 7's hit policy handlers, over the matching rules' results in rule order.

use crate::evaluate::Entries;
use crate::model::{Aggregator, HitPolicy, Table};
use serde_json::Value as Json;

pub(crate) struct RuleResult<'a> {
    pub rule: &'a str,
    pub entries: Entries,
}

pub(crate) fn apply(table: &Table, mut results: Vec<RuleResult>) -> Result<Vec<Entries>, String> {
    match table.hit_policy {
        HitPolicy::Unique if results.len() > 1 => {
            Err(format!("hit policy UNIQUE allows one matching rule, but rules {} matched", rule_ids(&results)))
        }
        HitPolicy::Any if results.iter().any(|result| result.entries != results[0].entries) => Err(format!(
            "hit policy ANY needs the matching rules to have equal outputs, but rules {} differ",
            rule_ids(&results)
        )),
        HitPolicy::First | HitPolicy::Any => {
            results.truncate(1);
            Ok(entries(results))
        }
        HitPolicy::Unique | HitPolicy::RuleOrder | HitPolicy::Collect(None) => Ok(entries(results)),
        HitPolicy::Collect(Some(aggregator)) => aggregate(table, aggregator, &results),
    }
}

fn entries(results: Vec<RuleResult>) -> Vec<Entries> {
    results.into_iter().map(|result| result.entries).collect()
}

fn rule_ids(results: &[RuleResult]) -> String {
    results.iter().map(|result| format!("'{}'", result.rule)).collect::<Vec<_>>().join(", ")
}

/// Camunda's `AbstractCollectNumberHitPolicyHandler`: one output per rule at most, empty output
/// entries skipped; the result is one entry named by the first output met. Integers aggregate as
/// integers (Camunda: Integer, then Long), anything else as doubles; a non-number is an error.
/// Nothing to aggregate gives no result, except COUNT, which gives 0: Camunda's result then has a
/// null name, which JSON cannot have, so the table's (first) output names it.
fn aggregate(table: &Table, aggregator: Aggregator, results: &[RuleResult]) -> Result<Vec<Entries>, String> {
    let mut name = None;
    let mut values = Vec::new();
    for result in results {
        if result.entries.len() > 1 {
            return Err(format!(
                "aggregation {} applies to one output, but rule '{}' has outputs {}",
                aggregator.label(),
                result.rule,
                result.entries.keys().map(|key| format!("'{key}'")).collect::<Vec<_>>().join(", ")
            ));
        }
        if let Some((output, value)) = result.entries.iter().next() {
            name.get_or_insert_with(|| output.clone());
            values.push(value);
        }
    }
    let value = if aggregator == Aggregator::Count {
        Json::from(values.len())
    } else if values.is_empty() {
        return Ok(Vec::new());
    } else {
        numbers(aggregator, &values)?
    };
    let name = name.unwrap_or_else(|| table.outputs.first().map(|output| output.name.clone()).unwrap_or_default());
    let mut entries = Entries::new();
    entries.insert(name, value);
    Ok(vec![entries])
}

fn numbers(aggregator: Aggregator, values: &[&Json]) -> Result<Json, String> {
    if let Some(bad) = values.iter().find(|value| !value.is_number()) {
        return Err(format!("aggregation {} needs numbers, but an output is {bad}", aggregator.label()));
    }
    let integers: Option<Vec<i64>> = values.iter().map(|value| value.as_i64()).collect();
    if let Some(integers) = integers {
        let aggregated = match aggregator {
            Aggregator::Sum => integers.iter().try_fold(0i64, |sum, value| sum.checked_add(*value)),
            Aggregator::Min => integers.iter().min().copied(),
            Aggregator::Max => integers.iter().max().copied(),
            Aggregator::Count => Some(i64::try_from(integers.len()).unwrap_or(i64::MAX)),
        };
        if let Some(aggregated) = aggregated {
            return Ok(Json::from(aggregated));
        }
    }
    let floats = values.iter().filter_map(|value| value.as_f64());
    let aggregated = match aggregator {
        Aggregator::Sum => floats.sum(),
        Aggregator::Min => floats.fold(f64::INFINITY, f64::min),
        Aggregator::Max => floats.fold(f64::NEG_INFINITY, f64::max),
        Aggregator::Count => values.len() as f64,
    };
    serde_json::Number::from_f64(aggregated)
        .map(Json::Number)
        .ok_or_else(|| format!("aggregation {} overflowed", aggregator.label()))
}
