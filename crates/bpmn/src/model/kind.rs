//! What each kind of flow node carries: the part of the model the engine
//! matches on to decide what "arriving at this node" does.

use std::fmt::Display;

use kairos_time::{IsoDuration, RepeatCycle, Timestamp};
use serde::{Serialize, Serializer};

use super::NodeIdx;

/// The behaviour of a flow node.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum NodeKind {
    /// `startEvent`.
    StartEvent(StartEvent),
    /// `endEvent`.
    EndEvent(EndEvent),
    /// `userTask`: waits for a person (ACT_RU_TASK).
    UserTask(UserTask),
    /// `serviceTask`, and `sendTask` / `businessRuleTask` naming a handler or topic.
    ServiceTask(ServiceTask),
    /// `scriptTask`: runs its script inside the command (SPEC P6's sandboxed JavaScript).
    ScriptTask(ScriptTask),
    /// `receiveTask`: waits for a message, or for an explicit trigger.
    ReceiveTask(ReceiveTask),
    /// `manualTask` and plain `task`: nothing to run, the token passes through.
    PassThrough,
    /// `exclusiveGateway`: the first outgoing flow whose condition holds, else the default.
    ExclusiveGateway,
    /// `parallelGateway`: fork to all outgoing flows; join waits for all incoming.
    ParallelGateway,
    /// `inclusiveGateway`: every flow whose condition holds (else the default);
    /// join waits for the tokens that can still arrive.
    InclusiveGateway,
    /// `complexGateway`: splits as an inclusive gateway; a join fires when its activation
    /// condition holds, then absorbs the tokens still on their way (BPMN 2.0 §13.4.5).
    ComplexGateway(ComplexGateway),
    /// `eventBasedGateway`: waits for the first of the catch events (or
    /// receive tasks) its flows lead to.
    EventBasedGateway,
    /// `subProcess`: an embedded scope, or an event sub-process.
    SubProcess(SubProcess),
    /// `callActivity`: starts another process and waits for it (SUPER_EXEC_).
    CallActivity(CallActivity),
    /// `boundaryEvent` attached to an activity.
    BoundaryEvent(BoundaryEvent),
    /// `intermediateCatchEvent`: waits for a timer, message or signal.
    IntermediateCatchEvent(CatchEvent),
    /// `intermediateThrowEvent`: passes through, broadcasting a signal if it has one.
    IntermediateThrowEvent(ThrowEvent),
}

impl NodeKind {
    /// True for the activities (things boundary events attach to and
    /// conditional flows may leave): tasks, sub-processes and call activities.
    pub fn is_activity(&self) -> bool {
        matches!(
            self,
            NodeKind::UserTask(_)
                | NodeKind::ServiceTask(_)
                | NodeKind::ScriptTask(_)
                | NodeKind::ReceiveTask(_)
                | NodeKind::PassThrough
                | NodeKind::SubProcess(_)
                | NodeKind::CallActivity(_)
        )
    }

    /// True for the gateways.
    pub fn is_gateway(&self) -> bool {
        matches!(
            self,
            NodeKind::ExclusiveGateway
                | NodeKind::ParallelGateway
                | NodeKind::InclusiveGateway
                | NodeKind::ComplexGateway(_)
                | NodeKind::EventBasedGateway
        )
    }

    /// True for the gateways whose join waits for several tokens (parallel, inclusive and
    /// complex); an exclusive gateway passes each token on.
    pub fn is_join(&self) -> bool {
        matches!(self, NodeKind::ParallelGateway | NodeKind::InclusiveGateway | NodeKind::ComplexGateway(_))
    }

    /// The trigger the node waits for, when it is an event.
    pub fn trigger(&self) -> Option<&EventTrigger> {
        match self {
            NodeKind::StartEvent(s) => Some(&s.trigger),
            NodeKind::BoundaryEvent(b) => Some(&b.trigger),
            NodeKind::IntermediateCatchEvent(c) => Some(&c.trigger),
            _ => None,
        }
    }
}

