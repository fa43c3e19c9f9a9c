//! Calendar interval triggers: ports of Quartz's CalendarIntervalTriggerTest, and DST cases in
//! America/New_York.

mod common;

use common::{hour_in, local, trigger, ts};
use kairos_schedule::{
    CalendarIntervalSchedule, IntervalUnit, MisfireInstruction, Schedule, Timestamp, Trigger, TriggerKind, Zone,
};

const NY: &str = "America/New_York";

fn every(interval: i32, unit: IntervalUnit, zone: &str) -> CalendarIntervalSchedule {
    CalendarIntervalSchedule::new(interval, unit, Zone::new(zone))
}

fn cal(start: Timestamp, schedule: CalendarIntervalSchedule) -> Trigger {
    trigger(start, Schedule::CalendarInterval(schedule))
}

// Quartz: CalendarIntervalTriggerTest.testQTZ331FireTimeAfterBoundary
#[test]
fn fire_time_after_just_before_a_fire_time_is_that_fire_time() {
    let start = ts("2013-02-15T00:00:00Z");
    let next = ts("2013-02-16T00:00:00Z");
    let t = cal(start, every(1, IntervalUnit::Day, "UTC"));
    assert_eq!(t.fire_time_after(start), Some(next));
    assert_eq!(t.fire_time_after(ts("2013-02-15T23:59:59.500Z")), Some(next));
}

// Quartz: CalendarIntervalTriggerTest.testQTZ330DaylightSavingsCornerCase
#[test]
fn preserving_the_hour_still_moves_past_the_after_time() {
    let start = local(NY, 2012, 3, 16, 2, 30, 0);
    let after = local(NY, 2013, 4, 19, 2, 30, 0);
    let mut schedule = every(1, IntervalUnit::Day, NY);
    schedule.preserve_hour_of_day_across_dst = true;
    let mut t = cal(start, schedule);
    t.compute_first_fire_time(None);
    assert!(t.fire_time_after(after).unwrap() > after);
}

/// The `index`-th fire time (0-based) of a trigger started 2005-06-01 09:30:17 UTC.
fn nth_from_2005(unit: IntervalUnit, interval: i32, index: usize) -> Timestamp {
    let t = cal(ts("2005-06-01T09:30:17Z"), every(interval, unit, "UTC"));
    t.fire_times(None, index + 2)[index]
}

// Quartz: CalendarIntervalTriggerTest.testYearlyIntervalGetFireTimeAfter
#[test]
fn yearly() {
    assert_eq!(nth_from_2005(IntervalUnit::Year, 2, 2), ts("2009-06-01T09:30:17Z"));
}

// Quartz: CalendarIntervalTriggerTest.testMonthlyIntervalGetFireTimeAfter
#[test]
fn monthly() {
    assert_eq!(nth_from_2005(IntervalUnit::Month, 5, 5), ts("2007-07-01T09:30:17Z"));
}

// Quartz: CalendarIntervalTriggerTest.testWeeklyIntervalGetFireTimeAfter
#[test]
fn weekly() {
    // 4 intervals of 6 weeks = 168 days
    assert_eq!(nth_from_2005(IntervalUnit::Week, 6, 4), ts("2005-11-16T09:30:17Z"));
}

// Quartz: CalendarIntervalTriggerTest.testDailyIntervalGetFireTimeAfter
#[test]
fn daily() {
    assert_eq!(nth_from_2005(IntervalUnit::Day, 90, 4), ts("2006-05-27T09:30:17Z"));
}

// Quartz: CalendarIntervalTriggerTest.testHourlyIntervalGetFireTimeAfter
#[test]
fn hourly() {
    assert_eq!(nth_from_2005(IntervalUnit::Hour, 100, 4), ts("2005-06-18T01:30:17Z"));
}

// Quartz: CalendarIntervalTriggerTest.testMinutelyIntervalGetFireTimeAfter
#[test]
fn minutely() {
    assert_eq!(nth_from_2005(IntervalUnit::Minute, 100, 4), ts("2005-06-01T16:10:17Z"));
}

