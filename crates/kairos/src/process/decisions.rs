//! DMN decisions (issue 19, item 7): deploying a `.dmn` resource makes each of its decisions
//! a version of its key in ACT_RE_DECISION_DEF (Camunda 7's table); a business rule task
//! evaluates one ([`kairos_dmn`] over dsntk) over the variables at its token, and its result is
//! mapped the way the model asks (Camunda's `mapDecisionResult`, or Flowable's decision task).
//!
//! Decisions are found when the task runs, not at deploy (a process may be deployed before its
//! DMN file, as Camunda allows): `latest`, `version`, `versionTag`, or `deployment` — the
//! version deployed with the process; since kairos makes each file of a multi-file deployment
//! a deployment of its own, `deployment` falls back to the latest version deployed at or before
//! the process definition (the one that was current when the pair was deployed).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kairos_bpmn::{DecisionBinding, DecisionMapping};
use kairos_dmn::DecisionModel;
use kairos_process::{DecisionCall, ErrorKind, ProcessError, ServiceCall, ServiceResult};
use kairos_store::Sql;
use kairos_store_engine::process::{self as tables, DecisionDefinition, DecisionLookup};
use serde_json::{Map, Value as Json};

use super::deploy::{DeploymentInfo, blocking};
use super::{Processes, limits};
use crate::Error;

/// Parsed DMN models by decision definition id, at most this many (then the cache starts over:
/// models are small and parsing one is milliseconds).
const CACHED_MODELS: usize = 256;

/// Parsed models by decision definition id (immutable once deployed).
#[derive(Default)]
pub(crate) struct ModelCache(Mutex<HashMap<String, Arc<DecisionModel>>>);

impl ModelCache {
    fn get(&self, id: &str) -> Option<Arc<DecisionModel>> {
        self.0.lock().ok()?.get(id).cloned()
    }

    fn put(&self, id: &str, model: Arc<DecisionModel>) {
        if let Ok(mut m) = self.0.lock() {
            if m.len() >= CACHED_MODELS {
                m.clear();
            }
            m.insert(id.to_owned(), model);
        }
    }
}

fn invalid(element: Option<&str>, message: String) -> Error {
    Error::Process(ProcessError { kind: ErrorKind::Invalid, message, element_id: element.map(str::to_owned) })
}

fn not_found(message: String) -> Error {
    Error::Process(ProcessError::new(ErrorKind::NotFound, message))
}

/// Which decision a caller of [`Processes::evaluate_decision`] means.
#[derive(Debug, Clone, Copy)]
pub enum DecisionWhich<'a> {
    Id(&'a str),
    /// The latest version of a key in a tenant (`''`: of no tenant).
    Key(&'a str, &'a str),
}

impl Processes {
    /// Checks a DMN document as deploying it would, writing nothing.
    pub fn validate_dmn(&self, name: &str, xml: &str) -> Result<(), Error> {
        let model = DecisionModel::parse(xml).map_err(|e| invalid(None, format!("{name}: {e}")))?;
        check_model(name, &model)
    }

    /// Deploys a DMN document: every decision becomes a version of its key; a document equal
    /// to the latest version's adds none (as a BPMN document). Refused whole, naming the line
    /// and decision, when it does not parse.
    pub(crate) async fn deploy_dmn(
        &self,
        tenant: &str,
        name: &str,
        key: Option<&str>,
        xml: &str,
    ) -> Result<DeploymentInfo, Error> {
        let owned = xml.to_owned();
        let model =
            blocking(move || DecisionModel::parse(&owned)).await?.map_err(|e| invalid(None, format!("{name}: {e}")))?;
        check_model(name, &model)?;
        for _ in 0..5 {
            let now = self.store.db_now().await?;
            let deployment_id = kairos_core::new_id();
            let mut writes = Vec::new();
            let mut out = Vec::new();
            let mut changed = false;
            for d in model.decisions() {
                let latest = tables::decision_find(self.store.as_ref(), DecisionLookup::Latest(&d.id, tenant)).await?;
                if let Some(l) = &latest
                    && tables::decision_resource(self.store.as_ref(), &l.id).await?.as_deref() == Some(xml)
                {
                    out.push(l.clone());
                    continue;
                }
                changed = true;
                let version = latest.map_or(1, |l| l.version + 1);
                let row = DecisionDefinition {
                    id: super::deploy::definition_id(&d.id, version),
                    key: d.id.clone(),
                    version,
                    name: d.name.clone(),
                    category: Some(model.namespace().to_owned()),
                    deployment_id: deployment_id.clone(),
                    resource_name: name.to_owned(),
                    tenant_id: tenant.to_owned(),
                    history_ttl_days: d.history_ttl_days.map(i64::from),
                    version_tag: d.version_tag.clone(),
                };
                writes.push(tables::decision_insert(&row));
                out.push(row);
            }
            if !changed {
                let Some(d) = tables::deployment_get(self.store.as_ref(), &out[0].deployment_id).await? else {
                    continue;
                };
                return Ok(DeploymentInfo {
                    id: d.id,
                    name: d.name.unwrap_or_default(),
                    deployment_time: d.deploy_time,
                    process_definitions: Vec::new(),
                    decision_definitions: out,
                    skipped_processes: Vec::new(),
                    tenant_id: d.tenant_id,
                });
            }
            writes.insert(0, tables::deployment_insert_keyed(&deployment_id, name, key, tenant, now));
            writes.insert(1, tables::resource_insert(&deployment_id, name, xml));
            match self.store.write_all(&writes).await.map_err(limits::checked_write) {
                Ok(_) => {}
                Err(e) if e.kind == kairos_store::ErrorKind::Conflict => continue,
                Err(e) => return Err(e.into()),
            }
            return Ok(DeploymentInfo {
                id: deployment_id,
                name: name.to_owned(),
                deployment_time: now,
                process_definitions: Vec::new(),
                decision_definitions: out,
                skipped_processes: Vec::new(),
                tenant_id: tenant.to_owned(),
            });
        }
        Err(Error::Process(ProcessError::new(
            ErrorKind::Conflict,
            "concurrent deployments of the same decision keys; try again",
        )))
    }

