//! Quartz's CalendarIntervalTriggerImpl: every N seconds, minutes, hours, days, weeks, months
//! or years from the start time, days and longer on the zone's wall clock.

use std::fmt;

use jiff::civil::{Date, DateTime};
use jiff::{Span, Timestamp};

use crate::error::ScheduleError;
use crate::zone::{Zone, add_ms, ms_between, resolve};

/// The unit of a calendar or daily time interval (Quartz's `DateBuilder.IntervalUnit`).
/// Serialized in lower case (`"day"`); also read in Quartz's upper case (`"DAY"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IntervalUnit {
    #[serde(alias = "SECOND")]
    Second,
    #[serde(alias = "MINUTE")]
    Minute,
    #[serde(alias = "HOUR")]
    Hour,
    #[serde(alias = "DAY")]
    Day,
    #[serde(alias = "WEEK")]
    Week,
    #[serde(alias = "MONTH")]
    Month,
    #[serde(alias = "YEAR")]
    Year,
}

impl IntervalUnit {
    /// Quartz's name (`QRTZ_SIMPROP_TRIGGERS.STR_PROP_1`).
    pub fn quartz_name(self) -> &'static str {
        match self {
            IntervalUnit::Second => "SECOND",
            IntervalUnit::Minute => "MINUTE",
            IntervalUnit::Hour => "HOUR",
            IntervalUnit::Day => "DAY",
            IntervalUnit::Week => "WEEK",
            IntervalUnit::Month => "MONTH",
            IntervalUnit::Year => "YEAR",
        }
    }

    /// The length in milliseconds of the units that are a fixed duration (second, minute,
    /// hour); `None` for the calendar units.
    pub fn fixed_ms(self) -> Option<i64> {
        match self {
            IntervalUnit::Second => Some(1_000),
            IntervalUnit::Minute => Some(60_000),
            IntervalUnit::Hour => Some(3_600_000),
            _ => None,
        }
    }
}

impl fmt::Display for IntervalUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.quartz_name().to_ascii_lowercase())
    }
}

/// The schedule of a calendar interval trigger (Quartz keeps it in `QRTZ_SIMPROP_TRIGGERS`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CalendarIntervalSchedule {
    pub unit: IntervalUnit,
    /// How many units between fire times (at least 1).
    pub interval: i32,
    /// The zone whose calendar days, weeks, months and years are counted in (UTC when not given).
    #[serde(default)]
    pub time_zone: Zone,
    /// Quartz's `preserveHourOfDayAcrossDaylightSavings`; see [`Self::skip_day_if_hour_does_not_exist`].
    #[serde(default)]
    pub preserve_hour_of_day_across_dst: bool,
    /// With `preserve_hour_of_day_across_dst`: on a day whose start-time wall clock does not
    /// exist (a spring-forward gap), do not fire at all that day, instead of firing at the
    /// shifted time.
    #[serde(default)]
    pub skip_day_if_hour_does_not_exist: bool,
    /// How many times the trigger fired (kept by `triggered`).
    #[serde(default)]
    pub times_triggered: i32,
}

/// One step of the calendar computation.
enum Step {
    Fire(Timestamp),
    /// The wall time does not exist that day and the schedule skips such days.
    Skip,
}

/// How many candidate steps a calendar-unit search may take after its estimate.
const MAX_STEPS: u32 = 10_000;

impl CalendarIntervalSchedule {
    /// Every `interval` `unit`s, on the wall clock of `time_zone`.
    pub fn new(interval: i32, unit: IntervalUnit, time_zone: Zone) -> CalendarIntervalSchedule {
        CalendarIntervalSchedule {
            unit,
            interval,
            time_zone,
            preserve_hour_of_day_across_dst: false,
            skip_day_if_hour_does_not_exist: false,
            times_triggered: 0,
        }
    }

