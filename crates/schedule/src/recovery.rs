//! What a trigger does after its fire times were missed (misfire instructions) or its calendar
//! changed.

use jiff::{SignedDuration, Timestamp};

use crate::calendar::Calendar;
use crate::misfire::{MisfireInstruction, MisfireOutcome};
use crate::schedule::Schedule;
use crate::simple::{REPEAT_INDEFINITELY, SimpleSchedule};
use crate::trigger::Trigger;
use crate::zone::{ms_between, to_millis};

use MisfireInstruction as M;

impl Trigger {
    /// The instruction `update_after_misfire` carries out, with `Smart` resolved as each
    /// Quartz trigger type does:
    ///
    /// * simple: `FireNow` when it does not repeat, `RescheduleNextWithRemainingCount` when it
    ///   repeats forever, otherwise `RescheduleNowWithExistingRepeatCount`; and an explicit
    ///   `FireNow` on a repeating simple trigger means `RescheduleNowWithRemainingRepeatCount`;
    /// * cron, calendar-interval, daily-time-interval: `FireOnceNow`.
    ///
    /// An instruction of another trigger type (which `validate` refuses) is read as `Smart`.
    pub fn resolved_misfire_instruction(&self) -> MisfireInstruction {
        let instruction =
            if self.misfire_instruction.is_valid_for(self.kind()) { self.misfire_instruction } else { M::Smart };
        match (&self.schedule, instruction) {
            (Schedule::Simple(s), M::Smart) => match s.repeat_count {
                0 => M::FireNow,
                REPEAT_INDEFINITELY => M::RescheduleNextWithRemainingCount,
                _ => M::RescheduleNowWithExistingRepeatCount,
            },
            (Schedule::Simple(s), M::FireNow) if s.repeat_count != 0 => M::RescheduleNowWithRemainingRepeatCount,
            (_, M::Smart) => M::FireOnceNow,
            (_, instruction) => instruction,
        }
    }

    /// Mirrors `updateAfterMisfire`: applies the misfire instruction to a trigger the scheduler
    /// found misfired at `now` (see [`Trigger::is_misfired`]).
    ///
    /// * `IgnoreMisfires`: nothing changes ([`MisfireOutcome::Ignored`]);
    /// * `FireNow`, `FireOnceNow`: the next fire time becomes `now`;
    /// * `DoNothing`, `RescheduleNextWithExistingCount`: the next fire time becomes the first
    ///   one after `now` the calendar includes (every missed one is skipped);
    /// * `RescheduleNextWithRemainingCount`: the same, and the missed fire times are counted in
    ///   `times_triggered`;
    /// * `RescheduleNowWithExistingRepeatCount`: the trigger restarts now (start time = now)
    ///   with the repeats it has left; `RescheduleNowWithRemainingRepeatCount`: restarts now
    ///   with the repeats it would have left had it fired every missed time. Both ignore the
    ///   calendar for `now` and complete the trigger when `now` is past the end time.
    pub fn update_after_misfire(&mut self, now: Timestamp, calendar: Option<&Calendar>) -> MisfireOutcome {
        let now = to_millis(now);
        let instruction = self.resolved_misfire_instruction();
        match instruction {
            M::IgnoreMisfires => return MisfireOutcome::Ignored,
            M::Smart | M::FireNow | M::FireOnceNow => self.next_fire_time = Some(now),
            M::DoNothing | M::RescheduleNextWithExistingCount => {
                let next = self.fire_time_after(now);
                self.next_fire_time = self.first_included(next, calendar);
            }
            M::RescheduleNextWithRemainingCount => {
                let next = self.fire_time_after(now);
                let next = self.first_included(next, calendar);
                if let (Some(missed_from), Some(new), Schedule::Simple(s)) =
                    (self.next_fire_time, next, &mut self.schedule)
                {
                    let missed = s.times_fired_between(missed_from, new);
                    s.times_triggered = s.times_triggered.saturating_add(missed);
                }
                self.next_fire_time = next;
            }
            M::RescheduleNowWithExistingRepeatCount | M::RescheduleNowWithRemainingRepeatCount => {
                let missed_from = self.next_fire_time.unwrap_or(now);
                if let Schedule::Simple(s) = &mut self.schedule {
                    restart_counts(s, instruction, missed_from, now);
                }
                if self.end_time.is_some_and(|end| end < now) {
                    self.next_fire_time = None;
                } else {
                    self.start_time = now;
                    self.next_fire_time = Some(now);
                }
            }
        }
        match self.next_fire_time {
            None => MisfireOutcome::Complete,
            Some(next) if next == now => MisfireOutcome::FireNow,
            Some(_) => MisfireOutcome::Rescheduled,
        }
    }

    /// Mirrors `updateWithNewCalendar`: after the trigger's calendar changed, recomputes the
    /// next fire time from the previous one (from `now` if it never fired), stepping over the
    /// times the new calendar excludes; a fire time the step lands on that is more than the
    /// misfire threshold behind `now` is stepped over too.
    ///
    /// As in Quartz, only fire times reached while stepping over excluded ones are checked
    /// against the threshold: an included first candidate stays even when it is in the past
    /// (the scheduler's misfire handling then applies). Once the steps reach fire times the
    /// threshold no longer concerns, kairos jumps over the excluded ones (the same answer).
    pub fn update_with_new_calendar(
        &mut self,
        calendar: Option<&Calendar>,
        misfire_threshold: SignedDuration,
        now: Timestamp,
    ) {
        let now = to_millis(now);
        let from = self.previous_fire_time.unwrap_or(now);
        self.next_fire_time = self.fire_time_after(from);
        let (Some(calendar), Some(first)) = (calendar, self.next_fire_time) else {
            return;
        };
        let threshold = i64::try_from(misfire_threshold.as_millis()).unwrap_or(i64::MAX);
        let misfired = |time: Timestamp| time < now && ms_between(time, now) >= threshold;
        let give_up = calendar.give_up_after(first);
        for _ in 0..MAX_PAST_STEPS {
            let Some(next) = self.next_fire_time else { return };
            if calendar.is_time_included(next) {
                return;
            }
            if !misfired(next) {
                // later fire times are not misfired either: plain skipping from here
                let step = self.fire_time_after(next);
                self.next_fire_time = self.first_included(step, Some(calendar));
                return;
            }
            let mut step = self.fire_time_after(next).filter(|t| *t <= give_up);
            if let Some(time) = step.filter(|t| misfired(*t)) {
                step = self.fire_time_after(time);
            }
            self.next_fire_time = step;
        }
        self.next_fire_time = None;
    }
}

/// How many excluded fire times behind `now` `update_with_new_calendar` steps over one by one.
const MAX_PAST_STEPS: u32 = 1_000_000;

/// The repeat count and times triggered of a simple trigger that restarts at `now`.
fn restart_counts(s: &mut SimpleSchedule, instruction: MisfireInstruction, missed_from: Timestamp, now: Timestamp) {
    if s.repeat_count == 0 || s.repeat_count == REPEAT_INDEFINITELY {
        return;
    }
    let fired = if instruction == M::RescheduleNowWithRemainingRepeatCount {
        s.times_triggered.saturating_add(s.times_fired_between(missed_from, now).max(0))
    } else {
        s.times_triggered
    };
    s.repeat_count = s.repeat_count.saturating_sub(fired).max(0);
    s.times_triggered = 0;
}
