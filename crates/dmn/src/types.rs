//! Camunda 7's `typeRef` conversions (its `DmnDataTypeTransformer`s): applied to each input's
//! value, each output entry's value and a literal expression's value.
//!
//! `string`, `boolean`, `integer`, `long`, `double` and `date` convert (or refuse a value that
//! does not fit, as Camunda's DMN-01005 does); any other typeRef (FEEL's `number`, item
//! definitions …) leaves the value as it is, as Camunda's identity transformer does. Null stays
//! null whatever the type.

use dsntk_feel::values::Value;
use dsntk_feel::{FeelNumber, FeelScope, Name};
use dsntk_feel_parser::AstNode;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Any,
    String,
    Boolean,
    Integer,
    Long,
    Double,
    Date,
}

impl Target {
    pub fn of(type_ref: Option<&str>) -> Target {
        match type_ref.map(|name| name.trim().to_ascii_lowercase()).as_deref() {
            Some("string") => Target::String,
            Some("boolean") => Target::Boolean,
            Some("integer") => Target::Integer,
            Some("long") => Target::Long,
            Some("double") => Target::Double,
            Some("date") => Target::Date,
            _ => Target::Any,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Target::Any => "any",
            Target::String => "string",
            Target::Boolean => "boolean",
            Target::Integer => "integer",
            Target::Long => "long",
            Target::Double => "double",
            Target::Date => "date",
        }
    }

    /// The value converted to this type, or why it does not fit.
    pub fn convert(self, value: Value) -> Result<Value, String> {
        if value.is_null() || self == Target::Any {
            return Ok(value);
        }
        let converted = match (self, &value) {
            (Target::String, Value::String(_)) => Some(value.clone()),
            (Target::String, Value::List(_) | Value::Context(_)) => None,
            (Target::String, other) => Some(Value::String(other.to_string())),
            (Target::Boolean, Value::Boolean(_)) => Some(value.clone()),
            (Target::Boolean, Value::String(text)) => match text.to_ascii_lowercase().as_str() {
                "true" => Some(Value::Boolean(true)),
                "false" => Some(Value::Boolean(false)),
                _ => None,
            },
            (Target::Integer, _) => integral(&value, i64::from(i32::MIN), i64::from(i32::MAX)),
            (Target::Long, _) => integral(&value, i64::MIN, i64::MAX),
            (Target::Double, Value::Number(_)) => Some(value.clone()),
            (Target::Double, Value::String(text)) => text
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .and_then(|f| format!("{f:e}").parse::<FeelNumber>().ok().map(Value::Number)),
            (Target::Date, Value::DateTime(_) | Value::Date(_)) => Some(value.clone()),
            (Target::Date, Value::String(_)) => date_and_time(&value),
            _ => None,
        };
        converted.ok_or_else(|| format!("value {} is not valid for type '{}'", describe(&value), self.name()))
    }
}

fn describe(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// A number (or a numeric string, as Java's `Integer.parseInt`) without a fraction, in range.
fn integral(value: &Value, min: i64, max: i64) -> Option<Value> {
    let number = match value {
        Value::Number(number) => *number,
        Value::String(text) => FeelNumber::from(text.parse::<i64>().ok()?),
        _ => return None,
    };
    let integer = i64::try_from(&number).ok().filter(|_| number.is_integer())?;
    (min..=max).contains(&integer).then_some(Value::Number(number))
}

/// A string read as FEEL's `date and time(…)`: `2019-08-12T22:00:00` (Camunda's date format),
/// with or without a zone, or a plain date.
fn date_and_time(text: &Value) -> Option<Value> {
    let mut context = dsntk_feel::context::FeelContext::default();
    context.set_entry(&Name::from("?"), text.clone());
    let scope = FeelScope::from(context);
    let call = AstNode::FunctionInvocation(
        Box::new(AstNode::Name(Name::from("date and time"))),
        Box::new(AstNode::PositionalParameters(vec![AstNode::Name(Name::from("?"))])),
    );
    let value = dsntk_feel_evaluator::evaluate(&scope, &call);
    matches!(value, Value::DateTime(_) | Value::Date(_)).then_some(value)
}
