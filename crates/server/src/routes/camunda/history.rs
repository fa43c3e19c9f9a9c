//! `/engine-rest/history/…`: instances (running and ended), activities, user tasks and
//! variables' last values, each with its `/count`.

use super::variables::typed;
use super::{
    MAX_ID_CHARS, MAX_NAME_CHARS, MAX_RESULTS, Paging, either, flag, invalid, list_of, opt_date, sorting, text,
};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::Query;
use crate::tenancy::Scope;
use axum::extract::State;
use kairos::process::InstanceView;
use serde::Deserialize;
use serde_json::{Value, json};

/// Camunda's state of a historic instance.
fn state(i: &InstanceView) -> &'static str {
    match (i.ended, i.suspended, &i.delete_reason) {
        (false, true, _) => "SUSPENDED",
        (false, false, _) => "ACTIVE",
        (true, _, Some(_)) => "EXTERNALLY_TERMINATED",
        (true, _, None) => "COMPLETED",
    }
}

fn instance_dto(i: &InstanceView) -> Value {
    let duration = match (i.start_time, i.end_time) {
        (Some(s), Some(e)) => json!(e.duration_since(s).as_millis() as i64),
        _ => Value::Null,
    };
    json!({
        "id": i.id,
        "businessKey": i.business_key,
        "processDefinitionId": i.process_definition_id,
        "processDefinitionKey": i.process_definition_key,
        "processDefinitionName": null,
        "processDefinitionVersion": null,
        "startTime": opt_date(i.start_time),
        "endTime": opt_date(i.end_time),
        "removalTime": null,
        "durationInMillis": duration,
        "startUserId": null,
        "startActivityId": null,
        "deleteReason": i.delete_reason,
        "rootProcessInstanceId": i.id,
        "superProcessInstanceId": i.super_process_instance_id,
        "superCaseInstanceId": null,
        "caseInstanceId": null,
        "tenantId": super::tenant_json(&i.tenant_id),
        "state": state(i),
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstancesQuery {
    process_instance_id: Option<String>,
    process_instance_ids: Option<String>,
    process_definition_id: Option<String>,
    process_definition_key: Option<String>,
    process_instance_business_key: Option<String>,
    super_process_instance_id: Option<String>,
    finished: Option<String>,
    unfinished: Option<String>,
    completed: Option<String>,
    externally_terminated: Option<String>,
    active: Option<String>,
    suspended: Option<String>,
    tenant_id_in: Option<String>,
    without_tenant_id: Option<String>,
    sort_by: Option<String>,
    sort_order: Option<String>,
    first_result: Option<String>,
    max_results: Option<String>,
}

const INSTANCE_SORT: &[&str] =
    &["instanceId", "definitionId", "definitionKey", "businessKey", "startTime", "endTime", "duration"];

async fn matching_instances(app: &AppState, scope: &Scope, q: InstancesQuery) -> Result<Vec<InstanceView>, ApiError> {
    let tenants = super::Tenants::parse(scope, q.tenant_id_in, q.without_tenant_id.as_deref(), ("", None))?;
    let mut ids = list_of("processInstanceIds", q.process_instance_ids, MAX_ID_CHARS)?;
    ids.extend(text("processInstanceId", q.process_instance_id, MAX_ID_CHARS)?);
    let def = text("processDefinitionId", q.process_definition_id, MAX_ID_CHARS)?;
    let key = text("processDefinitionKey", q.process_definition_key, MAX_NAME_CHARS)?;
    let bk = text("processInstanceBusinessKey", q.process_instance_business_key, MAX_NAME_CHARS)?;
    let sup = text("superProcessInstanceId", q.super_process_instance_id, MAX_ID_CHARS)?;
    let Some(finished) = either(flag("finished", q.finished.as_deref())?, flag("unfinished", q.unfinished.as_deref())?)
    else {
        return Ok(Vec::new());
    };
    let mut states = Vec::new();
    for (field, v, s) in [
        ("completed", &q.completed, "COMPLETED"),
        ("externallyTerminated", &q.externally_terminated, "EXTERNALLY_TERMINATED"),
        ("active", &q.active, "ACTIVE"),
        ("suspended", &q.suspended, "SUSPENDED"),
    ] {
        if flag(field, v.as_deref())? == Some(true) {
            states.push(s);
        }
    }
    let sort = sorting(q.sort_by.as_deref(), q.sort_order.as_deref(), INSTANCE_SORT)?;
    let filter = kairos::process::InstanceFilter {
        business_key: bk.as_deref(),
        definition_key: key.as_deref(),
        finished,
        tenant: tenants.only(),
    };
    let mut all = app.engine.processes().instance_list(&filter).await?;
    all.retain(|i| {
        tenants.keeps(&i.tenant_id)
            && (ids.is_empty() || ids.contains(&i.id))
            && def.as_ref().is_none_or(|d| &i.process_definition_id == d)
            && sup.as_ref().is_none_or(|s| i.super_process_instance_id.as_ref() == Some(s))
            && (states.is_empty() || states.contains(&state(i)))
    });
    if let Some((by, desc)) = sort {
        let duration = |i: &InstanceView| i.start_time.zip(i.end_time).map(|(s, e)| e.duration_since(s));
        all.sort_by(|a, b| {
            let o = match by {
                "definitionId" => a.process_definition_id.cmp(&b.process_definition_id),
                "definitionKey" => a.process_definition_key.cmp(&b.process_definition_key),
                "businessKey" => a.business_key.cmp(&b.business_key),
                "startTime" => a.start_time.cmp(&b.start_time),
                "endTime" => a.end_time.cmp(&b.end_time),
                "duration" => duration(a).cmp(&duration(b)),
                _ => a.id.cmp(&b.id),
            };
            if desc { o.reverse() } else { o }
        });
    }
    Ok(all)
}

/// `GET /engine-rest/history/process-instance?…` → `[HistoricProcessInstanceDto]`.
pub async fn instances(
    State(app): State<AppState>,
    scope: Scope,
    Query(mut q): Query<InstancesQuery>,
) -> Result<axum::Json<Vec<Value>>, ApiError> {
    let page = Paging::of(q.first_result.take().as_deref(), q.max_results.take().as_deref())?;
    let all = matching_instances(&app, &scope, q).await?;
    Ok(axum::Json(page.page(all).iter().map(instance_dto).collect()))
}

/// `GET /engine-rest/history/process-instance/count?…` → `{"count": N}`.
pub async fn instances_count(
    State(app): State<AppState>,
    scope: Scope,
    Query(q): Query<InstancesQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    Ok(super::count(matching_instances(&app, &scope, q).await?.len()))
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActivitiesQuery {
    process_instance_id: Option<String>,
    activity_id: Option<String>,
    activity_type: Option<String>,
    execution_id: Option<String>,
    finished: Option<String>,
    unfinished: Option<String>,
    canceled: Option<String>,
    sort_by: Option<String>,
    sort_order: Option<String>,
    first_result: Option<String>,
    max_results: Option<String>,
}

/// The activities of one instance (kairos reads them by instance), as Camunda's
/// HistoricActivityInstanceDto; the id is `{processInstanceId}:{n}`, `n` the start order.
async fn matching_activities(app: &AppState, q: ActivitiesQuery) -> Result<Vec<Value>, ApiError> {
    let Some(pi) = text("processInstanceId", q.process_instance_id, MAX_ID_CHARS)? else {
        return Err(invalid(
            "processInstanceId",
            "kairos lists the activities of one instance: processInstanceId is required",
        ));
    };
    let activity = text("activityId", q.activity_id, MAX_NAME_CHARS)?;
    let kind = text("activityType", q.activity_type, MAX_NAME_CHARS)?;
    let exec = text("executionId", q.execution_id, MAX_ID_CHARS)?;
    let finished = flag("finished", q.finished.as_deref())?.unwrap_or(false);
    let unfinished = flag("unfinished", q.unfinished.as_deref())?.unwrap_or(false);
    let canceled = flag("canceled", q.canceled.as_deref())?.unwrap_or(false);
    let sort = sorting(
        q.sort_by.as_deref(),
        q.sort_order.as_deref(),
        &[
            "activityInstanceId",
            "instanceId",
            "executionId",
            "activityId",
            "activityName",
            "activityType",
            "startTime",
            "endTime",
            "duration",
        ],
    )?;
    let processes = app.engine.processes();
    let instance = processes.instance(&pi).await?;
    let rows = processes.activity_history(&pi).await?;
    let mut out: Vec<Value> = rows
        .iter()
        .enumerate()
        .filter(|(_, a)| {
            activity.as_ref().is_none_or(|x| &a.activity_id == x)
                && kind.as_ref().is_none_or(|x| &a.activity_type == x)
                && exec.as_ref().is_none_or(|x| &a.execution_id == x)
                && (!finished || a.end_time.is_some())
                && (!unfinished || a.end_time.is_none())
                && (!canceled || a.delete_reason.is_some())
        })
        .map(|(n, a)| {
            let duration = a.start_time.zip(a.end_time).map(|(s, e)| e.duration_since(s).as_millis() as i64);
            json!({
                "id": format!("{pi}:{n}"),
                "parentActivityInstanceId": null,
                "activityId": a.activity_id,
                "activityName": a.activity_name,
                "activityType": a.activity_type,
                "processDefinitionKey": instance.process_definition_key,
                "processDefinitionId": instance.process_definition_id,
                "processInstanceId": pi,
                "executionId": a.execution_id,
                "taskId": a.task_id,
                "calledProcessInstanceId": null,
                "calledCaseInstanceId": null,
                "assignee": a.assignee,
                "startTime": opt_date(a.start_time),
                "endTime": opt_date(a.end_time),
                "durationInMillis": duration,
                "canceled": a.delete_reason.is_some(),
                "completeScope": false,
                "tenantId": super::tenant_json(&instance.tenant_id),
                "removalTime": null,
                "rootProcessInstanceId": pi,
            })
        })
        .collect();
    if let Some((by, desc)) = sort {
        let key = |v: &Value| -> String {
            let field = match by {
                "activityInstanceId" => "id",
                "instanceId" => "processInstanceId",
                "duration" => return format!("{:020}", v["durationInMillis"].as_i64().unwrap_or(0)),
                other => other,
            };
            v[field].as_str().unwrap_or("").to_string()
        };
        out.sort_by(|a, b| {
            let o = key(a).cmp(&key(b));
            if desc { o.reverse() } else { o }
        });
    }
    Ok(out)
}

/// `GET /engine-rest/history/activity-instance?processInstanceId=…` → its activities in start
/// order.
pub async fn activities(
    State(app): State<AppState>,
    Query(mut q): Query<ActivitiesQuery>,
) -> Result<axum::Json<Vec<Value>>, ApiError> {
    let page = Paging::of(q.first_result.take().as_deref(), q.max_results.take().as_deref())?;
    Ok(axum::Json(page.page(matching_activities(&app, q).await?)))
}

/// `GET /engine-rest/history/activity-instance/count?processInstanceId=…` → `{"count": N}`.
pub async fn activities_count(
    State(app): State<AppState>,
    Query(q): Query<ActivitiesQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    Ok(super::count(matching_activities(&app, q).await?.len()))
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TasksQuery {
    process_instance_id: Option<String>,
    finished: Option<String>,
    unfinished: Option<String>,
    first_result: Option<String>,
    max_results: Option<String>,
}

/// `finished` / `unfinished`; `None` when both are asked (nothing matches).
fn finished_of(finished: Option<&str>, unfinished: Option<&str>) -> Result<Option<Option<bool>>, ApiError> {
    Ok(either(flag("finished", finished)?, flag("unfinished", unfinished)?))
}

async fn task_page(app: &AppState, scope: &Scope, q: TasksQuery, page: Paging) -> Result<(Vec<Value>, u64), ApiError> {
    let pi = text("processInstanceId", q.process_instance_id, MAX_ID_CHARS)?;
    let Some(finished) = finished_of(q.finished.as_deref(), q.unfinished.as_deref())? else {
        return Ok((Vec::new(), 0));
    };
    let processes = app.engine.processes();
    let (tasks, total) =
        processes.historic_tasks_in(scope.0.as_deref(), pi.as_deref(), finished, (page.first, page.max)).await?;
    let dtos = tasks
        .iter()
        .map(|t| {
            json!({
                "id": t.id,
                "processDefinitionKey": null,
                "processDefinitionId": t.process_definition_id,
                "processInstanceId": t.process_instance_id,
                "executionId": t.execution_id,
                "activityInstanceId": null,
                "name": t.name,
                "description": null,
                "deleteReason": t.delete_reason,
                "owner": null,
                "assignee": t.assignee,
                "startTime": opt_date(t.start_time),
                "endTime": opt_date(t.end_time),
                "duration": t.duration_in_millis,
                "taskDefinitionKey": t.task_definition_key,
                "priority": 50,
                "due": null,
                "parentTaskId": null,
                "followUp": null,
                "tenantId": super::tenant_json(&t.tenant_id),
                "removalTime": null,
                "rootProcessInstanceId": t.process_instance_id,
            })
        })
        .collect();
    Ok((dtos, total))
}

/// `GET /engine-rest/history/task?processInstanceId=&finished=` → `[HistoricTaskInstanceDto]`.
pub async fn tasks(
    State(app): State<AppState>,
    scope: Scope,
    Query(mut q): Query<TasksQuery>,
) -> Result<axum::Json<Vec<Value>>, ApiError> {
    let page = Paging::of(q.first_result.take().as_deref(), q.max_results.take().as_deref())?;
    Ok(axum::Json(task_page(&app, &scope, q, page).await?.0))
}

/// `GET /engine-rest/history/task/count?…` → `{"count": N}`.
pub async fn tasks_count(
    State(app): State<AppState>,
    scope: Scope,
    Query(q): Query<TasksQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let (_, total) = task_page(&app, &scope, q, Paging { first: 0, max: 0 }).await?;
    Ok(axum::Json(json!({"count": total})))
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VariablesQuery {
    process_instance_id: Option<String>,
    variable_name: Option<String>,
    /// Ignored: kairos keeps no serialized values.
    deserialize_values: Option<String>,
    first_result: Option<String>,
    max_results: Option<String>,
}

async fn variable_page(
    app: &AppState,
    scope: &Scope,
    q: VariablesQuery,
    page: Paging,
) -> Result<(Vec<Value>, u64), ApiError> {
    let pi = text("processInstanceId", q.process_instance_id, MAX_ID_CHARS)?;
    scope.names_a_row(pi.is_some(), "processInstanceId")?;
    let name = text("variableName", q.variable_name, MAX_NAME_CHARS)?;
    flag("deserializeValues", q.deserialize_values.as_deref())?;
    let q = kairos::process::VariableQuery { process_instance_id: pi, variable_name: name, ..Default::default() };
    let (vars, total) = app.engine.processes().historic_variables(&q, page.first, page.max.min(MAX_RESULTS)).await?;
    let dtos = vars
        .iter()
        .map(|v| {
            let t = typed(&v.variable.value);
            json!({
                "id": v.id,
                "name": v.variable.name,
                "type": t["type"],
                "value": t["value"],
                "valueInfo": {},
                "processDefinitionKey": null,
                "processDefinitionId": null,
                "processInstanceId": v.process_instance_id,
                "executionId": v.execution_id,
                "activityInstanceId": null,
                "caseDefinitionKey": null,
                "caseDefinitionId": null,
                "caseInstanceId": null,
                "caseExecutionId": null,
                "taskId": v.task_id,
                "errorMessage": null,
                "tenantId": null,
                "state": "CREATED",
                "createTime": opt_date(v.create_time),
                "removalTime": null,
                "rootProcessInstanceId": v.process_instance_id,
            })
        })
        .collect();
    Ok((dtos, total))
}

/// `GET /engine-rest/history/variable-instance?processInstanceId=&variableName=` → each
/// variable's last value, kept after its instance ended.
pub async fn variables(
    State(app): State<AppState>,
    scope: Scope,
    Query(mut q): Query<VariablesQuery>,
) -> Result<axum::Json<Vec<Value>>, ApiError> {
    let page = Paging::of(q.first_result.take().as_deref(), q.max_results.take().as_deref())?;
    Ok(axum::Json(variable_page(&app, &scope, q, page).await?.0))
}

/// `GET /engine-rest/history/variable-instance/count?…` → `{"count": N}`.
pub async fn variables_count(
    State(app): State<AppState>,
    scope: Scope,
    Query(q): Query<VariablesQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let (_, total) = variable_page(&app, &scope, q, Paging { first: 0, max: 0 }).await?;
    Ok(axum::Json(json!({"count": total})))
}