/// What an event waits for.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum EventTrigger {
    /// No event definition: a plain start.
    None,
    Timer(Timer),
    Message(MessageRef),
    Signal(SignalRef),
    /// Only on boundary events and event sub-process starts.
    Error(ErrorRef),
    /// Only on boundary events of embedded sub-processes, and event
    /// sub-process starts.
    Escalation(EscalationRef),
    /// `cancelEventDefinition`: only on a boundary event of a transaction (always
    /// interrupting), taken once its cancel end event's compensation finished.
    Cancel,
    /// A `conditionalEventDefinition` (intermediate catch, boundary, event
    /// sub-process start): fires when its condition is true, checked when the
    /// wait begins and after every command that changed variables.
    Conditional(Conditional),
    /// Only on intermediate catch events: a `linkEventDefinition` by name, the
    /// place a throwing link event of the same scope and name continues at.
    /// Nothing is awaited: the token passes through.
    Link(String),
    /// A `compensateEventDefinition`: on a boundary event, it marks the activity's
    /// compensation handler (the `isForCompensation` activity its association points to); on
    /// the start event of an event sub-process inside an embedded sub-process, that event
    /// sub-process compensates the sub-process instead of its inner handlers. Nothing is
    /// awaited: a compensation throw starts them.
    Compensate,
}

/// A resolved `messageRef`: correlation uses `name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct MessageRef {
    pub id: String,
    pub name: String,
}

/// A resolved `signalRef`: broadcasts and subscriptions use `name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SignalRef {
    pub id: String,
    pub name: String,
}

/// A resolved `errorRef`. On a catching event `None` means "any error".
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ErrorRef {
    /// Id of the `<error>` declaration.
    pub id: Option<String>,
    /// The error code thrown or caught (`errorCode`, else the error's id).
    pub code: Option<String>,
    /// Catching only: `camunda:errorCodeVariable`, the variable the caught
    /// code is stored in (so a catch-all handler can tell errors apart).
    pub code_variable: Option<String>,
    /// Catching only: `camunda:errorMessageVariable`, set to the error's
    /// message (null: kairos's BPMN errors carry a code only).
    pub message_variable: Option<String>,
}

/// A `timerEventDefinition`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Timer {
    /// Which of `timeDate`, `timeDuration`, `timeCycle` was given.
    pub kind: TimerKind,
    /// The text as written (trimmed): what `REPEAT_` / the job config stores.
    pub text: String,
    /// The text, classified and, when literal, parsed.
    pub value: TimerValue,
}

/// The three BPMN timer forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum TimerKind {
    Date,
    Duration,
    Cycle,
}

/// A timer value. Literal values were validated at parse time, so a typo
/// is refused at deployment instead of failing at 3 a.m. when the timer is
/// created; expressions are only known when the instance reaches the timer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum TimerValue {
    /// `${…}` / `#{…}`: evaluated against the instance's variables.
    Expression(String),
    /// `timeDate`: an RFC 3339 instant with an offset.
    Date(#[serde(serialize_with = "display")] Timestamp),
    /// `timeDuration`: an ISO 8601 duration such as `PT48H`.
    Duration(#[serde(serialize_with = "display")] IsoDuration),
    /// `timeCycle` as an ISO 8601 repeating interval (`R3/PT5M`).
    Cycle(#[serde(serialize_with = "display")] RepeatCycle),
    /// `timeCycle` that looks like a Quartz cron expression (5 to 7 fields);
    /// kept as text and checked by the cron parser when it exists.
    Cron(String),
}

/// `startEvent` details.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct StartEvent {
    pub trigger: EventTrigger,
    /// `isInterrupting` of an event sub-process start (default true).
    pub interrupting: bool,
    /// `*:initiator`: variable that receives the starting user's id.
    pub initiator: Option<String>,
    /// `*:formKey`.
    pub form_key: Option<String>,
}

/// `endEvent` details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum EndEvent {
    /// Ends this path; the scope ends when no path is left.
    None,
    /// `terminateEventDefinition`: ends every path of the enclosing scope.
    Terminate,
    /// `errorEventDefinition`: throws the error to the nearest catching boundary
    /// or event sub-process.
    Error(ErrorRef),
    /// `signalEventDefinition`: broadcasts the signal, then ends the path.
    Signal(SignalRef),
    /// `escalationEventDefinition`: escalates to the nearest catching boundary
    /// event or event sub-process (if any), then ends the path.
    Escalation(EscalationRef),
    /// `compensateEventDefinition`: compensates, then ends the path.
    Compensate(Compensation),
    /// `cancelEventDefinition`, only directly inside a transaction: its other paths are
    /// cancelled, what it completed is compensated, and it leaves by its cancel boundary event.
    Cancel,
}

