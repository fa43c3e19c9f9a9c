//! Cron triggers: ports of Quartz's CronTriggerTest and TimeBrokerMisfireTest, and the model's
//! own cases (start/end bounds, zones, final fire time).

mod common;

use common::{local, trigger, ts};
use kairos_schedule::{MisfireInstruction, Schedule, ScheduleError, TriggerKind};

fn cron(expression: &str, zone: &str) -> Schedule {
    Schedule::cron(expression, zone).unwrap()
}

// Quartz: CronTriggerTest.testMisfireInstructionValidity
#[test]
fn only_cron_misfire_instructions_are_accepted() {
    use MisfireInstruction as M;
    let start = ts("2026-01-01T00:00:00Z");
    for instruction in [M::IgnoreMisfires, M::Smart, M::DoNothing, M::FireOnceNow] {
        let t = trigger(start, cron("0 0 12 * * ?", "UTC")).with_misfire_instruction(instruction);
        assert!(t.validate().is_ok(), "{instruction}");
        assert_eq!(M::from_code(instruction.code(), TriggerKind::Cron), Ok(instruction));
    }
    // MISFIRE_INSTRUCTION_DO_NOTHING + 1
    assert!(M::from_code(3, TriggerKind::Cron).is_err());
    let t = trigger(start, cron("0 0 12 * * ?", "UTC")).with_misfire_instruction(M::RescheduleNextWithRemainingCount);
    assert_eq!(t.validate().unwrap_err().field(), "misfireInstruction");
}

// Quartz: TimeBrokerMisfireTest.cronTriggerCalculatesNextFireTimeFromSuppliedSchedulingTime
#[test]
fn do_nothing_moves_to_the_first_fire_time_after_now() {
    let mut t = trigger(ts("2029-01-01T00:00:00Z"), cron("0 0 * * * ?", "UTC"))
        .with_misfire_instruction(MisfireInstruction::DoNothing);
    t.compute_first_fire_time(None);
    t.update_after_misfire(ts("2030-01-01T10:30:15Z"), None);
    assert_eq!(t.next_fire_time, Some(ts("2030-01-01T11:00:00Z")));
}

#[test]
fn the_first_fire_time_is_the_first_match_from_the_start_time() {
    let mut t = trigger(ts("2026-03-02T10:00:30Z"), cron("0 * * * * ?", "UTC"));
    assert_eq!(t.compute_first_fire_time(None), Some(ts("2026-03-02T10:01:00Z")));
    // A start time on a match fires at it; Quartz drops the start time's milliseconds.
    let mut t = trigger(ts("2026-03-02T10:01:00.250Z"), cron("0 * * * * ?", "UTC"));
    assert_eq!(t.compute_first_fire_time(None), Some(ts("2026-03-02T10:01:00Z")));
}

#[test]
fn a_fire_time_equal_to_the_end_time_fires() {
    let t = trigger(ts("2026-03-02T00:00:00Z"), cron("0 0 12 * * ?", "UTC")).with_end_time(ts("2026-03-04T12:00:00Z"));
    assert_eq!(
        t.fire_times(None, 10),
        vec![ts("2026-03-02T12:00:00Z"), ts("2026-03-03T12:00:00Z"), ts("2026-03-04T12:00:00Z")]
    );
    assert_eq!(t.final_fire_time(), Some(ts("2026-03-04T12:00:00Z")));
    let open = trigger(ts("2026-03-02T00:00:00Z"), cron("0 0 12 * * ?", "UTC"));
    assert_eq!(open.final_fire_time(), None);
}

#[test]
fn final_fire_time_before_an_end_time_between_matches() {
    let t = trigger(ts("2026-03-02T00:00:00Z"), cron("0 15 10 ? * MON-FRI", "UTC"))
        .with_end_time(ts("2026-03-09T08:00:00Z"));
    // Monday 2026-03-09 08:00: the last match is Friday 10:15.
    assert_eq!(t.final_fire_time(), Some(ts("2026-03-06T10:15:00Z")));
}

#[test]
fn the_expression_reads_the_zones_wall_clock_across_dst() {
    let t = trigger(ts("2026-03-06T00:00:00Z"), cron("0 0 9 * * ?", "America/New_York"));
    let times = t.fire_times(None, 4);
    let expected: Vec<_> = (6..=9).map(|day| local("America/New_York", 2026, 3, day, 9, 0, 0)).collect();
    assert_eq!(times, expected);
    // 09:00 EST is 14:00Z, 09:00 EDT (from March 8) is 13:00Z.
    assert_eq!(times[0], ts("2026-03-06T14:00:00Z"));
    assert_eq!(times[3], ts("2026-03-09T13:00:00Z"));
}

#[test]
fn an_invalid_expression_names_the_field_and_position() {
    let error = Schedule::cron("0 61 * * * ?", "UTC").unwrap_err();
    assert_eq!(error.field(), "schedule.expression");
    let ScheduleError::Cron { source, .. } = &error else { panic!("{error:?}") };
    assert_eq!(source.position, 3);
    assert!(error.to_string().starts_with("schedule.expression: minute field"), "{error}");
}

#[test]
fn an_unknown_zone_is_refused_by_validate() {
    let t = trigger(ts("2026-03-02T00:00:00Z"), cron("0 0 12 * * ?", "Mars/Olympus_Mons"));
    let error = t.validate().unwrap_err();
    assert_eq!(error.field(), "schedule.timeZone");
    assert!(error.to_string().contains("Mars/Olympus_Mons"));
}
