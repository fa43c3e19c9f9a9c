//! Quartz's SimpleTriggerImpl: fire at the start time, then every `interval_ms`, `repeat_count`
//! more times (or forever).

use jiff::{SignedDuration, Timestamp};

use crate::error::ScheduleError;
use crate::zone::{add_ms, ms_between};

/// `repeat_count` of a trigger that repeats until its end time (Quartz's `REPEAT_INDEFINITELY`).
pub const REPEAT_INDEFINITELY: i32 = -1;

/// The schedule of a simple trigger (`QRTZ_SIMPLE_TRIGGERS`: `REPEAT_COUNT`, `REPEAT_INTERVAL`,
/// `TIMES_TRIGGERED`).
///
/// It fires at positions `start + k × interval` for `k = 0 ..= repeat_count`, each strictly
/// before the end time; a trigger that has fired `repeat_count + 1` times is done.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SimpleSchedule {
    /// Fires after the first; [`REPEAT_INDEFINITELY`] (-1) for no limit.
    pub repeat_count: i32,
    /// Milliseconds between fire times (at least 1 when the trigger repeats).
    pub interval_ms: i64,
    /// How many times the trigger fired (kept by `triggered`).
    #[serde(default)]
    pub times_triggered: i32,
}

impl SimpleSchedule {
    /// Fires once, then `repeat_count` more times every `interval`.
    pub fn new(repeat_count: i32, interval: SignedDuration) -> SimpleSchedule {
        SimpleSchedule {
            repeat_count,
            interval_ms: i64::try_from(interval.as_millis()).unwrap_or(i64::MAX),
            times_triggered: 0,
        }
    }

    /// Quartz's SimpleTriggerImpl setters and `validate`: the repeat count is at least -1, the
    /// interval is not negative, and a repeating trigger has an interval of at least 1 ms.
    pub(crate) fn validate(&self) -> Result<(), ScheduleError> {
        if self.repeat_count < REPEAT_INDEFINITELY {
            return Err(ScheduleError::out_of_range(
                "schedule.repeatCount",
                format!("{} is below -1 (repeat forever)", self.repeat_count),
            ));
        }
        if self.interval_ms < 0 || (self.repeat_count != 0 && self.interval_ms < 1) {
            return Err(ScheduleError::out_of_range(
                "schedule.intervalMs",
                format!("{} ms: a repeating trigger needs an interval of at least 1 ms", self.interval_ms),
            ));
        }
        if self.times_triggered < 0 {
            return Err(ScheduleError::out_of_range("schedule.timesTriggered", "must not be negative"));
        }
        Ok(())
    }

    fn is_forever(&self) -> bool {
        self.repeat_count == REPEAT_INDEFINITELY
    }

    /// Mirrors SimpleTriggerImpl.getFireTimeAfter: the first position strictly after `after`
    /// that is within the repeat count and strictly before the end time.
    pub(crate) fn fire_time_after(
        &self,
        start: Timestamp,
        end: Option<Timestamp>,
        after: Timestamp,
    ) -> Option<Timestamp> {
        if !self.is_forever() && self.times_triggered > self.repeat_count {
            return None;
        }
        if self.repeat_count == 0 && after >= start {
            return None;
        }
        if end.is_some_and(|end| end <= after) {
            return None;
        }
        if after < start {
            return Some(start);
        }
        if self.interval_ms < 1 {
            return None;
        }
        let executed = ms_between(start, after) / self.interval_ms + 1;
        if !self.is_forever() && executed > i64::from(self.repeat_count) {
            return None;
        }
        let time = add_ms(start, executed.checked_mul(self.interval_ms)?)?;
        if end.is_some_and(|end| end <= time) {
            return None;
        }
        Some(time)
    }

    /// Mirrors SimpleTriggerImpl.computeNumTimesFiredBetween: whole intervals from `from` to `to`.
    pub(crate) fn times_fired_between(&self, from: Timestamp, to: Timestamp) -> i32 {
        if self.interval_ms < 1 {
            return 0;
        }
        let times = ms_between(from, to) / self.interval_ms;
        i32::try_from(times).unwrap_or(if times < 0 { i32::MIN } else { i32::MAX })
    }

    /// Mirrors SimpleTriggerImpl.getFinalFireTime: the last position within the repeat count
    /// and strictly before the end time; `None` for a trigger that repeats forever without an
    /// end time.
    ///
    /// Difference: Quartz's `getFireTimeBefore(endTime)` can answer the end time itself, a time
    /// `getFireTimeAfter` never fires at; kairos answers the last time that does fire.
    pub(crate) fn final_fire_time(&self, start: Timestamp, end: Option<Timestamp>) -> Option<Timestamp> {
        if self.repeat_count == 0 || self.interval_ms < 1 {
            return Some(start);
        }
        let by_count = (!self.is_forever()).then_some(i64::from(self.repeat_count));
        let by_end = end.map(|end| {
            let span = ms_between(start, end);
            if span <= 0 { 0 } else { (span - 1) / self.interval_ms }
        });
        let last = match (by_count, by_end) {
            (None, None) => return None,
            (Some(k), None) | (None, Some(k)) => k,
            (Some(a), Some(b)) => a.min(b),
        };
        add_ms(start, last.checked_mul(self.interval_ms)?)
    }
}
