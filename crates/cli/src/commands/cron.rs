//! `kairos cron next`: the next fire times of a Quartz cron expression, computed by
//! kairos-cron exactly as a cron trigger would (same dialect, same DST policy). Opens no store.

use crate::cli::GlobalArgs;
use crate::exit::{CliError, SUCCESS};
use crate::{output, parse};
use clap::{Args, Subcommand};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use kairos_cron::CronExpr;

/// `kairos cron`.
#[derive(Debug, Args)]
pub struct CronArgs {
    #[command(subcommand)]
    pub command: CronCommand,
}

#[derive(Debug, Subcommand)]
pub enum CronCommand {
    /// Print the next fire times of a Quartz cron expression, one RFC 3339 instant a line
    #[command(after_help = "Examples:
  kairos cron next '0 15 10 ? * MON-FRI'
  kairos cron next '0 30 2 * * ?' --tz America/New_York --from 2024-03-09T00:00:00Z --count 3
  kairos cron next '0 0/15 * * * ?' --tz Europe/Berlin --local --json

The expression has 6 or 7 fields: second minute hour day-of-month month day-of-week [year]
(Quartz 2.3; exactly one of the two day fields is '?'). Local times are read in --tz; the
instants print in UTC (Z) unless --local prints them with the zone's offset. A local time
that a DST change skips fires once at the end of the gap; one that occurs twice fires once,
at its first occurrence, unless the hour field is every hour (docs/cron.md).

An invalid expression or time zone exits 2 with one line naming the field and the position.")]
    Next(CronNextArgs),
}

/// `kairos cron next`.
#[derive(Debug, Args)]
pub struct CronNextArgs {
    /// The Quartz cron expression (quote it: it has spaces and may have '*' and '?')
    #[arg(value_name = "EXPR", allow_hyphen_values = true)]
    pub expression: String,
    /// The IANA time zone the expression's local times are read in
    #[arg(long, default_value = "UTC", value_name = "ZONE")]
    pub tz: String,
    /// Fire times strictly after this RFC 3339 instant [default: now]
    #[arg(long, value_parser = parse::instant, value_name = "INSTANT")]
    pub from: Option<Timestamp>,
    /// How many fire times to print (fewer when the expression stops firing; years end at 2099)
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=1000), value_name = "N")]
    pub count: u16,
    /// Print the instants with the offset of --tz instead of in UTC
    #[arg(long)]
    pub local: bool,
}

pub fn run(global: &GlobalArgs, args: CronArgs) -> Result<u8, CliError> {
    match args.command {
        CronCommand::Next(args) => next(global, args),
    }
}

fn next(global: &GlobalArgs, args: CronNextArgs) -> Result<u8, CliError> {
    let cron =
        CronExpr::parse(&args.expression).map_err(|e| CliError::bad_input(format!("invalid cron expression: {e}")))?;
    let tz = TimeZone::get(&args.tz).map_err(|e| {
        CliError::bad_input(format!(
            "unknown time zone \"{}\" (--tz takes an IANA name such as Europe/Berlin): {e}",
            args.tz
        ))
    })?;
    let times = fire_times(&cron, &tz, args.from.unwrap_or_else(Timestamp::now), usize::from(args.count));
    let shown: Vec<String> = times.iter().map(|t| show(*t, &tz, args.local)).collect();
    if global.json {
        output::json(&serde_json::json!({ "times": shown }))?;
    } else {
        for t in &shown {
            output::line(t)?;
        }
    }
    Ok(SUCCESS)
}

/// Up to `count` fire times after `from`, each strictly after the one before.
pub fn fire_times(cron: &CronExpr, tz: &TimeZone, from: Timestamp, count: usize) -> Vec<Timestamp> {
    std::iter::successors(cron.next_after(from, tz), |t| cron.next_after(*t, tz)).take(count).collect()
}

fn show(t: Timestamp, tz: &TimeZone, local: bool) -> String {
    if local {
        t.to_zoned(tz.clone()).strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
    } else {
        t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    }
}
