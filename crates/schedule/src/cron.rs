//! Quartz's CronTriggerImpl: fire at the times a cron expression names, in a time zone.

use jiff::Timestamp;
use kairos_cron::CronExpr;

use crate::error::ScheduleError;
use crate::zone::{Zone, add_ms, to_seconds};

/// The schedule of a cron trigger (`QRTZ_CRON_TRIGGERS`: `CRON_EXPRESSION`, `TIME_ZONE_ID`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CronSchedule {
    /// The Quartz cron expression (validated when it is parsed or deserialized).
    pub expression: CronExpr,
    /// The zone whose wall clock the expression reads (UTC when not given).
    #[serde(default)]
    pub time_zone: Zone,
}

impl CronSchedule {
    /// Parses the expression; an invalid one is refused naming `schedule.expression` and the
    /// cron field and position.
    pub fn parse(expression: &str, time_zone: &str) -> Result<CronSchedule, ScheduleError> {
        let expression = CronExpr::parse(expression)
            .map_err(|source| ScheduleError::Cron { field: "schedule.expression".to_string(), source })?;
        Ok(CronSchedule { expression, time_zone: Zone::new(time_zone) })
    }

    pub(crate) fn validate(&self) -> Result<(), ScheduleError> {
        self.time_zone.check("schedule.timeZone")
    }

    /// Mirrors CronTriggerImpl.getFireTimeAfter: the expression's next time after `after`, not
    /// before the start time (which Quartz rounds down to the second) and not after the end
    /// time (a fire time equal to the end time fires).
    pub(crate) fn fire_time_after(
        &self,
        start: Timestamp,
        end: Option<Timestamp>,
        after: Timestamp,
    ) -> Option<Timestamp> {
        let start = to_seconds(start);
        let after = if start > after { add_ms(start, -1000)? } else { after };
        if end.is_some_and(|end| after >= end) {
            return None;
        }
        let next = self.expression.next_after(after, self.time_zone.time_zone())?;
        if end.is_some_and(|end| next > end) {
            return None;
        }
        Some(next)
    }
}
