//! Simple triggers: ports of Quartz's SimpleTriggerTest, and the model's own cases.

mod common;

use common::{trigger, ts};
use kairos_schedule::{
    Calendar, CalendarKind, DaysOfWeek, MisfireInstruction, MisfireOutcome, Schedule, SignedDuration, Timestamp,
    TriggerKind,
};

fn simple(repeat_count: i32, interval_ms: i64) -> Schedule {
    Schedule::simple(repeat_count, SignedDuration::from_millis(interval_ms))
}

fn ms(t: i64) -> Timestamp {
    Timestamp::from_millisecond(t).unwrap()
}

// Quartz: SimpleTriggerTest.testGetFireTimeAfter
#[test]
fn fire_time_after_is_the_next_position_after_the_instant() {
    let t = trigger(ms(0), simple(4, 10));
    assert_eq!(t.fire_time_after(ms(34)), Some(ms(40)));
    // and none past the last repeat (positions 0, 10, 20, 30, 40)
    assert_eq!(t.fire_time_after(ms(40)), None);
    assert_eq!(t.fire_time_after(ms(-5)), Some(ms(0)));
}

// Quartz: SimpleTriggerTest.testUpdateAfterMisfire
#[test]
fn reschedule_now_past_the_end_time_completes_and_keeps_start_and_end() {
    let start = ts("2005-07-05T09:00:00Z");
    let end = ts("2005-07-05T10:00:00Z");
    let mut t = trigger(start, simple(5, 1000))
        .with_end_time(end)
        .with_misfire_instruction(MisfireInstruction::RescheduleNowWithExistingRepeatCount);
    let outcome = t.update_after_misfire(ts("2026-01-01T00:00:00Z"), None);
    assert_eq!(outcome, MisfireOutcome::Complete);
    assert_eq!(t.start_time, start);
    assert_eq!(t.end_time, Some(end));
    assert_eq!(t.next_fire_time, None);
}

// Quartz: SimpleTriggerTest.testMisfireInstructionValidity
#[test]
fn only_simple_misfire_instructions_are_accepted() {
    use MisfireInstruction as M;
    for instruction in [
        M::IgnoreMisfires,
        M::Smart,
        M::FireNow,
        M::RescheduleNextWithExistingCount,
        M::RescheduleNextWithRemainingCount,
        M::RescheduleNowWithExistingRepeatCount,
        M::RescheduleNowWithRemainingRepeatCount,
    ] {
        let t = trigger(ms(0), simple(1, 10)).with_misfire_instruction(instruction);
        assert!(t.validate().is_ok(), "{instruction}");
        assert_eq!(M::from_code(instruction.code(), TriggerKind::Simple), Ok(instruction));
    }
    for instruction in [M::FireOnceNow, M::DoNothing] {
        let t = trigger(ms(0), simple(1, 10)).with_misfire_instruction(instruction);
        let error = t.validate().unwrap_err();
        assert_eq!(error.field(), "misfireInstruction");
    }
    // RESCHEDULE_NEXT_WITH_EXISTING_COUNT + 1
    assert!(M::from_code(6, TriggerKind::Simple).is_err());
    assert!(M::from_code(-2, TriggerKind::Simple).is_err());
}

#[test]
fn a_simple_trigger_fires_repeat_count_plus_one_times() {
    let start = ts("2026-03-01T10:00:00Z");
    let t = trigger(start, simple(2, 60_000));
    assert_eq!(
        t.fire_times(None, 10),
        vec![ts("2026-03-01T10:00:00Z"), ts("2026-03-01T10:01:00Z"), ts("2026-03-01T10:02:00Z")]
    );
    let once = trigger(start, simple(0, 0));
    assert_eq!(once.fire_times(None, 10), vec![start]);
}

#[test]
fn triggered_counts_and_moves_next_to_previous() {
    let start = ts("2026-03-01T10:00:00Z");
    let mut t = trigger(start, simple(-1, 1000));
    assert_eq!(t.compute_first_fire_time(None), Some(start));
    t.triggered(None);
    assert_eq!(t.previous_fire_time, Some(start));
    assert_eq!(t.next_fire_time, Some(ts("2026-03-01T10:00:01Z")));
    assert_eq!(t.schedule.times_triggered(), Some(1));
    assert!(t.may_fire_again());
}