// Quartz: CalendarIntervalTriggerTest.testSecondlyIntervalGetFireTimeAfter
#[test]
fn secondly() {
    assert_eq!(nth_from_2005(IntervalUnit::Second, 100, 4), ts("2005-06-01T09:36:57Z"));
}

// Quartz: CalendarIntervalTriggerTest.testDaylightSavingsTransitions (Quartz runs these in the
// JVM's default zone; here the zone is named: America/New_York, and CET/EST as Europe/Berlin
// and the fixed UTC-5 zone Etc/GMT+5)
#[test]
fn days_keep_the_wall_clock_time_across_spring_and_fall_transitions() {
    // every 5 days from 2010-03-12 09:30:17 over the spring transition (March 14)
    let t = cal(local(NY, 2010, 3, 12, 9, 30, 17), every(5, IntervalUnit::Day, NY));
    assert_eq!(t.fire_times(None, 6)[2], local(NY, 2010, 3, 22, 9, 30, 17));

    // QTZ-240: daily from 2011-03-12 01:00
    let t = cal(local(NY, 2011, 3, 12, 1, 0, 0), every(1, IntervalUnit::Day, NY));
    assert_eq!(t.fire_times(None, 6)[2], local(NY, 2011, 3, 14, 1, 0, 0));

    // every 5 days from 2010-10-31 09:30:17 over the fall transition (November 7)
    let t = cal(local(NY, 2010, 10, 31, 9, 30, 17), every(5, IntervalUnit::Day, NY));
    assert_eq!(t.fire_times(None, 6)[3], local(NY, 2010, 11, 15, 9, 30, 17));
}

/// A difference from Quartz, on purpose (docs/scheduler-model.md). A wall time in a fall-back
/// fold is its first occurrence, whatever the previous fire time was. Quartz 2.3.2 adds to a
/// java.util.Calendar, which keeps the previous fire's offset: from 01:30 EST (the second
/// 01:30 of 2025-11-02), 52 weeks on is 2026-11-01 06:30Z, the second 01:30, while stepping one
/// day at a time from 01:30 EDT it is 05:30Z, the first. (Measured on Debian's libquartz2-java
/// 2.3.2; both agree on every other case of this test.)
#[test]
fn a_wall_time_in_the_fold_is_its_first_occurrence_whatever_came_before() {
    let second_1_30 = ts("2025-11-02T06:30:00Z"); // 01:30 EST
    let t = cal(second_1_30, every(52, IntervalUnit::Week, NY));
    assert_eq!(
        t.fire_times(None, 3),
        vec![second_1_30, ts("2026-11-01T05:30:00Z"), ts("2027-10-31T05:30:00Z")],
        "Quartz: 2026-11-01T06:30:00Z"
    );
    let t = cal(local(NY, 2026, 10, 30, 1, 30, 0), every(1, IntervalUnit::Day, NY));
    assert_eq!(
        t.fire_times(None, 4),
        vec![
            ts("2026-10-30T05:30:00Z"),
            ts("2026-10-31T05:30:00Z"),
            ts("2026-11-01T05:30:00Z"), // the first 01:30, as in Quartz
            ts("2026-11-02T06:30:00Z"),
        ]
    );
    // A start in the fold's second occurrence fires there; the next day is plain.
    let t = cal(ts("2026-11-01T06:30:00Z"), every(1, IntervalUnit::Day, NY));
    assert_eq!(t.fire_times(None, 2), vec![ts("2026-11-01T06:30:00Z"), ts("2026-11-02T06:30:00Z")]);
    // Years: from 01:30 EST on 2025-11-02, 2026-11-02 is after the fold (both agree).
    let t = cal(second_1_30, every(1, IntervalUnit::Year, NY));
    assert_eq!(t.fire_times(None, 2)[1], ts("2026-11-02T06:30:00Z"));
}

