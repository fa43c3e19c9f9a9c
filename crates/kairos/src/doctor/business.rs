//! The six runbooks of seed 002 §32–§37, recognised from what the engine keeps: the
//! reconciler's open incidents (by rule) and recent repairs, the bindings' duplicate check, and
//! the outbox's backlog. Each names the situation, the evidence and the safe action; nothing is
//! said when its evidence is absent (no false alarm on a store where it is not staged).

use super::*;

/// An outbox event this long PENDING or RETRY is a backlog worth a look (§37).
const OUTBOX_BACKLOG_AFTER: SignedDuration = SignedDuration::from_secs(60);

/// (code, rules that witness it, title, action): the runbooks the reconciler's rules feed.
const RUNBOOKS: &[(&str, &[&str], &str, &str)] = &[
    (
        "runbook-started-still-draft",
        &["draft-with-instance", "submitting-ended"],
        "A process started (or ran) while its business record stayed DRAFT/SUBMITTING (seed 002 §32)",
        "Look up the instance by business key and its start (definition, start time, starter, first task), the submit's requestId or command, and the business transaction's log. One active instance of a legitimate request: write back the binding and APPROVING through the incident (approve, then execute write-back). Several: hold the business action and keep the one the approvals and side effects point to. An illegitimate request: cancel or compensate it, never just mark it APPROVING.",
    ),
    (
        "runbook-approving-without-process",
        &[
            "approving-no-instance",
            "approving-deleted",
            "binding-dangling",
            "submitting-no-instance",
            "submitting-command-waiting",
            "submitting-command-failed",
            "approving-command-waiting",
        ],
        "Business records say SUBMITTING/APPROVING but no process runs for them (seed 002 §33)",
        "Tell apart: not started yet (the command PENDING/RETRY), the start failed for good (FAILED with its result code), the process ended without a write-back, a wrong processInstanceId or environment, an instance deleted by an administrator (history's DELETE_REASON_). Do not set the record back to DRAFT: notifications or side effects may exist; confirm by commandId and business key first.",
    ),
    (
        "runbook-task-done-business-unchanged",
        &["approving-ended-approved", "approving-ended-other", "approving-stuck"],
        "Tasks were completed or the process ended, but the business state did not follow (seed 002 §34)",
        "Check in order: the runtime task, its history (end time, delete reason), the next task or the end, the approval record's requestId, whether the business update ran in another (rolled back) transaction or affected 0 rows, then listeners, async jobs and write-back events. A parallel branch's task does not decide the final state; a rejection path is not an approval.",
    ),
    (
        "runbook-published-target-missing",
        &["published-outbox-failed", "published-no-event", "published-outbox-pending"],
        "Business records say PUBLISHED but the publication may not have reached the target (seed 002 §35)",
        "Was approval taken for publication? Look at the record's outbox events (status, attempts, error code) and whether the target deduplicates by event id. If the outcome at the target is uncertain, ask the target by the business key or event id before sending again; never create twice.",
    ),
    (
        "runbook-two-active-instances",
        &["two-active-instances"],
        "One business lifecycle has two running process instances (seed 002 §36)",
        "Find the legitimate instance by its approvals and side effects and end the other through the engine's API with a reason (an incident's delete-instance); never keep the newest and delete the rest automatically. Then close the gap: requestId primary key, a status CAS on the business row, the binding's unique key, the worker's look-up before it starts.",
    ),
];

