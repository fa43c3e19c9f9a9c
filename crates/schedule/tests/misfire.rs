//! Every misfire policy of every trigger type after a simulated downtime: the scheduler fired
//! at 10:00, went down, and came back at 11:05; five fire times (10:12 … 11:00, every 12
//! minutes) were missed. Pure: `now` is an argument.

mod common;

use common::{trigger, ts};
use kairos_schedule::{
    Calendar, CalendarKind, DEFAULT_MISFIRE_THRESHOLD, DailyTimeIntervalSchedule, IntervalUnit,
    MisfireInstruction as M, MisfireOutcome, Schedule, SignedDuration, TimeOfDay, Timestamp, Trigger, TriggerKind,
    Zone,
};

const START: &str = "2026-03-02T10:00:00Z";
const NOW: &str = "2026-03-02T11:05:00Z";

fn twelve_minutes(kind: TriggerKind) -> Schedule {
    match kind {
        TriggerKind::Simple => Schedule::simple(10, SignedDuration::from_mins(12)),
        TriggerKind::Cron => Schedule::cron("0 0/12 * * * ?", "UTC").unwrap(),
        TriggerKind::CalendarInterval => Schedule::calendar_interval(12, IntervalUnit::Minute, "UTC"),
        TriggerKind::DailyTimeInterval => Schedule::DailyTimeInterval(DailyTimeIntervalSchedule {
            start_time_of_day: TimeOfDay::new(8, 0, 0),
            end_time_of_day: TimeOfDay::new(18, 0, 0),
            ..DailyTimeIntervalSchedule::new(12, IntervalUnit::Minute, Zone::utc())
        }),
    }
}

/// A trigger that fired at 10:00 and was due again at 10:12 when the scheduler went down.
fn fired_once(schedule: Schedule, instruction: M) -> Trigger {
    let mut t = trigger(ts(START), schedule).with_misfire_instruction(instruction);
    t.validate().unwrap();
    assert_eq!(t.compute_first_fire_time(None), Some(ts(START)));
    t.triggered_at(None, ts(START));
    assert_eq!(t.next_fire_time, Some(ts("2026-03-02T10:12:00Z")));
    t
}

/// What a scheduler that fires every due trigger at once then fires: the scheduled times of the
/// next `count` firings (fewer if the trigger completes), starting at `now`.
fn fire_from(t: &mut Trigger, now: Timestamp, count: usize) -> Vec<Timestamp> {
    let mut now = now;
    let mut fired = Vec::new();
    while fired.len() < count {
        let Some(next) = t.next_fire_time else { break };
        now = now.max(next);
        fired.push(next);
        t.triggered_at(None, now);
    }
    fired
}

fn times(list: &[&str]) -> Vec<Timestamp> {
    list.iter().map(|t| ts(t)).collect()
}

const MISSED: [&str; 5] = [
    "2026-03-02T10:12:00Z",
    "2026-03-02T10:24:00Z",
    "2026-03-02T10:36:00Z",
    "2026-03-02T10:48:00Z",
    "2026-03-02T11:00:00Z",
];

#[test]
fn the_downtime_is_a_misfire_unless_misfires_are_ignored() {
    for kind in [TriggerKind::Simple, TriggerKind::Cron, TriggerKind::CalendarInterval, TriggerKind::DailyTimeInterval]
    {
        let t = fired_once(twelve_minutes(kind), M::Smart);
        assert!(t.is_misfired(ts(NOW), DEFAULT_MISFIRE_THRESHOLD), "{kind}");
        // exactly one threshold late is not yet a misfire (JDBC store: NEXT_FIRE_TIME < now - threshold)
        assert!(!t.is_misfired(ts("2026-03-02T10:13:00Z"), DEFAULT_MISFIRE_THRESHOLD));
        assert!(t.is_misfired(ts("2026-03-02T10:13:00.001Z"), DEFAULT_MISFIRE_THRESHOLD));
        let ignoring = fired_once(twelve_minutes(kind), M::IgnoreMisfires);
        assert!(!ignoring.is_misfired(ts(NOW), DEFAULT_MISFIRE_THRESHOLD), "{kind}");
    }
}

