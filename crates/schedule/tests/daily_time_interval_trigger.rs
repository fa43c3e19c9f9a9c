//! Daily time interval triggers: ports of Quartz's DailyTimeIntervalTriggerImplTest (in UTC,
//! where Quartz uses the JVM's default zone), and DST cases in America/New_York.

mod common;

use common::{date_of, local, trigger, ts};
use kairos_schedule::{
    Calendar, CalendarKind, CronExpr, DailyTimeIntervalSchedule, DaysOfWeek, IntervalUnit, Schedule, TimeOfDay,
    Timestamp, Trigger, Weekday, Zone,
};

const NY: &str = "America/New_York";

fn dti(interval: i32, unit: IntervalUnit) -> DailyTimeIntervalSchedule {
    DailyTimeIntervalSchedule::new(interval, unit, Zone::utc())
}

fn window(start: TimeOfDay, end: TimeOfDay, interval: i32, unit: IntervalUnit) -> DailyTimeIntervalSchedule {
    DailyTimeIntervalSchedule { start_time_of_day: start, end_time_of_day: end, ..dti(interval, unit) }
}

fn daily(start: Timestamp, schedule: DailyTimeIntervalSchedule) -> Trigger {
    trigger(start, Schedule::DailyTimeInterval(schedule))
}

fn tod(hour: u8, minute: u8, second: u8) -> TimeOfDay {
    TimeOfDay::new(hour, minute, second)
}

fn jan_1_2011() -> Timestamp {
    date_of(0, 0, 0, 1, 1, 2011)
}

// Quartz: DailyTimeIntervalTriggerImplTest.testNormalExample
#[test]
fn every_72_minutes_from_8_to_11() {
    let t = daily(jan_1_2011(), window(tod(8, 0, 0), tod(11, 0, 0), 72, IntervalUnit::Minute));
    let times = t.fire_times(None, 48);
    assert_eq!(times.len(), 48);
    assert_eq!(times[0], date_of(8, 0, 0, 1, 1, 2011));
    assert_eq!(times[1], date_of(9, 12, 0, 1, 1, 2011));
    assert_eq!(times[47], date_of(10, 24, 0, 16, 1, 2011));
}

// Quartz: DailyTimeIntervalTriggerImplTest.testQuartzCalendarExclusion
#[test]
fn a_cron_calendar_excludes_hours() {
    let schedule = DailyTimeIntervalSchedule { start_time_of_day: tod(8, 0, 0), ..dti(60, IntervalUnit::Minute) };
    let t = daily(jan_1_2011(), schedule);
    let calendar = Calendar::new(CalendarKind::Cron { expression: CronExpr::parse("* * 9-12 * * ?").unwrap() });
    let times = t.fire_times(Some(&calendar), 48);
    assert_eq!(times.len(), 48);
    assert_eq!(times[0], date_of(8, 0, 0, 1, 1, 2011));
    assert_eq!(times[1], date_of(13, 0, 0, 1, 1, 2011));
    assert_eq!(times[47], date_of(23, 0, 0, 4, 1, 2011));
}

// Quartz: DailyTimeIntervalTriggerImplTest.testValidateTimeOfDayOrder
#[test]
fn the_end_time_of_day_must_not_be_before_the_start() {
    let t = daily(jan_1_2011(), window(tod(12, 0, 0), tod(8, 0, 0), 1, IntervalUnit::Minute));
    assert_eq!(t.validate().unwrap_err().field(), "schedule.endTimeOfDay");
    // equal is allowed (one fire a day)
    let t = daily(jan_1_2011(), window(tod(8, 0, 0), tod(8, 0, 0), 1, IntervalUnit::Minute));
    assert!(t.validate().is_ok());
}

// Quartz: DailyTimeIntervalTriggerImplTest.testValidateInterval and
// testSetRepeatIntervalWithInvalidValues
#[test]
fn the_interval_is_at_most_24_hours_in_seconds_minutes_or_hours() {
    let cases = [
        (25, IntervalUnit::Hour, "schedule.interval"),
        (60 * 25, IntervalUnit::Minute, "schedule.interval"),
        (60 * 60 * 25, IntervalUnit::Second, "schedule.interval"),
        (1, IntervalUnit::Day, "schedule.unit"),
        (0, IntervalUnit::Second, "schedule.interval"),
        (i32::MIN, IntervalUnit::Second, "schedule.interval"),
    ];
    for (interval, unit, field) in cases {
        let error = daily(jan_1_2011(), dti(interval, unit)).validate().unwrap_err();
        assert_eq!(error.field(), field, "{interval} {unit}: {error}");
    }
    assert!(daily(jan_1_2011(), dti(24, IntervalUnit::Hour)).validate().is_ok());
}

