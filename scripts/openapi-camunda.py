#!/usr/bin/env python3
"""Writes the Camunda facade's block of crates/server/openapi.json: every /engine-rest path (one
contiguous block at the end of "paths") and the Camunda* schemas (one block at the end of
components.schemas), replacing what an earlier run wrote. Run from the repository root after
changing a route in crates/server/src/routes/camunda/; tests/openapi.rs checks router and
document agree.
"""
import json, sys
P = 'crates/server/openapi.json'
d = json.load(open(P))
# drop what an earlier run added
d['paths'] = {k: v for k, v in d['paths'].items() if not k.startswith('/engine-rest')}
d['components']['schemas'] = {k: v for k, v in d['components']['schemas'].items() if not k.startswith('Camunda')}
if not any(t['name'] == 'camunda' for t in d['tags']):
    d['tags'].append({"name": "camunda", "description": "Camunda 7's REST API under /engine-rest, for Camunda's own clients (docs/camunda.md): typed variables, firstResult/maxResults, {type, message} errors"})

def ref(n): return {"$ref": f"#/components/schemas/{n}"}
def arr(s): return {"type": "array", "items": s}
S = lambda *t: {"type": list(t) if len(t) > 1 else t[0]}
STR = {"type": "string"}; NSTR = {"type": ["string", "null"]}
ID = {"type": "string", "minLength": 1, "maxLength": 64}
NAME = {"type": "string", "minLength": 1, "maxLength": 255}
DATE = {"type": "string", "description": "yyyy-MM-dd'T'HH:mm:ss.SSSZ, e.g. 2026-01-01T08:00:00.000+0000"}
NDATE = {"type": ["string", "null"], "description": DATE["description"]}
BOOL = {"type": "boolean"}; NBOOL = {"type": ["boolean", "null"]}
INT = {"type": "integer"}; NINT = {"type": ["integer", "null"]}
NULL = {"type": "null"}
def obj(props, required=(), extra=False, desc=None):
    o = {"type": "object", "properties": props, "additionalProperties": extra}
    if required: o["required"] = list(required)
    if desc: o["description"] = desc
    return o

sc = {}
# A variable name: 1 to 255 characters, no control characters (kairos_process::validate_variable_name).
VARNAME = {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]+$"}
sc["CamundaError"] = obj({"type": {"type": "string", "description": "InvalidRequestException, BadUserRequestException, MismatchingMessageCorrelationException, AuthenticationException, OptimisticLockingException, ProcessEngineException, RestException"}, "message": STR}, ["type", "message"], desc="Camunda's error body; the message names the field that was wrong")
def typed_in(types, value, desc=None):
    props = {"type": {"type": "string", "enum": types}, "value": value, "valueInfo": {"type": ["object", "null"]}}
    return obj(props, ["type"], desc=desc)