pub(super) async fn runbooks(engine: &Engine, ctx: &Ctx, out: &mut Vec<Finding>) -> Result<(), Error> {
    let db: &dyn kairos_store::Sql = engine.store().as_ref();
    let open = kairos_store_engine::incidents::open_by_rule(db).await?;
    let day_ago = ctx.now.checked_sub(SignedDuration::from_hours(24)).unwrap_or(ctx.now);
    let repairs = kairos_store_engine::incidents::repairs_since(db, day_ago).await?;
    let (_, duplicates) = engine.processes().binding_health().await?;
    let mut covered: HashSet<&str> = HashSet::new();
    for (code, rules, title, action) in RUNBOOKS {
        covered.extend(rules.iter().copied());
        let hits: Vec<&(String, i64, Timestamp)> =
            open.iter().filter(|(r, _, _)| rules.contains(&r.as_str())).collect();
        let repaired: i64 = repairs.iter().filter(|(r, _)| rules.contains(&r.as_str())).map(|(_, n)| n).sum();
        let extra = if *code == "runbook-two-active-instances" { duplicates } else { 0 };
        if hits.is_empty() && extra == 0 {
            if repaired > 0 {
                out.push(finding(
                    Severity::Info,
                    code,
                    format!("{title}: {repaired} record(s) repaired automatically in the last 24 hours"),
                    "The reconciler found certain evidence and wrote the state back (kairos incidents list --kind repair shows each with its before and after).".into(),
                    "Nothing to do now; a steady stream of these means a write-back path is failing: find it.".into(),
                ));
            }
            continue;
        }
        let mut detail: Vec<String> = hits
            .iter()
            .map(|(rule, n, oldest)| {
                format!("{n} open incident(s) of rule {rule}, the oldest opened {} ago", ctx.since(*oldest))
            })
            .collect();
        if extra > 0 {
            detail.push(format!("{extra} business object(s) with more than one ACTIVE binding of one process type"));
        }
        if repaired > 0 {
            detail.push(format!("{repaired} repaired automatically in the last 24 hours"));
        }
        out.push(finding(
            Severity::Warning,
            code,
            title.to_string(),
            format!("{}. `kairos incidents list --status OPEN` lists them with their evidence.", detail.join("; ")),
            action.to_string(),
        ));
    }
    let others: Vec<String> = open
        .iter()
        .filter(|(r, _, _)| !covered.contains(r.as_str()))
        .map(|(rule, n, _)| format!("{n} of rule {rule}"))
        .collect();
    if !others.is_empty() {
        out.push(finding(
            Severity::Warning,
            "reconcile-incidents",
            "Reconciliation found differences that wait for a person".into(),
            format!("Open incidents: {}.", others.join(", ")),
            "kairos incidents show ID: read the evidence, approve a plan, let a second person execute it through the engine's API (never by editing ACT tables, §38).".into(),
        ));
    }
    outbox_backlog(db, ctx, out).await
}

/// §37: a backlog (the oldest PENDING/RETRY event older than a minute) or poison events
/// (FAILED), described by group — event type, target, status, error code — not by total only.
async fn outbox_backlog(db: &dyn kairos_store::Sql, ctx: &Ctx, out: &mut Vec<Finding>) -> Result<(), Error> {
    let (now, counts) = kairos_store_engine::outbox::counts(db).await?;
    let count = |s: &str| counts.iter().find(|c| c.status == s).map_or(0, |c| c.count);
    let oldest_open = counts
        .iter()
        .filter(|c| c.status == "PENDING" || c.status == "RETRY")
        .filter_map(|c| c.oldest_created_at)
        .min();
    let behind = oldest_open.is_some_and(|t| now.duration_since(t) > OUTBOX_BACKLOG_AFTER);
    let failed = count("FAILED");
    if !behind && failed == 0 {
        return Ok(());
    }
    let groups = kairos_store_engine::outbox::backlog_groups(db, 10).await?;
    let described: Vec<String> = groups
        .iter()
        .map(|g| {
            format!(
                "{} {} of {} to {}{} (up to {} retries, oldest {} ago)",
                g.count,
                g.status,
                g.event_type,
                g.target,
                g.last_error_code.as_deref().map(|c| format!(", error {c}")).unwrap_or_default(),
                g.max_retry_count,
                ctx.since(g.oldest_created_at)
            )
        })
        .collect();
    let mut title = Vec::new();
    if behind {
        title.push(format!(
            "{} PENDING and {} RETRY outbox events, the oldest {} old",
            count("PENDING"),
            count("RETRY"),
            oldest_open.map(|t| ctx.since(t)).unwrap_or_default()
        ));
    }
    if failed > 0 {
        title.push(format!("{failed} outbox event(s) FAILED (poison or exhausted)"));
    }
    out.push(finding(
        Severity::Warning,
        "runbook-outbox-backlog",
        format!("{} (seed 002 §37)", title.join("; ")),
        format!("By group: {}.", described.join("; ")),
        "Look at the groups, not the total: one target or error code (rate limits, timeouts, a down host), a hot ordered aggregate, publishers' throughput against the arrival rate (kairos_outbox_deliveries_total), leases left by a crashed node (they come back after --outbox-lease). A FAILED event waits for an operator: ask the target by its event id, then POST /outbox/events/{id}/retry. Adding publishers only helps when the publisher is the narrowest step.".into(),
    ));
    Ok(())
}