// Quartz: DailyTimeIntervalTriggerImplTest.testStartTimeWithoutStartTimeOfDay
#[test]
fn without_times_of_day_it_fires_all_day() {
    let times = daily(jan_1_2011(), dti(60, IntervalUnit::Minute)).fire_times(None, 48);
    assert_eq!(times.len(), 48);
    assert_eq!(times[0], date_of(0, 0, 0, 1, 1, 2011));
    assert_eq!(times[47], date_of(23, 0, 0, 2, 1, 2011));
}

// Quartz: DailyTimeIntervalTriggerImplTest.testEndTimeWithoutEndTimeOfDay
#[test]
fn the_end_time_is_inclusive() {
    let t = daily(jan_1_2011(), dti(60, IntervalUnit::Minute)).with_end_time(date_of(22, 0, 0, 2, 1, 2011));
    let times = t.fire_times(None, 48);
    assert_eq!(times.len(), 47);
    assert_eq!(times[0], date_of(0, 0, 0, 1, 1, 2011));
    assert_eq!(times[46], date_of(22, 0, 0, 2, 1, 2011));
    assert_eq!(t.final_fire_time(), Some(date_of(22, 0, 0, 2, 1, 2011)));
}

// Quartz: DailyTimeIntervalTriggerImplTest.testStartTimeBeforeStartTimeOfDay
#[test]
fn a_start_time_before_the_start_time_of_day() {
    let schedule = DailyTimeIntervalSchedule { start_time_of_day: tod(8, 0, 0), ..dti(60, IntervalUnit::Minute) };
    let times = daily(jan_1_2011(), schedule).fire_times(None, 48);
    assert_eq!(times[0], date_of(8, 0, 0, 1, 1, 2011));
    assert_eq!(times[47], date_of(23, 0, 0, 3, 1, 2011));
}

// Quartz: DailyTimeIntervalTriggerImplTest.testStartTimeBeforeStartTimeOfDayOnInvalidDay
#[test]
fn a_start_time_on_a_day_not_chosen() {
    let schedule = DailyTimeIntervalSchedule {
        start_time_of_day: tod(8, 0, 0),
        days_of_week: DaysOfWeek::MONDAY_THROUGH_FRIDAY,
        ..dti(60, IntervalUnit::Minute)
    };
    let t = daily(jan_1_2011(), schedule); // a Saturday
    assert_eq!(t.fire_time_after(date_of(6, 0, 0, 22, 5, 2010)), Some(date_of(8, 0, 0, 3, 1, 2011)));
    let times = t.fire_times(None, 48);
    assert_eq!(times[0], date_of(8, 0, 0, 3, 1, 2011));
    assert_eq!(times[47], date_of(23, 0, 0, 5, 1, 2011));
}

// Quartz: DailyTimeIntervalTriggerImplTest.testStartTimeAfterStartTimeOfDay
#[test]
fn a_start_time_after_the_start_time_of_day() {
    let schedule = DailyTimeIntervalSchedule { start_time_of_day: tod(8, 0, 0), ..dti(60, IntervalUnit::Minute) };
    let times = daily(date_of(9, 23, 0, 1, 1, 2011), schedule).fire_times(None, 48);
    assert_eq!(times[0], date_of(10, 0, 0, 1, 1, 2011));
    assert_eq!(times[47], date_of(9, 0, 0, 4, 1, 2011));
}

// Quartz: DailyTimeIntervalTriggerImplTest.testEndTimeBeforeEndTimeOfDay
#[test]
fn an_end_time_before_the_end_time_of_day() {
    let schedule = DailyTimeIntervalSchedule { end_time_of_day: tod(17, 0, 0), ..dti(60, IntervalUnit::Minute) };
    let t = daily(jan_1_2011(), schedule).with_end_time(date_of(16, 0, 0, 2, 1, 2011));
    let times = t.fire_times(None, 48);
    assert_eq!(times.len(), 35);
    assert_eq!(times[0], date_of(0, 0, 0, 1, 1, 2011));
    assert_eq!(times[17], date_of(17, 0, 0, 1, 1, 2011));
    assert_eq!(times[34], date_of(16, 0, 0, 2, 1, 2011));
}