both = lambda *names: [n for t in names for n in (t, t.lower())]
sc["CamundaVariableValue"] = {"description": "A typed variable as Camunda's clients send it: String, Integer, Long, Short, Double, Boolean, Null, Json, Date (Camunda's or lower case; the server takes any case); without type, the JSON value as it is. Object, File, Bytes, Xml: 400", "anyOf": [
    typed_in(both("String"), {"type": ["string", "null"]}),
    typed_in(both("Integer"), {"type": ["integer", "null"], "minimum": -2147483648, "maximum": 2147483647}),
    typed_in(both("Short"), {"type": ["integer", "null"], "minimum": -32768, "maximum": 32767}),
    typed_in(both("Long"), {"type": ["integer", "null"], "minimum": -9007199254740991, "maximum": 9007199254740991}),
    typed_in(both("Double"), {"type": ["number", "null"]}),
    typed_in(both("Boolean"), {"type": ["boolean", "null"]}),
    typed_in(both("Null"), {}),
    typed_in(both("Json"), {"type": ["object", "array", "null"], "description": "the document (Camunda's clients send it as JSON text, also accepted)"}),
    typed_in(both("Date"), {"type": ["string", "null"], "format": "date-time"}),
    obj({"value": {}, "type": {"type": "null"}, "valueInfo": {"type": ["object", "null"]}}),
]}
sc["CamundaVariables"] = {"type": ["object", "null"], "additionalProperties": ref("CamundaVariableValue"), "propertyNames": VARNAME}
sc["CamundaTypedValue"] = obj({"value": {}, "type": {"type": "string", "enum": ["String", "Integer", "Long", "Double", "Boolean", "Null", "Json"]}, "valueInfo": {"type": "object"}}, ["value", "type", "valueInfo"], desc="A variable as kairos answers it (a Json value travels as JSON text)")
sc["CamundaVariablesAnswer"] = {"type": "object", "additionalProperties": ref("CamundaTypedValue")}
sc["CamundaCount"] = obj({"count": {"type": "integer", "minimum": 0}}, ["count"])
sc["CamundaEngine"] = obj({"name": STR}, ["name"])
sc["CamundaVersion"] = obj({"version": STR}, ["version"])
sc["CamundaFetchTopic"] = obj({
    "topicName": NAME, "lockDuration": {"type": "integer", "minimum": 1, "maximum": 31536000000, "description": "milliseconds"},
    "variables": {"type": ["array", "null"], "items": NAME, "maxItems": 100}, "localVariables": NBOOL,
    "businessKey": {"type": ["string", "null"], "minLength": 1, "maxLength": 255},
    "processDefinitionId": {"type": ["string", "null"], "minLength": 1, "maxLength": 255},
    "processDefinitionIdIn": {"type": ["array", "null"], "items": NAME, "maxItems": 100},
    "processDefinitionKey": {"type": ["string", "null"], "minLength": 1, "maxLength": 255},
    "processDefinitionKeyIn": {"type": ["array", "null"], "items": NAME, "maxItems": 100},
    "processDefinitionVersionTag": {"type": "null", "description": "not supported: kairos definitions have no version tag"},
    "processVariables": {"type": ["object", "null"], "maxProperties": 0, "description": "only {}: fetching by variable values is not supported"},
    "deserializeValues": NBOOL, "includeExtensionProperties": NBOOL, "withoutTenantId": NBOOL,
    "tenantIdIn": {"type": ["array", "null"], "items": NAME, "maxItems": 100, "description": "kairos tasks have no tenant: a list of tenants matches none"},
}, ["topicName", "lockDuration"])
sc["CamundaFetchAndLockRequest"] = obj({
    "workerId": NAME, "maxTasks": {"type": "integer", "minimum": 0, "maximum": 1000},
    "usePriority": NBOOL, "asyncResponseTimeout": {"type": ["integer", "null"], "minimum": 0, "maximum": 1800000, "description": "long polling: milliseconds to wait for work (at most 30 minutes)"},
    "topics": {"type": ["array", "null"], "items": ref("CamundaFetchTopic"), "maxItems": 100},
    "sorting": {"type": ["array", "null"], "items": obj({"sortBy": {"type": "string", "enum": ["createTime"]}, "sortOrder": {"type": ["string", "null"], "enum": ["asc", None]}})},
}, ["workerId", "maxTasks"])
task_common = {
    "activityId": STR, "activityInstanceId": STR, "errorMessage": NSTR, "executionId": STR, "id": STR,
    "lockExpirationTime": NDATE, "createTime": NDATE, "processDefinitionId": STR, "processDefinitionKey": NSTR,
    "processDefinitionVersionTag": NULL, "processInstanceId": STR, "retries": NINT, "suspended": BOOL,
    "workerId": NSTR, "topicName": STR, "tenantId": NULL, "priority": INT, "businessKey": NSTR,
}
sc["CamundaLockedExternalTask"] = obj(dict(task_common, errorDetails=NULL, variables=ref("CamundaVariablesAnswer"), extensionProperties={"type": "object"}), ["id", "topicName", "workerId", "variables", "processInstanceId", "activityId"], desc="LockedExternalTaskDto")
sc["CamundaExternalTask"] = obj(task_common, ["id", "topicName", "processInstanceId", "activityId", "retries", "suspended"], desc="ExternalTaskDto")
sc["CamundaCompleteExternalTaskRequest"] = obj({"workerId": NAME, "variables": ref("CamundaVariables"), "localVariables": ref("CamundaVariables")}, ["workerId"])
sc["CamundaExternalTaskFailureRequest"] = obj({"workerId": NAME, "errorMessage": NSTR, "errorDetails": {"type": ["string", "null"], "maxLength": 1048576},
    "retries": {"type": ["integer", "null"], "minimum": 0, "maximum": 1000000}, "retryTimeout": {"type": ["integer", "null"], "minimum": 0, "maximum": 31536000000},
    "variables": {"type": ["object", "null"], "maxProperties": 0}, "localVariables": {"type": ["object", "null"], "maxProperties": 0}}, ["workerId"])
sc["CamundaExternalTaskBpmnErrorRequest"] = obj({"workerId": NAME, "errorCode": NAME, "errorMessage": NSTR, "variables": ref("CamundaVariables")}, ["workerId", "errorCode"])
sc["CamundaExtendLockRequest"] = obj({"workerId": NAME, "newDuration": {"type": "integer", "minimum": 1, "maximum": 31536000000}}, ["workerId", "newDuration"])
sc["CamundaLockRequest"] = obj({"workerId": NAME, "lockDuration": {"type": "integer", "minimum": 1, "maximum": 31536000000}}, ["workerId", "lockDuration"])
sc["CamundaProcessDefinition"] = obj({"id": STR, "key": STR, "category": NULL, "description": NULL, "name": NSTR, "version": INT, "resource": STR, "deploymentId": STR, "diagram": NULL, "suspended": BOOL, "tenantId": NULL, "versionTag": NULL, "historyTimeToLive": NULL, "startableInTasklist": BOOL}, ["id", "key", "version"])
sc["CamundaProcessDefinitionDiagram"] = obj({"id": STR, "bpmn20Xml": STR}, ["id", "bpmn20Xml"])
sc["CamundaDeployment"] = obj({"links": arr({}), "id": STR, "name": NSTR, "source": NSTR, "deploymentTime": DATE, "tenantId": NULL,
    "deployedProcessDefinitions": {"type": "object", "additionalProperties": ref("CamundaProcessDefinition")},
    "deployedCaseDefinitions": NULL, "deployedDecisionDefinitions": NULL, "deployedDecisionRequirementsDefinitions": NULL}, ["id", "deployedProcessDefinitions"])
