//! Flowable's REST wire format, for the routes on Flowable's paths (docs/flowable-rest.md):
//! its typed variable lists, its date format, its list envelope.
//!
//! Flowable sends and answers variables as `[{"name", "type", "value"}]` (its `RestVariable`
//! and `EngineRestVariable`); kairos keeps variables as plain JSON values. Reading, a list is
//! checked and converted by its `type` (a number for `integer`, an ISO 8601 text for `date`, …)
//! and kairos's own `{name: value}` object stays accepted; answering, each value gets the type
//! Flowable would give it.

use crate::error::ApiError;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One variable of a Flowable list, as Flowable's clients send it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RestVariableIn {
    name: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    value: Option<Value>,
    /// Only ever set in answers (binary variables, which kairos does not have); clients send
    /// `null`.
    value_url: Option<Value>,
    /// `local` or `global`: where a task variable goes; see [`Variables::scope_of`].
    scope: Option<String>,
}

/// One variable in Flowable's answer shape.
#[derive(Debug, Clone, Serialize)]
pub struct RestVariable {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: Option<&'static str>,
    pub value: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<&'static str>,
}

/// Variables read from a body, with the scope each one named (task variables only).
#[derive(Debug, Default)]
pub struct Variables {
    pub values: Map<String, Value>,
    /// Names given with `"scope": "local"`.
    pub local: Vec<String>,
    /// Names given with `"scope": "global"`.
    pub global: Vec<String>,
    /// Whether they came as Flowable's list (else as kairos's object).
    pub listed: bool,
}

/// The types Flowable's REST API knows (`RestVariableConverter`s of flowable-common-rest).
const TYPES: &str = "string, short, integer, long, double, boolean, date, instant, localDate, localDateTime, json";

/// `variables` of a body in either form: absent or null → none; an object `{name: value}`
/// (kairos); a list of `{name, type?, value, scope?}` (Flowable). Anything else, a missing
/// name, a name twice, a value that is not of its type: 400 naming `variables[i]`.
pub fn variables(field: &'static str, value: Option<Value>) -> Result<Variables, ApiError> {
    let list = match value {
        None | Some(Value::Null) => return Ok(Variables::default()),
        Some(Value::Object(map)) => {
            check_names(field, map.keys())?;
            return Ok(Variables { values: map, ..Variables::default() });
        }
        Some(Value::Array(list)) => list,
        Some(other) => {
            return Err(ApiError::invalid(
                field,
                format!(
                    "{field} must be a list of {{\"name\", \"type\", \"value\"}} (Flowable) or an object of name: value, not {}",
                    kind_of(&other)
                ),
            ));
        }
    };
    let mut out = Variables { listed: true, ..Variables::default() };
    for (i, item) in list.into_iter().enumerate() {
        let at = format!("{field}[{i}]");
        let v: RestVariableIn = serde_json::from_value(item).map_err(|e| {
            ApiError::invalid(field, format!("{at}: {e} (a variable is {{\"name\", \"type\", \"value\"}})"))
        })?;
        let name = match v.name {
            Some(n) if !n.is_empty() => n,
            _ => return Err(ApiError::invalid(field, format!("{at}: name is required"))),
        };
        kairos_process::validate_variable_name(&name)
            .map_err(|e| ApiError::invalid(field, format!("{at}: {}", e.message)))?;
        if v.value_url.as_ref().is_some_and(|u| !u.is_null()) {
            return Err(ApiError::invalid(
                field,
                format!("{at}: valueUrl is only for binary variables, which kairos does not have; send the value"),
            ));
        }
        let value =
            typed(&at, v.kind.as_deref(), v.value.unwrap_or(Value::Null)).map_err(|m| ApiError::invalid(field, m))?;
        match v.scope.as_deref() {
            None => {}
            Some("global") => out.global.push(name.clone()),
            Some("local") => out.local.push(name.clone()),
            Some(other) => {
                return Err(ApiError::invalid(
                    field,
                    format!("{at}: scope must be \"local\" or \"global\", not \"{other}\""),
                ));
            }
        }
        if out.values.insert(name.clone(), value).is_some() {
            return Err(ApiError::invalid(field, format!("{at}: variable {name} is given twice")));
        }
    }
    Ok(out)
}