// Quartz: DailyTimeIntervalTriggerImplTest.testEndTimeAfterEndTimeOfDay
#[test]
fn an_end_time_after_the_end_time_of_day() {
    let schedule = DailyTimeIntervalSchedule { end_time_of_day: tod(17, 0, 0), ..dti(60, IntervalUnit::Minute) };
    let t = daily(jan_1_2011(), schedule).with_end_time(date_of(18, 0, 0, 2, 1, 2011));
    let times = t.fire_times(None, 48);
    assert_eq!(times.len(), 36);
    assert_eq!(times[17], date_of(17, 0, 0, 1, 1, 2011));
    assert_eq!(times[35], date_of(17, 0, 0, 2, 1, 2011));
    // Quartz answers the end time (18:00), which never fires; kairos the last fire time.
    assert_eq!(t.final_fire_time(), Some(date_of(17, 0, 0, 2, 1, 2011)));
}

// Quartz: DailyTimeIntervalTriggerImplTest.testTimeOfDayWithStartTime and testAllDaysOfTheWeek
#[test]
fn from_8_to_17_every_day() {
    let every_day = DaysOfWeek::of(&[
        Weekday::Monday,
        Weekday::Tuesday,
        Weekday::Wednesday,
        Weekday::Thursday,
        Weekday::Friday,
        Weekday::Saturday,
        Weekday::Sunday,
    ]);
    assert_eq!(every_day, DaysOfWeek::ALL);
    for days in [DaysOfWeek::ALL, every_day] {
        let schedule = DailyTimeIntervalSchedule {
            days_of_week: days,
            ..window(tod(8, 0, 0), tod(17, 0, 0), 60, IntervalUnit::Minute)
        };
        let times = daily(jan_1_2011(), schedule).fire_times(None, 48);
        assert_eq!(times[0], date_of(8, 0, 0, 1, 1, 2011));
        assert_eq!(times[9], date_of(17, 0, 0, 1, 1, 2011));
        assert_eq!(times[47], date_of(15, 0, 0, 5, 1, 2011));
    }
}

// Quartz: DailyTimeIntervalTriggerImplTest.testTimeOfDayWithEndTime
#[test]
fn from_8_to_17_until_an_end_time() {
    let t = daily(jan_1_2011(), window(tod(8, 0, 0), tod(17, 0, 0), 60, IntervalUnit::Minute))
        .with_end_time(date_of(0, 0, 0, 4, 1, 2011));
    let times = t.fire_times(None, 48);
    assert_eq!(times.len(), 30);
    assert_eq!(times[9], date_of(17, 0, 0, 1, 1, 2011));
    assert_eq!(times[29], date_of(17, 0, 0, 3, 1, 2011));
}

// Quartz: DailyTimeIntervalTriggerImplTest.testTimeOfDayWithEndTime2
#[test]
fn an_end_time_of_day_on_the_last_second() {
    let t = daily(jan_1_2011(), window(tod(8, 23, 0), tod(23, 59, 59), 60, IntervalUnit::Minute));
    let times = t.fire_times(None, 48);
    assert_eq!(times[0], date_of(8, 23, 0, 1, 1, 2011));
    assert_eq!(times[47], date_of(23, 23, 0, 3, 1, 2011));
}

fn weekday_of(t: Timestamp) -> Weekday {
    t.to_zoned(jiff::tz::TimeZone::UTC).weekday()
}

// Quartz: DailyTimeIntervalTriggerImplTest.testMonThroughFri
#[test]
fn monday_through_friday() {
    let schedule = DailyTimeIntervalSchedule {
        days_of_week: DaysOfWeek::MONDAY_THROUGH_FRIDAY,
        ..window(tod(8, 0, 0), tod(17, 0, 0), 60, IntervalUnit::Minute)
    };
    let times = daily(jan_1_2011(), schedule).fire_times(None, 48);
    assert_eq!(times[0], date_of(8, 0, 0, 3, 1, 2011));
    assert_eq!(weekday_of(times[0]), Weekday::Monday);
    assert_eq!(times[10], date_of(8, 0, 0, 4, 1, 2011));
    assert_eq!(weekday_of(times[10]), Weekday::Tuesday);
    assert_eq!(times[47], date_of(15, 0, 0, 7, 1, 2011));
    assert_eq!(weekday_of(times[47]), Weekday::Friday);
}