    /// Decision definitions, optionally of one key and/or one deployment and/or one tenant, by
    /// key and version.
    pub async fn decision_definitions(
        &self,
        key: Option<&str>,
        deployment_id: Option<&str>,
        latest_only: bool,
        tenant: Option<&str>,
    ) -> Result<Vec<DecisionDefinition>, Error> {
        Ok(tables::decision_list(self.store.as_ref(), key, deployment_id, latest_only, tenant).await?)
    }

    /// One decision definition by id, or the latest of a key.
    pub async fn decision_definition(&self, which: DecisionWhich<'_>) -> Result<DecisionDefinition, Error> {
        let lookup = match which {
            DecisionWhich::Id(id) => DecisionLookup::Id(id),
            DecisionWhich::Key(key, tenant) => DecisionLookup::Latest(key, tenant),
        };
        tables::decision_find(self.store.as_ref(), lookup).await?.ok_or_else(|| match which {
            DecisionWhich::Id(id) => not_found(format!("decision definition {id} does not exist")),
            DecisionWhich::Key(key, _) => not_found(format!("no decision definition with key '{key}' is deployed")),
        })
    }

    /// The DMN XML a decision was deployed from.
    pub async fn decision_xml(&self, id: &str) -> Result<String, Error> {
        tables::decision_resource(self.store.as_ref(), id)
            .await?
            .ok_or_else(|| not_found(format!("decision definition {id} does not exist")))
    }

    /// Evaluates a deployed decision over `variables` (Camunda's `POST
    /// /decision-definition/{id}/evaluate`): its result list, one map per matched rule.
    pub async fn evaluate_decision(
        &self,
        which: DecisionWhich<'_>,
        variables: &Map<String, Json>,
    ) -> Result<(DecisionDefinition, Vec<Map<String, Json>>), Error> {
        let def = self.decision_definition(which).await?;
        let result = self.evaluate_definition(&def, variables).await.map_err(|m| {
            Error::Process(ProcessError { kind: ErrorKind::Invalid, message: m, element_id: Some(def.key.clone()) })
        })?;
        Ok((def, result))
    }

    /// Evaluates `def` (its model parsed once and cached) off the async workers.
    async fn evaluate_definition(
        &self,
        def: &DecisionDefinition,
        variables: &Map<String, Json>,
    ) -> Result<Vec<Map<String, Json>>, String> {
        let model = match self.decision_models.get(&def.id) {
            Some(m) => m,
            None => {
                let xml = tables::decision_resource(self.store.as_ref(), &def.id)
                    .await
                    .map_err(|e| e.to_string())?
                    .ok_or_else(|| format!("the DMN resource of decision definition {} is missing", def.id))?;
                let model = blocking(move || DecisionModel::parse(&xml))
                    .await
                    .map_err(|e| e.to_string())?
                    .map_err(|e| format!("the deployed DMN of decision definition {} does not parse: {e}", def.id))?;
                let model = Arc::new(model);
                self.decision_models.put(&def.id, model.clone());
                model
            }
        };
        let (key, vars) = (def.key.clone(), variables.clone());
        blocking(move || model.evaluate(&key, &vars)).await.map_err(|e| e.to_string())?.map_err(|e| e.to_string())
    }

