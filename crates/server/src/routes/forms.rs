//! Flowable's form data of a task (`GET /form/form-data?taskId=`): the form key and the fields
//! the model declares (Flowable's `formProperty`, Camunda's `formField`), each with the value
//! the task sees now — what a tasklist draws its form from. Completing goes through the task
//! (`POST /runtime/tasks/{id}` with `variables`); `POST /form/form-data` is not supported.

use crate::AppState;
use crate::error::ApiError;
use crate::extract::Query;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FormQuery {
    pub task_id: Option<String>,
    process_definition_id: Option<String>,
}

/// Flowable's `RestFormProperty`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FormProperty {
    id: String,
    name: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    /// The value the task sees (as text, as Flowable gives it), else the field's default.
    value: Option<String>,
    readable: bool,
    writable: bool,
    required: bool,
    date_pattern: Option<String>,
    enum_values: Vec<EnumValue>,
}

#[derive(Debug, Serialize)]
pub struct EnumValue {
    id: String,
    name: Option<String>,
}

/// Flowable's `FormDataResponse`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FormData {
    form_key: Option<String>,
    deployment_id: Option<String>,
    process_definition_id: String,
    process_definition_url: String,
    task_id: String,
    task_url: String,
    form_properties: Vec<FormProperty>,
}

fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// `GET /form/form-data?taskId=`: the task's form; 404 for a task that is not open.
pub async fn form_data(
    State(app): State<AppState>,
    Query(q): Query<FormQuery>,
) -> Result<axum::Json<FormData>, ApiError> {
    if q.process_definition_id.is_some_and(|p| !p.is_empty()) {
        return Err(ApiError::invalid(
            "processDefinitionId",
            "start forms are not supported: kairos reads the forms of user tasks (taskId)",
        ));
    }
    let Some(task_id) = q.task_id.filter(|t| !t.is_empty()) else {
        return Err(ApiError::invalid("taskId", "taskId is required"));
    };
    let form = app.engine.processes().task_form(&task_id).await?;
    let t = form.task;
    let enc = super::processes::repository::encode;
    Ok(axum::Json(FormData {
        form_key: t.form_key.clone(),
        deployment_id: None,
        process_definition_url: format!("/repository/process-definitions/{}", enc(&t.process_definition_id)),
        process_definition_id: t.process_definition_id.clone(),
        task_url: format!("/runtime/tasks/{}", enc(&t.id)),
        task_id: t.id.clone(),
        form_properties: form
            .fields
            .into_iter()
            .map(|(f, value)| FormProperty {
                value: value.as_ref().and_then(text_of).or(f.default_value.clone()),
                id: f.id,
                name: f.label,
                kind: f.field_type,
                readable: f.readable,
                writable: f.writable,
                required: f.required,
                date_pattern: f.date_pattern,
                enum_values: f.values.into_iter().map(|(id, name)| EnumValue { id, name }).collect(),
            })
            .collect(),
    }))
}
