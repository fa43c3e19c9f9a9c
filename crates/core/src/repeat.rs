//! REPEAT_ of a repeating timer: an ISO 8601 repeating interval (`R3/PT10M`, `R/2030-01-01T09:00:00Z/P1D`)
//! or, the way Activiti stores a timeCycle written in cron, a Quartz cron expression.
//!
//! A cron REPEAT_ is evaluated in UTC (Activiti and Camunda use the server's default zone; a
//! kairos cluster's nodes may sit in different zones, so it uses none of theirs). The
//! scheduler's cron triggers take a zone per trigger (docs/scheduler.md).

use jiff::Timestamp;
use jiff::tz::TimeZone;
use kairos_cron::CronExpr;
use kairos_time::RepeatCycle;

/// What REPEAT_ holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repeat {
    Cycle(RepeatCycle),
    Cron(CronExpr),
}

impl Repeat {
    pub fn parse(text: &str) -> Result<Repeat, String> {
        if kairos_cron::looks_like_cron(text) {
            CronExpr::parse(text.trim()).map(Repeat::Cron).map_err(|e| format!("cron '{}': {e}", text.trim()))
        } else {
            RepeatCycle::parse(text).map(Repeat::Cycle).map_err(|e| e.to_string())
        }
    }

    /// The first due date at or after `now` (a cycle's own start, or the cron's next fire time
    /// after `now`); `None` when it can never fire.
    pub fn first_due(&self, now: Timestamp) -> Result<Option<Timestamp>, String> {
        match self {
            Repeat::Cycle(c) => c.first_due(now).map_err(|e| e.to_string()),
            Repeat::Cron(c) => Ok(c.next_after(now, &TimeZone::UTC)),
        }
    }

    /// After a fire due at `fired_due` succeeded at `now`: what REPEAT_ becomes and the next due
    /// date, or `None` when it has fired for the last time. A cron's next fire time comes after
    /// both (fires missed while the engine was down are not made up, as in Activiti).
    pub fn next_after_fire(&self, fired_due: Timestamp, now: Timestamp) -> Result<Option<(String, Timestamp)>, String> {
        match self {
            Repeat::Cycle(c) => c
                .next_after_fire(fired_due, now)
                .map(|o| o.map(|(rest, due)| (rest.to_string(), due)))
                .map_err(|e| e.to_string()),
            Repeat::Cron(c) => Ok(c.next_after(fired_due.max(now), &TimeZone::UTC).map(|due| (c.to_string(), due))),
        }
    }
}

/// The shortest interval between two fires a repeat may have by default (docs/limits.md): a
/// timer every millisecond fills the job log with a thousand rows a second and keeps a worker
/// busy for nothing.
pub const DEFAULT_MIN_REPEAT_INTERVAL: jiff::SignedDuration = jiff::SignedDuration::from_secs(1);

/// Refuses a cycle whose period is shorter than `min` (a month or a year is measured from
/// 1970-01-01: any month is far above any sensible minimum). A cron fires at most once a
/// second and is not measured.
pub fn check_interval(repeat: &Repeat, min: jiff::SignedDuration) -> Result<(), String> {
    let Repeat::Cycle(c) = repeat else { return Ok(()) };
    match c.period.to_signed_duration_at(Timestamp::UNIX_EPOCH) {
        Ok(period) if period < min => Err(too_short(c.period.as_str(), min)),
        _ => Ok(()),
    }
}

/// The message for an interval shorter than the minimum.
pub fn too_short(interval: &str, min: jiff::SignedDuration) -> String {
    format!(
        "an interval of {interval} is shorter than the minimum of {min:#} between two fires (the engine's min_repeat_interval)"
    )
}

impl std::fmt::Display for Repeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Repeat::Cycle(c) => c.fmt(f),
            Repeat::Cron(c) => c.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_and_crons_are_told_apart() {
        assert!(matches!(Repeat::parse("R3/PT10M"), Ok(Repeat::Cycle(_))));
        assert!(matches!(Repeat::parse("0 0/5 * * * ?"), Ok(Repeat::Cron(_))));
        assert!(Repeat::parse("*/5 * * * *").unwrap_err().contains("cron"), "five fields: the cron parser explains");
        assert!(Repeat::parse("R3/banana").is_err());
    }
}
