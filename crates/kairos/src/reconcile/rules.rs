//! Reconciliation's rule table (seed 002 §29) and the classification of one business record:
//! pure, no I/O and no clock (the pass hands in the database's now).
//!
//! A record is its business state (one of §29's six) and the engine's evidence about it,
//! reduced to a set of [`Evidence`] classes; the first rule of the table whose state and
//! evidence match decides. The table is data ([`default_rules`], or a file's `rules`), each
//! rule with its action: none, wait (with a dwell-time SLA, then an incident), an auto-repair,
//! or an incident. Whatever a table says, [`guard`] keeps auto-repair inside §30's bounds.
//!
//! The classes allow for what §29 warns about: an instance that waits on a message, a timer, an
//! async job or parallel tasks is `active` — "no task" never means "ended"; only a running
//! instance with nothing at all to wait on (or a dead-letter job) is `stuck`.

use jiff::{SignedDuration, Timestamp};
use kairos_store_engine::reconcile::{CommandEvidence, InstanceEvidence, OutboxEvidence};
use serde::{Deserialize, Serialize};

/// §29's business states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum State {
    Draft,
    Submitting,
    Approving,
    Approved,
    Published,
    Canceled,
}

impl State {
    pub const ALL: [State; 6] =
        [State::Draft, State::Submitting, State::Approving, State::Approved, State::Published, State::Canceled];

    pub fn as_str(self) -> &'static str {
        match self {
            State::Draft => "DRAFT",
            State::Submitting => "SUBMITTING",
            State::Approving => "APPROVING",
            State::Approved => "APPROVED",
            State::Published => "PUBLISHED",
            State::Canceled => "CANCELED",
        }
    }
}

/// One class of evidence about a record. A record has exactly one instance class, at most one
/// command class and, when its source declares an outbox aggregate, one outbox class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Evidence {
    /// No binding, no instance in runtime or history.
    NoInstance,
    /// One running instance that waits on something (a task, a job, a subscription).
    Active,
    /// One running instance with nothing to wait on, or with a dead-letter job.
    Stuck,
    /// More than one running instance for the record.
    TwoActive,
    /// The newest instance ended at one of the source's approved end events.
    EndedApproved,
    /// It ended anywhere else (or the source names no approved ends).
    EndedOther,
    /// It was deleted (a delete reason in history).
    Deleted,
    /// A binding names an instance that is in neither runtime nor history: ACT rows removed.
    Dangling,
    /// History says ended but runtime rows remain: ACT tables edited by hand.
    RuntimeDamaged,
    /// A workflow command for the record is PENDING, PROCESSING or RETRY.
    CommandWaiting,
    /// The newest command FAILED.
    CommandFailed,
    /// Every outbox event of the aggregate is PUBLISHED (and there is one).
    OutboxPublished,
    /// Some event is PENDING, PROCESSING, or RETRY and due: on its way.
    OutboxPending,
    /// Some event is RETRY with a retryable error, waiting for its backoff.
    OutboxRetry,
    /// Some event FAILED (or is RETRY for a reason that is not retryable).
    OutboxFailed,
    /// The aggregate has no outbox event at all.
    OutboxNone,
}

/// The repairs an auto-repair may make: a closed set, so no rule can ask for a jump, a forged
/// history row or an edit of ACT tables (§30, §38).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Repair {
    /// Write the business state (and a missing binding) back from a unique, certain instance.
    WriteBack,
    /// Make the aggregate's retryable RETRY events due now.
    OutboxRetry,
}

/// What a rule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Consistent: nothing to do.
    None,
    /// Temporarily consistent: nothing until `sla` has passed since the evidence's own instant
    /// (the command's creation, the instance's start), then an incident.
    Wait,
    /// Repair it (inside §30's bounds) and record before/after.
    Repair,
    /// Hand it to a person, freezing further automatic action on the record.
    Incident,
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rule {
    pub id: String,
    /// The business state it applies to; `None` (`"*"` in a file) for any.
    #[serde(default, with = "any_state")]
    pub state: Option<State>,
    /// Matches when the record has any of these classes.
    pub evidence: Vec<Evidence>,
    pub action: Action,
    /// For `repair`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<Repair>,
    /// For `repair: write-back`: the business state to write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<State>,
    /// For `wait`: ISO 8601 duration.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_duration")]
    pub sla: Option<SignedDuration>,
    /// What the difference means and what to do, for people.
    pub advice: String,
}

