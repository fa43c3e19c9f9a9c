//! Flowable's `POST /query/*`: the same lists as the `GET` routes, their filters sent as a
//! JSON body instead of a query string (for long lists of filters). Paging and sorting
//! (`start`, `size`, `sort`, `order`) may be in the body or the URL. A filter is a text,
//! number or boolean, as in the query string; Flowable's variable-value conditions
//! (`variables`, `processInstanceVariables`, …) are not supported and refused by name.

use super::{history, tasks};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Json, Query};
use axum::extract::State;
use axum::http::Uri;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The body's filters and the URL's parameters as the `GET` route's query.
fn query<T: DeserializeOwned>(uri: &Uri, body: Map<String, Value>) -> Result<Query<T>, ApiError> {
    let mut params = Map::new();
    for (key, value) in body {
        let text = match value {
            Value::Null => continue,
            Value::String(s) => s,
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => n.to_string(),
            Value::Array(_) | Value::Object(_) => {
                return Err(ApiError::invalid(
                    "body",
                    format!(
                        "{key}: a query filter is a text, number or boolean; variable conditions are not supported"
                    ),
                ));
            }
        };
        params.insert(key, Value::String(text));
    }
    if let Some(q) = uri.query() {
        let pairs: Vec<(String, String)> =
            serde_urlencoded::from_str(q).map_err(|e| ApiError::bad_request(format!("bad query string: {e}")))?;
        for (key, value) in pairs {
            if params.insert(key.clone(), Value::String(value)).is_some() {
                return Err(ApiError::invalid(
                    "body",
                    format!("{key} is given in the body and in the URL; give it once"),
                ));
            }
        }
    }
    serde_json::from_value(Value::Object(params))
        .map(Query)
        .map_err(|e| ApiError::invalid("body", format!("the query does not fit: {e}")))
}

macro_rules! post_query {
    ($(#[$doc:meta])* $name:ident => $handler:path, $out:ty) => {
        $(#[$doc])*
        pub async fn $name(
            State(app): State<AppState>,
            scope: crate::tenancy::Scope,
            uri: Uri,
            Json(body): Json<Map<String, Value>>,
        ) -> Result<$out, ApiError> {
            $handler(State(app), scope, query(&uri, body)?).await
        }
    };
}

post_query!(
    /// `POST /query/process-instances`: as `GET /runtime/process-instances`.
    process_instances => super::list, axum::Json<crate::dto::List<super::InstanceResponse>>
);
post_query!(
    /// `POST /query/tasks`: as `GET /runtime/tasks`.
    tasks => tasks::list_any, axum::Json<crate::dto::List<tasks::TaskResponse>>
);
post_query!(
    /// `POST /query/executions`: as `GET /runtime/executions`.
    executions => super::executions, axum::Json<crate::dto::List<kairos::process::ExecutionView>>
);
post_query!(
    /// `POST /query/historic-process-instances`: as `GET /history/historic-process-instances`.
    historic_process_instances => history::instances, axum::Json<crate::dto::List<history::HistoricInstanceResponse>>
);
post_query!(
    /// `POST /query/historic-activity-instances`: as `GET /history/historic-activity-instances`.
    historic_activity_instances => history::activities, axum::Json<crate::dto::List<kairos::process::HistoricActivity>>
);
post_query!(
    /// `POST /query/historic-task-instances`: as `GET /history/historic-task-instances`.
    historic_task_instances => history::tasks, axum::Json<crate::dto::List<crate::dto::HistoricTaskDto>>
);
post_query!(
    /// `POST /query/historic-variable-instances`: as `GET /history/historic-variable-instances`.
    historic_variable_instances => history::variables, axum::Json<crate::dto::List<kairos::process::HistoricVariable>>
);
post_query!(
    /// `POST /query/historic-detail`: as `GET /history/historic-detail`.
    historic_detail => history::details, axum::Json<crate::dto::List<kairos::process::HistoricDetail>>
);