#[test]
fn the_end_time_itself_never_fires() {
    let start = ts("2026-03-01T10:00:00Z");
    let t = trigger(start, simple(-1, 60_000)).with_end_time(ts("2026-03-01T10:03:00Z"));
    assert_eq!(t.fire_times(None, 10).len(), 3);
    // Quartz's getFinalFireTime answers 10:03 here, a time getFireTimeAfter never returns.
    assert_eq!(t.final_fire_time(), Some(ts("2026-03-01T10:02:00Z")));
}

#[test]
fn final_fire_time_by_count_by_end_or_none() {
    let start = ts("2026-03-01T10:00:00Z");
    assert_eq!(trigger(start, simple(5, 10_000)).final_fire_time(), Some(ts("2026-03-01T10:00:50Z")));
    assert_eq!(trigger(start, simple(0, 0)).final_fire_time(), Some(start));
    assert_eq!(trigger(start, simple(-1, 10_000)).final_fire_time(), None);
    let ended = trigger(start, simple(100, 10_000)).with_end_time(ts("2026-03-01T10:00:35Z"));
    assert_eq!(ended.final_fire_time(), Some(ts("2026-03-01T10:00:30Z")));
}

#[test]
fn a_calendar_makes_the_trigger_skip_excluded_days() {
    // Friday 2026-03-06 10:00, daily: the weekend is skipped.
    let start = ts("2026-03-06T10:00:00Z");
    let weekdays = Calendar::new(CalendarKind::Weekly { excluded_days: DaysOfWeek::SATURDAY_AND_SUNDAY });
    let t = trigger(start, simple(-1, 86_400_000));
    assert_eq!(
        t.fire_times(Some(&weekdays), 3),
        vec![ts("2026-03-06T10:00:00Z"), ts("2026-03-09T10:00:00Z"), ts("2026-03-10T10:00:00Z")]
    );
}

#[test]
fn a_start_time_the_calendar_excludes_moves_the_first_fire_time() {
    // Saturday start: the first fire time is Monday's position.
    let start = ts("2026-03-07T10:00:00Z");
    let weekdays = Calendar::new(CalendarKind::Weekly { excluded_days: DaysOfWeek::SATURDAY_AND_SUNDAY });
    let mut t = trigger(start, simple(-1, 3_600_000));
    assert_eq!(t.compute_first_fire_time(Some(&weekdays)), Some(ts("2026-03-09T00:00:00Z")));
    // A one-shot trigger whose only time is excluded never fires (as in Quartz).
    let mut once = trigger(start, simple(0, 0));
    assert_eq!(once.compute_first_fire_time(Some(&weekdays)), None);
}

#[test]
fn fire_times_between_two_instants() {
    let start = ts("2026-03-01T00:00:00Z");
    let t = trigger(start, simple(-1, 3_600_000));
    let times = t.fire_times_between(None, ts("2026-03-02T10:30:00Z"), ts("2026-03-02T13:00:00Z"), 100);
    assert_eq!(times, vec![ts("2026-03-02T11:00:00Z"), ts("2026-03-02T12:00:00Z"), ts("2026-03-02T13:00:00Z")]);
}

#[test]
fn validation_names_the_field() {
    let start = ts("2026-03-01T00:00:00Z");
    let cases = [
        (simple(-2, 10), "schedule.repeatCount"),
        (simple(3, 0), "schedule.intervalMs"),
        (simple(0, -1), "schedule.intervalMs"),
    ];
    for (schedule, field) in cases {
        let error = trigger(start, schedule).validate().unwrap_err();
        assert_eq!(error.field(), field, "{error}");
    }
    // A one-shot trigger needs no interval (Quartz: repeatCount 0, interval 0).
    assert!(trigger(start, simple(0, 0)).validate().is_ok());
    let ended = trigger(start, simple(0, 0)).with_end_time(ts("2026-02-01T00:00:00Z"));
    assert_eq!(ended.validate().unwrap_err().field(), "endTime");
}