sc["CamundaDeploymentForm"] = {"type": "object", "properties": {"deployment-name": {"type": "string", "maxLength": 200}, "deployment-source": {"type": "string", "maxLength": 255}, "enable-duplicate-filtering": {"type": "string", "enum": ["true", "false"]}, "deploy-changed-only": {"type": "string", "enum": ["true", "false"]}, "data": {"type": "string", "format": "binary", "description": "a BPMN file (any part name with a file name)"}}, "required": ["data"]}
sc["CamundaStartProcessInstanceRequest"] = obj({"businessKey": {"type": ["string", "null"], "maxLength": 255}, "variables": ref("CamundaVariables"), "caseInstanceId": NULL, "startInstructions": {"type": ["array", "null"], "maxItems": 0}, "skipCustomListeners": NBOOL, "skipIoMappings": {"type": ["boolean", "null"], "enum": [False, None]}, "withVariablesInReturn": NBOOL})
pi = {"links": arr({}), "id": STR, "definitionId": STR, "definitionKey": STR, "businessKey": NSTR, "caseInstanceId": NULL, "ended": BOOL, "suspended": BOOL, "tenantId": NULL}
sc["CamundaProcessInstance"] = obj(pi, ["id", "definitionId", "ended", "suspended"])
sc["CamundaProcessInstanceWithVariables"] = obj(dict(pi, variables=ref("CamundaVariablesAnswer")), ["id", "definitionId", "ended", "suspended"])
sc["CamundaSuspendedRequest"] = obj({"suspended": BOOL}, ["suspended"])
sc["CamundaVariableModifications"] = obj({"modifications": ref("CamundaVariables"), "deletions": {"type": ["array", "null"], "maxItems": 0, "items": STR}})
sc["CamundaTask"] = obj({k: v for k, v in {"id": STR, "name": NSTR, "assignee": NSTR, "owner": NULL, "created": NDATE, "lastUpdated": NULL, "due": NDATE, "followUp": NULL, "delegationState": NULL, "description": NULL, "executionId": STR, "parentTaskId": NULL, "priority": INT, "processDefinitionId": STR, "processInstanceId": STR, "caseExecutionId": NULL, "caseDefinitionId": NULL, "caseInstanceId": NULL, "taskDefinitionKey": STR, "suspended": BOOL, "formKey": NSTR, "camundaFormRef": NULL, "tenantId": NULL}.items()}, ["id", "processInstanceId", "taskDefinitionKey"])
sc["CamundaClaimRequest"] = obj({"userId": NAME}, ["userId"])
sc["CamundaAssigneeRequest"] = obj({"userId": {"type": ["string", "null"], "minLength": 1, "maxLength": 255}}, ["userId"])
sc["CamundaCompleteTaskRequest"] = obj({"variables": ref("CamundaVariables"), "withVariablesInReturn": NBOOL})
empty_obj = {"type": ["object", "null"], "maxProperties": 0}
sc["CamundaCorrelationMessageRequest"] = obj({"messageName": NAME, "businessKey": {"type": ["string", "null"], "maxLength": 255}, "processInstanceId": {"type": ["string", "null"], "maxLength": 64}, "tenantId": {"type": ["string", "null"], "maxLength": 0}, "withoutTenantId": NBOOL, "correlationKeys": empty_obj, "localCorrelationKeys": empty_obj, "processVariables": ref("CamundaVariables"), "processVariablesLocal": empty_obj, "processVariablesToTriggeredScope": empty_obj, "all": {"type": ["boolean", "null"], "enum": [False, None]}, "resultEnabled": NBOOL, "variablesInResultEnabled": NBOOL}, ["messageName"])
sc["CamundaMessageCorrelationResult"] = obj({"resultType": {"type": "string", "enum": ["Execution"]}, "execution": {"type": "object"}, "processInstance": ref("CamundaProcessInstance"), "variables": ref("CamundaVariablesAnswer")}, ["resultType"])
sc["CamundaSignalRequest"] = obj({"name": NAME, "executionId": NULL, "variables": ref("CamundaVariables"), "tenantId": {"type": ["string", "null"], "maxLength": 0}, "withoutTenantId": NBOOL}, ["name"])
sc["CamundaHistoricProcessInstance"] = obj({"id": STR, "businessKey": NSTR, "processDefinitionId": STR, "processDefinitionKey": STR, "processDefinitionName": NULL, "processDefinitionVersion": NULL, "startTime": NDATE, "endTime": NDATE, "removalTime": NULL, "durationInMillis": NINT, "startUserId": NULL, "startActivityId": NULL, "deleteReason": NSTR, "rootProcessInstanceId": STR, "superProcessInstanceId": NSTR, "superCaseInstanceId": NULL, "caseInstanceId": NULL, "tenantId": NULL, "state": {"type": "string", "enum": ["ACTIVE", "SUSPENDED", "COMPLETED", "EXTERNALLY_TERMINATED"]}}, ["id", "state"])
sc["CamundaHistoricActivityInstance"] = obj({"id": STR, "parentActivityInstanceId": NULL, "activityId": STR, "activityName": NSTR, "activityType": STR, "processDefinitionKey": STR, "processDefinitionId": STR, "processInstanceId": STR, "executionId": STR, "taskId": NSTR, "calledProcessInstanceId": NULL, "calledCaseInstanceId": NULL, "assignee": NSTR, "startTime": NDATE, "endTime": NDATE, "durationInMillis": NINT, "canceled": BOOL, "completeScope": BOOL, "tenantId": NULL, "removalTime": NULL, "rootProcessInstanceId": STR}, ["id", "activityId", "activityType"])
sc["CamundaHistoricTask"] = obj({"id": STR, "processDefinitionKey": NULL, "processDefinitionId": NSTR, "processInstanceId": NSTR, "executionId": NSTR, "activityInstanceId": NULL, "name": NSTR, "description": NULL, "deleteReason": NSTR, "owner": NULL, "assignee": NSTR, "startTime": NDATE, "endTime": NDATE, "duration": NINT, "taskDefinitionKey": NSTR, "priority": INT, "due": NULL, "parentTaskId": NULL, "followUp": NULL, "tenantId": NULL, "removalTime": NULL, "rootProcessInstanceId": NSTR}, ["id"])
sc["CamundaHistoricVariable"] = obj({"id": STR, "name": STR, "type": STR, "value": {}, "valueInfo": {"type": "object"}, "processDefinitionKey": NULL, "processDefinitionId": NULL, "processInstanceId": NSTR, "executionId": NSTR, "activityInstanceId": NULL, "caseDefinitionKey": NULL, "caseDefinitionId": NULL, "caseInstanceId": NULL, "caseExecutionId": NULL, "taskId": NSTR, "errorMessage": NULL, "tenantId": NULL, "state": {"type": "string", "enum": ["CREATED"]}, "createTime": NDATE, "removalTime": NULL, "rootProcessInstanceId": NSTR}, ["id", "name", "type", "value"])
d['components']['schemas'].update(sc)