/// `userTask` details (SPEC P5). Lists come from comma lists in the vendor
/// attributes or from `potentialOwner`; values may be expressions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[non_exhaustive]
pub struct UserTask {
    pub assignee: Option<String>,
    pub candidate_users: Vec<String>,
    pub candidate_groups: Vec<String>,
    pub form_key: Option<String>,
    /// `*:dueDate`: an instant, a duration or an expression, as written.
    pub due_date: Option<String>,
    /// `*:priority` as written (a number or an expression).
    pub priority: Option<String>,
    /// The task's form fields: Camunda's `camunda:formData/camunda:formField`, Flowable's and
    /// Activiti's `formProperty`. Descriptive: the engine does not check a completion against
    /// them; a console draws its form from them.
    pub form_fields: Vec<FormField>,
}

/// One field of a user task's form, as the modelers write it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct FormField {
    /// The variable the field reads and writes.
    pub id: String,
    /// Camunda's `label`, Flowable's `name`.
    pub label: Option<String>,
    /// `string`, `long`, `double`, `boolean`, `date`, `enum` … as written (`string` if absent).
    #[serde(rename = "type")]
    pub field_type: String,
    /// Camunda's `defaultValue`, Flowable's `default`, as written.
    pub default_value: Option<String>,
    /// Camunda's `required` constraint, Flowable's `required="true"`.
    pub required: bool,
    /// Flowable's `readable` / `writable` (both default true); Camunda's `readonly` constraint.
    pub readable: bool,
    pub writable: bool,
    /// An `enum` field's choices: (id, name).
    pub values: Vec<(String, Option<String>)>,
    /// Flowable's `datePattern` of a `date` field.
    pub date_pattern: Option<String>,
}

/// `serviceTask` details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ServiceTask {
    pub implementation: Implementation,
    /// `*:resultVariable`: where the handler's result is stored.
    pub result_variable: Option<String>,
    /// `*:field` injections, passed to the handler as configuration.
    pub fields: Vec<Field>,
    /// The arguments of a bean method call named as the handler (`${svc.post(order, 2)}`:
    /// `${order}` and `${2}`), evaluated when the task runs and passed to the handler as its
    /// input `arguments`.
    pub arguments: Vec<String>,
}

/// A script the model carries: a `scriptTask`'s, a script condition's (`language` on a
/// `conditionExpression`) or a `camunda:script` parameter's. Which formats run is the engine's
/// choice (the parser's script checker); the model keeps what was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Script {
    /// `scriptFormat` / `language` as written (`javascript`, `groovy` …).
    pub format: String,
    /// The script text.
    pub source: String,
}

impl Script {
    pub fn new(format: impl Into<String>, source: impl Into<String>) -> Script {
        Script { format: format.into(), source: source.into() }
    }
}

/// An execution or task listener (`*:executionListener`, `*:taskListener`): code run when its
/// element reaches `event`, inside the command, before the token goes on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Listener {
    pub event: ListenerEvent,
    pub action: ListenerAction,
    /// `*:field` injections, passed to a handler as configuration.
    pub fields: Vec<Field>,
    /// The line of the listener element.
    pub line: u32,
}

/// When a listener runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ListenerEvent {
    /// An activity, event, gateway or the process starts (after its input mappings).
    Start,
    /// It ends (before its output mappings).
    End,
    /// A sequence flow is taken.
    Take,
    /// A user task is created (after its assignee and candidates are set).
    Create,
    /// A user task's assignee changes.
    Assignment,
    /// A property of an open user task changed (its assignee, owner, priority, due date, name,
    /// description, candidates) or a task-local variable was set; before `assignment`.
    Update,
    /// A user task is completed (its variables set, before the token goes on).
    Complete,
    /// A user task ends without completion (its activity was cancelled).
    Delete,
}

