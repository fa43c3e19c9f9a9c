//! Reading a DMN document into [`Decision`]s: the guards before parsing, the DMN versions
//! accepted, and Camunda 7's subset of elements.
//!
//! DMN 1.1 (Camunda Modeler < 4), 1.2 and 1.3 (Modeler 4+), 1.4 and 1.5 are read alike: the parts
//! Camunda 7 runs (decisions, decision tables, literal expressions, required decisions) have the
//! same shape in all of them, so nothing is rewritten; only the namespace tells the version.
//! Everything else in the document (DMNDI, `biodi:` diagram data, `inputData`, item definitions,
//! knowledge sources, text annotations, extension elements, foreign attributes such as
//! `camunda:inputVariable` or `modeler:executionPlatform`) is skipped, as Camunda skips it.

use crate::error::DmnError;
use crate::model::{Aggregator, Decision, HitPolicy, Input, Literal, Logic, Output, Rule, Table};
use crate::{DecisionInfo, MAX_DECISIONS, MAX_DOCUMENT_BYTES, MAX_RULES};
use roxmltree::{Document, Node, ParsingOptions};
use std::collections::HashMap;

/// DMN model namespaces by version, as the `definitions` element declares them.
const DMN_NAMESPACES: [(&str, &str); 5] = [
    ("http://www.omg.org/spec/DMN/20151101/dmn.xsd", "1.1"),
    ("http://www.omg.org/spec/DMN/20180521/MODEL/", "1.2"),
    ("https://www.omg.org/spec/DMN/20191111/MODEL/", "1.3"),
    ("https://www.omg.org/spec/DMN/20211108/MODEL/", "1.4"),
    ("https://www.omg.org/spec/DMN/20230324/MODEL/", "1.5"),
];

/// Camunda's extension namespace (and Operaton's, its fork), for `versionTag`,
/// `historyTimeToLive` and `inputVariable`.
const EXTENSION_NAMESPACES: [&str; 2] = ["http://camunda.org/schema/1.0/dmn", "http://operaton.org/schema/1.0/dmn"];

/// Decision logic Camunda 7 cannot run; named in the refusal.
const UNSUPPORTED_LOGIC: [&str; 10] = [
    "context",
    "invocation",
    "relation",
    "list",
    "functionDefinition",
    "conditional",
    "for",
    "every",
    "some",
    "filter",
];

/// XML elements at most (roxmltree's `nodes_limit`): a 4 MiB document of tiny elements stays
/// under it; it bounds memory whatever the document holds.
const MAX_XML_NODES: u32 = 2_000_000;

/// What `definitions` says about itself, and its decisions.
pub(crate) struct ReadModel {
    pub namespace: String,
    pub name: Option<String>,
    pub id: Option<String>,
    pub decisions: Vec<Decision>,
}

pub(crate) fn read(xml: &str) -> Result<ReadModel, DmnError> {
    if xml.len() > MAX_DOCUMENT_BYTES {
        return Err(DmnError::TooLarge { size: xml.len(), limit: MAX_DOCUMENT_BYTES });
    }
    let lines = Lines::new(xml);
    if let Some(at) = xml.find("<!DOCTYPE") {
        return Err(DmnError::parse(
            Some(lines.at(at)),
            "a DTD (<!DOCTYPE …>) is not allowed in a DMN document: entities are refused",
        ));
    }
    let options = ParsingOptions { allow_dtd: false, nodes_limit: MAX_XML_NODES, ..ParsingOptions::default() };
    let document = Document::parse_with_options(xml, options).map_err(|error| {
        let pos = error.pos();
        DmnError::parse(Some(pos.row), format!("the document is not well-formed XML: {error}"))
    })?;
    Reader { lines, dmn: "" }.definitions(&document)
}

/// Byte offsets of line starts, so a node's line costs a binary search (roxmltree's
/// `text_pos_at` scans from the start each time).
struct Lines(Vec<usize>);

