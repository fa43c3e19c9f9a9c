//! BPMN 2.0 XML → a validated process model for the kairos engine (SPEC P2, P4).
//!
//! [`parse`] reads the XML that real modelers write (bpmn.io / Camunda
//! Modeler, Activiti and Flowable designers) and returns [`Definitions`]:
//! every executable process as an arena of [`FlowNode`]s and
//! [`SequenceFlow`]s linked by index, ready to be walked. Or it returns
//! [`ParseErrors`]: every problem in the file, each naming the element id,
//! its tag, and a 1-based line and column.
//!
//! The crate is pure: no I/O, no clock. Deployment (SPEC P1) calls it on the
//! uploaded text; the engine calls it again on the stored text when it loads
//! a definition; both get the same answer.
//!
//! # Hostile input
//! Deployments come over HTTP, so the text is treated as hostile: a DOCTYPE
//! is refused outright (DTD entities are the vehicle of billion-laughs and
//! XXE attacks, and no modeler writes one), only the five predefined entities
//! and character references are decoded, and size, nesting, element count,
//! attribute and text length are capped ([`limits`]). No input panics.
//!
//! # Namespaces
//! Elements match by namespace URI ([`ns::BPMN_MODEL`]), whatever the
//! prefix. Extension attributes and elements are read alike from
//! `activiti:` ([`ns::ACTIVITI`]), `flowable:` ([`ns::FLOWABLE`]),
//! `camunda:` ([`ns::CAMUNDA`]) and `kairos:` ([`ns::KAIROS`]).
//!
//! # Supported elements
//! | element | notes |
//! |---|---|
//! | `startEvent` | none, timer, message, signal, conditional; in an event sub-process also error, escalation and conditional, and `isInterrupting`, and compensate (in an event sub-process of an embedded sub-process); `*:initiator`, `*:formKey` |
//! | `endEvent` | none, terminate, error (`errorRef` → error code; an undeclared `errorRef` is the code), signal, escalation, compensate (`activityRef`); message: a service task when it names a handler or topic, else none |
//! | `userTask` | `*:assignee`, `*:candidateUsers`, `*:candidateGroups` (comma lists), `*:formKey`, `*:dueDate`, `*:priority`; `humanPerformer` / `potentialOwner` |
//! | `serviceTask` | handler from `kairos:handler`, `*:class`, `*:delegateExpression="${name}"`, `*:expression="${name}"`; any other `*:expression` is an expression task (evaluated, the value in `*:resultVariable`); external worker from `camunda:type="external" camunda:topic` or `flowable:type="external-worker" flowable:topic`; `*:resultVariable`, `*:field` |
//! | `sendTask`, `businessRuleTask` | as service tasks, when they name a handler or topic |
//! | `receiveTask` | optional `messageRef` |
//! | `manualTask`, `task` | pass through |
//! | `exclusiveGateway`, `inclusiveGateway` | conditions on outgoing flows, `default` |
//! | `complexGateway` | as an inclusive gateway, and an `activationCondition` (`${…}`) for its join ([`ComplexGateway`]) |
//! | `parallelGateway`, `eventBasedGateway` | targets of an event-based gateway must be catch events or receive tasks |
//! | `subProcess` | embedded (one none start), and `triggeredByEvent="true"` event sub-processes |
//! | `transaction` | an embedded sub-process undone by compensation (`method` `##Compensate`), with cancel end and boundary events |
//! | `callActivity` | `calledElement`; `*:in` / `*:out` (`source`/`target`, `sourceExpression`, `variables="all"`, `businessKey`, `local`); `flowable:inheritBusinessKey`, `*:inheritVariables` |
//! | `boundaryEvent` | timer, error, message, signal, conditional, escalation, cancel (on a transaction), compensate (its `association` names the activity's handler, [`FlowNode::compensation_handler`]); `attachedToRef`, `cancelActivity` |
//! | `intermediateCatchEvent` | timer, message, signal, link (by `name`; no incoming flows), conditional (`${…}` condition, `*:variableName`) |
//! | `intermediateThrowEvent` | none, signal, escalation, link (to the catch of its name in its scope; no outgoing flows), message (as a message end event), compensate (`activityRef` resolved to an activity of the throw's scope; `waitForCompletion`) |
//! | `sequenceFlow` | `conditionExpression` (`${...}`; script languages refused); without an `id` it is given `flow_<source>_<target>` |
//!
//! On activities: `isForCompensation` (a compensation handler: no sequence
//! flows, named by a compensation boundary event's `association`),
//! `camunda:inputOutput` (text, `${…}`, `camunda:list`,
//! `camunda:map`; [`IoMapping`] says when each side is evaluated).
//! On every flow node: `*:async` / `*:asyncBefore`, `*:asyncAfter`,
//! `*:exclusive` (default true), `failedJobRetryTimeCycle` (extension element
//! or attribute, checked with `kairos_time::RetryCycle`). On activities:
//! `multiInstanceLoopCharacteristics` (`isSequential`, `*:collection` or
//! `loopDataInputRef`, `*:elementVariable` or `inputDataItem`,
//! `loopCardinality`, `completionCondition`) or `standardLoopCharacteristics`
//! (`loopCondition`, `loopMaximum`, `testBefore`; [`StandardLoop`]). On processes: `isExecutable`,
//! `*:historyTimeToLive`. Timers: `timeDate` (RFC 3339 instant), `timeDuration`
//! (ISO 8601), `timeCycle` (ISO 8601 repeating interval, or a 5–7 field cron
//! kept as text), or a `${...}` expression; literals are validated now.
//! `message`, `signal` and `error` declarations are resolved by id.
//!
//! Accepted and ignored: collaborations, participants, message flows, lanes,
//! text annotations, associations (but those of compensation boundary events), groups, data objects and stores,
//! documentation, extension elements of other namespaces and descriptive
//! vendor ones (properties, form fields), processes marked
//! `isExecutable="false"` (when another is executable). The diagram is kept
//! as shape bounds and edge waypoints by element id ([`Diagram`]).
//!
//! Refused with "unsupported element …": anything else with execution
//! semantics — `adHocSubProcess`, choreographies, an instantiating
//! event-based gateway,
//! scripts in languages other than JavaScript. `docs/compatibility.md` lists
//! every element and attribute run, refused or ignored, with why.
//!
//! ```
//! let xml = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL">
//!   <process id="hello">
//!     <startEvent id="start"/>
//!     <sequenceFlow id="f1" sourceRef="start" targetRef="end"/>
//!     <endEvent id="end"/>
//!   </process>
//! </definitions>"#;
//! let defs = kairos_bpmn::parse(xml).unwrap();
//! let p = defs.process("hello").unwrap();
//! let start = p.node(p.start_events[0]);
//! let next = p.node(p.flow(start.outgoing[0]).target);
//! assert_eq!(next.id, "end");
//!
//! let err = kairos_bpmn::parse(&xml.replace("targetRef=\"end\"", "targetRef=\"nope\"")).unwrap_err();
//! assert_eq!(err.first().to_string(), "line 4, column 5: sequenceFlow 'f1': targetRef 'nope' does not exist");
//! ```