// Quartz: CalendarIntervalTriggerTest.testDaylightSavingsTransitions (QTZ-240 variants)
#[test]
fn days_follow_the_triggers_zone_not_another_one() {
    let berlin = "Europe/Berlin";
    let start = local(berlin, 2011, 3, 26, 4, 0, 0);
    // Counted in a zone without DST, the Berlin hour moves when Berlin springs forward.
    let t = cal(start, every(1, IntervalUnit::Day, "Etc/GMT+5"));
    assert_ne!(hour_in(berlin, t.fire_times(None, 6)[2]), 4);
    // Counted in Berlin with preserveHourOfDayAcrossDaylightSavings, it stays at 04:00.
    let mut schedule = every(1, IntervalUnit::Day, berlin);
    schedule.preserve_hour_of_day_across_dst = true;
    let t = cal(start, schedule);
    assert_eq!(hour_in(berlin, t.fire_times(None, 6)[2]), 4);
    // Fall: in a zone without DST, days are 24 hours (Quartz's "CEST" is unknown to Java: GMT).
    let t = cal(ts("2011-10-29T01:30:00Z"), every(1, IntervalUnit::Day, "Etc/GMT+5"));
    assert_eq!(t.fire_times(None, 6)[3], ts("2011-11-01T01:30:00Z"));
}

// Quartz: CalendarIntervalTriggerTest.testFinalFireTimes
#[test]
fn final_fire_times() {
    let start = ts("2010-03-12T09:00:00Z");
    let t = cal(start, every(5, IntervalUnit::Day, "UTC")).with_end_time(ts("2010-03-22T09:00:00Z"));
    // Quartz answers the end time (2010-03-22 09:00), at which getFireTimeAfter never fires;
    // kairos answers the last fire time that happens.
    assert_eq!(t.final_fire_time(), Some(ts("2010-03-17T09:00:00Z")));
    assert_eq!(t.fire_times(None, 10).last().copied(), t.final_fire_time());

    // every 5 minutes, ending 15 days later less 2 minutes: the last fire is 5 minutes before
    let t = cal(start, every(5, IntervalUnit::Minute, "UTC")).with_end_time(ts("2010-03-27T08:58:00Z"));
    assert_eq!(t.final_fire_time(), Some(ts("2010-03-27T08:55:00Z")));
    assert_eq!(cal(start, every(5, IntervalUnit::Minute, "UTC")).final_fire_time(), None);
}

// Quartz: CalendarIntervalTriggerTest.testMisfireInstructionValidity
#[test]
fn only_calendar_interval_misfire_instructions_are_accepted() {
    use MisfireInstruction as M;
    for instruction in [M::IgnoreMisfires, M::Smart, M::DoNothing, M::FireOnceNow] {
        let t =
            cal(ts("2026-01-01T00:00:00Z"), every(1, IntervalUnit::Day, "UTC")).with_misfire_instruction(instruction);
        assert!(t.validate().is_ok());
    }
    assert!(M::from_code(3, TriggerKind::CalendarInterval).is_err());
    assert!(M::parse("fireNow", TriggerKind::CalendarInterval).is_err());
}

#[test]
fn a_wall_time_in_the_spring_gap_fires_an_hour_later_that_day_only() {
    // 02:30 does not exist in New York on 2024-03-10.
    let t = cal(local(NY, 2024, 3, 8, 2, 30, 0), every(1, IntervalUnit::Day, NY));
    assert_eq!(
        t.fire_times(None, 4),
        vec![
            local(NY, 2024, 3, 8, 2, 30, 0),
            local(NY, 2024, 3, 9, 2, 30, 0),
            local(NY, 2024, 3, 10, 3, 30, 0),
            local(NY, 2024, 3, 11, 2, 30, 0),
        ]
    );
    assert_eq!(t.fire_times(None, 4)[2], ts("2024-03-10T07:30:00Z"));
}