impl Lines {
    fn new(text: &str) -> Self {
        let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(at, _)| at + 1)).collect();
        Lines(starts)
    }

    fn at(&self, offset: usize) -> u32 {
        let line = match self.0.binary_search(&offset) {
            Ok(index) => index + 1,
            Err(index) => index,
        };
        u32::try_from(line).unwrap_or(u32::MAX)
    }
}

struct Reader {
    lines: Lines,
    /// The DMN namespace of this document.
    dmn: &'static str,
}

impl Reader {
    fn line(&self, node: Node) -> u32 {
        self.lines.at(node.range().start)
    }

    fn refuse(&self, node: Node, message: impl Into<String>) -> DmnError {
        DmnError::parse(Some(self.line(node)), message)
    }

    fn definitions(mut self, document: &Document) -> Result<ReadModel, DmnError> {
        let root = document.root_element();
        let namespace = root.tag_name().namespace().unwrap_or("");
        let Some((dmn, _)) = DMN_NAMESPACES.iter().find(|(uri, _)| *uri == namespace) else {
            let what = if root.tag_name().name() == "definitions" {
                format!("its namespace is '{namespace}'")
            } else {
                format!("its root element is '{}'", root.tag_name().name())
            };
            return Err(self.refuse(
                root,
                format!(
                    "not a DMN model kairos reads: {what}; expected <definitions> in the namespace of DMN 1.1 ({}), 1.2, 1.3 ({}), 1.4 or 1.5",
                    DMN_NAMESPACES[0].0, DMN_NAMESPACES[2].0
                ),
            ));
        };
        self.dmn = dmn;
        if root.tag_name().name() != "definitions" {
            return Err(
                self.refuse(root, format!("the root element is '{}', not 'definitions'", root.tag_name().name()))
            );
        }
        if let Some(language) = root.attribute("expressionLanguage") {
            check_language(language)
                .map_err(|why| self.refuse(root, format!("the definitions' expressionLanguage: {why}")))?;
        }
        let mut decisions = Vec::new();
        for node in self.children(root, "decision") {
            if decisions.len() == MAX_DECISIONS {
                return Err(self.refuse(node, format!("more than {MAX_DECISIONS} decisions in one document")));
            }
            decisions.push(self.decision(node)?);
        }
        if decisions.is_empty() {
            return Err(self.refuse(root, "the document has no decision"));
        }
        let hrefs: Vec<Vec<(String, u32)>> =
            self.children(root, "decision").map(|node| self.required_hrefs(node)).collect();
        link_requirements(&mut decisions, hrefs)?;
        Ok(ReadModel {
            namespace: root.attribute("namespace").unwrap_or("").to_string(),
            name: root.attribute("name").map(str::to_string),
            id: root.attribute("id").map(str::to_string),
            decisions,
        })
    }