mod any_state {
    use super::State;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(s: &Option<State>, ser: S) -> Result<S::Ok, S::Error> {
        ser.serialize_str(s.map_or("*", State::as_str))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<Option<State>, D::Error> {
        let s = String::deserialize(de)?;
        if s == "*" {
            return Ok(None);
        }
        serde_json::from_value(serde_json::Value::String(s.clone())).map(Some).map_err(|_| {
            serde::de::Error::custom(format!(
                "state: {s:?} is not *, DRAFT, SUBMITTING, APPROVING, APPROVED, PUBLISHED or CANCELED"
            ))
        })
    }
}

mod opt_duration {
    use jiff::SignedDuration;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Option<SignedDuration>, ser: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => ser.serialize_str(&d.to_string()),
            None => ser.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<Option<SignedDuration>, D::Error> {
        let s = Option::<String>::deserialize(de)?;
        s.map(|s| {
            // Days count as 24 hours: an SLA is a dwell time, not a calendar date.
            s.parse::<jiff::Span>()
                .and_then(|sp| sp.to_duration(jiff::SpanRelativeTo::days_are_24_hours()))
                .map_err(|e| serde::de::Error::custom(format!("sla: {s:?} is not an ISO 8601 duration: {e}")))
        })
        .transpose()
    }
}

/// Checks a table: ids unique, every repair rule names its repair (and write-back its state),
/// every wait its SLA. The message names the rule.
pub fn check(rules: &[Rule]) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for (i, r) in rules.iter().enumerate() {
        let at = format!("rules[{i}] ({:?})", r.id);
        if r.id.is_empty() || r.id.len() > 64 {
            return Err(format!("{at}.id: must be 1..=64 characters"));
        }
        if !seen.insert(r.id.as_str()) {
            return Err(format!("{at}.id: used twice"));
        }
        if r.evidence.is_empty() {
            return Err(format!("{at}.evidence: name at least one class"));
        }
        match (r.action, r.repair, r.to, r.sla) {
            (Action::Repair, None, _, _) => {
                return Err(format!("{at}.repair: a repair rule names write-back or outbox-retry"));
            }
            (Action::Repair, Some(Repair::WriteBack), None, _) => {
                return Err(format!("{at}.to: a write-back names the business state to write"));
            }
            (Action::Wait, _, _, None) => return Err(format!("{at}.sla: a wait names its SLA")),
            (Action::Wait, _, _, Some(d)) if d.is_negative() || d.is_zero() => {
                return Err(format!("{at}.sla: must be positive"));
            }
            (Action::None | Action::Incident | Action::Wait, Some(_), _, _) => {
                return Err(format!("{at}.repair: only a repair rule names a repair"));
            }
            _ => {}
        }
    }
    Ok(())
}

fn rule(
    id: &str,
    state: Option<State>,
    evidence: &[Evidence],
    action: Action,
    extra: (Option<Repair>, Option<State>, Option<SignedDuration>),
    advice: &str,
) -> Rule {
    Rule {
        id: id.into(),
        state,
        evidence: evidence.to_vec(),
        action,
        repair: extra.0,
        to: extra.1,
        sla: extra.2,
        advice: advice.into(),
    }
}

