//! `kairos triggers`: the scheduler's triggers from a shell (SPEC S, API.md "Scheduler") — list
//! them, add one (with its job), pause and resume one or a group. Through `engine.scheduler()`
//! with the executor off; bad input exits 2 naming the field, with nothing written.

use super::open_engine;
use crate::cli::GlobalArgs;
use crate::exit::{CliError, SUCCESS};
use crate::output::{self, Table, cell, instant};
use crate::parse;
use clap::{Args, Subcommand};
use jiff::Timestamp;
use kairos::scheduler::{JobSpec, TriggerSpec, TriggerState, TriggerView};
use serde_json::json;

/// `kairos triggers`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  kairos triggers
  kairos triggers add nightly --handler log --cron '0 0 2 * * ?' --tz Europe/Berlin
  kairos triggers add poll --job poller --every PT30S --group polling
  kairos triggers pause --group polling
  kairos triggers resume nightly

Without a subcommand: lists the triggers (--group, --state WAITING|PAUSED|BLOCKED|PAUSED_BLOCKED|ERROR).")]
pub struct TriggersArgs {
    #[command(subcommand)]
    pub command: Option<TriggersCommand>,
    /// Only triggers of this group
    #[arg(long, value_name = "GROUP")]
    pub group: Option<String>,
    /// Only triggers in this state (WAITING, PAUSED, BLOCKED, PAUSED_BLOCKED, ERROR)
    #[arg(long, value_name = "STATE")]
    pub state: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum TriggersCommand {
    /// Schedule a trigger (and, with --handler, its job when it does not exist yet)
    Add(Box<AddArgs>),
    /// Pause a trigger, or with --group and no NAME a whole group (new triggers in it start paused)
    Pause(KeyArgs),
    /// Resume a trigger, or with --group and no NAME a whole group
    Resume(KeyArgs),
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// The trigger's name
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The trigger's group
    #[arg(long, default_value = "DEFAULT", value_name = "GROUP")]
    pub group: String,
    /// The job it fires [default: the trigger's name]
    #[arg(long, value_name = "JOB")]
    pub job: Option<String>,
    /// The job's group
    #[arg(long, default_value = "DEFAULT", value_name = "GROUP")]
    pub job_group: String,
    /// Create the job (durable) with this handler if it does not exist
    #[arg(long, value_name = "HANDLER")]
    pub handler: Option<String>,
    /// A Quartz cron expression (see `kairos cron next --help`)
    #[arg(long, value_name = "EXPR", allow_hyphen_values = true, conflicts_with = "every")]
    pub cron: Option<String>,
    /// The IANA zone of --cron
    #[arg(long, value_name = "ZONE", requires = "cron")]
    pub tz: Option<String>,
    /// A simple trigger: fire every ISO 8601 duration (PT30S)
    #[arg(long, value_name = "DUR")]
    pub every: Option<String>,
    /// Repeats after the first fire of --every (-1: forever, the default)
    #[arg(long, value_name = "N", requires = "every", allow_hyphen_values = true)]
    pub repeat: Option<i32>,
    /// First fire time not before this RFC 3339 instant [default: now]
    #[arg(long, value_parser = parse::instant, value_name = "INSTANT")]
    pub start: Option<Timestamp>,
    /// No fire after this RFC 3339 instant
    #[arg(long, value_parser = parse::instant, value_name = "INSTANT")]
    pub end: Option<Timestamp>,
    /// A calendar excluding fire times
    #[arg(long, value_name = "NAME")]
    pub calendar: Option<String>,
    /// The misfire instruction (smart, fireNow, fireOnceNow, doNothing, ignoreMisfires, …)
    #[arg(long, value_name = "POLICY")]
    pub misfire: Option<String>,
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub priority: Option<i32>,
}

#[derive(Debug, Args)]
pub struct KeyArgs {
    /// The trigger's name; leave it out to act on the whole --group
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// The trigger's group (with no NAME: the group to pause or resume)
    #[arg(long, value_name = "GROUP")]
    pub group: Option<String>,
}

pub async fn run(global: &GlobalArgs, args: TriggersArgs) -> Result<u8, CliError> {
    match args.command {
        None => list(global, args.group, args.state).await,
        Some(TriggersCommand::Add(a)) => add(global, *a).await,
        Some(TriggersCommand::Pause(k)) => act(global, k, true).await,
        Some(TriggersCommand::Resume(k)) => act(global, k, false).await,
    }
}

async fn list(global: &GlobalArgs, group: Option<String>, state: Option<String>) -> Result<u8, CliError> {
    let state = match state.as_deref() {
        None => None,
        Some(s) => Some(TriggerState::parse(&s.to_ascii_uppercase()).ok_or_else(|| {
            CliError::bad_input(format!("--state: '{s}' is not one of WAITING, PAUSED, BLOCKED, PAUSED_BLOCKED, ERROR"))
        })?),
    };
    let engine = open_engine(&global.db).await?;
    let all = engine.scheduler().triggers(group.as_deref(), state).await?;
    if global.json {
        return output::json(&json!({"data": all, "total": all.len(), "start": 0, "size": all.len()})).map(|_| SUCCESS);
    }
    output::emit(&table(&all).render())?;
    Ok(SUCCESS)
}

fn table(all: &[TriggerView]) -> Table {
    let mut t = Table::new(&["GROUP", "NAME", "JOB", "TYPE", "STATE", "NEXT FIRE", "PREVIOUS FIRE"]);
    for v in all {
        t.row(vec![
            cell(Some(&v.group), 30),
            cell(Some(&v.name), 40),
            cell(Some(&format!("{}.{}", v.job_group, v.job_name)), 40),
            v.trigger_type.to_string(),
            v.state.as_str().to_string(),
            instant(v.next_fire_time),
            instant(v.previous_fire_time),
        ]);
    }
    t
}

async fn add(global: &GlobalArgs, a: AddArgs) -> Result<u8, CliError> {
    let job = a.job.clone().unwrap_or_else(|| a.name.clone());
    let schedule = match (&a.cron, &a.every) {
        (Some(expr), None) => json!({"cron": {"expression": expr, "timeZone": a.tz}}),
        (None, Some(every)) => json!({"simple": {"interval": every, "repeatCount": a.repeat}}),
        _ => return Err(CliError::bad_input("give --cron EXPR or --every DUR")),
    };
    let mut spec = json!({
        "name": a.name, "group": a.group, "jobName": job, "jobGroup": a.job_group,
        "startTime": a.start, "endTime": a.end, "calendarName": a.calendar, "priority": a.priority,
        "misfirePolicy": a.misfire,
    });
    if let (Some(obj), Some(extra)) = (spec.as_object_mut(), schedule.as_object()) {
        obj.extend(extra.clone());
        obj.retain(|_, v| !v.is_null());
    }
    let spec: TriggerSpec = serde_json::from_value(spec).map_err(|e| CliError::bad_input(e.to_string()))?;
    let engine = open_engine(&global.db).await?;
    let s = engine.scheduler();
    let v = match &a.handler {
        // The job and its trigger in one transaction: a refused trigger leaves no job behind.
        Some(handler) if s.job(&a.job_group, &job).await.is_err() => {
            let job: JobSpec =
                serde_json::from_value(json!({"name": job, "group": a.job_group, "handler": handler, "durable": true}))
                    .map_err(|e| CliError::bad_input(e.to_string()))?;
            s.schedule_job(&job, &spec).await?
        }
        _ => s.schedule(&spec).await?,
    };
    if global.json {
        output::json(&v)?;
    } else {
        output::line(&format!(
            "scheduled {}.{} ({}, {}); next fire time {}",
            v.group,
            v.name,
            v.trigger_type,
            v.state.as_str(),
            instant(v.next_fire_time)
        ))?;
    }
    Ok(SUCCESS)
}

async fn act(global: &GlobalArgs, k: KeyArgs, pause: bool) -> Result<u8, CliError> {
    let engine = open_engine(&global.db).await?;
    let s = engine.scheduler();
    match (k.name, k.group) {
        (Some(name), group) => {
            let group = group.unwrap_or_else(|| "DEFAULT".into());
            let v = if pause { s.pause_trigger(&group, &name).await? } else { s.resume_trigger(&group, &name).await? };
            if global.json {
                output::json(&v)?;
            } else {
                output::line(&format!("{}.{} is {}", v.group, v.name, v.state.as_str()))?;
            }
        }
        (None, Some(group)) => {
            if pause {
                s.pause_group(&group).await?;
            } else {
                s.resume_group(&group).await?;
            }
            let word = if pause { "paused" } else { "resumed" };
            if global.json {
                output::json(&json!({"group": group, "action": word}))?;
            } else {
                output::line(&format!("trigger group {group} {word}"))?;
            }
        }
        (None, None) => return Err(CliError::bad_input("name a trigger, or give --group GROUP for a whole group")),
    }
    Ok(SUCCESS)
}