mod build;
mod error;
pub mod limits;
mod model;
pub mod ns;
mod xml;

pub use error::{MAX_REPORTED_PROBLEMS, ParseError, ParseErrors};
pub use model::*;

/// Checks one expression; `Err` carries why it is invalid.
pub type ExpressionCheck<'a> = &'a dyn Fn(&str) -> Result<(), String>;

/// Checks one script (its format and text); `Err` carries why it cannot run.
pub type ScriptCheck<'a> = &'a dyn Fn(&Script) -> Result<(), String>;

/// Options for [`parse_with`].
#[derive(Default, Clone, Copy)]
#[non_exhaustive]
pub struct ParseOptions<'a> {
    /// Called for every `${…}` / `#{…}` expression in the model (conditions,
    /// completion conditions, collections, timer and assignment expressions):
    /// the hook through which the expression language crate refuses a
    /// malformed expression at deployment rather than when a token reaches it.
    pub expression_check: Option<ExpressionCheck<'a>>,
    /// Called for every script (script tasks, script conditions, `camunda:script`
    /// parameters): the engine refuses a format it does not run, a script that does not
    /// compile, or every script when scripts are switched off. Without one, scripts are kept
    /// as written.
    pub script_check: Option<ScriptCheck<'a>>,
}

impl std::fmt::Debug for ParseOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParseOptions")
            .field("expression_check", &self.expression_check.is_some())
            .field("script_check", &self.script_check.is_some())
            .finish()
    }
}

impl<'a> ParseOptions<'a> {
    /// Sets the expression checker.
    pub fn with_expression_check(mut self, check: ExpressionCheck<'a>) -> Self {
        self.expression_check = Some(check);
        self
    }

    /// Sets the script checker.
    pub fn with_script_check(mut self, check: ScriptCheck<'a>) -> Self {
        self.script_check = Some(check);
        self
    }
}

/// Parses and validates a BPMN 2.0 document.
pub fn parse(xml: &str) -> Result<Definitions, ParseErrors> {
    parse_with(xml, &ParseOptions::default())
}

/// [`parse`], with an expression checker.
pub fn parse_with(xml: &str, options: &ParseOptions<'_>) -> Result<Definitions, ParseErrors> {
    let lines = error::LineIndex::new(xml);
    let root = xml::read(xml, &lines).map_err(ParseErrors::one)?;
    build::build(&root, &lines, options)
}