// Quartz: DailyTimeIntervalTriggerImplTest.testSatAndSun
#[test]
fn saturday_and_sunday() {
    let schedule = DailyTimeIntervalSchedule {
        days_of_week: DaysOfWeek::SATURDAY_AND_SUNDAY,
        ..window(tod(8, 0, 0), tod(17, 0, 0), 60, IntervalUnit::Minute)
    };
    let times = daily(jan_1_2011(), schedule).fire_times(None, 48);
    assert_eq!(times[0], date_of(8, 0, 0, 1, 1, 2011));
    assert_eq!(times[10], date_of(8, 0, 0, 2, 1, 2011));
    assert_eq!(weekday_of(times[10]), Weekday::Sunday);
    assert_eq!(times[47], date_of(15, 0, 0, 15, 1, 2011));
    assert_eq!(weekday_of(times[47]), Weekday::Saturday);
}

// Quartz: DailyTimeIntervalTriggerImplTest.testMonOnly
#[test]
fn monday_only() {
    let schedule = DailyTimeIntervalSchedule {
        days_of_week: DaysOfWeek::of(&[Weekday::Monday]),
        ..window(tod(8, 0, 0), tod(17, 0, 0), 60, IntervalUnit::Minute)
    };
    let times = daily(jan_1_2011(), schedule).fire_times(None, 48);
    assert_eq!(times[0], date_of(8, 0, 0, 3, 1, 2011));
    assert_eq!(times[10], date_of(8, 0, 0, 10, 1, 2011));
    assert_eq!(times[47], date_of(15, 0, 0, 31, 1, 2011));
}

// Quartz: DailyTimeIntervalTriggerImplTest.testTimeOfDayWithEndTimeOddInterval
#[test]
fn an_interval_that_does_not_divide_the_window() {
    let t = daily(jan_1_2011(), window(tod(8, 0, 0), tod(10, 0, 0), 23, IntervalUnit::Minute))
        .with_end_time(date_of(0, 0, 0, 4, 1, 2011));
    let times = t.fire_times(None, 48);
    assert_eq!(times.len(), 18);
    assert_eq!(times[5], date_of(9, 55, 0, 1, 1, 2011));
    assert_eq!(times[17], date_of(9, 55, 0, 3, 1, 2011));
}

// Quartz: DailyTimeIntervalTriggerImplTest.testHourInterval
#[test]
fn every_two_hours() {
    let t = daily(jan_1_2011(), window(tod(8, 1, 15), tod(16, 1, 15), 2, IntervalUnit::Hour))
        .with_end_time(date_of(13, 0, 0, 15, 1, 2011));
    let times = t.fire_times(None, 48);
    assert_eq!(times.len(), 48);
    assert_eq!(times[0], date_of(8, 1, 15, 1, 1, 2011));
    assert_eq!(times[47], date_of(12, 1, 15, 10, 1, 2011));
}

// Quartz: DailyTimeIntervalTriggerImplTest.testSecondInterval
#[test]
fn every_72_seconds() {
    let t = daily(jan_1_2011(), window(tod(8, 0, 2), tod(13, 30, 0), 72, IntervalUnit::Second));
    let times = t.fire_times(None, 48);
    assert_eq!(times[0], date_of(8, 0, 2, 1, 1, 2011));
    assert_eq!(times[47], date_of(8, 56, 26, 1, 1, 2011));
}

// Quartz: DailyTimeIntervalTriggerImplTest.testRepeatCountInf, testRepeatCount, testRepeatCount0
#[test]
fn repeat_counts() {
    let base = window(tod(8, 0, 0), tod(11, 0, 0), 72, IntervalUnit::Minute);
    let times = daily(jan_1_2011(), base.clone()).fire_times(None, 48);
    assert_eq!(times[47], date_of(10, 24, 0, 16, 1, 2011));

    let seven = DailyTimeIntervalSchedule { repeat_count: 7, ..base.clone() };
    let times = daily(jan_1_2011(), seven).fire_times(None, 48);
    assert_eq!(times.len(), 8);
    assert_eq!(times[7], date_of(9, 12, 0, 3, 1, 2011));

    let zero = DailyTimeIntervalSchedule { repeat_count: 0, ..base };
    let times = daily(jan_1_2011(), zero).fire_times(None, 48);
    assert_eq!(times, vec![date_of(8, 0, 0, 1, 1, 2011)]);
}

