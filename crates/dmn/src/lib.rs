//! DMN decisions for kairos: Camunda 7's DMN files parsed and evaluated with Camunda 7's result
//! shape, FEEL evaluated by [dsntk](https://decision-toolkit.org).
//!
//! # Why dsntk, and which part of it
//! dsntk is the maintained Rust DMN engine: FEEL per DMN 1.3–1.5, passing the DMN TCK. kairos uses
//! its FEEL parser and evaluator (`dsntk-feel-parser`, `dsntk-feel-evaluator`) for every
//! expression, and not its decision model layer (`dsntk-model`, `dsntk-model-evaluator`), on
//! which Camunda 7 models do not run unchanged (each point checked against dsntk 0.3.0):
//! - its evaluator gives a decision only the input data the model declares (`inputData` +
//!   `requiredInput`), which Camunda models do not have: Camunda's invoice classification, even
//!   rewritten to DMN 1.3, gives null ("no rules matched") for any invoice;
//! - it passes a required decision's result on under the decision's name (`Invoice
//!   Classification`), Camunda under the output names (`invoiceClassification`): with input data
//!   added, the invoice example's approver table still matches nothing;
//! - it returns one FEEL value per decision, not Camunda's list of rule results, and a broken
//!   hit policy (UNIQUE with two matches) as a null, not an error naming the rules;
//! - its parser reads DMN 1.3–1.5 only, refuses a Camunda-valid empty output entry, and its
//!   table builder indexes a rule's entries unchecked (a short rule panics);
//! - it evaluates `external` Java functions by posting to 127.0.0.1:22023, and business knowledge
//!   models by recursion without limit (a stack overflow aborts the process).
//!
//! So this crate reads the XML itself (roxmltree, which dsntk uses too), runs Camunda's
//! decision-table and DRG semantics (its `DecisionTableEvaluationHandler`, hit policy handlers,
//! `DefaultDmnDecisionContext` and type transformers), and hands dsntk only FEEL texts.
//!
//! # What a Camunda 7 model gets
//! - DMN 1.1 (`http://www.omg.org/spec/DMN/20151101/dmn.xsd`, Camunda Modeler < 4), 1.2, 1.3
//!   (Modeler 4+), 1.4 and 1.5 are read alike, nothing rewritten: the elements Camunda 7 runs have
//!   one shape in all of them. DMNDI, `biodi:` data, `inputData`, item definitions, extension
//!   elements and foreign attributes (`camunda:inputVariable`, `modeler:executionPlatform` …) are
//!   skipped or read, never refused.
//! - Decision tables (hit policies UNIQUE, FIRST, ANY, RULE ORDER, COLLECT with and without SUM,
//!   MIN, MAX, COUNT) and literal expressions, linked by `requiredDecision` in the same document.
//! - FEEL everywhere, as Camunda 7.13+ by default; input entries are unary tests on the input
//!   value, which they also see as `?` and as `camunda:inputVariable` (default `cellInput`).
//! - `typeRef` conversions of Camunda (`string`, `boolean`, `integer`, `long`, `double`, `date`);
//!   a value that does not fit is an [`DmnError::Evaluation`], as Camunda's DMN-01005.
//! - A FEEL expression that fails (an unknown variable, `"a" + 1`) is null, as in the DMN
//!   specification and feel-scala 1.17+ (Camunda 7.20+). A variable the model names but the input
//!   lacks is therefore null; Camunda before 7.20 raised "no variable found" instead.
//!
//! # What is refused (a [`DmnError::Parse`] naming the decision)
//! - `expressionLanguage` other than FEEL (`juel`, `javascript`, `groovy` …) on the definitions or
//!   any expression: kairos has no JUEL or scripts in DMN.
//! - hit policies PRIORITY and OUTPUT ORDER (Camunda 7 refuses them too), other decision logic
//!   (contexts, invocations, relations, BKMs, decision services), `requiredDecision` into another
//!   document, cycles of required decisions, duplicate decision ids.
//! - FEEL function definitions (`function(x) …`, `external`): they allow unbounded recursion, and
//!   dsntk's `external` Java functions make HTTP calls.
//!
//! # Limits against hostile models
//! The document is refused above [`MAX_DOCUMENT_BYTES`] before parsing, with a DTD
//! (`<!DOCTYPE`, so no entities), or above [`MAX_DECISIONS`] decisions or [`MAX_RULES`] rules per
//! table. A FEEL text is refused above 8 KiB or nested deeper than 64 levels, a variable nested
//! deeper than 64 levels: dsntk recurses over syntax trees and values, and a stack overflow aborts
//! the process. A panic in dsntk (one is known: its number's `Display` on an infinity) is caught
//! and returned as an error naming the decision. Bad XML is an error with its line.
//!
//! **Known limit**: dsntk's evaluator has no step or memory limit, and FEEL iteration is not
//! bounded here: `for i in 1..n return …` with a large `n`, nested `for`s, or list functions over
//! large inputs run as long and allocate as much as they take, in the caller's thread. Deploy DMN
//! models from authors you trust with a thread of the engine.

