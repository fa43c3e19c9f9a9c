//! A small driver over the pure runtime, for the tests by behaviour: it plays the engine (a
//! fixed clock moved only by the test, ids `id-0001`, `id-0002`, … in the order the runtime
//! asks for them, each command run over the instance as the engine would load it) and keeps
//! what each command produced, so a test asserts on the instance and on the changes.
//!
//! As the engine, it loads only open history rows: the closed ones move to [`Driver::history`]
//! after each command, and the per-command lists of the instance (ended tasks, thrown signals,
//! interrupted calls, the variable log) move to [`Driver::last`].

#![allow(dead_code)] // each test file uses its part

use std::collections::VecDeque;

use jiff::Timestamp;
use kairos_bpmn::Definitions;
use kairos_process::*;
use serde_json::{Map, Value as Json};

/// The clock the instance starts at.
pub const T0: &str = "2026-01-05T09:00:00Z";

/// `body` in a process `p` (BPMN, Camunda and kairos namespaces; messages `m1`/`m2` named
/// `go`/`stop`, signal `s1` named `alarm`, error `e1` with code `E1`, escalation `x1` with code `X1`).
pub fn process(body: &str) -> String {
    format!(
        r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" xmlns:kairos="urn:kairos:bpmn" targetNamespace="urn:test">
  <message id="m1" name="go"/>
  <message id="m2" name="stop"/>
  <signal id="s1" name="alarm"/>
  <error id="e1" errorCode="E1"/>
  <escalation id="x1" escalationCode="X1"/>
  <process id="p">
    {body}
  </process>
</definitions>"#
    )
}

pub fn vars(v: Json) -> Map<String, Json> {
    v.as_object().cloned().unwrap_or_default()
}

/// What the last command produced besides the instance.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The rows to write: the difference between the instance as loaded and as left.
    pub changes: Changes,
    /// Handler calls the command made (answered by [`Driver::answers`]).
    pub calls: Vec<ServiceCall>,
    /// Called instances the command asked the engine to start.
    pub called: Vec<CalledStart>,
    pub ended_tasks: Vec<EndedTask>,
    pub thrown_signals: Vec<String>,
    pub interrupted_calls: Vec<(String, String)>,
    pub raised: Vec<Raised>,
    pub variable_log: Vec<VariableChange>,
}

pub struct Driver {
    pub defs: Definitions,
    /// The instance as the engine would load it next.
    pub inst: Instance,
    pub now: Timestamp,
    next_id: u64,
    /// History rows closed by earlier commands, in the order they closed.
    pub history: Vec<ActivityRecord>,
    pub last: Outcome,
    /// Answers to service-task calls, in order; `Done(None)` when none is left.
    pub answers: VecDeque<ServiceResult>,
    /// What a started called instance does: `Some(vars)` ends at once with those variables,
    /// `None` (the default) keeps running (the call activity waits for `CalledEnded`).
    pub called_ends_with: Option<Map<String, Json>>,
    started: bool,
}

impl Driver {
    /// A driver over the first process of `xml`, with an empty instance not yet started.
    pub fn new(xml: &str) -> Driver {
        Driver::over(kairos_bpmn::parse(xml).unwrap_or_else(|e| panic!("{e}")))
    }

    /// A driver over `body` parsed as the engine parses it: expressions checked by the
    /// expression language, so what it cannot evaluate (a bean method call) names a handler.
    pub fn checked(body: &str) -> Driver {
        let check = |text: &str| kairos_expr::Expression::parse(text).map(|_| ()).map_err(|e| e.to_string());
        let options = kairos_bpmn::ParseOptions::default().with_expression_check(&check);
        Driver::over(kairos_bpmn::parse_with(&process(body), &options).unwrap_or_else(|e| panic!("{e}")))
    }

    fn over(defs: Definitions) -> Driver {
        let now: Timestamp = T0.parse().unwrap();
        let mut next_id = 0u64;
        let inst = {
            let mut ids = || {
                next_id += 1;
                format!("id-{next_id:04}")
            };
            let mut env = Env { definitions: &defs, process: &defs.processes[0], now, ids: &mut ids };
            Runtime::new_instance(&mut env, "def-1", Some("BK-1".into()))
        };
        Driver {
            defs,
            inst,
            now,
            next_id,
            history: Vec::new(),
            last: Outcome::default(),
            answers: VecDeque::new(),
            called_ends_with: None,
            started: false,
        }
    }