// Quartz: DailyTimeIntervalTriggerImplTest.testGetFireTime
#[test]
fn fire_time_after_within_and_around_the_window() {
    let t = daily(jan_1_2011(), window(tod(8, 0, 0), tod(13, 0, 0), 1, IntervalUnit::Hour));
    let cases = [
        (date_of(0, 0, 0, 1, 1, 2011), date_of(8, 0, 0, 1, 1, 2011)),
        (date_of(7, 0, 0, 1, 1, 2011), date_of(8, 0, 0, 1, 1, 2011)),
        (date_of(7, 59, 59, 1, 1, 2011), date_of(8, 0, 0, 1, 1, 2011)),
        (date_of(8, 0, 0, 1, 1, 2011), date_of(9, 0, 0, 1, 1, 2011)),
        (date_of(9, 0, 0, 1, 1, 2011), date_of(10, 0, 0, 1, 1, 2011)),
        (date_of(12, 59, 59, 1, 1, 2011), date_of(13, 0, 0, 1, 1, 2011)),
        (date_of(13, 0, 0, 1, 1, 2011), date_of(8, 0, 0, 2, 1, 2011)),
    ];
    for (after, expected) in cases {
        assert_eq!(t.fire_time_after(after), Some(expected), "after {after}");
    }
}

// Quartz: DailyTimeIntervalTriggerImplTest.testGetFireTimeWithDateBeforeStartTime
#[test]
fn fire_time_after_an_instant_before_the_start_time() {
    let t = daily(date_of(0, 0, 0, 1, 1, 2012), window(tod(8, 0, 0), tod(13, 0, 0), 1, IntervalUnit::Hour));
    for after in [
        date_of(0, 0, 0, 1, 1, 2011),
        date_of(7, 59, 59, 1, 1, 2011),
        date_of(13, 0, 0, 1, 1, 2011),
        date_of(0, 0, 0, 1, 1, 2012),
    ] {
        assert_eq!(t.fire_time_after(after), Some(date_of(8, 0, 0, 1, 1, 2012)));
    }
    assert_eq!(t.fire_time_after(date_of(13, 0, 0, 1, 1, 2012)), Some(date_of(8, 0, 0, 2, 1, 2012)));
}

// Quartz: DailyTimeIntervalTriggerImplTest.testGetFireTimeWhenStartTimeAndTimeOfDayIsSame (QTZ-369)
#[test]
fn a_start_time_equal_to_the_start_time_of_day_fires_at_it() {
    let t = daily(date_of(8, 0, 0, 1, 1, 2012), window(tod(8, 0, 0), tod(13, 0, 0), 1, IntervalUnit::Hour));
    assert_eq!(t.fire_time_after(date_of(0, 0, 0, 1, 1, 2012)), Some(date_of(8, 0, 0, 1, 1, 2012)));
}

#[test]
fn an_end_time_before_the_next_window_means_no_fire_time() {
    // Quartz answers 08:00 here although the end time is 07:00.
    let t = daily(jan_1_2011(), window(tod(8, 0, 0), tod(17, 0, 0), 1, IntervalUnit::Hour))
        .with_end_time(date_of(7, 0, 0, 1, 1, 2011));
    assert_eq!(t.fire_time_after(jan_1_2011()), None);
}

fn ny(start: TimeOfDay, end: TimeOfDay) -> DailyTimeIntervalSchedule {
    DailyTimeIntervalSchedule {
        start_time_of_day: start,
        end_time_of_day: end,
        ..DailyTimeIntervalSchedule::new(1, IntervalUnit::Hour, Zone::new(NY))
    }
}