def err(desc): return {"description": desc, "content": {"application/json": {"schema": ref("CamundaError")}}}
COMMON = {"401": err("AuthenticationException: the node has an API token and the request did not present it"),
          "403": err("the node has no API token and the request came from a web page of another site")}
def ok(schema, code="200", desc="OK"):
    return {code: {"description": desc, "content": {"application/json": {"schema": schema}}}}
def op(opid, summary, responses, params=(), body=None, body_type="application/json", required_body=True):
    o = {"operationId": opid, "summary": summary, "tags": ["camunda"], "responses": dict(responses)}
    o["responses"].setdefault("400", err("InvalidRequestException naming the parameter or field that was wrong"))
    o["responses"].update(COMMON)
    if params: o["parameters"] = list(params)
    if body is not None:
        if body_type == "application/json":
            o["responses"].setdefault("415", err("InvalidRequestException: the body must be JSON with Content-Type: application/json"))
        o["responses"].setdefault("413", err("InvalidRequestException: the body is over the size limit"))
        o["requestBody"] = {"required": required_body, "content": {body_type: {"schema": body}}}
    return o
def path(name, desc="The id"): return {"name": name, "in": "path", "required": True, "description": desc, "schema": {"type": "string", "minLength": 1}}
def q(name, desc, schema=None):
    # An empty query value means the filter is absent, so no minimum length here.
    schema = {k: v for k, v in (schema or {"type": "string"}).items() if k != "minLength"}
    return {"name": name, "in": "query", "required": False, "description": desc, "schema": schema}
FLAG = {"type": "string", "enum": ["true", "false"]}
PAGE = [q("firstResult", "Index of the first result (default 0)", {"type": "integer", "minimum": 0, "maximum": 1000000000}), q("maxResults", "Most results (default and at most 1000; Camunda's default is all)", {"type": "integer", "minimum": 0, "maximum": 1000})]
def sort(keys): return [q("sortBy", "Sort key (with sortOrder)", {"type": "string", "enum": keys}), q("sortOrder", "asc or desc (with sortBy)", {"type": "string", "enum": ["asc", "desc"]})]
NOCONTENT = {"204": {"description": "Done"}}
NF = lambda what: {"404": err(f"No such {what}")}
ID_ = path("id")

paths = {}
def add(p, method, o):
    if method != "get":
        # A command on an instance: it may lose the race for it too often, or the model may
        # not go on (an expression that fails, no flow to take).
        o["responses"].setdefault("409", err("OptimisticLockingException: the instance kept changing under the call; try again"))
        o["responses"].setdefault("422", err("ProcessEngineException: the model could not go on (an expression failed, no flow to take)"))
    paths.setdefault("/engine-rest" + p, {})[method] = o

add("/engine", "get", op("camundaEngines", "The process engines: one, `default`", ok(arr(ref("CamundaEngine")))))
add("/version", "get", op("camundaVersion", "The Camunda REST API version the facade follows", ok(ref("CamundaVersion"))))
et_filters = [q("externalTaskId", "Only this task", ID), q("topicName", "Only this topic", NAME), q("workerId", "Only tasks locked by this worker", NAME),
    q("locked", "Only tasks with an unexpired lock", FLAG), q("notLocked", "Only tasks without one", FLAG), q("withRetriesLeft", "Only tasks with retries left", FLAG),
    q("noRetriesLeft", "Only tasks out of retries (dead letters, shown as incidents)", FLAG), q("activityId", "Only tasks of this service task", NAME),
    q("executionId", "Only tasks of this execution", ID), q("processInstanceId", "Only tasks of this instance", ID), q("processDefinitionId", "Only tasks of this definition", ID),
    q("active", "Only tasks of active instances", FLAG), q("suspended", "Only tasks of suspended instances", FLAG)]