/// §29's table, in matching order (the forbidden cases first: whatever the state, they go to a
/// person).
pub fn default_rules() -> Vec<Rule> {
    use Action::{Incident, Wait};
    use Evidence::*;
    use State::*;
    const NONE: Action = Action::None;
    const REPAIR: Action = Action::Repair;
    const NO: (Option<Repair>, Option<State>, Option<SignedDuration>) = (Option::None, Option::None, Option::None);
    let wait = |d: SignedDuration| (Option::None, Option::None, Some(d));
    let write_back = |s: State| (Some(Repair::WriteBack), Some(s), Option::None);
    vec![
        rule(
            "two-active-instances",
            Option::None,
            &[TwoActive],
            Incident,
            NO,
            "two running instances for one business lifecycle (§36): find the legitimate one by its approvals and side effects; end the other through the engine's API with a reason — never keep the newest and delete the rest automatically",
        ),
        rule(
            "runtime-damaged",
            Option::None,
            &[RuntimeDamaged],
            Incident,
            NO,
            "history says the instance ended but runtime rows remain: ACT tables were edited by hand (§38); repair through the engine's API or a reviewed migration, never by more UPDATEs",
        ),
        rule(
            "binding-dangling",
            Option::None,
            &[Dangling],
            Incident,
            NO,
            "the binding names an instance that is in neither runtime nor history: ACT rows were removed, or the binding points at another environment (§33)",
        ),
        rule(
            "draft-idle",
            Some(Draft),
            &[NoInstance, EndedOther, Deleted],
            NONE,
            NO,
            "consistent: a draft (or one returned after rejection) has no running instance",
        ),
        rule(
            "draft-with-instance",
            Some(Draft),
            &[Active, Stuck, EndedApproved],
            Incident,
            NO,
            "the process started (or even ended approved) but the business row is still DRAFT (§32): check the submit's requestId/command and the transaction log; a unique instance of a legitimate request is written back by a person; never delete the instance blindly",
        ),
        rule(
            "submitting-command-waiting",
            Some(Submitting),
            &[CommandWaiting],
            Wait,
            wait(SignedDuration::from_mins(15)),
            "the start command is still queued or retrying: the worker retries; past the SLA, find why it does not converge",
        ),
        rule(
            "submitting-with-instance",
            Some(Submitting),
            &[Active, Stuck],
            REPAIR,
            write_back(Approving),
            "the instance exists but the write-back did not happen: write back the binding and APPROVING",
        ),
        rule(
            "submitting-command-failed",
            Some(Submitting),
            &[CommandFailed],
            Incident,
            NO,
            "the start command failed for good: read its result code; resubmit or return the record to DRAFT through the business's own action",
        ),
        rule(
            "submitting-no-instance",
            Some(Submitting),
            &[NoInstance],
            Wait,
            wait(SignedDuration::from_mins(5)),
            "submitted without an instance yet: the submit may still be in flight; past the SLA it failed without a trace",
        ),
        rule(
            "submitting-ended",
            Some(Submitting),
            &[EndedApproved, EndedOther, Deleted],
            Incident,
            NO,
            "the instance already ended while the business row says SUBMITTING: write back by the end result after checking it",
        ),
        rule(
            "approving-active",
            Some(Approving),
            &[Active],
            Wait,
            wait(SignedDuration::from_hours(24 * 30)),
            "consistent while it waits (a task, a timer, a message); past the SLA the approval has stalled",
        ),
        rule(
            "approving-stuck",
            Some(Approving),
            &[Stuck],
            Incident,
            NO,
            "the instance runs but waits on nothing, or a job is a dead letter: see `kairos doctor --instance`",
        ),
        rule(
            "approving-ended-approved",
            Some(Approving),
            &[EndedApproved],
            REPAIR,
            write_back(Approved),
            "history says the process ended approved but the business row is APPROVING (§34): write back APPROVED",
        ),
        rule(
            "approving-ended-other",
            Some(Approving),
            &[EndedOther],
            Incident,
            NO,
            "the process ended but not at an approved end (§34: maybe rejected): write back by the end result after checking the approval records, never from a pass flag alone",
        ),
        rule(
            "approving-deleted",
            Some(Approving),
            &[Deleted],
            Incident,
            NO,
            "the instance was deleted (§33): find who and why before changing the business row; notifications or side effects may exist",
        ),
        rule(
            "approving-command-waiting",
            Some(Approving),
            &[CommandWaiting],
            Wait,
            wait(SignedDuration::from_mins(15)),
            "APPROVING before its start command ran: the worker retries",
        ),
        rule(
            "approving-no-instance",
            Some(Approving),
            &[NoInstance, CommandFailed],
            Incident,
            NO,
            "APPROVING without any process (§33): do not set it back to DRAFT; confirm by the command and the business key what happened first",
        ),
        rule(
            "approved-active",
            Some(Approved),
            &[Active, Stuck],
            Incident,
            NO,
            "APPROVED while the process still runs: the business state was updated early (§29)",
        ),
        rule(
            "approved-conflict",
            Some(Approved),
            &[EndedOther, Deleted],
            Incident,
            NO,
            "APPROVED but the process ended elsewhere: the business row and the approval history disagree (§30: conflicting human decisions)",
        ),
        rule(
            "published-outbox-failed",
            Some(Published),
            &[OutboxFailed],
            Incident,
            NO,
            "PUBLISHED but its event failed (§35): ask the target by the event id before sending again; never create twice",
        ),
        rule(
            "published-outbox-retry",
            Some(Published),
            &[OutboxRetry],
            REPAIR,
            (Some(Repair::OutboxRetry), Option::None, Option::None),
            "the event waits for a retry after a retryable error: retry now",
        ),
        rule(
            "published-outbox-pending",
            Some(Published),
            &[OutboxPending],
            Wait,
            wait(SignedDuration::from_mins(5)),
            "the event is on its way",
        ),
        rule(
            "published-no-event",
            Some(Published),
            &[OutboxNone],
            Incident,
            NO,
            "PUBLISHED without any outbox event (§35): was approval taken for publication? check the target by the business key",
        ),
        rule(
            "approved-consistent",
            Some(Approved),
            &[EndedApproved],
            NONE,
            NO,
            "consistent: check the publication next",
        ),
        rule("published-consistent", Some(Published), &[OutboxPublished, EndedApproved], NONE, NO, "consistent"),
        rule(
            "canceled-active",
            Some(Canceled),
            &[Active, Stuck],
            Incident,
            NO,
            "CANCELED while tasks or jobs still run (§29): check the cancel command and its compensation",
        ),
        rule(
            "canceled-consistent",
            Some(Canceled),
            &[NoInstance, EndedApproved, EndedOther, Deleted, CommandFailed],
            NONE,
            NO,
            "consistent",
        ),
    ]
}