    /// Child elements in the DMN namespace with this local name.
    fn children<'n>(&self, node: Node<'n, 'n>, name: &'static str) -> impl Iterator<Item = Node<'n, 'n>> + use<'n> {
        let dmn = self.dmn;
        node.children().filter(move |child| {
            child.is_element() && child.tag_name().name() == name && child.tag_name().namespace() == Some(dmn)
        })
    }

    fn child<'n>(&self, node: Node<'n, 'n>, name: &'static str) -> Option<Node<'n, 'n>> {
        self.children(node, name).next()
    }

    /// The text of a `<text>` child, "" when there is none.
    fn text(&self, node: Node) -> String {
        self.child(node, "text")
            .map(|text| text.children().filter_map(|part| part.text()).collect::<String>())
            .unwrap_or_default()
    }

    fn decision(&self, node: Node) -> Result<Decision, DmnError> {
        let line = self.line(node);
        let Some(id) = node.attribute("id").filter(|id| !id.trim().is_empty()) else {
            return Err(self.refuse(node, "a decision has no id (a decision is called by its id)"));
        };
        let id = id.to_string();
        let name = node.attribute("name").map(str::to_string);
        if let Some(requirement) = self.child(node, "knowledgeRequirement") {
            return Err(self.refuse(
                requirement,
                format!("decision '{id}' requires a business knowledge model: BKMs are not supported (Camunda 7 runs decision tables and literal expressions only)"),
            ));
        }
        let logic = if let Some(table) = self.child(node, "decisionTable") {
            Logic::Table(self.table(&id, table)?)
        } else if let Some(literal) = self.child(node, "literalExpression") {
            Logic::Literal(self.literal(&id, name.as_deref(), node, literal)?)
        } else if let Some(other) =
            node.children().find(|child| child.is_element() && UNSUPPORTED_LOGIC.contains(&child.tag_name().name()))
        {
            return Err(self.refuse(
                other,
                format!(
                    "decision '{id}' is a <{}>: only decision tables and literal expressions are supported, as in Camunda 7",
                    other.tag_name().name()
                ),
            ));
        } else {
            return Err(
                self.refuse(node, format!("decision '{id}' has neither a decision table nor a literal expression"))
            );
        };
        let (hit_policy, outputs) = match &logic {
            Logic::Table(table) => {
                (Some(table.hit_policy.label()), table.outputs.iter().map(|output| output.name.clone()).collect())
            }
            Logic::Literal(literal) => (None, vec![literal.variable.clone()]),
        };
        let info = DecisionInfo {
            version_tag: self.extension(node, "versionTag").map(str::to_string),
            history_ttl_days: self.history_ttl(&id, node)?,
            id,
            name,
            hit_policy,
            outputs,
            line,
        };
        Ok(Decision { info, required: Vec::new(), order: Vec::new(), logic })
    }

    fn extension<'n>(&self, node: Node<'n, 'n>, name: &str) -> Option<&'n str> {
        EXTENSION_NAMESPACES.iter().find_map(|namespace| node.attribute((*namespace, name)))
    }

    /// `camunda:historyTimeToLive`: days, as a number (`30`) or an ISO period of days (`P180D`),
    /// the two forms Camunda 7 accepts.
    fn history_ttl(&self, id: &str, node: Node) -> Result<Option<u32>, DmnError> {
        let Some(text) = self.extension(node, "historyTimeToLive").map(str::trim).filter(|text| !text.is_empty())
        else {
            return Ok(None);
        };
        let days = text.strip_prefix('P').and_then(|rest| rest.strip_suffix('D')).unwrap_or(text);
        days.parse::<u32>().map(Some).map_err(|_| {
            self.refuse(
                node,
                format!(
                    "decision '{id}': historyTimeToLive '{text}' is neither a number of days nor a period like P30D"
                ),
            )
        })
    }

    fn table(&self, id: &str, node: Node) -> Result<Table, DmnError> {
        let hit_policy = self.hit_policy(id, node)?;
        let mut inputs = Vec::new();
        for input in self.children(node, "input") {
            inputs.push(self.input(id, input)?);
        }
        let mut outputs = Vec::new();
        for output in self.children(node, "output") {
            outputs.push(Output {
                id: output.attribute("id").unwrap_or("").to_string(),
                name: output.attribute("name").unwrap_or("").to_string(),
                type_ref: output.attribute("typeRef").map(str::to_string),
            });
        }
        if outputs.is_empty() {
            return Err(self.refuse(node, format!("decision '{id}': the decision table has no output")));
        }
        if outputs.len() > 1
            && let Some(output) = outputs.iter().find(|output| output.name.is_empty())
        {
            return Err(self.refuse(
                node,
                format!(
                    "decision '{id}': output '{}' has no name, which a table with several outputs needs",
                    output.id
                ),
            ));
        }
        let mut rules = Vec::new();
        for rule in self.children(node, "rule") {
            if rules.len() == MAX_RULES {
                return Err(self.refuse(rule, format!("decision '{id}' has more than {MAX_RULES} rules")));
            }
            rules.push(self.rule(id, rule, inputs.len(), outputs.len())?);
        }
        Ok(Table { hit_policy, inputs, outputs, rules })
    }

    fn hit_policy(&self, id: &str, node: Node) -> Result<HitPolicy, DmnError> {
        let text = node.attribute("hitPolicy").map(str::trim).unwrap_or("UNIQUE");
        Ok(match text {
            "UNIQUE" => HitPolicy::Unique,
            "FIRST" => HitPolicy::First,
            "ANY" => HitPolicy::Any,
            "RULE ORDER" => HitPolicy::RuleOrder,
            "COLLECT" => HitPolicy::Collect(match node.attribute("aggregation").map(str::trim) {
                None | Some("") => None,
                Some("SUM") => Some(Aggregator::Sum),
                Some("MIN") => Some(Aggregator::Min),
                Some("MAX") => Some(Aggregator::Max),
                Some("COUNT") => Some(Aggregator::Count),
                Some(other) => {
                    return Err(self.refuse(
                        node,
                        format!("decision '{id}': aggregation '{other}' is not one of SUM, MIN, MAX, COUNT"),
                    ));
                }
            }),
            "PRIORITY" | "OUTPUT ORDER" => {
                return Err(self.refuse(
                    node,
                    format!("decision '{id}': hit policy {text} is not supported (Camunda 7 does not support it either); use FIRST or RULE ORDER"),
                ));
            }
            other => {
                return Err(self.refuse(
                    node,
                    format!("decision '{id}': '{other}' is not a hit policy (UNIQUE, FIRST, ANY, RULE ORDER, COLLECT)"),
                ));
            }
        })
    }

    fn input(&self, id: &str, node: Node) -> Result<Input, DmnError> {
        let input_id = node.attribute("id").unwrap_or("").to_string();
        let (expression, type_ref) = match self.child(node, "inputExpression") {
            Some(expression) => {
                self.language(id, expression, "input expression")?;
                (self.text(expression), expression.attribute("typeRef").map(str::to_string))
            }
            None => (String::new(), None),
        };
        let variable = self
            .extension(node, "inputVariable")
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .unwrap_or("cellInput")
            .to_string();
        Ok(Input { id: input_id, expression, type_ref, variable })
    }

    fn rule(&self, id: &str, node: Node, inputs: usize, outputs: usize) -> Result<Rule, DmnError> {
        let rule_id = node.attribute("id").unwrap_or("").to_string();
        let mut input_entries = Vec::new();
        for entry in self.children(node, "inputEntry") {
            self.language(id, entry, "input entry")?;
            input_entries.push(self.text(entry));
        }
        let mut output_entries = Vec::new();
        for entry in self.children(node, "outputEntry") {
            self.language(id, entry, "output entry")?;
            output_entries.push(self.text(entry));
        }
        if input_entries.len() != inputs || output_entries.len() != outputs {
            return Err(self.refuse(
                node,
                format!(
                    "decision '{id}', rule '{rule_id}': {} input entries and {} output entries for a table of {inputs} inputs and {outputs} outputs",
                    input_entries.len(),
                    output_entries.len()
                ),
            ));
        }
        Ok(Rule { id: rule_id, line: self.line(node), input_entries, output_entries })
    }

    /// A literal expression decision's result is named by its `<variable>` (Camunda requires
    /// one); without one, by the decision's name as the DMN specification says, else its id.
    fn literal(&self, id: &str, name: Option<&str>, decision: Node, node: Node) -> Result<Literal, DmnError> {
        self.language(id, node, "literal expression")?;
        let variable = self.child(decision, "variable");
        let variable_name = variable
            .and_then(|variable| variable.attribute("name"))
            .or(name)
            .filter(|name| !name.is_empty())
            .unwrap_or(id)
            .to_string();
        let type_ref = variable.and_then(|variable| variable.attribute("typeRef")).or(node.attribute("typeRef"));
        Ok(Literal { text: self.text(node), variable: variable_name, type_ref: type_ref.map(str::to_string) })
    }

    fn language(&self, id: &str, node: Node, what: &str) -> Result<(), DmnError> {
        match node.attribute("expressionLanguage") {
            Some(language) => {
                check_language(language).map_err(|why| self.refuse(node, format!("decision '{id}', {what}: {why}")))
            }
            None => Ok(()),
        }
    }

    /// `#id` of each `informationRequirement/requiredDecision`, with the line.
    fn required_hrefs(&self, node: Node) -> Vec<(String, u32)> {
        self.children(node, "informationRequirement")
            .filter_map(|requirement| self.child(requirement, "requiredDecision"))
            .map(|required| (required.attribute("href").unwrap_or("").to_string(), self.line(required)))
            .collect()
    }
}