    /// A driver over `body` wrapped by [`process`].
    pub fn of(body: &str) -> Driver {
        Driver::new(&process(body))
    }

    /// Runs `command` to its end (answering handler calls and starting called instances), then
    /// stores the instance as the engine would load it next. On an error the instance stays as
    /// it was (nothing of a failed command is written).
    pub fn try_run(&mut self, command: Command) -> Result<()> {
        let before = self.inst.clone();
        let mut n = self.next_id;
        let mut calls = Vec::new();
        let mut called = Vec::new();
        let mut after = {
            let mut ids = || {
                n += 1;
                format!("id-{n:04}")
            };
            let env = Env { definitions: &self.defs, process: &self.defs.processes[0], now: self.now, ids: &mut ids };
            let mut rt = Runtime::new(env, before.clone());
            let mut step = rt.apply(command)?;
            loop {
                step = match step {
                    Step::Done => break,
                    Step::Call(call) => {
                        calls.push(call);
                        rt.resume(self.answers.pop_front().unwrap_or(ServiceResult::Done(None)))?
                    }
                    Step::StartCalled(start) => {
                        called.push(start);
                        rt.resume_called(self.called_ends_with.clone(), Vec::new())?
                    }
                };
            }
            rt.into_instance()
        };
        self.next_id = n;
        let changes = changes(self.started.then_some(&before), &after);
        self.started = true;
        let mut closed: Vec<ActivityRecord> = after.activities.iter().filter(|a| a.end.is_some()).cloned().collect();
        closed.sort_by_key(|a| (a.end, a.seq));
        self.history.extend(closed);
        after.activities.retain(|a| a.end.is_none());
        self.last = Outcome {
            changes,
            calls,
            called,
            ended_tasks: std::mem::take(&mut after.ended_tasks),
            thrown_signals: std::mem::take(&mut after.thrown_signals),
            interrupted_calls: std::mem::take(&mut after.interrupted_calls),
            raised: std::mem::take(&mut after.raised),
            variable_log: std::mem::take(&mut after.variable_log),
        };
        self.inst = after;
        Ok(())
    }

    /// [`Driver::try_run`], which must succeed.
    pub fn run(&mut self, command: Command) -> &mut Driver {
        if let Err(e) = self.try_run(command) {
            panic!("the command failed: {e}");
        }
        self
    }

    pub fn start(&mut self, variables: Json) -> &mut Driver {
        self.run(Command::Start { variables: vars(variables), start_user: None, start_event: None })
    }

    /// Completes the oldest open task at `activity`.
    pub fn complete(&mut self, activity: &str, variables: Json) -> &mut Driver {
        let task_id = self.task_id(activity);
        self.run(Command::CompleteTask { task_id, variables: vars(variables) })
    }

    pub fn message(&mut self, name: &str) -> &mut Driver {
        self.run(Command::Message { name: name.into(), variables: Map::new() })
    }

    pub fn signal(&mut self, name: &str) -> &mut Driver {
        self.run(Command::Signal { name: name.into(), variables: Map::new() })
    }

    pub fn set(&mut self, variables: Json) -> &mut Driver {
        self.run(Command::SetVariables { variables: vars(variables) })
    }

    /// Moves the clock to the due date of the timer job at `activity` and runs it.
    pub fn fire_timer(&mut self, activity: &str) -> &mut Driver {
        let job = self.job_at(activity, JobKind::Timer);
        self.now = self.now.max(job.due.expect("a timer has a due date"));
        self.run(Command::RunJob { job_id: job.id })
    }

    /// Runs the job of `kind` at `activity` (an async continuation).
    pub fn run_job(&mut self, activity: &str, kind: JobKind) -> &mut Driver {
        let job = self.job_at(activity, kind);
        self.run(Command::RunJob { job_id: job.id })
    }

    // ----- looking at the instance ------------------------------------------------------------