impl ListenerEvent {
    pub fn as_str(self) -> &'static str {
        match self {
            ListenerEvent::Start => "start",
            ListenerEvent::End => "end",
            ListenerEvent::Take => "take",
            ListenerEvent::Create => "create",
            ListenerEvent::Assignment => "assignment",
            ListenerEvent::Update => "update",
            ListenerEvent::Complete => "complete",
            ListenerEvent::Delete => "delete",
        }
    }
}

/// What a listener runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ListenerAction {
    /// A handler, as a service task names one (`*:class`, `*:delegateExpression`, a bean method
    /// in `*:expression` with its `arguments`).
    Handler { name: String, source: HandlerSource, arguments: Vec<String> },
    /// `*:expression` the expression language evaluates (its value is not kept).
    Expression(String),
    /// A `*:script` child.
    Script(Script),
}

/// `scriptTask` details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ScriptTask {
    pub script: Script,
    /// `*:resultVariable`: where the script's value (its last expression) is stored.
    pub result_variable: Option<String>,
}

/// Who does the work of a service task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Implementation {
    /// A handler registered with the engine under `name` (API.md: the value of
    /// `kairos:handler`, of `*:class`, or `NAME` in `${NAME}`).
    Handler { name: String, source: HandlerSource },
    /// An external-worker job on `topic`, fetched and locked over HTTP (SPEC I4).
    External { topic: String },
    /// `*:expression` that is more than a handler's name (`${true}`, `${amount * 2}`):
    /// evaluated by the runtime, its value stored in `resultVariable` if one is named.
    Expression { text: String },
    /// A DMN decision evaluated over the task's variables: a `businessRuleTask` with
    /// `camunda:decisionRef`, or Flowable's `flowable:type="dmn"` service task.
    Decision(DecisionRef),
}

/// Which decision a business rule task evaluates, and where its result goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DecisionRef {
    /// The decision's key (the `id` of a DMN `decision`), or a `${…}` expression giving it.
    pub key: String,
    /// Which deployed version: `camunda:decisionRefBinding` (Flowable: `sameDeployment`).
    pub binding: DecisionBinding,
    /// How the result is stored (`camunda:mapDecisionResult`, or Flowable's way).
    pub mapping: DecisionMapping,
}

/// `camunda:decisionRefBinding`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DecisionBinding {
    /// The latest deployed version (the default).
    Latest,
    /// The version deployed with the process definition.
    Deployment,
    /// `camunda:decisionRefVersion`: a version number, or an expression giving one.
    Version(String),
    /// `camunda:decisionRefVersionTag`: the latest version with this tag.
    VersionTag(String),
}

/// How a decision's result (a list of rule results, each output name → value) is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DecisionMapping {
    /// Camunda's `resultList` (the default): the whole list, in `resultVariable`.
    ResultList,
    /// `singleEntry`: the one output of the one matched rule (null when none matched).
    SingleEntry,
    /// `singleResult`: the one matched rule's outputs as a map (null when none matched).
    SingleResult,
    /// `collectEntries`: the one output of every matched rule, as a list.
    CollectEntries,
    /// Flowable's decision task: one matched rule's outputs become variables; several are a
    /// list stored under the decision's key. `throw_on_no_hits`: no match fails the task.
    Flowable { throw_on_no_hits: bool },
}

/// Which attribute named a handler; kept so that an "unknown handler" error
/// can say which attribute to fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum HandlerSource {
    KairosHandler,
    Class,
    DelegateExpression,
    Expression,
    /// A bean method call in `*:expression` / `*:delegateExpression` (`${svc.post(id)}`):
    /// the handler's name is `svc.post`, its arguments are the service task's `arguments`.
    Method,
    /// `*:type` other than an external worker (`flowable:type="mail"`, `"http"`, `"shell"`):
    /// the type is the handler's name, its fields the handler's configuration.
    Type,
    /// The BPMN `implementation` attribute naming a handler (Activiti 7's connectors).
    Implementation,
}