mod compile;
mod error;
mod evaluate;
mod feel;
mod hit_policy;
mod model;
mod read;
mod types;

pub use error::DmnError;
pub use feel::{MAX_FEEL_BYTES, MAX_FEEL_DEPTH, MAX_VALUE_DEPTH};

use compile::Cache;
use model::Decision;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// Documents larger than this are refused before parsing.
pub const MAX_DOCUMENT_BYTES: usize = 4 * 1024 * 1024;
/// Decisions in one document at most.
pub const MAX_DECISIONS: usize = 1_000;
/// Rules in one decision table at most.
pub const MAX_RULES: usize = 10_000;

/// One parsed DMN document, ready to evaluate its decisions. Cheap to clone (shared), and
/// `Send + Sync`: evaluations on several threads share its cache of compiled expressions.
#[derive(Debug, Clone)]
pub struct DecisionModel(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    namespace: String,
    name: Option<String>,
    id: Option<String>,
    infos: Vec<DecisionInfo>,
    decisions: Vec<Decision>,
    caches: Vec<Cache>,
}

/// What a caller (deployment, REST listing, history cleanup) needs to know of a decision without
/// evaluating it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DecisionInfo {
    /// The `id` attribute: what Camunda's `decisionRef` names.
    pub id: String,
    pub name: Option<String>,
    /// `camunda:versionTag`.
    pub version_tag: Option<String>,
    /// `camunda:historyTimeToLive` in days (`30` or `P30D`).
    pub history_ttl_days: Option<u32>,
    /// "UNIQUE", "FIRST", "ANY", "RULE ORDER", "COLLECT", "COLLECT SUM" …; `None` for a literal
    /// expression.
    pub hit_policy: Option<String>,
    /// The names results carry: the table outputs' `name` attributes, or the variable of a literal
    /// expression.
    pub outputs: Vec<String>,
    /// The line of the `<decision>` element.
    pub line: u32,
}

impl DecisionModel {
    /// Reads and checks a DMN document: structure, versions, languages, every FEEL text's syntax
    /// and safety, required decisions. Never panics; a failure says what and where.
    pub fn parse(xml: &str) -> Result<DecisionModel, DmnError> {
        catch_unwind(AssertUnwindSafe(|| parse_checked(xml))).unwrap_or_else(|panic| {
            Err(DmnError::parse(
                None,
                format!("the DMN parser failed on this document (internal error: {})", panic_text(&panic)),
            ))
        })
    }

    /// The decisions in document order.
    pub fn decisions(&self) -> &[DecisionInfo] {
        &self.0.infos
    }

    /// The `namespace` of `<definitions>`.
    pub fn namespace(&self) -> &str {
        &self.0.namespace
    }

    /// The `name` of `<definitions>`.
    pub fn name(&self) -> Option<&str> {
        self.0.name.as_deref()
    }

    /// The `id` of `<definitions>`.
    pub fn id(&self) -> Option<&str> {
        self.0.id.as_deref()
    }

    /// Evaluates the decision with this `id`, after the decisions it requires.
    ///
    /// The result is Camunda 7's `DmnDecisionResult`: a list of rule results, each output name ->
    /// value. A decision table gives one per matching rule (none when no rule matched; at most one
    /// for UNIQUE, FIRST, ANY); COLLECT with an aggregator gives one `{output: aggregate}`; a
    /// literal expression gives one `{variable: value}`.
    pub fn evaluate(
        &self,
        decision_id: &str,
        variables: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<serde_json::Map<String, serde_json::Value>>, DmnError> {
        let inner = &*self.0;
        let Some(root) = inner.decisions.iter().position(|decision| decision.info.id == decision_id) else {
            return Err(DmnError::UnknownDecision(decision_id.to_string()));
        };
        let evaluated =
            catch_unwind(AssertUnwindSafe(|| evaluate::evaluate(&inner.decisions, &inner.caches, root, variables)));
        match evaluated {
            Ok(Ok(results)) => Ok(results),
            Ok(Err(failure)) => Err(DmnError::Evaluation { decision: failure.decision, message: failure.message }),
            Err(panic) => Err(DmnError::evaluation(
                decision_id,
                format!("the FEEL evaluator failed (internal error: {})", panic_text(&panic)),
            )),
        }
    }
}

fn parse_checked(xml: &str) -> Result<DecisionModel, DmnError> {
    let read = read::read(xml)?;
    for decision in &read.decisions {
        compile::compile(decision, &feel::guessed_shape(decision.texts())).map_err(|why| {
            DmnError::parse(
                why.line.or(Some(decision.info.line)),
                format!("decision '{}': {}", decision.info.id, why.message),
            )
        })?;
    }
    let infos = read.decisions.iter().map(|decision| decision.info.clone()).collect();
    let caches = read.decisions.iter().map(|_| Cache::default()).collect();
    Ok(DecisionModel(Arc::new(Inner {
        namespace: read.namespace,
        name: read.name,
        id: read.id,
        infos,
        decisions: read.decisions,
        caches,
    })))
}

pub(crate) fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| text.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}
