//! Multi-instance activities (seed 003 §3.2, §5.3): the body execution is a concurrent scope
//! holding `nrOfInstances` / `nrOfCompletedInstances` / `nrOfActiveInstances`; each instance is
//! a concurrent child with its `loopCounter` and element variable.
//!
//! Standard loops (BPMN 2.0 §10.2.8) live here too: the same token runs the activity again
//! while its `loopCondition` holds, counting the runs in a local `loopCounter`.

use kairos_bpmn::{FlowNode, NodeIdx};
use serde_json::Value as Json;

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::primitives::expressions::is_expression;
use crate::runtime::{LOOP_COUNTER, MAX_MULTI_INSTANCE, Runtime};

impl Runtime<'_> {
    /// Sets up the multi-instance body at `exec` (seed 003 §3.2 and §5.3: the root is a scope
    /// and concurrent; each instance a concurrent child with its own `loopCounter` and element
    /// variable; `nrOfInstances` / `nrOfCompletedInstances` / `nrOfActiveInstances` live on
    /// the root).
    pub(crate) fn start_multi_instance(
        &mut self,
        exec: &str,
        node: NodeIdx,
        mi: &kairos_bpmn::MultiInstance,
    ) -> Result<()> {
        let id = self.node(node).id.clone();
        let items: Option<Vec<Json>> = match &mi.collection {
            Some(c) => {
                let value = if is_expression(c) {
                    self.eval(exec, &id, c)?
                } else {
                    self.inst.visible_variable(exec, c).cloned().ok_or_else(|| {
                        ProcessError::at(
                            ErrorKind::Model,
                            &id,
                            format!("multi-instance collection '{c}' of '{id}' is not a variable"),
                        )
                    })?
                };
                match value {
                    Json::Array(a) if a.len() > MAX_MULTI_INSTANCE => {
                        return Err(ProcessError::at(
                            ErrorKind::Model,
                            &id,
                            format!(
                                "multi-instance collection '{c}' of '{id}' has {} items; the limit is {MAX_MULTI_INSTANCE}",
                                a.len()
                            ),
                        ));
                    }
                    Json::Array(a) => Some(a),
                    other => {
                        return Err(ProcessError::at(
                            ErrorKind::Model,
                            &id,
                            format!("multi-instance collection '{c}' of '{id}' is not a list but {other}"),
                        ));
                    }
                }
            }
            None => None,
        };
        let count = match (&items, &mi.cardinality) {
            (Some(items), _) => items.len() as i64,
            (None, Some(card)) => {
                let v = self.eval_string(exec, &id, card)?;
                v.trim().parse::<i64>().ok().filter(|n| (0..=MAX_MULTI_INSTANCE as i64).contains(n)).ok_or_else(
                    || {
                        ProcessError::at(
                            ErrorKind::Model,
                            &id,
                            format!("loopCardinality of '{id}' is not an integer 0..={MAX_MULTI_INSTANCE}: '{v}'"),
                        )
                    },
                )?
            }
            (None, None) => {
                return Err(ProcessError::at(
                    ErrorKind::Model,
                    &id,
                    format!("multi-instance '{id}' has no collection and no loopCardinality"),
                ));
            }
        };
        if let Some(e) = self.inst.execution_mut(exec) {
            e.is_mi_root = true;
            e.is_scope = true;
            e.is_concurrent = true;
            e.is_active = false;
        }
        self.set_local(exec, "nrOfInstances", Json::from(count));
        self.set_local(exec, "nrOfCompletedInstances", Json::from(0));
        let active = if mi.sequential { count.min(1) } else { count };
        self.set_local(exec, "nrOfActiveInstances", Json::from(active));
        if count == 0 {
            self.plan_leave(exec, node, true);
            return Ok(());
        }
        let first_batch = if mi.sequential { 1 } else { count };
        for i in 0..first_batch {
            self.start_mi_child(exec, node, mi, i, items.as_ref().and_then(|it| it.get(i as usize)).cloned());
        }
        Ok(())
    }

    pub(crate) fn start_mi_child(
        &mut self,
        root: &str,
        node: NodeIdx,
        mi: &kairos_bpmn::MultiInstance,
        i: i64,
        item: Option<Json>,
    ) {
        let child = self.new_token(root, node);
        if let Some(e) = self.inst.execution_mut(&child) {
            e.is_concurrent = true;
        }
        self.set_local(&child, "loopCounter", Json::from(i));
        if let (Some(var), Some(item)) = (&mi.element_variable, item) {
            self.set_local(&child, var, item);
        }
        self.push_enter(child, node, true);
    }

    /// One instance of a multi-instance activity completed.
    pub(crate) fn multi_instance_child_done(&mut self, child: &str, node: NodeIdx) -> Result<()> {
        let n = self.node(node).clone();
        let Some(mi) = n.multi_instance.clone() else { return Ok(()) };
        let root = self.inst.execution(child).and_then(|e| e.parent_id.clone()).unwrap_or_default();
        let get = |rt: &Self, name: &str| rt.inst.visible_variable(&root, name).and_then(Json::as_i64).unwrap_or(0);
        let total = get(self, "nrOfInstances");
        let completed = get(self, "nrOfCompletedInstances") + 1;
        let active = (get(self, "nrOfActiveInstances") - 1).max(0);
        self.set_local(&root, "nrOfCompletedInstances", Json::from(completed));
        self.set_local(&root, "nrOfActiveInstances", Json::from(active));
        let done_early = match &mi.completion_condition {
            Some(c) => self.eval_bool(child, &n.id, c)?,
            None => false,
        };
        let loop_counter = self.inst.visible_variable(child, "loopCounter").and_then(Json::as_i64).unwrap_or(0);
        self.remove_execution_tree(child, None);
        if done_early || completed >= total {
            // Instances still running are cancelled (a completion condition that held).
            let others: Vec<String> = self
                .inst
                .executions
                .iter()
                .filter(|e| e.parent_id.as_deref() == Some(&root) && !e.is_event_scope)
                .map(|e| e.id.clone())
                .collect();
            for o in others {
                self.remove_execution_tree(&o, Some("multi-instance completion condition held"));
            }
            self.push_leave(&root, node);
        } else if mi.sequential {
            let next = loop_counter + 1;
            let item = match &mi.collection {
                Some(c) if is_expression(c) => self.eval(&root, &n.id, c)?.get(next as usize).cloned(),
                Some(c) => self.inst.visible_variable(&root, c).and_then(|v| v.get(next as usize)).cloned(),
                None => None,
            };
            self.set_local(&root, "nrOfActiveInstances", Json::from(1));
            self.start_mi_child(&root, node, &mi, next, item);
        }
        Ok(())
    }

    /// The multi-instance body at `exec` (if it is one) completes: it is a plain token again,
    /// and its counters go.
    pub(crate) fn end_multi_instance_body(&mut self, exec: &str) {
        if let Some(e) = self.inst.execution_mut(exec).filter(|e| e.is_mi_root) {
            e.is_mi_root = false;
            e.is_concurrent = false;
            let root = exec.to_string();
            self.inst.variables.retain(|v| v.execution_id != root);
        }
    }

    /// Whether the token arriving at `n` runs it: always, unless `n` is a standard loop that
    /// tests before each run (a while loop) and its maximum is reached or its condition fails.
    /// A token that will not run `n` loses its `loopCounter`.
    pub(crate) fn standard_loop_runs(&mut self, exec: &str, n: &FlowNode) -> Result<bool> {
        let Some(sl) = &n.standard_loop else { return Ok(true) };
        let runs = match self.local(exec, LOOP_COUNTER).and_then(Json::as_i64) {
            Some(runs) => runs,
            None => {
                self.set_local(exec, LOOP_COUNTER, Json::from(0));
                0
            }
        };
        if !sl.test_before {
            return Ok(true);
        }
        let go_on = self.loop_goes_on(exec, n, runs)?;
        if !go_on {
            self.drop_local(exec, LOOP_COUNTER);
        }
        Ok(go_on)
    }

    /// One run of the standard loop `n` ended: counts it, and tells whether the token goes
    /// round again (a while loop checks again on arrival; a do-while loop checks now).
    pub(crate) fn standard_loop_again(&mut self, exec: &str, n: &FlowNode) -> Result<bool> {
        let Some(sl) = &n.standard_loop else { return Ok(false) };
        let runs = self.local(exec, LOOP_COUNTER).and_then(Json::as_i64).unwrap_or(0) + 1;
        self.set_local(exec, LOOP_COUNTER, Json::from(runs));
        let again = sl.test_before || self.loop_goes_on(exec, n, runs)?;
        if !again {
            self.drop_local(exec, LOOP_COUNTER);
        }
        Ok(again)
    }

    /// True while fewer than `loopMaximum` runs were made and the `loopCondition` holds
    /// (`loopCounter` is `runs` when it is evaluated).
    fn loop_goes_on(&mut self, exec: &str, n: &FlowNode, runs: i64) -> Result<bool> {
        let Some(sl) = &n.standard_loop else { return Ok(false) };
        if sl.maximum.is_some_and(|max| runs >= i64::from(max)) {
            return Ok(false);
        }
        match &sl.condition {
            Some(c) => self.eval_bool(exec, &n.id, c),
            None => Ok(true),
        }
    }
}