et_sort = sort(["id", "lockExpirationTime", "processInstanceId", "processDefinitionId", "processDefinitionKey", "taskPriority", "createTime"])
add("/external-task", "get", op("camundaListExternalTasks", "External tasks (running, suspended, out of retries), oldest first", ok(arr(ref("CamundaExternalTask"))), et_filters + et_sort + PAGE))
add("/external-task/count", "get", op("camundaCountExternalTasks", "How many external tasks match", ok(ref("CamundaCount")), et_filters + et_sort))
add("/external-task/fetchAndLock", "post", op("camundaFetchAndLock", "Fetch and lock external tasks, waiting up to asyncResponseTimeout for work", ok(arr(ref("CamundaLockedExternalTask")), desc="The locked tasks (none at the end of the wait)"), body=ref("CamundaFetchAndLockRequest")))
add("/external-task/{id}", "get", op("camundaGetExternalTask", "One external task", dict(ok(ref("CamundaExternalTask")), **NF("external task")), [ID_]))
add("/external-task/{id}/errorDetails", "get", op("camundaExternalTaskErrorDetails", "The errorDetails of its last failure", dict({"200": {"description": "text/plain (empty when none)", "content": {"text/plain": {"schema": STR}}}}, **NF("external task")), [ID_]))
lockerr = {"400": err("BadUserRequestException: the task is locked by another worker, or InvalidRequestException naming a field"), "404": err("No such external task"), "422": err("ProcessEngineException: the model could not go on")}
add("/external-task/{id}/complete", "post", op("camundaCompleteExternalTask", "Complete a locked external task with variables", dict(NOCONTENT, **lockerr), [ID_], ref("CamundaCompleteExternalTaskRequest")))
add("/external-task/{id}/failure", "post", op("camundaExternalTaskFailure", "Report a failure: retries left and when to retry (0: an incident)", dict(NOCONTENT, **lockerr), [ID_], ref("CamundaExternalTaskFailureRequest")))
add("/external-task/{id}/bpmnError", "post", op("camundaExternalTaskBpmnError", "Throw a BPMN error from the task, caught by its boundary event", dict(NOCONTENT, **lockerr), [ID_], ref("CamundaExternalTaskBpmnErrorRequest")))
add("/external-task/{id}/extendLock", "post", op("camundaExtendExternalTaskLock", "Extend the worker's unexpired lock", dict(NOCONTENT, **lockerr), [ID_], ref("CamundaExtendLockRequest")))
add("/external-task/{id}/lock", "post", op("camundaLockExternalTask", "Lock one task for a worker", dict(NOCONTENT, **lockerr), [ID_], ref("CamundaLockRequest")))
add("/external-task/{id}/unlock", "post", op("camundaUnlockExternalTask", "Release the task's lock, whoever holds it", dict(NOCONTENT, **NF("external task")), [ID_], {"type": "object", "maxProperties": 0}, required_body=False))
add("/deployment/create", "post", op("camundaCreateDeployment", "Deploy BPMN files (multipart/form-data)", dict(ok(ref("CamundaDeployment")), **{"413": err("over 10 MiB")}), body=ref("CamundaDeploymentForm"), body_type="multipart/form-data"))
sc_dep = obj({"links": arr({}), "id": STR, "name": NSTR, "source": NULL, "tenantId": NULL, "deploymentTime": DATE}, ["id", "deploymentTime"], desc="DeploymentDto")
d['components']['schemas']["CamundaDeploymentSummary"] = sc_dep
dep_filters = [q("id", "Only this deployment", ID), q("name", "Only with this name", NAME), q("tenantIdIn", "kairos has no tenants: naming any matches none"),
    q("withoutTenantId", "Accepted", FLAG), q("includeDeploymentsWithoutTenantId", "Accepted", FLAG)]
dep_sort = sort(["deploymentTime"])
add("/deployment", "get", op("camundaListDeployments", "Deployments, oldest first", ok(arr(ref("CamundaDeploymentSummary"))), dep_filters + dep_sort + PAGE))
add("/deployment/count", "get", op("camundaCountDeployments", "How many deployments match", ok(ref("CamundaCount")), dep_filters + dep_sort))
add("/deployment/{id}", "get", op("camundaGetDeployment", "One deployment", dict(ok(ref("CamundaDeploymentSummary")), **NF("deployment")), [ID_]))
add("/deployment/{id}", "delete", op("camundaDeleteDeployment", "Delete a deployment with its definitions (cascade: its running instances first)", dict(NOCONTENT, **NF("deployment"), **{"400": err("BadUserRequestException: instances of it still run (use cascade=true)")}), [ID_, q("cascade", "Delete its running instances first", FLAG), q("skipCustomListeners", "Ignored", FLAG), q("skipIoMappings", "Ignored", FLAG)]))
pd_filters = [q("processDefinitionId", "Only this definition", ID), q("processDefinitionIdIn", "Only these (comma-separated)"), q("name", "Only this name", NAME), q("deploymentId", "Only of this deployment", ID),
    q("key", "Only this key", NAME), q("keysIn", "Only these keys (comma-separated)"), q("version", "Only this version", {"type": "integer"}), q("latestVersion", "Only the latest version of each key", FLAG),
    q("resourceName", "Only of this resource", {"type": "string", "minLength": 1, "maxLength": 4000}), q("active", "Only active ones", FLAG), q("suspended", "Only suspended ones", FLAG),
    q("tenantIdIn", "kairos has no tenants: naming any matches none"), q("withoutTenantId", "All kairos definitions are without tenant", FLAG), q("includeProcessDefinitionsWithoutTenantId", "Accepted", FLAG)]