#[test]
fn ignore_misfires_fires_every_missed_time_one_after_the_other() {
    for kind in [TriggerKind::Simple, TriggerKind::Cron, TriggerKind::CalendarInterval, TriggerKind::DailyTimeInterval]
    {
        let mut t = fired_once(twelve_minutes(kind), M::IgnoreMisfires);
        assert_eq!(t.update_after_misfire(ts(NOW), None), MisfireOutcome::Ignored);
        assert_eq!(t.next_fire_time, Some(ts(MISSED[0])));
        let mut expected = times(&MISSED);
        expected.push(ts("2026-03-02T11:12:00Z"));
        assert_eq!(fire_from(&mut t, ts(NOW), 6), expected, "{kind}");
    }
}

// ----- simple triggers (repeat count 10: eleven fire times, 10:00 … 12:00) -----

#[test]
fn simple_smart_with_a_repeat_count_reschedules_now_with_the_existing_count() {
    let mut t = fired_once(twelve_minutes(TriggerKind::Simple), M::Smart);
    assert_eq!(t.resolved_misfire_instruction(), M::RescheduleNowWithExistingRepeatCount);
    assert_eq!(t.update_after_misfire(ts(NOW), None), MisfireOutcome::FireNow);
    assert_eq!(t.next_fire_time, Some(ts(NOW)));
    assert_eq!(t.start_time, ts(NOW));
    let Schedule::Simple(s) = &t.schedule else { unreachable!() };
    assert_eq!((s.repeat_count, s.times_triggered), (9, 0));
    // ten more fire times from now: eleven in all, as configured
    let fired = fire_from(&mut t, ts(NOW), 100);
    assert_eq!(fired.len(), 10);
    assert_eq!(fired[1], ts("2026-03-02T11:17:00Z"));
    assert_eq!(fired[9], ts("2026-03-02T12:53:00Z"));
    assert!(!t.may_fire_again());
}

#[test]
fn simple_reschedule_now_with_existing_repeat_count() {
    let mut t = fired_once(twelve_minutes(TriggerKind::Simple), M::RescheduleNowWithExistingRepeatCount);
    assert_eq!(t.update_after_misfire(ts(NOW), None), MisfireOutcome::FireNow);
    assert_eq!(fire_from(&mut t, ts(NOW), 100).len(), 10);
}

#[test]
fn simple_fire_now_on_a_repeating_trigger_reschedules_now_with_the_remaining_count() {
    for instruction in [M::FireNow, M::RescheduleNowWithRemainingRepeatCount] {
        let mut t = fired_once(twelve_minutes(TriggerKind::Simple), instruction);
        assert_eq!(t.resolved_misfire_instruction(), M::RescheduleNowWithRemainingRepeatCount);
        assert_eq!(t.update_after_misfire(ts(NOW), None), MisfireOutcome::FireNow);
        // Quartz counts the whole intervals from the missed 10:12 to now: 4 (not 5), so
        // 10 - (1 fired + 4 missed) = 5 repeats are left: six fire times from now.
        let Schedule::Simple(s) = &t.schedule else { unreachable!() };
        assert_eq!((s.repeat_count, s.times_triggered), (5, 0));
        let fired = fire_from(&mut t, ts(NOW), 100);
        assert_eq!(fired.len(), 6, "{instruction}");
        assert_eq!(fired[5], ts("2026-03-02T12:05:00Z"));
    }
}

#[test]
fn simple_reschedule_next_with_remaining_count_counts_the_missed_times() {
    let mut t = fired_once(twelve_minutes(TriggerKind::Simple), M::RescheduleNextWithRemainingCount);
    assert_eq!(t.update_after_misfire(ts(NOW), None), MisfireOutcome::Rescheduled);
    assert_eq!(t.next_fire_time, Some(ts("2026-03-02T11:12:00Z")));
    assert_eq!(t.schedule.times_triggered(), Some(6));
    let fired = fire_from(&mut t, ts(NOW), 100);
    assert_eq!(
        fired,
        times(&[
            "2026-03-02T11:12:00Z",
            "2026-03-02T11:24:00Z",
            "2026-03-02T11:36:00Z",
            "2026-03-02T11:48:00Z",
            "2026-03-02T12:00:00Z"
        ])
    );
}