    /// A business rule task's decision: found by its binding, evaluated over the variables at
    /// the token, its result mapped as the model says. Every failure fails the task (a request
    /// gets the message; an async continuation's job is retried, then an incident).
    pub(crate) async fn decide(&self, db: &dyn Sql, definition_id: &str, call: &ServiceCall) -> ServiceResult {
        let (Some(decision), Json::Object(variables)) = (&call.decision, &call.payload) else {
            return ServiceResult::Failed(format!("'{}' asked for no decision", call.activity_id));
        };
        match self.decide_inner(db, definition_id, decision, variables).await {
            Ok(r) => r,
            Err(m) => ServiceResult::Failed(m),
        }
    }

    async fn decide_inner(
        &self,
        db: &dyn Sql,
        definition_id: &str,
        call: &DecisionCall,
        variables: &Map<String, Json>,
    ) -> Result<ServiceResult, String> {
        let key = call.key.as_str();
        let store_error = |e: kairos_store::Error| e.to_string();
        // The decision is the instance's tenant's: its definition's.
        let def = tables::definition_lookup(db, kairos_store_engine::process::Lookup::Id(definition_id))
            .await
            .map_err(store_error)?
            .map(|(d, _)| d)
            .ok_or_else(|| format!("process definition {definition_id} does not exist"))?;
        let tenant = def.tenant_id.as_str();
        let found = match &call.binding {
            DecisionBinding::Latest => {
                tables::decision_find(db, DecisionLookup::Latest(key, tenant)).await.map_err(store_error)?
            }
            DecisionBinding::Version(v) => {
                let v: i64 = v.parse().map_err(|_| format!("decision version '{v}' is not a number"))?;
                tables::decision_find(db, DecisionLookup::Version(key, v, tenant)).await.map_err(store_error)?
            }
            DecisionBinding::VersionTag(tag) => {
                tables::decision_find(db, DecisionLookup::Tag(key, tag, tenant)).await.map_err(store_error)?
            }
            DecisionBinding::Deployment => self.decision_of_deployment(db, &def, key).await?,
        };
        let Some(def) = found else {
            let which = match &call.binding {
                DecisionBinding::Version(v) => format!(" version {v}"),
                DecisionBinding::VersionTag(t) => format!(" with version tag '{t}'"),
                _ => String::new(),
            };
            return Err(format!("no decision '{key}'{which} is deployed: deploy its .dmn file"));
        };
        let result = self.evaluate_definition(&def, variables).await?;
        map_result(key, call.mapping, result)
    }

    /// The decision of `key` deployed with process definition `def`, else the latest of its tenant
    /// deployed no later than it (see the module docs).
    async fn decision_of_deployment(
        &self,
        db: &dyn Sql,
        def: &tables::DefinitionInfo,
        key: &str,
    ) -> Result<Option<DecisionDefinition>, String> {
        let e = |e: kairos_store::Error| e.to_string();
        if let Some(d) =
            tables::decision_find(db, DecisionLookup::InDeployment(key, &def.deployment_id)).await.map_err(e)?
        {
            return Ok(Some(d));
        }
        let deployed = tables::deployment_get(db, &def.deployment_id).await.map_err(e)?.map(|d| d.deploy_time);
        let mut candidates =
            tables::decision_list(db, Some(key), None, false, Some(&def.tenant_id)).await.map_err(e)?;
        candidates.reverse();
        for c in candidates {
            let at = tables::deployment_get(db, &c.deployment_id).await.map_err(e)?.map(|d| d.deploy_time);
            if deployed.is_none() || at <= deployed {
                return Ok(Some(c));
            }
        }
        Ok(None)
    }
}

/// What deploying refuses of a parsed model: no decision, or a decision id that cannot be a key.
fn check_model(name: &str, model: &DecisionModel) -> Result<(), Error> {
    if model.decisions().is_empty() {
        return Err(invalid(None, format!("{name}: the DMN document holds no decision")));
    }
    for d in model.decisions() {
        if let Some(m) = super::deploy::key_problem(&d.id) {
            return Err(invalid(Some(&d.id), format!("{name}: line {}, decision '{}': {m}", d.line, d.id)));
        }
    }
    Ok(())
}