/// FEEL, in any of its spellings (Camunda's `feel`, the OMG FEEL URIs of DMN 1.1–1.5), is the only
/// language: kairos has no JUEL, JavaScript or Groovy inside DMN.
fn check_language(language: &str) -> Result<(), String> {
    let trimmed = language.trim();
    if trimmed.is_empty() || trimmed.eq_ignore_ascii_case("feel") || trimmed.contains("FEEL") {
        Ok(())
    } else {
        Err(format!(
            "expression language '{trimmed}' is not supported, only FEEL (kairos has no JUEL or scripts in DMN)"
        ))
    }
}

/// Resolves `requiredDecision href="#id"` to indices, refuses unknown ids and cycles, and works
/// out each decision's evaluation order.
fn link_requirements(decisions: &mut [Decision], hrefs: Vec<Vec<(String, u32)>>) -> Result<(), DmnError> {
    let mut by_id = HashMap::new();
    for (index, decision) in decisions.iter().enumerate() {
        if by_id.insert(decision.info.id.clone(), index).is_some() {
            return Err(DmnError::parse(
                Some(decision.info.line),
                format!("two decisions have the id '{}'", decision.info.id),
            ));
        }
    }
    for (index, hrefs) in hrefs.into_iter().enumerate() {
        let mut required = Vec::new();
        for (href, line) in hrefs {
            let decision = &decisions[index].info.id;
            let Some(target) = href.strip_prefix('#') else {
                return Err(DmnError::parse(
                    Some(line),
                    format!(
                        "decision '{decision}' requires '{href}': only decisions of the same document ('#id') are supported"
                    ),
                ));
            };
            let Some(&target) = by_id.get(target) else {
                return Err(DmnError::parse(
                    Some(line),
                    format!("decision '{decision}' requires '{href}', which is no decision of this document"),
                ));
            };
            if !required.contains(&target) {
                required.push(target);
            }
        }
        decisions[index].required = required;
    }
    for index in 0..decisions.len() {
        let order = evaluation_order(decisions, index)?;
        decisions[index].order = order;
    }
    Ok(())
}