#[test]
fn simple_reschedule_next_with_existing_count_keeps_the_count_but_not_the_fire_times() {
    let mut t = fired_once(twelve_minutes(TriggerKind::Simple), M::RescheduleNextWithExistingCount);
    assert_eq!(t.update_after_misfire(ts(NOW), None), MisfireOutcome::Rescheduled);
    assert_eq!(t.next_fire_time, Some(ts("2026-03-02T11:12:00Z")));
    assert_eq!(t.schedule.times_triggered(), Some(1));
    // As in Quartz, fire times are positions counted from the start time, so the trigger still
    // ends at 12:00: the same five fire times as with the remaining count.
    assert_eq!(fire_from(&mut t, ts(NOW), 100).len(), 5);
}

#[test]
fn simple_one_shot_smart_fires_now_once() {
    let mut t = trigger(ts(START), Schedule::simple(0, SignedDuration::ZERO));
    t.compute_first_fire_time(None);
    assert_eq!(t.resolved_misfire_instruction(), M::FireNow);
    assert_eq!(t.update_after_misfire(ts(NOW), None), MisfireOutcome::FireNow);
    assert_eq!(fire_from(&mut t, ts(NOW), 10), vec![ts(NOW)]);
    // the next-with-remaining-count policy drops a one-shot trigger whose time passed
    let mut t = trigger(ts(START), Schedule::simple(0, SignedDuration::ZERO))
        .with_misfire_instruction(M::RescheduleNextWithRemainingCount);
    t.compute_first_fire_time(None);
    assert_eq!(t.update_after_misfire(ts(NOW), None), MisfireOutcome::Complete);
}

#[test]
fn simple_forever_smart_reschedules_next_with_the_remaining_count() {
    let mut t = fired_once(Schedule::simple(-1, SignedDuration::from_mins(12)), M::Smart);
    assert_eq!(t.resolved_misfire_instruction(), M::RescheduleNextWithRemainingCount);
    assert_eq!(t.update_after_misfire(ts(NOW), None), MisfireOutcome::Rescheduled);
    assert_eq!(t.next_fire_time, Some(ts("2026-03-02T11:12:00Z")));
    assert_eq!(t.schedule.times_triggered(), Some(6));
}

#[test]
fn simple_reschedule_now_past_the_end_time_completes() {
    for instruction in [
        M::RescheduleNowWithExistingRepeatCount,
        M::RescheduleNowWithRemainingRepeatCount,
        M::RescheduleNextWithExistingCount,
    ] {
        let mut t = trigger(ts(START), twelve_minutes(TriggerKind::Simple))
            .with_end_time(ts("2026-03-02T10:30:00Z"))
            .with_misfire_instruction(instruction);
        t.compute_first_fire_time(None);
        t.triggered_at(None, ts(START));
        assert_eq!(t.update_after_misfire(ts(NOW), None), MisfireOutcome::Complete, "{instruction}");
        assert!(!t.may_fire_again());
    }
}

// ----- cron, calendar-interval and daily-time-interval triggers -----

const OTHERS: [TriggerKind; 3] = [TriggerKind::Cron, TriggerKind::CalendarInterval, TriggerKind::DailyTimeInterval];

#[test]
fn smart_and_fire_once_now_fire_once_then_carry_on_with_the_schedule() {
    for kind in OTHERS {
        for instruction in [M::Smart, M::FireOnceNow] {
            let mut t = fired_once(twelve_minutes(kind), instruction);
            assert_eq!(t.resolved_misfire_instruction(), M::FireOnceNow);
            assert_eq!(t.update_after_misfire(ts(NOW), None), MisfireOutcome::FireNow);
            assert_eq!(t.next_fire_time, Some(ts(NOW)));
            assert_eq!(
                fire_from(&mut t, ts(NOW), 3),
                times(&[NOW, "2026-03-02T11:12:00Z", "2026-03-02T11:24:00Z"]),
                "{kind} {instruction}"
            );
            // the fire-now firing is counted; the missed ones are not
            assert_eq!(t.schedule.times_triggered(), (kind != TriggerKind::Cron).then_some(4));
        }
    }
}

