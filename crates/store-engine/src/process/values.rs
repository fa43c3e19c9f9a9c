//! A variable's value in Activiti's typed columns (TYPE_, TEXT_, LONG_, DOUBLE_), as
//! ACT_RU_VARIABLE, ACT_HI_VARINST and ACT_HI_DETAIL keep it.

use crate::Row;
use kairos_store::{Result, SqlValue};
use serde_json::Value as Json;

/// A variable's value as (TYPE_, TEXT_, LONG_, DOUBLE_): Activiti's typed columns.
pub fn encode_value(v: &Json) -> (&'static str, SqlValue, SqlValue, SqlValue) {
    match v {
        Json::Null => ("null", SqlValue::Null, SqlValue::Null, SqlValue::Null),
        Json::Bool(x) => ("boolean", SqlValue::Null, SqlValue::Int(i64::from(*x)), SqlValue::Null),
        Json::Number(n) if n.is_i64() => {
            ("integer", SqlValue::Null, SqlValue::Int(n.as_i64().unwrap_or_default()), SqlValue::Null)
        }
        Json::Number(n) => ("double", SqlValue::Null, SqlValue::Null, SqlValue::Float(n.as_f64().unwrap_or_default())),
        Json::String(s) => ("string", SqlValue::Text(s.clone()), SqlValue::Null, SqlValue::Null),
        other => ("json", SqlValue::Text(other.to_string()), SqlValue::Null, SqlValue::Null),
    }
}

/// The inverse of [`encode_value`]. A value kairos cannot read — a TYPE_ it does not know
/// (Activiti's `serializable`), a number that is not one, JSON that does not parse — is an
/// error naming the column (TYPE_, TEXT_, LONG_ or DOUBLE_) and the problem, never a null: a
/// command would write the null back over it.
pub fn decode_value(
    ty: &str,
    text: &SqlValue,
    long: &SqlValue,
    double: &SqlValue,
) -> std::result::Result<Json, (&'static str, &'static str)> {
    const NOT_A_NUMBER: &str = "is not a whole number";
    match ty {
        "null" => Ok(Json::Null),
        "boolean" => long.as_i64().map(|n| Json::Bool(n != 0)).ok_or(("LONG_", NOT_A_NUMBER)),
        "integer" | "long" | "short" => long.as_i64().map(Json::from).ok_or(("LONG_", NOT_A_NUMBER)),
        "double" => double
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map(Json::Number)
            .ok_or(("DOUBLE_", "is not a finite number")),
        "string" | "date" => Ok(text.as_str().map_or(Json::Null, |s| Json::String(s.into()))),
        "json" => text.as_str().and_then(|s| serde_json::from_str(s).ok()).ok_or(("TEXT_", "is not JSON")),
        _ => Err((
            "TYPE_",
            "is not a variable type kairos knows (null, boolean, integer, long, short, double, string, date, json)",
        )),
    }
}

/// The value of a row with columns `type_column` (TYPE_ or VAR_TYPE_), TEXT_, LONG_ and
/// DOUBLE_; a value that cannot be read names the row, its column and (when `name` is given)
/// the variable.
pub(crate) fn row_value(row: &Row<'_>, type_column: &'static str, name: Option<&str>) -> Result<Json> {
    let ty = row.text(type_column)?;
    let (text, long, double) = (row.value("TEXT_")?, row.value("LONG_")?, row.value("DOUBLE_")?);
    decode_value(&ty, text, long, double).map_err(|(column, problem)| {
        let column = if column == "TYPE_" { type_column } else { column };
        match name {
            Some(name) => row.unreadable(column, &format!("{problem} (variable {name:?})")),
            None => row.unreadable(column, problem),
        }
    })
}