/// A plain `{name: value}` object of variables, or the `values` of a Flowable list.
pub fn variable_map(field: &'static str, value: Option<Value>) -> Result<Map<String, Value>, ApiError> {
    Ok(variables(field, value)?.values)
}

fn check_names<'a>(field: &'static str, names: impl Iterator<Item = &'a String>) -> Result<(), ApiError> {
    for name in names {
        kairos_process::validate_variable_name(name)
            .map_err(|e| ApiError::invalid(field, format!("{field}: {}", e.message)))?;
    }
    Ok(())
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `value` checked against Flowable's `type` (none: taken as it is). Dates stay ISO 8601
/// text, as kairos's expressions and timers read them.
fn typed(at: &str, kind: Option<&str>, value: Value) -> Result<Value, String> {
    let Some(kind) = kind else { return Ok(value) };
    if value.is_null() {
        return if TYPES.split(", ").any(|t| t == kind) || kind == "null" {
            Ok(Value::Null)
        } else {
            Err(format!("{at}: type \"{kind}\" is not known; use one of {TYPES}"))
        };
    }
    let wrong = || format!("{at}: a value of type {kind} must be {}, not {}", expected(kind), kind_of(&value));
    let ok = match kind {
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "short" => value.as_i64().is_some_and(|n| i16::try_from(n).is_ok()),
        "integer" => value.as_i64().is_some_and(|n| i32::try_from(n).is_ok()),
        "long" => value.is_i64() || value.is_u64() && value.as_i64().is_some(),
        "double" => value.is_number(),
        "json" => true,
        "date" | "instant" => match value.as_str() {
            Some(s) => {
                s.parse::<Timestamp>().map_err(|e| format!("{at}: {s} is not an ISO 8601 instant ({e})"))?;
                true
            }
            None => false,
        },
        "localDate" => match value.as_str() {
            Some(s) => {
                s.parse::<jiff::civil::Date>().map_err(|e| format!("{at}: {s} is not an ISO 8601 date ({e})"))?;
                true
            }
            None => false,
        },
        "localDateTime" => match value.as_str() {
            Some(s) => {
                s.parse::<jiff::civil::DateTime>()
                    .map_err(|e| format!("{at}: {s} is not an ISO 8601 local date-time ({e})"))?;
                true
            }
            None => false,
        },
        other => return Err(format!("{at}: type \"{other}\" is not known; use one of {TYPES}")),
    };
    if ok { Ok(value) } else { Err(wrong()) }
}

fn expected(kind: &str) -> &'static str {
    match kind {
        "string" => "a string",
        "boolean" => "true or false",
        "short" => "a whole number from -32768 to 32767",
        "integer" => "a whole number that fits 32 bits",
        "long" => "a whole number that fits 64 bits",
        "double" => "a number",
        "date" | "instant" => "an ISO 8601 instant such as 2026-01-01T08:00:00Z",
        "localDate" => "an ISO 8601 date such as 2026-01-01",
        _ => "an ISO 8601 local date-time such as 2026-01-01T08:00:00",
    }
}

/// The type Flowable gives a stored value: `integer` when it fits 32 bits, `long`, `double`,
/// `boolean`, `string`, `json` for objects and lists, none for null.
pub fn type_of(v: &Value) -> Option<&'static str> {
    match v {
        Value::Null => None,
        Value::Bool(_) => Some("boolean"),
        Value::Number(n) => Some(match n.as_i64() {
            Some(i) if i32::try_from(i).is_ok() => "integer",
            Some(_) => "long",
            None if n.is_u64() => "long",
            None => "double",
        }),
        Value::String(_) => Some("string"),
        Value::Array(_) | Value::Object(_) => Some("json"),
    }
}