impl HandlerSource {
    /// The attribute a model names the handler with, as people write it.
    pub fn attribute(self) -> &'static str {
        match self {
            HandlerSource::KairosHandler => "kairos:handler",
            HandlerSource::Class => "class",
            HandlerSource::DelegateExpression => "delegateExpression",
            HandlerSource::Expression | HandlerSource::Method => "expression",
            HandlerSource::Type => "type",
            HandlerSource::Implementation => "implementation",
        }
    }
}

/// One `*:field` injection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Field {
    pub name: String,
    pub value: String,
    /// True when `value` came from `expression` (evaluated per call).
    pub expression: bool,
}

/// `receiveTask` details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ReceiveTask {
    /// The message it waits for; `None` waits for an explicit trigger.
    pub message: Option<MessageRef>,
}

/// `subProcess` details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SubProcess {
    /// `triggeredByEvent="true"`: an event sub-process, started by its start
    /// event's trigger while the enclosing scope is active, never by a flow.
    pub triggered_by_event: bool,
    /// A `transaction` (BPMN 2.0 §10.3.2): a sub-process whose cancel end event cancels
    /// its work, compensates what it completed, then leaves by its cancel boundary event.
    pub transaction: bool,
}

/// `callActivity` details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CallActivity {
    /// `calledElement`: the key of the process to start (may be an expression).
    pub called_element: String,
    /// `*:in` mappings, applied when the called instance starts.
    pub inputs: Vec<VariableMapping>,
    /// `*:out` mappings, applied when it ends.
    pub outputs: Vec<VariableMapping>,
    /// `*:in businessKey="…"`: expression for the called instance's business key.
    pub business_key: Option<String>,
    /// `flowable:inheritBusinessKey="true"`: reuse the caller's business key.
    pub inherit_business_key: bool,
}

/// One `*:in` / `*:out` mapping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum VariableMapping {
    /// `variables="all"`: copy every variable.
    All { local: bool },
    /// `source="a" target="b"`.
    Variable { source: String, target: String, local: bool },
    /// `sourceExpression="${…}" target="b"`.
    Expression { expression: String, target: String, local: bool },
}

/// `boundaryEvent` details.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct BoundaryEvent {
    /// The activity it is attached to (same scope).
    pub attached_to: NodeIdx,
    /// `cancelActivity` (default true): interrupting or not. Error boundary
    /// events are always interrupting.
    pub cancel_activity: bool,
    /// Timer, error, message or signal.
    pub trigger: EventTrigger,
}

/// `intermediateCatchEvent` details: timer, message or signal.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct CatchEvent {
    pub trigger: EventTrigger,
}

/// `intermediateThrowEvent` details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ThrowEvent {
    /// The signal broadcast; `None` for a plain (none) throw event.
    pub signal: Option<SignalRef>,
    /// A throwing link event: where the token continues instead of
    /// following a sequence flow.
    pub link: Option<Link>,
    /// An escalation raised before the token passes on.
    pub escalation: Option<EscalationRef>,
    /// A compensation thrown: the token passes on once its handlers finished.
    pub compensate: Option<Compensation>,
}

/// A throwing `compensateEventDefinition` (BPMN 2.0 §10.5.5, §10.7): which completed
/// activities of the throw's scope are compensated. Their handlers run one after the other,
/// the last completed first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Compensation {
    /// `activityRef`: that activity alone (each of its completed executions); `None`: every
    /// completed activity of the scope that has a compensation handler, and every completed
    /// embedded sub-process holding such activities. The scope is the throw's own, or, for a
    /// throw inside an event sub-process, the scope that event sub-process sits in.
    pub activity: Option<NodeIdx>,
    /// `waitForCompletion` (default true): the throw goes on once the handlers finished; when
    /// false it goes on at once, and the handlers run beside it (their scope completes only
    /// after them, as after any token of it).
    pub wait_for_completion: bool,
}

/// A conditional event's condition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Conditional {
    /// The `${…}` condition (a script's source when `script` is set).
    pub condition: String,
    /// A JavaScript condition (`<condition language="javascript">`), run in the engine's
    /// sandbox instead of the expression; its value must be a boolean.
    pub script: Option<crate::Script>,
    /// `camunda:variableName`: only a change of this variable makes it check again.
    pub variable_name: Option<String>,
}