/// Camunda's `buildDecisionTree` without recursion: required decisions depth-first, each once,
/// the decision itself last. A cycle (a decision requiring itself, directly or not) is refused.
fn evaluation_order(decisions: &[Decision], root: usize) -> Result<Vec<usize>, DmnError> {
    let mut order = Vec::new();
    let mut done = vec![false; decisions.len()];
    let mut on_path = vec![false; decisions.len()];
    // (decision, index of the next requirement to visit)
    let mut stack = vec![(root, 0usize)];
    on_path[root] = true;
    while let Some(top) = stack.last_mut() {
        let current = top.0;
        if let Some(&required) = decisions[current].required.get(top.1) {
            top.1 += 1;
            if on_path[required] {
                let mut path: Vec<&str> = stack.iter().map(|(index, _)| decisions[*index].info.id.as_str()).collect();
                path.push(&decisions[required].info.id);
                let start = path.iter().position(|id| *id == decisions[required].info.id).unwrap_or(0);
                return Err(DmnError::parse(
                    Some(decisions[current].info.line),
                    format!("required decisions form a cycle: {}", path[start..].join(" -> ")),
                ));
            }
            if !done[required] {
                on_path[required] = true;
                stack.push((required, 0));
            }
        } else {
            stack.pop();
            on_path[current] = false;
            done[current] = true;
            order.push(current);
        }
    }
    Ok(order)
}