/// Maps a decision's result list as the task asks (Camunda's `DecisionResultMapper`s, or
/// Flowable's decision task).
pub(crate) fn map_result(
    key: &str,
    mapping: DecisionMapping,
    mut result: Vec<Map<String, Json>>,
) -> Result<ServiceResult, String> {
    let output = |result: Option<Json>| Ok(ServiceResult::Output { result, variables: Map::new() });
    let at_most_one = |result: &[Map<String, Json>], how: &str| {
        if result.len() > 1 {
            Err(format!("decision '{key}' matched {} rules; {how} needs at most one", result.len()))
        } else {
            Ok(())
        }
    };
    let single_entry = |rule: Map<String, Json>, how: &str| {
        if rule.len() == 1 {
            Ok(rule.into_iter().next().map(|(_, v)| v).unwrap_or(Json::Null))
        } else {
            Err(format!("decision '{key}' gave {} outputs for a rule; {how} needs exactly one", rule.len()))
        }
    };
    match mapping {
        DecisionMapping::ResultList => output(Some(Json::Array(result.into_iter().map(Json::Object).collect()))),
        DecisionMapping::SingleResult => {
            at_most_one(&result, "singleResult")?;
            output(Some(result.pop().map_or(Json::Null, Json::Object)))
        }
        DecisionMapping::SingleEntry => {
            at_most_one(&result, "singleEntry")?;
            match result.pop() {
                None => output(Some(Json::Null)),
                Some(rule) => output(Some(single_entry(rule, "singleEntry")?)),
            }
        }
        DecisionMapping::CollectEntries => {
            let values =
                result.into_iter().map(|r| single_entry(r, "collectEntries")).collect::<Result<Vec<_>, _>>()?;
            output(Some(Json::Array(values)))
        }
        DecisionMapping::Flowable { throw_on_no_hits } => match result.len() {
            0 if throw_on_no_hits => Err(format!("decision '{key}' matched no rule (decisionTaskThrowErrorOnNoHits)")),
            0 => Ok(ServiceResult::Output { result: None, variables: Map::new() }),
            1 => Ok(ServiceResult::Output { result: None, variables: result.remove(0) }),
            _ => Ok(ServiceResult::Output {
                result: None,
                variables: Map::from_iter([(
                    key.to_owned(),
                    Json::Array(result.into_iter().map(Json::Object).collect()),
                )]),
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(v: Json) -> Vec<Map<String, Json>> {
        v.as_array().unwrap().iter().map(|r| r.as_object().unwrap().clone()).collect()
    }

    fn result(r: Result<ServiceResult, String>) -> Json {
        match r.unwrap() {
            ServiceResult::Output { result, .. } => result.unwrap_or(Json::Null),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn camunda_mappings_shape_the_result_or_refuse_it() {
        let two = rules(json!([{"group": "sales"}, {"group": "accounting"}]));
        let one = rules(json!([{"approved": true, "reason": "ok"}]));
        assert_eq!(
            result(map_result("k", DecisionMapping::ResultList, two.clone())),
            json!([{"group": "sales"}, {"group": "accounting"}])
        );
        assert_eq!(
            result(map_result("k", DecisionMapping::CollectEntries, two.clone())),
            json!(["sales", "accounting"])
        );
        assert_eq!(
            result(map_result("k", DecisionMapping::SingleResult, one.clone())),
            json!({"approved": true, "reason": "ok"})
        );
        assert_eq!(result(map_result("k", DecisionMapping::SingleEntry, rules(json!([{"a": 1}])))), json!(1));
        assert_eq!(result(map_result("k", DecisionMapping::SingleEntry, Vec::new())), Json::Null);
        assert_eq!(result(map_result("k", DecisionMapping::SingleResult, Vec::new())), Json::Null);
        assert_eq!(result(map_result("k", DecisionMapping::CollectEntries, Vec::new())), json!([]));
        let e = map_result("k", DecisionMapping::SingleEntry, two.clone()).unwrap_err();
        assert!(e.contains("matched 2 rules; singleEntry needs at most one"), "{e}");
        let e = map_result("k", DecisionMapping::SingleEntry, one.clone()).unwrap_err();
        assert!(e.contains("gave 2 outputs for a rule; singleEntry needs exactly one"), "{e}");
        assert!(map_result("k", DecisionMapping::CollectEntries, one).is_err());
        assert!(map_result("k", DecisionMapping::SingleResult, two).is_err());
    }

    #[test]
    fn flowable_sets_one_rules_outputs_or_a_list_under_the_key() {
        let vars = |r: Result<ServiceResult, String>| match r.unwrap() {
            ServiceResult::Output { result: None, variables } => Json::Object(variables),
            other => panic!("{other:?}"),
        };
        let f = DecisionMapping::Flowable { throw_on_no_hits: false };
        assert_eq!(vars(map_result("approve", f, rules(json!([{"ok": true}])))), json!({"ok": true}));
        assert_eq!(
            vars(map_result("approve", f, rules(json!([{"ok": true}, {"ok": false}])))),
            json!({"approve": [{"ok": true}, {"ok": false}]})
        );
        assert_eq!(vars(map_result("approve", f, Vec::new())), json!({}));
        let strict = DecisionMapping::Flowable { throw_on_no_hits: true };
        assert!(map_result("approve", strict, Vec::new()).unwrap_err().contains("matched no rule"));
    }
}
