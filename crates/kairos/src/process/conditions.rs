//! Conditional start events of a process (BPMN 2.0 §10.5.2, Camunda 7's
//! `RuntimeService.createConditionEvaluation()` and `POST /engine-rest/condition`): a caller
//! hands variables in, and every latest, active definition whose conditional start event's
//! condition holds over them starts an instance there — all in one transaction, or none.
//!
//! A condition naming a variable that is not given is false (as kairos's conditional events
//! read it), so one evaluation can be asked of processes that wait for different facts; a
//! `camunda:variableName` restricts its event to evaluations that give that variable.

use super::{InstanceView, Processes, StartRequest, process_of};
use crate::Error;
use kairos_bpmn::EventTrigger;
use kairos_process::{ErrorKind, ProcessError};
use kairos_store_engine::process::DefinitionFilter;
use serde_json::{Map, Value as Json};

impl Processes {
    /// Starts an instance of every latest, active definition (or only `definition_id`) whose
    /// conditional start event holds over `variables`, with `business_key`; answers them, in
    /// the order of their keys. None holding is an empty answer; no conditional start event
    /// deployed at all (or none in `definition_id`) is an error, as in Camunda.
    pub async fn evaluate_start_conditions(
        &self,
        variables: Map<String, Json>,
        business_key: Option<String>,
        definition_id: Option<&str>,
    ) -> Result<Vec<InstanceView>, Error> {
        let filter = DefinitionFilter { latest_only: definition_id.is_none(), ..DefinitionFilter::default() };
        let mut definitions = self.definitions_query(&filter).await?;
        if let Some(id) = definition_id {
            definitions.retain(|d| d.id == id);
            if definitions.is_empty() {
                return Err(Error::Process(ProcessError::new(
                    ErrorKind::NotFound,
                    format!("process definition {id} does not exist"),
                )));
            }
        }
        definitions.sort_by(|a, b| a.key.cmp(&b.key));
        let mut any = false;
        let mut starts = Vec::new();
        for def in definitions.iter().filter(|d| !d.suspended || definition_id.is_some()) {
            let defs = self.definitions(&def.id).await?;
            let process = process_of(&defs, &def.key)?;
            for &s in &process.start_events {
                let n = process.node(s);
                let Some(EventTrigger::Conditional(c)) = n.kind.trigger() else { continue };
                any = true;
                if c.variable_name.as_ref().is_some_and(|v| !variables.contains_key(v)) {
                    continue;
                }
                let expr = kairos_expr::Expression::parse(&c.condition)
                    .map_err(|e| condition_error(&n.id, &c.condition, &e))?;
                let holds = match expr.eval_bool(&variables) {
                    Ok(b) => b,
                    Err(kairos_expr::EvalError::UndefinedVariable { .. }) => false,
                    Err(e) => return Err(condition_error(&n.id, &c.condition, &e)),
                };
                if holds {
                    if def.suspended {
                        return Err(Error::Process(ProcessError::new(
                            ErrorKind::Conflict,
                            format!("process definition {} is suspended: it accepts no new instances", def.id),
                        )));
                    }
                    starts.push(StartRequest {
                        process_definition_id: Some(def.id.clone()),
                        business_key: business_key.clone(),
                        variables: variables.clone(),
                        start_event: Some(n.id.clone()),
                        ..StartRequest::default()
                    });
                    // One instance per definition, at its first conditional start that holds.
                    break;
                }
            }
        }
        if !any {
            let whose =
                definition_id.map_or("no process definition".to_string(), |id| format!("process definition {id}"));
            return Err(Error::Process(ProcessError::new(
                ErrorKind::Invalid,
                format!("{whose} has a conditional start event: nothing to evaluate the conditions against"),
            )));
        }
        let db = self.store.as_ref();
        let mut views = Vec::new();
        let mut writes = Vec::new();
        for req in starts {
            let (view, w) = self.prepare_start(db, req).await?;
            views.push(view);
            writes.extend(w);
        }
        if !writes.is_empty() {
            db.write_all(&writes).await.map_err(super::limits::checked_write)?;
            self.external_work_arrived();
        }
        Ok(views)
    }
}

fn condition_error(element: &str, text: &str, e: &dyn std::fmt::Display) -> Error {
    Error::Process(ProcessError::at(ErrorKind::Model, element, format!("condition '{text}' of '{element}': {e}")))
}