/// What the pass knows about one record.
#[derive(Debug, Clone)]
pub struct Facts<'a> {
    pub state: State,
    /// The instances of the record (bound ones and, for the source's process, ones with its
    /// business key), oldest first.
    pub instances: &'a [InstanceEvidence],
    /// Bound instance ids.
    pub bound: &'a [String],
    /// None: the business database has no command table.
    pub commands: Option<&'a [CommandEvidence]>,
    /// None: the source declares no outbox aggregate.
    pub outbox: Option<&'a [OutboxEvidence]>,
    pub approved_ends: &'a [String],
}

/// The classes of `f`, and the instant a wait's SLA counts from (if the evidence has one).
pub fn evidence(f: &Facts<'_>) -> (Vec<Evidence>, Option<Timestamp>) {
    let mut out = Vec::new();
    let mut since = None;
    let running: Vec<&InstanceEvidence> = f.instances.iter().filter(|i| i.running).collect();
    let damaged = f.instances.iter().any(|i| i.running && i.ended.is_some());
    let dangling =
        f.instances.iter().any(|i| !i.running && i.started.is_none() && f.bound.contains(&i.process_instance_id));
    if damaged {
        out.push(Evidence::RuntimeDamaged);
    } else if dangling {
        out.push(Evidence::Dangling);
    } else if running.len() > 1 {
        out.push(Evidence::TwoActive);
    } else if let Some(r) = running.first() {
        since = r.started;
        let waits = r.tasks + r.jobs + r.subscriptions;
        out.push(if waits == 0 || r.dead_letters > 0 { Evidence::Stuck } else { Evidence::Active });
    } else if let Some(last) = f.instances.iter().filter(|i| i.ended.is_some()).max_by_key(|i| i.ended) {
        out.push(if last.delete_reason.is_some() {
            Evidence::Deleted
        } else if last.end_activity.as_ref().is_some_and(|a| f.approved_ends.contains(a)) {
            Evidence::EndedApproved
        } else {
            Evidence::EndedOther
        });
    } else {
        out.push(Evidence::NoInstance);
    }
    if let Some(commands) = f.commands
        && let Some(c) = commands.iter().max_by_key(|c| c.created_at)
    {
        match c.command_status.as_str() {
            "PENDING" | "PROCESSING" | "RETRY" => {
                out.push(Evidence::CommandWaiting);
                if since.is_none() {
                    since = Some(c.created_at);
                }
            }
            "FAILED" => out.push(Evidence::CommandFailed),
            _ => {}
        }
    }
    if let Some(events) = f.outbox {
        let any = |p: &dyn Fn(&OutboxEvidence) -> bool| events.iter().any(p);
        out.push(if events.is_empty() {
            Evidence::OutboxNone
        } else if any(&|e| {
            e.event_status == "FAILED"
                || (e.event_status == "RETRY" && e.last_error_code.as_deref().is_some_and(|c| c != "RETRY"))
        }) {
            Evidence::OutboxFailed
        } else if any(&|e| e.event_status == "RETRY" && !e.due) {
            Evidence::OutboxRetry
        } else if any(&|e| e.event_status != "PUBLISHED") {
            Evidence::OutboxPending
        } else {
            Evidence::OutboxPublished
        });
    }
    (out, since)
}

