//! Camunda's typed variables and kairos's JSON values.
//!
//! | Camunda type | kairos value |
//! |---|---|
//! | `String` | a string |
//! | `Integer`, `Long`, `Short` | an integer (Integer within 32 bits, Short within 16) |
//! | `Double` | a number |
//! | `Boolean` | true / false |
//! | `Null` | null |
//! | `Json` | the parsed document (an object or array); its value travels as JSON text |
//! | `Date` | the instant as an RFC 3339 string (it reads back as a `String`) |
//! | none given | from the JSON value, as Camunda infers it |
//!
//! `Object` (serialized Java), `File`, `Bytes` and `Xml` have no kairos value: a 400 names the
//! variable.

use super::{clip, invalid, parse_date};
use crate::error::ApiError;
use serde_json::{Map, Value, json};

/// The variables of a body (`{"name": {"value", "type", "valueInfo"}}`), as kairos values;
/// `field` names the body field in messages (`variables`, `modifications`).
pub fn from_typed(field: &str, v: Option<Value>) -> Result<Map<String, Value>, ApiError> {
    let map = match v {
        None | Some(Value::Null) => return Ok(Map::new()),
        Some(Value::Object(m)) => m,
        Some(_) => {
            return Err(invalid(
                field,
                format!(
                    "{field} must be an object of name: {{\"value\", \"type\"}}, such as {{\"amount\": {{\"value\": 100, \"type\": \"Integer\"}}}}"
                ),
            ));
        }
    };
    let mut out = Map::new();
    for (name, typed) in map {
        let path = format!("{field}.{name}");
        kairos_process::validate_variable_name(&name).map_err(|e| invalid(&path, format!("{path}: {}", e.message)))?;
        out.insert(name, one(&path, typed)?);
    }
    Ok(out)
}

/// One typed value (`{"value", "type", "valueInfo"}`) as a kairos value.
pub fn one(path: &str, typed: Value) -> Result<Value, ApiError> {
    let Value::Object(mut t) = typed else {
        return Err(invalid(path, format!("{path} must be an object {{\"value\", \"type\"?, \"valueInfo\"?}}")));
    };
    if let Some(k) = t.keys().find(|k| !matches!(k.as_str(), "value" | "type" | "valueInfo")) {
        return Err(invalid(path, format!("{path}.{k} is not a field of a Camunda variable (value, type, valueInfo)")));
    }
    let value = t.remove("value").unwrap_or(Value::Null);
    let kind = match t.remove("type") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(_) => return Err(invalid(path, format!("{path}.type must be a string such as \"String\""))),
    };
    match t.remove("valueInfo") {
        None | Some(Value::Null) | Some(Value::Object(_)) => {}
        Some(_) => return Err(invalid(path, format!("{path}.valueInfo must be an object"))),
    }
    let Some(kind) = kind else { return Ok(value) };
    let wrong =
        |what: &str| invalid(path, format!("{path}: a {kind} variable needs {what}, not {}", clip(&value.to_string())));
    Ok(match kind.to_ascii_lowercase().as_str() {
        "string" => match &value {
            Value::String(_) | Value::Null => value,
            _ => return Err(wrong("a string value")),
        },
        "integer" | "long" | "short" => {
            let bits = match kind.to_ascii_lowercase().as_str() {
                "integer" => 32,
                "short" => 16,
                _ => 64,
            };
            let n = match &value {
                Value::Null => return Ok(Value::Null),
                Value::Number(n) => {
                    n.as_i64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15).map(|f| f as i64))
                }
                _ => None,
            };
            let n = n.ok_or_else(|| wrong("a whole number"))?;
            if bits < 64 && (n < -(1i64 << (bits - 1)) || n >= (1i64 << (bits - 1))) {
                return Err(wrong(&format!("a whole number within {bits} bits")));
            }
            json!(n)
        }
        "double" => match &value {
            Value::Null => Value::Null,
            Value::Number(_) => value,
            Value::String(s) => s
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| wrong("a number"))?,
            _ => return Err(wrong("a number")),
        },
        "boolean" => match &value {
            Value::Bool(_) | Value::Null => value,
            _ => return Err(wrong("true or false")),
        },
        "null" => Value::Null,
        "json" => match &value {
            Value::Null => Value::Null,
            Value::String(s) => serde_json::from_str(s)
                .map_err(|e| invalid(path, format!("{path}: the Json value is not JSON: {e}")))?,
            // Already a document: taken as it is (Camunda's clients send the text).
            _ => value,
        },
        "date" => match &value {
            Value::Null => Value::Null,
            Value::String(s) => Value::String(parse_date(path, s)?.to_string()),
            _ => return Err(wrong("a date string such as 2026-01-01T08:00:00.000+0000")),
        },
        "object" | "file" | "bytes" | "xml" => {
            return Err(invalid(
                path,
                format!(
                    "{path}: variables of type {kind} are not supported by kairos (it keeps JSON values: String, Integer, Long, Short, Double, Boolean, Null, Json, Date); send it as Json"
                ),
            ));
        }
        _ => return Err(invalid(path, format!("{path}: \"{}\" is not a Camunda variable type", clip(&kind)))),
    })
}