    /// The execution tree, one line per execution in creation order under its parent, indented
    /// by depth: its activity (`-` for none) and the flags that are set, among `scope`,
    /// `concurrent`, `event-scope`, `mi-body`, and `inactive` (IS_ACTIVE_ false).
    pub fn tree(&self) -> String {
        fn walk(inst: &Instance, id: &str, depth: usize, out: &mut Vec<String>) {
            let e = inst.execution(id).expect("an execution of the tree");
            let mut line = format!("{}{}", "  ".repeat(depth), e.activity.as_deref().unwrap_or("-"));
            for (set, flag) in [
                (e.is_scope, "scope"),
                (e.is_concurrent, "concurrent"),
                (e.is_event_scope, "event-scope"),
                (e.is_mi_root, "mi-body"),
                (!e.is_active, "inactive"),
            ] {
                if set {
                    line.push(' ');
                    line.push_str(flag);
                }
            }
            out.push(line);
            for c in inst.children(id) {
                walk(inst, &c.id, depth + 1, out);
            }
        }
        let mut out = Vec::new();
        if self.inst.execution(&self.inst.id).is_some() {
            walk(&self.inst, &self.inst.id, 0, &mut out);
        }
        out.join("\n")
    }

    /// The open tasks' activities, in creation order.
    pub fn tasks(&self) -> Vec<&str> {
        self.inst.tasks.iter().map(|t| t.task_def_key.as_str()).collect()
    }

    pub fn task_id(&self, activity: &str) -> String {
        let t = self.inst.tasks.iter().find(|t| t.task_def_key == activity);
        t.unwrap_or_else(|| panic!("no task at {activity}: {:?}", self.tasks())).id.clone()
    }

    /// The subscriptions as `type:name@activity`, in creation order.
    pub fn subscriptions(&self) -> Vec<String> {
        self.inst.subscriptions.iter().map(|s| format!("{}:{}@{}", s.event_type, s.event_name, s.activity_id)).collect()
    }

    /// The jobs as `handler-type@activity`, with the due date of a timer.
    pub fn jobs(&self) -> Vec<String> {
        self.inst
            .jobs
            .iter()
            .map(|j| match j.due {
                Some(due) => format!("{}@{} due {due}", j.kind.handler_type(), j.activity_id),
                None => format!("{}@{}", j.kind.handler_type(), j.activity_id),
            })
            .collect()
    }

    pub fn job_at(&self, activity: &str, kind: JobKind) -> ProcessJob {
        let j = self.inst.jobs.iter().find(|j| j.activity_id == activity && j.kind == kind);
        j.unwrap_or_else(|| panic!("no {kind:?} job at {activity}: {:?}", self.jobs())).clone()
    }

    /// Every activity started so far, in start order (closed and open history rows).
    pub fn trace(&self) -> Vec<String> {
        let mut all: Vec<&ActivityRecord> = self.history.iter().chain(&self.inst.activities).collect();
        all.sort_by_key(|a| a.seq);
        all.into_iter().map(|a| a.activity_id.clone()).collect()
    }

    /// The closed history rows of `activity`, as their delete reasons (`None`: completed).
    pub fn ends_of(&self, activity: &str) -> Vec<Option<String>> {
        self.history.iter().filter(|a| a.activity_id == activity).map(|a| a.delete_reason.clone()).collect()
    }

    /// An instance variable.
    pub fn var(&self, name: &str) -> Option<&Json> {
        self.inst.variable(name)
    }

    /// The variables of each token at `activity` (its own scope), in creation order.
    pub fn locals_at(&self, activity: &str) -> Vec<Map<String, Json>> {
        self.inst
            .executions
            .iter()
            .filter(|e| e.activity.as_deref() == Some(activity) && !e.is_mi_root)
            .map(|e| {
                let mut m = Map::new();
                for v in self.inst.variables.iter().filter(|v| v.in_scope(&e.id)) {
                    m.insert(v.name.clone(), v.value.clone());
                }
                m
            })
            .collect()
    }

    /// The activities (ACT_ID_) of the executions the last command inserted, in order.
    pub fn inserted_executions(&self) -> Vec<String> {
        self.last.changes.executions_inserted.iter().map(|e| e.activity.clone().unwrap_or_else(|| "-".into())).collect()
    }

    pub fn ended(&self) -> bool {
        self.inst.ended.is_some()
    }
}