#[test]
fn do_nothing_skips_every_missed_time() {
    for kind in OTHERS {
        let mut t = fired_once(twelve_minutes(kind), M::DoNothing);
        assert_eq!(t.update_after_misfire(ts(NOW), None), MisfireOutcome::Rescheduled);
        assert_eq!(t.next_fire_time, Some(ts("2026-03-02T11:12:00Z")), "{kind}");
        assert_eq!(t.previous_fire_time, Some(ts(START)));
        assert_eq!(t.schedule.times_triggered(), (kind != TriggerKind::Cron).then_some(1));
        assert_eq!(fire_from(&mut t, ts(NOW), 2), times(&["2026-03-02T11:12:00Z", "2026-03-02T11:24:00Z"]));
    }
}

#[test]
fn do_nothing_respects_the_calendar_and_the_daily_window() {
    // A daily calendar excluding 11:00–12:00 moves the next fire time to 12:12.
    let lunch = Calendar::new(CalendarKind::Daily {
        range_start: TimeOfDay::new(11, 0, 0),
        range_end: TimeOfDay::new(12, 0, 0),
        invert_time_range: false,
    });
    for kind in OTHERS {
        let mut t = fired_once(twelve_minutes(kind), M::DoNothing);
        t.update_after_misfire(ts(NOW), Some(&lunch));
        assert_eq!(t.next_fire_time, Some(ts("2026-03-02T12:12:00Z")), "{kind}");
    }
    // Back after the daily window closed: the next fire time is tomorrow's first.
    let mut t = fired_once(twelve_minutes(TriggerKind::DailyTimeInterval), M::DoNothing);
    t.update_after_misfire(ts("2026-03-02T19:00:00Z"), None);
    assert_eq!(t.next_fire_time, Some(ts("2026-03-03T08:00:00Z")));
}

#[test]
fn fire_once_now_ignores_the_calendar_for_now() {
    let all_day =
        Calendar::new(CalendarKind::Holiday { excluded_dates: ["2026-03-02".parse().unwrap()].into_iter().collect() });
    let mut t = fired_once(twelve_minutes(TriggerKind::Cron), M::FireOnceNow);
    assert_eq!(t.update_after_misfire(ts(NOW), Some(&all_day)), MisfireOutcome::FireNow);
    t.triggered_at(Some(&all_day), ts(NOW));
    assert_eq!(t.next_fire_time, Some(ts("2026-03-03T00:00:00Z")));
}

#[test]
fn do_nothing_past_the_end_time_completes() {
    for kind in OTHERS {
        let mut t = trigger(ts(START), twelve_minutes(kind))
            .with_end_time(ts("2026-03-02T10:30:00Z"))
            .with_misfire_instruction(M::DoNothing);
        t.compute_first_fire_time(None);
        t.triggered_at(None, ts(START));
        assert_eq!(t.update_after_misfire(ts(NOW), None), MisfireOutcome::Complete, "{kind}");
    }
}

// Quartz #239: a cron trigger every 15 seconds with "do nothing", down for under a minute.
// Its next fire time (16:44:00) is 42 seconds late: not a misfire (threshold 60 s), so it
// fires; Quartz then fired 16:44:15 and 16:44:30 at once too. kairos fires once and waits.
#[test]
fn do_nothing_does_not_fire_a_burst_of_missed_times_within_the_threshold() {
    let start = ts("2018-06-06T14:40:00Z");
    let now = ts("2018-06-06T14:44:42Z");
    let mut t = trigger(start, Schedule::cron("0/15 * * * * ?", "Europe/Paris").unwrap())
        .with_misfire_instruction(M::DoNothing);
    t.compute_first_fire_time(None);
    t.next_fire_time = Some(ts("2018-06-06T14:44:00Z"));
    assert!(!t.is_misfired(now, DEFAULT_MISFIRE_THRESHOLD));
    assert_eq!(fire_from(&mut t, now, 2), times(&["2018-06-06T14:44:00Z", "2018-06-06T14:44:45Z"]));

    // With fire-once-now (or smart) the late fire times within the threshold all fire.
    let mut t = t.with_misfire_instruction(M::FireOnceNow);
    t.next_fire_time = Some(ts("2018-06-06T14:44:00Z"));
    assert_eq!(
        fire_from(&mut t, now, 4),
        times(&["2018-06-06T14:44:00Z", "2018-06-06T14:44:15Z", "2018-06-06T14:44:30Z", "2018-06-06T14:44:45Z"])
    );
}