/// A resolved `escalationRef` (BPMN 2.0 §10.5.3). Unlike an error, an
/// escalation nobody catches is no failure: the thrower carries on. On a
/// catching event `code: None` catches every escalation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct EscalationRef {
    /// Id of the `<escalation>` declaration.
    pub id: Option<String>,
    /// `escalationCode` (an undeclared `escalationRef` is the code itself).
    pub code: Option<String>,
}

/// A throwing `linkEventDefinition`, resolved to the one catching link event
/// of the same scope with the same name (a "go to" drawn without a long
/// sequence flow; both ends must be in one scope, BPMN 2.0 §10.5.6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Link {
    pub name: String,
    /// The catching link event.
    pub target: NodeIdx,
}

/// `camunda:inputOutput` of an activity (Camunda Modeler's "Inputs" and
/// "Outputs"). Inputs are evaluated in order when the activity starts and
/// become variables local to it (later inputs see earlier ones); outputs are
/// evaluated when it completes, seeing those locals, and set in the enclosing
/// scope; then the inputs are gone. An interrupted activity maps no outputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[non_exhaustive]
pub struct IoMapping {
    pub inputs: Vec<IoParameter>,
    pub outputs: Vec<IoParameter>,
}

/// One `camunda:inputParameter` / `camunda:outputParameter`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct IoParameter {
    /// The variable it sets.
    pub name: String,
    pub value: IoValue,
}

/// The value of a parameter, as Camunda writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum IoValue {
    /// No content: null.
    Null,
    /// Text: a `${…}` expression (a lone one keeps its value's type) or a string.
    Text(String),
    /// `camunda:list` of values.
    List(Vec<IoValue>),
    /// `camunda:map` of `camunda:entry key="…"` values, in document order.
    Map(Vec<(String, IoValue)>),
    /// `camunda:script`: the script's value.
    Script(Script),
}

/// `multiInstanceLoopCharacteristics`: how often an activity runs and how.
///
/// Strings are kept as written: `collection` is an expression or a variable
/// name (Activiti accepts both), `cardinality` an integer or an expression.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct MultiInstance {
    /// `isSequential`: one instance after another instead of all at once.
    pub sequential: bool,
    /// `*:collection` or `loopDataInputRef`.
    pub collection: Option<String>,
    /// `*:elementVariable` or `inputDataItem/@name`.
    pub element_variable: Option<String>,
    /// `loopCardinality`.
    pub cardinality: Option<String>,
    /// `completionCondition`, evaluated after each instance completes.
    pub completion_condition: Option<String>,
}

/// `complexGateway` (BPMN 2.0 §13.4.5). Neither Camunda 7 nor Flowable runs it.
///
/// As a split it takes every outgoing flow whose condition holds (else its default flow),
/// as an inclusive gateway does. As a join it waits for tokens until `activation` holds;
/// the expression sees `activationCount`, the number of tokens waiting. Then one token goes
/// on, and the tokens of the scope still able to arrive are absorbed when they do (the
/// gateway "waits for reset"); once none can, the next arrival starts over. A join without
/// an activation condition waits as an inclusive join does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ComplexGateway {
    /// `activationCondition`: an expression, such as `${activationCount >= 2}`.
    pub activation: Option<String>,
}

/// `standardLoopCharacteristics`: run the activity again while a condition holds
/// (BPMN 2.0 §10.2.8, a do-while or, with `testBefore`, a while loop).
///
/// Camunda 7 and Flowable parse the element and ignore it, so a model that relies on
/// it runs once there; kairos runs the loop as the standard says. The local variable
/// `loopCounter` counts the runs so far (BPMN's `loopCounter` attribute), 0 before the
/// first, and the condition sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StandardLoop {
    /// `loopCondition`: an expression; the loop goes on while it holds.
    pub condition: Option<String>,
    /// `loopMaximum`: the most runs; `None` for no bound but the condition.
    pub maximum: Option<u32>,
    /// `testBefore`: check the condition before each run (a while loop) rather than
    /// after it (a do-while loop, the default).
    pub test_before: bool,
}

/// Serializes a value through its `Display` (the kairos-time types print
/// their canonical text and have no serde support of their own).
pub(crate) fn display<T: Display, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(value)
}