/// A kairos value as Camunda types it.
pub fn typed(v: &Value) -> Value {
    let (kind, value) = match v {
        Value::Null => ("Null", Value::Null),
        Value::Bool(_) => ("Boolean", v.clone()),
        Value::String(_) => ("String", v.clone()),
        Value::Number(n) => match n.as_i64() {
            Some(i) if i32::try_from(i).is_ok() => ("Integer", v.clone()),
            Some(_) => ("Long", v.clone()),
            None => ("Double", v.clone()),
        },
        Value::Array(_) | Value::Object(_) => ("Json", Value::String(v.to_string())),
    };
    json!({"type": kind, "value": value, "valueInfo": {}})
}

/// Kairos variables as Camunda's `{"name": {"type", "value", "valueInfo"}}`.
pub fn to_typed(map: &Map<String, Value>) -> Value {
    Value::Object(map.iter().map(|(k, v)| (k.clone(), typed(v))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typed_values_map_both_ways_and_misfits_name_the_variable() {
        let v = |j: Value| one("variables.x", j);
        assert_eq!(v(json!({"value": 5, "type": "Integer"})).unwrap(), json!(5));
        assert_eq!(v(json!({"value": 5.0, "type": "long"})).unwrap(), json!(5), "5.0 is a whole number");
        assert_eq!(v(json!({"value": "[1]", "type": "Json"})).unwrap(), json!([1]));
        assert_eq!(v(json!({"value": {"a": 1}, "type": "json"})).unwrap(), json!({"a": 1}));
        assert_eq!(v(json!({"value": true})).unwrap(), json!(true), "no type: the JSON value");
        for bad in [
            json!({"value": 1i64 << 40, "type": "Integer"}),
            json!({"value": 70000, "type": "Short"}),
            json!({"value": "5", "type": "Integer"}),
            json!({"value": 1, "type": "String"}),
            json!({"value": "rO0", "type": "Object"}),
            json!({"value": 1, "type": "Money"}),
            json!({"value": 1, "typo": "String"}),
            json!({"value": "{", "type": "Json"}),
        ] {
            let e = v(bad.clone()).unwrap_err();
            assert!(e.message.contains("variables.x"), "{bad}: {}", e.message);
            assert_eq!(e.field.as_deref().map(|f| f.starts_with("variables.x")), Some(true), "{bad}");
        }
        assert!(from_typed("variables", Some(json!({"\u{1}": {"value": 1}}))).is_err());
        assert!(from_typed("variables", Some(json!([1]))).is_err());
        assert_eq!(typed(&json!(1)), json!({"type": "Integer", "value": 1, "valueInfo": {}}));
        assert_eq!(typed(&json!(1i64 << 40))["type"], "Long");
        assert_eq!(typed(&json!(1.5))["type"], "Double");
        assert_eq!(typed(&json!({"a": [1]})), json!({"type": "Json", "value": "{\"a\":[1]}", "valueInfo": {}}));
        assert_eq!(typed(&Value::Null)["type"], "Null");
    }
}