// Quartz: TimeBrokerMisfireTest.calendarUpdateUsesSuppliedSchedulingTime
#[test]
fn a_new_calendar_steps_over_excluded_and_misfired_times() {
    let midnight = ts("2030-01-01T00:00:00Z");
    let mut t = trigger(midnight, Schedule::simple(-1, SignedDuration::from_hours(1)));
    t.previous_fire_time = Some(midnight);
    t.next_fire_time = Some(ts("2030-01-01T01:00:00Z"));
    // excludes 01:00:00.000 (and the next half second), nothing else on the hour
    let calendar = Calendar::new(CalendarKind::Daily {
        range_start: TimeOfDay::new(1, 0, 0),
        range_end: TimeOfDay::with_millis(1, 0, 0, 500),
        invert_time_range: false,
    });
    t.update_with_new_calendar(Some(&calendar), SignedDuration::ZERO, ts("2030-01-01T10:00:00Z"));
    // 01:00 is excluded, the step lands on 02:00 which is misfired, so 03:00 (still in the
    // past: only times reached while stepping are checked, as in Quartz)
    assert_eq!(t.next_fire_time, Some(ts("2030-01-01T03:00:00Z")));
}

#[test]
fn a_new_calendar_for_a_trigger_that_never_fired_starts_from_now() {
    let mut t = trigger(ts(START), twelve_minutes(TriggerKind::Cron));
    t.compute_first_fire_time(None);
    t.update_with_new_calendar(None, DEFAULT_MISFIRE_THRESHOLD, ts(NOW));
    assert_eq!(t.next_fire_time, Some(ts("2026-03-02T11:12:00Z")));
}

#[test]
fn misfire_instructions_parse_from_names_and_quartz_constants() {
    let cases = [
        ("smart", M::Smart),
        ("MISFIRE_INSTRUCTION_SMART_POLICY", M::Smart),
        ("ignoreMisfires", M::IgnoreMisfires),
        ("MISFIRE_INSTRUCTION_IGNORE_MISFIRE_POLICY", M::IgnoreMisfires),
        ("fireNow", M::FireNow),
        ("rescheduleNextWithRemainingCount", M::RescheduleNextWithRemainingCount),
        ("withMisfireHandlingInstructionNowWithExistingCount", M::RescheduleNowWithExistingRepeatCount),
        ("MISFIRE_INSTRUCTION_RESCHEDULE_NOW_WITH_REMAINING_REPEAT_COUNT", M::RescheduleNowWithRemainingRepeatCount),
        ("reschedule_next_with_existing_count", M::RescheduleNextWithExistingCount),
        ("doNothing", M::DoNothing),
        ("fireAndProceed", M::FireOnceNow),
        ("MISFIRE_INSTRUCTION_FIRE_ONCE_NOW", M::FireOnceNow),
    ];
    for (text, instruction) in cases {
        assert_eq!(M::from_name(text), Some(instruction), "{text}");
        assert_eq!(M::from_name(instruction.name()), Some(instruction));
        assert_eq!(M::from_name(instruction.quartz_name()), Some(instruction));
    }
    assert_eq!(M::from_name("sometimes"), None);
    let error = M::parse("doNothing", TriggerKind::Simple).unwrap_err();
    assert_eq!(error.field(), "misfireInstruction");
    assert!(error.to_string().contains("simple"), "{error}");
    assert_eq!(M::parse("fireNow", TriggerKind::Simple), Ok(M::FireNow));
    // codes: Quartz's numbers, read per trigger type
    assert_eq!(M::from_code(1, TriggerKind::Simple), Ok(M::FireNow));
    assert_eq!(M::from_code(1, TriggerKind::Cron), Ok(M::FireOnceNow));
    assert_eq!(M::from_code(2, TriggerKind::DailyTimeInterval), Ok(M::DoNothing));
    assert_eq!(M::from_code(2, TriggerKind::Simple), Ok(M::RescheduleNowWithExistingRepeatCount));
    assert_eq!(M::from_code(-1, TriggerKind::CalendarInterval), Ok(M::IgnoreMisfires));
    assert_eq!(M::RescheduleNextWithExistingCount.code(), 5);
    assert_eq!(M::RescheduleNextWithRemainingCount.code(), 4);
    assert_eq!(M::Smart.code(), 0);
}