pd_sort = sort(["id", "key", "name", "version", "deploymentId", "category", "tenantId", "versionTag"])
add("/process-definition", "get", op("camundaListProcessDefinitions", "Process definitions", ok(arr(ref("CamundaProcessDefinition"))), pd_filters + pd_sort + PAGE))
add("/process-definition/count", "get", op("camundaCountProcessDefinitions", "How many process definitions match", ok(ref("CamundaCount")), pd_filters + pd_sort))
add("/process-definition/{id}", "get", op("camundaGetProcessDefinition", "One process definition", dict(ok(ref("CamundaProcessDefinition")), **NF("definition")), [ID_]))
add("/process-definition/{id}/xml", "get", op("camundaProcessDefinitionXml", "Its BPMN XML", dict(ok(ref("CamundaProcessDefinitionDiagram")), **NF("definition")), [ID_]))
start_resp = dict(ok(ref("CamundaProcessInstanceWithVariables")), **NF("definition"), **{"422": err("ProcessEngineException: the model could not start")})
add("/process-definition/{id}/start", "post", op("camundaStartProcessInstance", "Start an instance of this definition", start_resp, [ID_], ref("CamundaStartProcessInstanceRequest")))
KEY = path("key", "The definition key")
add("/process-definition/key/{key}", "get", op("camundaGetProcessDefinitionByKey", "The latest version of a key", dict(ok(ref("CamundaProcessDefinition")), **NF("definition")), [KEY]))
add("/process-definition/key/{key}/xml", "get", op("camundaProcessDefinitionXmlByKey", "The XML of the latest version of a key", dict(ok(ref("CamundaProcessDefinitionDiagram")), **NF("definition")), [KEY]))
add("/process-definition/key/{key}/start", "post", op("camundaStartProcessInstanceByKey", "Start an instance of the latest version of a key", start_resp, [KEY], ref("CamundaStartProcessInstanceRequest")))
pi_filters = [q("processInstanceIds", "Only these (comma-separated)"), q("businessKey", "Only this business key", NAME), q("processDefinitionId", "Only of this definition", ID),
    q("processDefinitionKey", "Only of this key", NAME), q("processDefinitionKeyIn", "Only of these keys (comma-separated)"), q("superProcessInstance", "Only instances this one called", ID),
    q("rootProcessInstances", "Only instances not called by another", FLAG), q("active", "Only active ones", FLAG), q("suspended", "Only suspended ones", FLAG),
    q("variables", "name_eq_value,… (only eq; names without _ or ,)", {"type": "string", "pattern": "^([^_,]+_eq_[^,]*(,[^_,]+_eq_[^,]*)*)?$"}), q("tenantIdIn", "kairos has no tenants: naming any matches none"), q("withoutTenantId", "Accepted", FLAG)]
pi_sort = sort(["instanceId", "definitionKey", "definitionId", "businessKey", "tenantId"])
add("/process-instance", "get", op("camundaListProcessInstances", "Running process instances", ok(arr(ref("CamundaProcessInstance"))), pi_filters + pi_sort + PAGE))
add("/process-instance/count", "get", op("camundaCountProcessInstances", "How many running instances match", ok(ref("CamundaCount")), pi_filters + pi_sort))
add("/process-instance/{id}", "get", op("camundaGetProcessInstance", "One running instance", dict(ok(ref("CamundaProcessInstance")), **NF("running instance")), [ID_]))
add("/process-instance/{id}", "delete", op("camundaDeleteProcessInstance", "Delete a running instance (its history stays)", dict(NOCONTENT, **NF("running instance")), [ID_, q("skipCustomListeners", "Ignored", FLAG), q("skipIoMappings", "Ignored", FLAG), q("skipSubprocesses", "Only false", {"type": "string", "enum": ["false"]}), q("failIfNotExists", "false: an unknown id is a 204 too", FLAG)]))
add("/process-instance/{id}/suspended", "put", op("camundaSuspendProcessInstance", "Suspend or activate an instance", dict(NOCONTENT, **NF("running instance")), [ID_], ref("CamundaSuspendedRequest")))
add("/process-instance/{id}/variables", "get", op("camundaProcessInstanceVariables", "Its variables", dict(ok(ref("CamundaVariablesAnswer")), **NF("running instance")), [ID_, q("deserializeValues", "Ignored", FLAG)]))
add("/process-instance/{id}/variables", "post", op("camundaModifyProcessInstanceVariables", "Set variables (deletions: not supported)", dict(NOCONTENT, **NF("running instance")), [ID_], ref("CamundaVariableModifications")))
VN = dict(path("name", "The variable's name"), schema=VARNAME)
add("/process-instance/{id}/variables/{name}", "get", op("camundaProcessInstanceVariable", "One variable", dict(ok(ref("CamundaTypedValue")), **NF("instance or variable")), [ID_, VN, q("deserializeValue", "Ignored", FLAG)]))
add("/process-instance/{id}/variables/{name}", "put", op("camundaPutProcessInstanceVariable", "Set one variable", dict(NOCONTENT, **NF("running instance")), [ID_, VN], ref("CamundaVariableValue")))
task_filters = [q("taskId", "Only this task", ID), q("processInstanceId", "Only of this instance", ID), q("processInstanceBusinessKey", "Only of instances with this business key", NAME),
    q("processDefinitionId", "Only of this definition", ID), q("processDefinitionKey", "Only of this key", NAME), q("executionId", "Only of this execution", ID), q("assignee", "Only assigned to this user", NAME),
    q("unassigned", "Only unassigned ones", FLAG), q("assigned", "Only assigned ones", FLAG), q("candidateUser", "Only unclaimed ones this user is a candidate for", NAME),
    q("candidateGroup", "Only unclaimed ones this group is a candidate for", NAME), q("taskDefinitionKey", "Only of this user task", NAME), q("name", "Only with this name", NAME),
    q("active", "Only active ones", FLAG), q("suspended", "Only suspended ones", FLAG)]