#[test]
fn spring_forward_day_has_one_hour_less_in_the_window() {
    let t = daily(local(NY, 2024, 3, 10, 0, 0, 0), ny(tod(1, 0, 0), tod(4, 0, 0)));
    let times = t.fire_times_between(None, ts("2024-03-10T00:00:00Z"), ts("2024-03-10T23:59:59Z"), 10);
    assert_eq!(
        times,
        vec![
            ts("2024-03-10T06:00:00Z"), // 01:00 EST
            ts("2024-03-10T07:00:00Z"), // 03:00 EDT
            ts("2024-03-10T08:00:00Z"), // 04:00 EDT
        ]
    );
}

#[test]
fn fall_back_day_has_one_hour_more_in_the_window() {
    let t = daily(local(NY, 2024, 11, 3, 0, 0, 0), ny(tod(1, 0, 0), tod(4, 0, 0)));
    let times = t.fire_times_between(None, ts("2024-11-03T00:00:00Z"), ts("2024-11-03T23:59:59Z"), 10);
    assert_eq!(
        times,
        vec![
            ts("2024-11-03T05:00:00Z"), // 01:00 EDT
            ts("2024-11-03T06:00:00Z"), // 01:00 EST
            ts("2024-11-03T07:00:00Z"), // 02:00 EST
            ts("2024-11-03T08:00:00Z"), // 03:00 EST
            ts("2024-11-03T09:00:00Z"), // 04:00 EST
        ]
    );
}

/// A difference from Quartz, on purpose (docs/scheduler-model.md). Quartz 2.3.2 resolves the
/// start time of day with java.util.Calendar, which reads a wall time in a fold as standard
/// time, the second occurrence: its 01:00-04:00 hourly window fires 4 times on the fall-back
/// day (06:00Z to 09:00Z: 01:00 EST … 04:00 EST) and a daily 01:30 fires at 01:30 EST (06:30Z).
/// kairos takes the first occurrence, as for every trigger and calendar: 5 fires (the test
/// above), and 01:30 EDT. (Measured on Debian's libquartz2-java 2.3.2, JVM zone New York.)
#[test]
fn a_time_of_day_in_the_fold_is_its_first_occurrence() {
    let once_at_1_30 = ny(tod(1, 30, 0), tod(1, 30, 0));
    let t = daily(local(NY, 2026, 10, 31, 0, 0, 0), once_at_1_30.clone());
    assert_eq!(
        t.fire_times(None, 3),
        vec![
            ts("2026-10-31T05:30:00Z"), // 01:30 EDT
            ts("2026-11-01T05:30:00Z"), // 01:30 EDT, the first 01:30 (Quartz: 06:30Z, the second)
            ts("2026-11-02T06:30:00Z"), // 01:30 EST
        ]
    );
    // In a spring-forward gap both move to the gap's end alike: 01:30 exists there.
    let t = daily(local(NY, 2026, 3, 7, 0, 0, 0), once_at_1_30);
    assert_eq!(
        t.fire_times(None, 3),
        vec![ts("2026-03-07T06:30:00Z"), ts("2026-03-08T06:30:00Z"), ts("2026-03-09T05:30:00Z")]
    );
}

#[test]
fn a_start_time_of_day_in_the_gap_starts_when_the_gap_ends() {
    let t = daily(local(NY, 2024, 3, 9, 0, 0, 0), ny(tod(2, 30, 0), tod(5, 0, 0)));
    let times = t.fire_times(None, 6);
    assert_eq!(times[0], local(NY, 2024, 3, 9, 2, 30, 0));
    // March 10: 02:30 does not exist, the window opens at 03:30 EDT
    assert_eq!(times[3], ts("2024-03-10T07:30:00Z"));
    assert_eq!(times[4], ts("2024-03-10T08:30:00Z"));
    assert_eq!(times[5], local(NY, 2024, 3, 11, 2, 30, 0));
}

#[test]
fn the_days_of_the_week_are_the_zones() {
    // A Sunday-only trigger at 23:30 New York time fires on Monday in UTC.
    let schedule = DailyTimeIntervalSchedule {
        days_of_week: DaysOfWeek::of(&[Weekday::Sunday]),
        ..ny(tod(23, 30, 0), tod(23, 30, 0))
    };
    // 2026-03-02T00:00Z is still Sunday, March 1, 19:00 in New York
    let t = daily(ts("2026-03-02T00:00:00Z"), schedule);
    let first = t.fire_times(None, 1)[0];
    assert_eq!(first, ts("2026-03-02T04:30:00Z"));
    assert_eq!(weekday_of(first), Weekday::Monday);
}