/// The first rule of `rules` for `state` and `classes`.
pub fn classify<'r>(rules: &'r [Rule], state: State, classes: &[Evidence]) -> Option<&'r Rule> {
    rules.iter().find(|r| r.state.is_none_or(|s| s == state) && r.evidence.iter().any(|e| classes.contains(e)))
}

/// Whether an auto-repair of `rule` may act on a record with `classes` (§30): only a write-back
/// from exactly one certain instance (running for APPROVING, ended approved for APPROVED), or a
/// retry of retryable outbox events; never with two instances, damaged or dangling runtime, a
/// failed external effect or an end that is not approved. `Err` says why not.
pub fn guard(rule: &Rule, classes: &[Evidence], open_incident: bool) -> Result<(), String> {
    use Evidence::*;
    if open_incident {
        return Err("an incident about this record is open: it is frozen until a person closes it".into());
    }
    for (class, why) in [
        (TwoActive, "two active instances: which one is legitimate is a person's decision"),
        (RuntimeDamaged, "runtime rows of an ended instance: the ACT tables were edited by hand"),
        (Dangling, "the binding names an instance that does not exist"),
        (OutboxFailed, "an external effect is uncertain (a failed event)"),
    ] {
        if classes.contains(&class) {
            return Err(format!("auto-repair refused: {why}"));
        }
    }
    match (rule.repair, rule.to) {
        (Some(Repair::WriteBack), Some(State::Approving)) if classes.contains(&Active) || classes.contains(&Stuck) => {
            Ok(())
        }
        (Some(Repair::WriteBack), Some(State::Approved)) if classes.contains(&EndedApproved) => Ok(()),
        (Some(Repair::WriteBack), to) => Err(format!(
            "auto-repair refused: writing back {} needs {} as certain evidence",
            to.map_or("?", State::as_str),
            if to == Some(State::Approved) { "an end at an approved end event" } else { "one running instance" }
        )),
        (Some(Repair::OutboxRetry), _) if classes.contains(&OutboxRetry) => Ok(()),
        (Some(Repair::OutboxRetry), _) => {
            Err("auto-repair refused: no outbox event waits for a retryable retry".into())
        }
        (None, _) => Err("auto-repair refused: the rule names no repair".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_table_passes_its_own_check_and_round_trips_as_json() {
        let rules = default_rules();
        check(&rules).unwrap();
        let json = serde_json::to_string(&rules).unwrap();
        let back: Vec<Rule> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, rules);
    }

    #[test]
    fn a_bad_table_is_refused_naming_the_rule_and_field() {
        let mut r = default_rules();
        r[6].to = None;
        assert!(check(&r).unwrap_err().contains("submitting-with-instance\").to"), "{:?}", check(&r));
        let bad: Result<Rule, _> =
            serde_json::from_str(r#"{"id":"x","state":"DONE","evidence":["active"],"action":"none","advice":""}"#);
        assert!(bad.unwrap_err().to_string().contains("state: \"DONE\""));
        let jump: Result<Rule, _> = serde_json::from_str(
            r#"{"id":"x","state":"*","evidence":["active"],"action":"repair","repair":"jump","advice":""}"#,
        );
        assert!(jump.is_err(), "a repair outside the closed set does not parse");
    }

    #[test]
    fn the_guard_refuses_every_forbidden_case_whatever_the_rule_says() {
        let mut r = default_rules().into_iter().find(|r| r.id == "submitting-with-instance").unwrap();
        assert!(guard(&r, &[Evidence::Active], false).is_ok());
        for forbidden in [Evidence::TwoActive, Evidence::RuntimeDamaged, Evidence::Dangling, Evidence::OutboxFailed] {
            assert!(guard(&r, &[Evidence::Active, forbidden], false).is_err(), "{forbidden:?}");
        }
        assert!(guard(&r, &[Evidence::Active], true).is_err(), "frozen by an open incident");
        r.to = Some(State::Approved);
        assert!(guard(&r, &[Evidence::EndedOther], false).is_err(), "an end that is not approved");
        assert!(guard(&r, &[Evidence::EndedApproved], false).is_ok());
    }
}