task_sort = sort(["id", "name", "assignee", "created", "dueDate", "priority", "processInstanceId", "executionId"])
add("/task", "get", op("camundaListTasks", "Open user tasks", ok(arr(ref("CamundaTask"))), task_filters + task_sort + PAGE))
add("/task/count", "get", op("camundaCountTasks", "How many open tasks match", ok(ref("CamundaCount")), task_filters + task_sort))
add("/task/{id}", "get", op("camundaGetTask", "One open task", dict(ok(ref("CamundaTask")), **NF("task")), [ID_]))
add("/task/{id}/claim", "post", op("camundaClaimTask", "Claim a task for a user", dict(NOCONTENT, **NF("task")), [ID_], ref("CamundaClaimRequest")))
add("/task/{id}/unclaim", "post", op("camundaUnclaimTask", "Take the assignee off a task", dict(NOCONTENT, **NF("task")), [ID_], {"type": "object", "maxProperties": 0}, required_body=False))
add("/task/{id}/assignee", "post", op("camundaSetTaskAssignee", "Set a task's assignee, whoever had it (null: none)", dict(NOCONTENT, **NF("task")), [ID_], ref("CamundaAssigneeRequest")))
add("/task/{id}/complete", "post", op("camundaCompleteTask", "Complete a task", dict(NOCONTENT, **ok(ref("CamundaVariablesAnswer"), desc="withVariablesInReturn: the instance's variables after it"), **NF("task")), [ID_], ref("CamundaCompleteTaskRequest")))
add("/task/{id}/variables", "get", op("camundaTaskVariables", "What the task sees of its variables", dict(ok(ref("CamundaVariablesAnswer")), **NF("task")), [ID_, q("deserializeValues", "Ignored", FLAG)]))
add("/message", "post", op("camundaCorrelateMessage", "Correlate a message to the one instance (or start event) waiting for it", dict(NOCONTENT, **ok(arr(ref("CamundaMessageCorrelationResult")), desc="resultEnabled: what it reached"), **{"400": err("MismatchingMessageCorrelationException: none or several wait for it; or InvalidRequestException")}), body=ref("CamundaCorrelationMessageRequest")))
add("/signal", "post", op("camundaThrowSignal", "Throw a signal to every instance waiting for it", NOCONTENT, body=ref("CamundaSignalRequest")))
hpi = [q("processInstanceId", "Only this instance", ID), q("processInstanceIds", "Only these (comma-separated)"), q("processDefinitionId", "Only of this definition", ID), q("processDefinitionKey", "Only of this key", NAME),
    q("processInstanceBusinessKey", "Only with this business key", NAME), q("superProcessInstanceId", "Only called by this instance", ID), q("finished", "Only ended ones", FLAG), q("unfinished", "Only running ones", FLAG),
    q("completed", "Only completed ones", FLAG), q("externallyTerminated", "Only deleted or terminated ones", FLAG), q("active", "Only active ones", FLAG), q("suspended", "Only suspended ones", FLAG)]
hpi_sort = sort(["instanceId", "definitionId", "definitionKey", "businessKey", "startTime", "endTime", "duration"])
add("/history/process-instance", "get", op("camundaHistoricProcessInstances", "Process instances, running and ended", ok(arr(ref("CamundaHistoricProcessInstance"))), hpi + hpi_sort + PAGE))
add("/history/process-instance/count", "get", op("camundaCountHistoricProcessInstances", "How many match", ok(ref("CamundaCount")), hpi + hpi_sort))
hai = [{"name": "processInstanceId", "in": "query", "required": True, "description": "The instance (kairos lists one instance's activities)", "schema": ID}, q("activityId", "Only this activity", NAME), q("activityType", "Only this type", NAME),
    q("executionId", "Only of this execution", ID), q("finished", "Only ended ones", FLAG), q("unfinished", "Only open ones", FLAG), q("canceled", "Only cancelled ones", FLAG)]