#[test]
fn preserve_hour_with_skip_day_skips_the_day_whose_hour_does_not_exist() {
    let mut schedule = every(1, IntervalUnit::Day, NY);
    schedule.preserve_hour_of_day_across_dst = true;
    schedule.skip_day_if_hour_does_not_exist = true;
    let t = cal(local(NY, 2024, 3, 8, 2, 30, 0), schedule.clone());
    assert_eq!(
        t.fire_times(None, 3),
        vec![local(NY, 2024, 3, 8, 2, 30, 0), local(NY, 2024, 3, 9, 2, 30, 0), local(NY, 2024, 3, 11, 2, 30, 0),]
    );
    // Every two days from March 8: March 10 is skipped, the next fire is March 12 (4 days).
    schedule.interval = 2;
    let t = cal(local(NY, 2024, 3, 8, 2, 30, 0), schedule.clone());
    assert_eq!(t.fire_times(None, 2)[1], local(NY, 2024, 3, 12, 2, 30, 0));
    // Without preserveHourOfDayAcrossDst the skip flag does nothing (as in Quartz).
    schedule.interval = 1;
    schedule.preserve_hour_of_day_across_dst = false;
    let t = cal(local(NY, 2024, 3, 8, 2, 30, 0), schedule);
    assert_eq!(t.fire_times(None, 3)[2], local(NY, 2024, 3, 10, 3, 30, 0));
}

#[test]
fn a_wall_time_in_the_fall_fold_takes_its_first_occurrence() {
    // 01:30 happens twice in New York on 2024-11-03 (EDT, then EST).
    let t = cal(local(NY, 2024, 11, 2, 1, 30, 0), every(1, IntervalUnit::Day, NY));
    let times = t.fire_times(None, 3);
    assert_eq!(times[1], ts("2024-11-03T05:30:00Z"));
    assert_eq!(times[2], ts("2024-11-04T06:30:00Z"));
}

#[test]
fn hours_are_elapsed_time_across_dst() {
    let t = cal(local(NY, 2024, 3, 10, 0, 0, 0), every(1, IntervalUnit::Hour, NY));
    let hours: Vec<i8> = t.fire_times(None, 4).into_iter().map(|f| hour_in(NY, f)).collect();
    assert_eq!(hours, vec![0, 1, 3, 4]);
}

#[test]
fn a_month_end_start_keeps_its_day_where_the_month_has_it() {
    // Quartz steps a java.util.Calendar (Jan 31 → Feb 29 → Mar 29 …); kairos counts every
    // fire time from the start (Jan 31 → Feb 29 → Mar 31 → Apr 30).
    let t = cal(ts("2024-01-31T10:00:00Z"), every(1, IntervalUnit::Month, "UTC"));
    assert_eq!(
        t.fire_times(None, 4),
        vec![
            ts("2024-01-31T10:00:00Z"),
            ts("2024-02-29T10:00:00Z"),
            ts("2024-03-31T10:00:00Z"),
            ts("2024-04-30T10:00:00Z"),
        ]
    );
}

#[test]
fn far_after_the_start_the_answer_is_still_exact() {
    let t = cal(ts("2000-01-01T06:00:00Z"), every(3, IntervalUnit::Day, NY));
    let after = ts("2090-07-04T12:00:00Z");
    let next = t.fire_time_after(after).unwrap();
    assert!(next > after);
    // 01:00 in New York (the start's wall time), a multiple of 3 days after the start date,
    // and less than one interval after `after`
    let zoned = next.in_tz(NY).unwrap();
    assert_eq!(zoned.hour(), 1);
    let days = zoned.date().since(jiff::civil::date(2000, 1, 1)).unwrap().get_days();
    assert_eq!(days % 3, 0);
    assert!(next.as_second() - after.as_second() <= 3 * 86_400);
}

#[test]
fn validation_names_the_field() {
    let start = ts("2026-01-01T00:00:00Z");
    let error = cal(start, every(0, IntervalUnit::Day, "UTC")).validate().unwrap_err();
    assert_eq!(error.field(), "schedule.interval");
    let error = cal(start, every(1, IntervalUnit::Day, "Nowhere/Land")).validate().unwrap_err();
    assert_eq!(error.field(), "schedule.timeZone");
}
