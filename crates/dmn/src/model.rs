//! The decisions of one document as kairos runs them: Camunda 7's subset of DMN (decision tables
//! and literal expressions linked by required decisions), with the FEEL texts kept as text.
//!
//! FEEL texts are compiled per evaluation shape (see `compile.rs`) because dsntk's FEEL parser
//! resolves names against the variables in scope: `a - b` is one name when no `a` is known.

use crate::DecisionInfo;

/// One decision: what callers see, what it needs first, and its logic.
#[derive(Debug)]
pub(crate) struct Decision {
    pub info: DecisionInfo,
    /// Indices of the decisions this one requires directly, in document order, without repeats.
    pub required: Vec<usize>,
    /// Every decision to evaluate for this one, required ones first, this one last (Camunda's
    /// `buildDecisionTree`: depth-first, each decision once).
    pub order: Vec<usize>,
    pub logic: Logic,
}

impl Decision {
    /// Every FEEL text of the decision.
    pub fn texts(&self) -> Box<dyn Iterator<Item = &str> + '_> {
        match &self.logic {
            Logic::Literal(literal) => Box::new(std::iter::once(literal.text.as_str())),
            Logic::Table(table) => Box::new(
                table.inputs.iter().map(|input| input.expression.as_str()).chain(
                    table
                        .rules
                        .iter()
                        .flat_map(|rule| rule.input_entries.iter().chain(&rule.output_entries).map(String::as_str)),
                ),
            ),
        }
    }
}

#[derive(Debug)]
pub(crate) enum Logic {
    Table(Table),
    Literal(Literal),
}

/// Camunda 7's hit policies; PRIORITY and OUTPUT ORDER are refused at parse time, as Camunda does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HitPolicy {
    Unique,
    First,
    Any,
    RuleOrder,
    Collect(Option<Aggregator>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Aggregator {
    Sum,
    Min,
    Max,
    Count,
}

impl HitPolicy {
    /// The text Camunda and the DMN XML use: "UNIQUE", "RULE ORDER", "COLLECT SUM" …
    pub fn label(self) -> String {
        match self {
            HitPolicy::Unique => "UNIQUE".into(),
            HitPolicy::First => "FIRST".into(),
            HitPolicy::Any => "ANY".into(),
            HitPolicy::RuleOrder => "RULE ORDER".into(),
            HitPolicy::Collect(None) => "COLLECT".into(),
            HitPolicy::Collect(Some(aggregator)) => format!("COLLECT {}", aggregator.label()),
        }
    }

    /// Whether a required decision's results reach the requiring one as lists (Camunda's
    /// `isDecisionTableWithCollectOrRuleOrderHitPolicy`: COLLECT without aggregator, RULE ORDER).
    pub fn yields_lists(self) -> bool {
        matches!(self, HitPolicy::RuleOrder | HitPolicy::Collect(None))
    }
}

impl Aggregator {
    pub fn label(self) -> &'static str {
        match self {
            Aggregator::Sum => "SUM",
            Aggregator::Min => "MIN",
            Aggregator::Max => "MAX",
            Aggregator::Count => "COUNT",
        }
    }
}

#[derive(Debug)]
pub(crate) struct Table {
    pub hit_policy: HitPolicy,
    pub inputs: Vec<Input>,
    pub outputs: Vec<Output>,
    pub rules: Vec<Rule>,
}

#[derive(Debug)]
pub(crate) struct Input {
    pub id: String,
    /// The input expression's FEEL text; empty gives null (Camunda: an untyped null).
    pub expression: String,
    pub type_ref: Option<String>,
    /// The name the input's value has in its input entries besides `?`
    /// (`camunda:inputVariable`, by default `cellInput`).
    pub variable: String,
}

#[derive(Debug)]
pub(crate) struct Output {
    pub id: String,
    pub name: String,
    pub type_ref: Option<String>,
}

#[derive(Debug)]
pub(crate) struct Rule {
    pub id: String,
    pub line: u32,
    /// Unary tests, one per input; empty text (or `-`) matches anything.
    pub input_entries: Vec<String>,
    /// FEEL expressions, one per output; an empty one leaves its output out of the rule's result.
    pub output_entries: Vec<String>,
}

#[derive(Debug)]
pub(crate) struct Literal {
    pub text: String,
    pub variable: String,
    pub type_ref: Option<String>,
}