hai_sort = sort(["activityInstanceId", "instanceId", "executionId", "activityId", "activityName", "activityType", "startTime", "endTime", "duration"])
add("/history/activity-instance", "get", op("camundaHistoricActivityInstances", "An instance's activities in start order", dict(ok(arr(ref("CamundaHistoricActivityInstance"))), **NF("process instance")), hai + hai_sort + PAGE))
add("/history/activity-instance/count", "get", op("camundaCountHistoricActivityInstances", "How many match", dict(ok(ref("CamundaCount")), **NF("process instance")), hai + hai_sort))
ht = [q("processInstanceId", "Only of this instance", ID), q("finished", "Only ended ones", FLAG), q("unfinished", "Only open ones", FLAG)]
add("/history/task", "get", op("camundaHistoricTasks", "User tasks, open and ended", ok(arr(ref("CamundaHistoricTask"))), ht + PAGE))
add("/history/task/count", "get", op("camundaCountHistoricTasks", "How many match", ok(ref("CamundaCount")), ht))
hv = [q("processInstanceId", "Only of this instance", ID), q("variableName", "Only this name", NAME), q("deserializeValues", "Ignored", FLAG)]
add("/history/variable-instance", "get", op("camundaHistoricVariables", "Variables' last values, kept after their instance ended", ok(arr(ref("CamundaHistoricVariable"))), hv + PAGE))
add("/history/variable-instance/count", "get", op("camundaCountHistoricVariables", "How many match", ok(ref("CamundaCount")), hv))
sc["CamundaJob"] = obj({"id": STR, "jobDefinitionId": NULL, "processInstanceId": NSTR, "executionId": NSTR, "processDefinitionId": NSTR, "processDefinitionKey": NSTR, "exceptionMessage": NSTR, "failedActivityId": NSTR, "retries": INT, "dueDate": NDATE, "suspended": BOOL, "priority": INT, "tenantId": NULL, "createTime": DATE, "batchId": NULL}, ["id", "retries", "suspended"], desc="JobDto")
sc["CamundaJobRetriesRequest"] = obj({"retries": {"type": "integer", "minimum": 0, "maximum": 1000000}}, ["retries"])
sc["CamundaIncident"] = obj({"id": STR, "processDefinitionId": NSTR, "processInstanceId": NSTR, "executionId": NSTR, "incidentTimestamp": DATE, "incidentType": {"type": "string", "enum": ["failedJob", "failedExternalTask"]}, "activityId": NSTR, "failedActivityId": NSTR, "causeIncidentId": STR, "rootCauseIncidentId": STR, "configuration": STR, "tenantId": NULL, "incidentMessage": NSTR, "jobDefinitionId": NULL, "annotation": NULL}, ["id", "incidentType", "configuration"], desc="IncidentDto: a dead letter")
d['components']['schemas'].update(sc)
job_filters = [q("jobId", "Only this job", ID), q("processInstanceId", "Only of this instance", ID), q("executionId", "Only of this execution", ID), q("processDefinitionId", "Only of this definition", ID),
    q("activityId", "Only of this activity", NAME), q("withRetriesLeft", "Only live and suspended jobs", FLAG), q("noRetriesLeft", "Only failed ones (dead letters)", FLAG), q("executable", "Only due live jobs", FLAG),
    q("timers", "Only timers", FLAG), q("messages", "Only async continuations and queued jobs", FLAG), q("withException", "Only jobs that failed", FLAG), q("active", "Only live jobs", FLAG), q("suspended", "Only jobs of suspended instances", FLAG)]
job_sort = sort(["jobId", "executionId", "processInstanceId", "processDefinitionId", "processDefinitionKey", "jobRetries", "jobDueDate", "jobPriority", "tenantId"])
add("/job", "get", op("camundaListJobs", "Jobs (timers, async continuations; failed ones with retries 0)", ok(arr(ref("CamundaJob"))), job_filters + job_sort + PAGE))
add("/job/count", "get", op("camundaCountJobs", "How many jobs match", ok(ref("CamundaCount")), job_filters + job_sort))
add("/job/{id}", "get", op("camundaGetJob", "One job", dict(ok(ref("CamundaJob")), **NF("job")), [ID_]))
add("/job/{id}/retries", "put", op("camundaSetJobRetries", "Set a job's retries (a failed job with retries ≥ 1 runs again)", dict(NOCONTENT, **NF("job")), [ID_], ref("CamundaJobRetriesRequest")))
add("/job/{id}/execute", "post", op("camundaExecuteJob", "Run a job now (made due, the executor woken)", dict(NOCONTENT, **NF("job")), [ID_]))
inc_filters = [q("incidentId", "Only this incident", ID), q("incidentType", "failedJob or failedExternalTask", {"type": "string", "enum": ["failedJob", "failedExternalTask"]}), q("incidentMessage", "Only with this message", {"type": "string", "minLength": 1, "maxLength": 4000}),
    q("processDefinitionId", "Only of this definition", ID), q("processInstanceId", "Only of this instance", ID), q("executionId", "Only of this execution", ID), q("activityId", "Only of this activity", NAME),
    q("failedActivityId", "Only of this activity", NAME), q("configuration", "Only of this job or external task", ID)]
inc_sort = sort(["incidentId", "incidentMessage", "incidentTimestamp", "incidentType", "executionId", "activityId", "processInstanceId", "processDefinitionId", "configuration", "tenantId"])
add("/incident", "get", op("camundaListIncidents", "Incidents: jobs and external tasks out of retries", ok(arr(ref("CamundaIncident"))), inc_filters + inc_sort + PAGE))
add("/incident/count", "get", op("camundaCountIncidents", "How many incidents match", ok(ref("CamundaCount")), inc_filters + inc_sort))
d['paths'].update(paths)
open(P, 'w').write(json.dumps(d, indent=2, ensure_ascii=False) + '\n')
print(len(paths), "paths")