/// Variables as Flowable answers them: a list, sorted by name, each with its type.
pub fn variable_list(vars: &Map<String, Value>, scope: Option<&'static str>) -> Vec<RestVariable> {
    let mut out: Vec<RestVariable> = vars
        .iter()
        .map(|(name, value)| RestVariable { name: name.clone(), kind: type_of(value), value: value.clone(), scope })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// An instant as Flowable writes it: milliseconds and `Z` (`2026-01-01T08:00:00.000Z`), which
/// its clients parse (the Python client reads at most microseconds).
pub fn date(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// [`date`] for optional instants, as serde's `serialize_with`.
pub fn opt_date<S: serde::Serializer>(t: &Option<Timestamp>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.serialize_str(&date(*t)),
        None => s.serialize_none(),
    }
}

/// [`date`] as serde's `serialize_with`.
pub fn ser_date<S: serde::Serializer>(t: &Timestamp, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&date(*t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_flowable_list_is_read_by_type_and_an_object_stays_accepted() {
        let v = variables(
            "variables",
            Some(json!([
                {"name": "amount", "type": "integer", "value": 7, "valueUrl": null},
                {"name": "note", "type": "string", "value": "ok"},
                {"name": "when", "type": "date", "value": "2026-01-01T08:00:00Z"},
                {"name": "any", "value": {"a": 1}, "scope": "local"}
            ])),
        )
        .unwrap();
        assert_eq!(v.values["amount"], json!(7));
        assert_eq!(v.values["when"], json!("2026-01-01T08:00:00Z"));
        assert_eq!(v.local, vec!["any".to_string()]);
        let v = variables("variables", Some(json!({"a": 1}))).unwrap();
        assert_eq!(v.values["a"], json!(1));
    }

    #[test]
    fn a_value_not_of_its_type_is_refused_naming_the_item() {
        for (body, says) in [
            (json!([{"name": "n", "type": "integer", "value": "7"}]), "variables[0]: a value of type integer"),
            (json!([{"name": "n", "type": "integer", "value": 3_000_000_000_i64}]), "fits 32 bits"),
            (json!([{"name": "n", "type": "date", "value": "tomorrow"}]), "not an ISO 8601 instant"),
            (json!([{"name": "n", "type": "serializable", "value": 1}]), "not known"),
            (json!([{"type": "string", "value": "x"}]), "name is required"),
            (json!([{"name": "n", "value": 1}, {"name": "n", "value": 2}]), "given twice"),
            (json!([{"name": "n", "value": 1, "colour": "red"}]), "unknown field `colour`"),
            (json!([{"name": "n", "value": 1, "valueUrl": "http://x"}]), "valueUrl"),
            (json!("x"), "must be a list"),
        ] {
            let e = variables("variables", Some(body.clone())).unwrap_err();
            assert!(e.message.contains(says), "{body}: {}", e.message);
            assert_eq!(e.field.as_deref(), Some("variables"));
        }
    }

    #[test]
    fn answers_carry_flowable_types_and_dates() {
        let map = json!({"b": true, "i": 5, "l": 5_000_000_000_i64, "d": 1.5, "s": "x", "j": [1], "n": null});
        let list = variable_list(map.as_object().unwrap(), None);
        let types: Vec<_> = list.iter().map(|v| (v.name.as_str(), v.kind)).collect();
        assert_eq!(
            types,
            [
                ("b", Some("boolean")),
                ("d", Some("double")),
                ("i", Some("integer")),
                ("j", Some("json")),
                ("l", Some("long")),
                ("n", None),
                ("s", Some("string"))
            ]
        );
        let t: Timestamp = "2026-01-01T08:00:00.123456789Z".parse().unwrap();
        assert_eq!(date(t), "2026-01-01T08:00:00.123Z");
    }
}