    /// Quartz's CalendarIntervalTriggerImpl.validate: an interval of at least 1.
    pub(crate) fn validate(&self) -> Result<(), ScheduleError> {
        if self.interval < 1 {
            return Err(ScheduleError::out_of_range("schedule.interval", format!("{} is below 1", self.interval)));
        }
        if self.times_triggered < 0 {
            return Err(ScheduleError::out_of_range("schedule.timesTriggered", "must not be negative"));
        }
        self.time_zone.check("schedule.timeZone")
    }

    /// Mirrors CalendarIntervalTriggerImpl.getFireTimeAfter: the first fire time strictly after
    /// `after` and strictly before the end time. Seconds, minutes and hours are fixed
    /// durations; days and longer keep the start time's wall clock time in the zone.
    ///
    /// Differences: each fire time is computed from the start time (Quartz steps a
    /// `java.util.Calendar` forward, so a month-end or leap-day start and the hour after a DST
    /// gap drift: Jan 31 + 1 month is Feb 28, then Quartz says Mar 28 and kairos Mar 31); a wall
    /// time in a DST gap moves forward by the gap that day only, and one in a fold takes its
    /// first occurrence.
    pub(crate) fn fire_time_after(
        &self,
        start: Timestamp,
        end: Option<Timestamp>,
        after: Timestamp,
    ) -> Option<Timestamp> {
        if end.is_some_and(|end| end <= after) {
            return None;
        }
        if after < start {
            return Some(start);
        }
        let time = self.first_after(start, after)?;
        if end.is_some_and(|end| end <= time) {
            return None;
        }
        Some(time)
    }

    /// The first fire time strictly after `after` (which is not before `start`), ignoring the
    /// end time.
    fn first_after(&self, start: Timestamp, after: Timestamp) -> Option<Timestamp> {
        if self.interval < 1 {
            return None;
        }
        let interval = i64::from(self.interval);
        if let Some(unit_ms) = self.unit.fixed_ms() {
            let step = interval.checked_mul(unit_ms)?;
            let k = ms_between(start, after) / step + 1;
            return add_ms(start, k.checked_mul(step)?);
        }
        let tz = self.time_zone.time_zone();
        let local_start = tz.to_datetime(start);
        let mut k = self.estimate(start, after, local_start, tz.to_datetime(after));
        for _ in 0..MAX_STEPS {
            if let Step::Fire(time) = self.fire_at(local_start, k)?
                && time > after
            {
                return Some(time);
            }
            k = k.checked_add(1)?;
        }
        None
    }

    /// A step number at or before the answer, so the search takes only a few steps.
    fn estimate(&self, start: Timestamp, after: Timestamp, s: DateTime, a: DateTime) -> i64 {
        let interval = i64::from(self.interval);
        let units = match self.unit {
            IntervalUnit::Day => ms_between(start, after) / 86_400_000,
            IntervalUnit::Week => ms_between(start, after) / (7 * 86_400_000),
            IntervalUnit::Month => {
                (i64::from(a.year()) - i64::from(s.year())) * 12 + (i64::from(a.month()) - i64::from(s.month()))
            }
            _ => i64::from(a.year()) - i64::from(s.year()),
        };
        (units / interval - 1).max(1)
    }

    /// The `k`-th fire time of a calendar unit: the start's wall clock moved by `k × interval`
    /// units. `None` past the representable range.
    fn fire_at(&self, local_start: DateTime, k: i64) -> Option<Step> {
        let n = k.checked_mul(i64::from(self.interval))?;
        let span = match self.unit {
            IntervalUnit::Week => Span::new().try_days(n.checked_mul(7)?).ok()?,
            IntervalUnit::Month => Span::new().try_months(n).ok()?,
            IntervalUnit::Year => Span::new().try_years(n).ok()?,
            _ => Span::new().try_days(n).ok()?,
        };
        let date: Date = local_start.date().checked_add(span).ok()?;
        let (time, in_gap) = resolve(self.time_zone.time_zone(), DateTime::from_parts(date, local_start.time()))?;
        if in_gap && self.preserve_hour_of_day_across_dst && self.skip_day_if_hour_does_not_exist {
            return Some(Step::Skip);
        }
        Some(Step::Fire(time))
    }
}
