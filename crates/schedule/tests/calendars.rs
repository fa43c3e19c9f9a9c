//! Calendars: ports of Quartz's DailyCalendarTest, AnnualCalendarTest and MonthlyCalendarTest,
//! and cases for every calendar type, chains, zones, validation and JSON.

mod common;

use std::collections::BTreeSet;

use common::{local, trigger, ts};
use kairos_schedule::{Calendar, CalendarKind, CronExpr, DaysOfWeek, MonthDay, Schedule, TimeOfDay, Zone};

fn daily_range(start: &str, end: &str, invert: bool) -> Calendar {
    Calendar::new(CalendarKind::Daily {
        range_start: TimeOfDay::parse(start).unwrap(),
        range_end: TimeOfDay::parse(end).unwrap(),
        invert_time_range: invert,
    })
}

fn holiday(dates: &[&str]) -> Calendar {
    Calendar::new(CalendarKind::Holiday { excluded_dates: dates.iter().map(|d| d.parse().unwrap()).collect() })
}

fn weekly() -> Calendar {
    serde_json::from_str(r#"{"type": "weekly"}"#).unwrap()
}

// Quartz: DailyCalendarTest.testStringStartEndTimes
#[test]
fn daily_calendar_times_parse_with_quartz_formats() {
    assert_eq!(TimeOfDay::parse("1:20"), Some(TimeOfDay::new(1, 20, 0)));
    assert_eq!(TimeOfDay::parse("1:20:1:456"), Some(TimeOfDay::with_millis(1, 20, 1, 456)));
    assert_eq!(TimeOfDay::parse("14:50:15:2"), Some(TimeOfDay::with_millis(14, 50, 15, 2)));
    assert_eq!(TimeOfDay::with_millis(1, 20, 1, 456).to_string(), "01:20:01.456");
    assert_eq!(TimeOfDay::parse("14:50:15.002"), Some(TimeOfDay::with_millis(14, 50, 15, 2)));
    assert_eq!(TimeOfDay::parse("14:50:15.5"), Some(TimeOfDay::with_millis(14, 50, 15, 500)));
    for bad in ["", "1", "1:2:3:4:5", "a:00", "1:20.5", "123:00"] {
        assert_eq!(TimeOfDay::parse(bad), None, "{bad}");
    }
}

// Quartz: DailyCalendarTest.testStringInvertTimeRange
#[test]
fn the_inverted_flag_round_trips() {
    let mut calendar = daily_range("1:20", "14:50", true);
    let json = serde_json::to_value(&calendar).unwrap();
    assert_eq!(json["invertTimeRange"], true);
    calendar.kind = CalendarKind::Daily {
        range_start: TimeOfDay::new(1, 20, 0),
        range_end: TimeOfDay::new(14, 50, 0),
        invert_time_range: false,
    };
    let json = serde_json::to_value(&calendar).unwrap();
    assert_eq!(json["invertTimeRange"], false);
    assert_eq!(json["rangeStart"], "01:20:00");
}

#[test]
fn a_daily_calendar_excludes_its_range_both_ends_included() {
    let calendar = daily_range("09:00", "17:00", false);
    assert!(calendar.is_time_included(ts("2026-03-02T08:59:59.999Z")));
    assert!(!calendar.is_time_included(ts("2026-03-02T09:00:00Z")));
    assert!(!calendar.is_time_included(ts("2026-03-02T17:00:00Z")));
    assert!(calendar.is_time_included(ts("2026-03-02T17:00:00.001Z")));
    // Quartz also excludes 00:00:00.000 and 23:59:59.999 of every day; kairos does not.
    assert!(calendar.is_time_included(ts("2026-03-02T00:00:00Z")));
    assert!(calendar.is_time_included(ts("2026-03-02T23:59:59.999Z")));
    assert_eq!(calendar.next_included_time(ts("2026-03-02T10:00:00Z")), Some(ts("2026-03-02T17:00:00.001Z")));
    assert_eq!(calendar.next_included_time(ts("2026-03-02T08:00:00Z")), Some(ts("2026-03-02T08:00:00Z")));
}

#[test]
fn an_inverted_daily_calendar_includes_only_its_range() {
    let calendar = daily_range("09:00", "17:00", true);
    assert!(!calendar.is_time_included(ts("2026-03-02T08:59:59Z")));
    assert!(calendar.is_time_included(ts("2026-03-02T09:00:00Z")));
    assert!(calendar.is_time_included(ts("2026-03-02T17:00:00Z")));
    assert!(!calendar.is_time_included(ts("2026-03-02T17:00:01Z")));
    assert_eq!(calendar.next_included_time(ts("2026-03-02T18:00:00Z")), Some(ts("2026-03-03T09:00:00Z")));
    assert_eq!(calendar.next_included_time(ts("2026-03-02T05:00:00Z")), Some(ts("2026-03-02T09:00:00Z")));
}

#[test]
fn a_daily_calendar_reads_its_zones_wall_clock() {
    let calendar = daily_range("09:00", "17:00", false).in_zone(Zone::new("America/New_York"));
    // 13:00Z is 09:00 in New York after the March 8 switch (EDT), 08:00 before it (EST)
    assert!(!calendar.is_time_included(ts("2026-03-09T13:00:00Z")));
    assert!(calendar.is_time_included(ts("2026-03-06T13:00:00Z")));
    assert_eq!(
        calendar.next_included_time(ts("2026-03-09T13:00:00Z")),
        Some(
            local("America/New_York", 2026, 3, 9, 17, 0, 0).checked_add(jiff::SignedDuration::from_millis(1)).unwrap()
        )
    );
}

// Quartz: AnnualCalendarTest.testExclude, testDaysExcludedOverTime and testRemoveInTheFuture
// (QUARTZ-679: an annual calendar excludes the day in every year)
#[test]
fn an_annual_calendar_excludes_days_in_every_year() {
    let days: BTreeSet<MonthDay> =
        [MonthDay::new(10, 15), MonthDay::new(11, 12), MonthDay::new(9, 1)].into_iter().collect();
    let calendar = Calendar::new(CalendarKind::Annual { excluded_days: days });
    for year in ["2005", "2008", "2031"] {
        assert!(!calendar.is_time_included(ts(&format!("{year}-10-15T12:00:00Z"))));
        assert!(calendar.is_time_included(ts(&format!("{year}-10-16T12:00:00Z"))));
    }
    assert_eq!(calendar.next_included_time(ts("2008-09-01T05:00:00Z")), Some(ts("2008-09-02T00:00:00Z")));
}

// Quartz: AnnualCalendarTest.testDaysExcluded (QUARTZ-590: no list means an empty list)
#[test]
fn an_annual_calendar_without_days_excludes_nothing() {
    let calendar: Calendar = serde_json::from_str(r#"{"type": "annual"}"#).unwrap();
    assert_eq!(calendar.kind, CalendarKind::Annual { excluded_days: BTreeSet::new() });
    assert!(calendar.is_time_included(ts("2026-12-25T00:00:00Z")));
}

// Quartz: MonthlyCalendarTest.testForInfiniteLoop (QUARTZ-636)
#[test]
fn a_monthly_calendar_excluding_the_first_eight_days_finds_the_ninth() {
    let calendar = Calendar::new(CalendarKind::Monthly { excluded_days: (1..9).collect() });
    assert_eq!(calendar.next_included_time(ts("2007-12-08T12:00:00Z")), Some(ts("2007-12-09T00:00:00Z")));
    assert_eq!(calendar.next_included_time(ts("2007-12-31T12:00:00Z")), Some(ts("2007-12-31T12:00:00Z")));
    assert_eq!(calendar.next_included_time(ts("2008-01-01T00:00:00Z")), Some(ts("2008-01-09T00:00:00Z")));
}

#[test]
fn only_the_31st_is_found_in_a_month_that_has_it() {
    let calendar = Calendar::new(CalendarKind::Monthly { excluded_days: (1..=30).collect() });
    assert_eq!(calendar.next_included_time(ts("2026-02-01T00:00:00Z")), Some(ts("2026-03-31T00:00:00Z")));
}

#[test]
fn a_holiday_calendar_excludes_whole_dates_of_one_year() {
    let calendar = holiday(&["2026-12-25", "2027-01-01"]);
    assert!(!calendar.is_time_included(ts("2026-12-25T00:00:00Z")));
    assert!(!calendar.is_time_included(ts("2026-12-25T23:59:59.999Z")));
    assert!(calendar.is_time_included(ts("2026-12-24T23:59:59.999Z")));
    assert!(calendar.is_time_included(ts("2027-12-25T10:00:00Z")));
    assert_eq!(calendar.next_included_time(ts("2026-12-25T10:00:00Z")), Some(ts("2026-12-26T00:00:00Z")));
}

#[test]
fn a_holiday_calendar_in_a_zone_excludes_the_local_date() {
    let calendar = holiday(&["2026-12-25"]).in_zone(Zone::new("Europe/Paris"));
    // 23:30Z on the 24th is 00:30 on the 25th in Paris.
    assert!(!calendar.is_time_included(ts("2026-12-24T23:30:00Z")));
    assert_eq!(calendar.next_included_time(ts("2026-12-25T12:00:00Z")), Some(ts("2026-12-25T23:00:00Z")));
}

#[test]
fn a_weekly_calendar_excludes_the_weekend_by_default() {
    let calendar = weekly();
    assert_eq!(calendar.kind, CalendarKind::Weekly { excluded_days: DaysOfWeek::SATURDAY_AND_SUNDAY });
    // 2026-03-07 is a Saturday
    assert!(!calendar.is_time_included(ts("2026-03-07T10:00:00Z")));
    assert!(calendar.is_time_included(ts("2026-03-06T23:59:59Z")));
    assert_eq!(calendar.next_included_time(ts("2026-03-07T10:00:00Z")), Some(ts("2026-03-09T00:00:00Z")));
    let mondays: Calendar = serde_json::from_str(r#"{"type": "weekly", "excludedDays": ["MON", 1]}"#).unwrap();
    assert!(!mondays.is_time_included(ts("2026-03-09T10:00:00Z")));
    assert!(!mondays.is_time_included(ts("2026-03-08T10:00:00Z")));
    assert!(mondays.is_time_included(ts("2026-03-07T10:00:00Z")));
}

#[test]
fn a_cron_calendar_excludes_the_seconds_its_expression_names() {
    // weekday nights, 00:00:00 to 07:59:59
    let calendar = Calendar::new(CalendarKind::Cron { expression: CronExpr::parse("* * 0-7 ? * MON-FRI").unwrap() });
    assert!(!calendar.is_time_included(ts("2026-03-02T03:00:00Z")));
    assert!(!calendar.is_time_included(ts("2026-03-02T07:59:59.999Z")));
    assert!(calendar.is_time_included(ts("2026-03-02T08:00:00Z")));
    assert!(calendar.is_time_included(ts("2026-03-07T03:00:00Z")));
    assert_eq!(calendar.next_included_time(ts("2026-03-02T03:00:00Z")), Some(ts("2026-03-02T08:00:00Z")));
}

#[test]
fn a_chain_includes_only_what_every_calendar_includes() {
    // Friday 2026-12-25 is a holiday, the weekend follows.
    let chain = holiday(&["2026-12-25"]).with_base(weekly());
    assert!(!chain.is_time_included(ts("2026-12-25T10:00:00Z")));
    assert!(!chain.is_time_included(ts("2026-12-26T10:00:00Z")));
    assert!(chain.is_time_included(ts("2026-12-24T10:00:00Z")));
    assert_eq!(chain.next_included_time(ts("2026-12-25T10:00:00Z")), Some(ts("2026-12-28T00:00:00Z")));
    // and a trigger at 09:00 every day skips all three days
    let t =
        trigger(ts("2026-12-23T09:00:00Z"), Schedule::calendar_interval(1, kairos_schedule::IntervalUnit::Day, "UTC"));
    assert_eq!(
        t.fire_times(Some(&chain), 3),
        vec![ts("2026-12-23T09:00:00Z"), ts("2026-12-24T09:00:00Z"), ts("2026-12-28T09:00:00Z")]
    );
}

#[test]
fn a_three_level_chain_agrees_on_the_next_included_time() {
    // business hours only (inverted daily), no weekends, no holiday on Monday 2026-03-09
    let chain = daily_range("09:00", "17:00", true).with_base(holiday(&["2026-03-09"]).with_base(weekly()));
    assert_eq!(chain.next_included_time(ts("2026-03-06T18:00:00Z")), Some(ts("2026-03-10T09:00:00Z")));
    assert_eq!(chain.chain().count(), 3);
}

#[test]
fn calendars_serialize_as_tagged_camel_case_json() {
    let chain = holiday(&["2026-12-25"]).in_zone(Zone::new("Europe/Paris")).with_base(weekly());
    let json = serde_json::to_value(&chain).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "type": "holiday",
            "excludedDates": ["2026-12-25"],
            "timeZone": "Europe/Paris",
            "baseCalendar": {"type": "weekly", "excludedDays": ["saturday", "sunday"]}
        })
    );
    let back: Calendar = serde_json::from_value(json).unwrap();
    assert_eq!(back, chain);

    for text in [
        r#"{"type": "annual", "excludedDays": ["12-25", "--01-01"]}"#,
        r#"{"type": "monthly", "excludedDays": [1, 15]}"#,
        r#"{"type": "daily", "rangeStart": "09:00", "rangeEnd": "17:00:00.500", "invertTimeRange": true}"#,
        r#"{"type": "cron", "expression": "0 0 12 * * ?", "description": "noon"}"#,
    ] {
        let calendar: Calendar = serde_json::from_str(text).unwrap();
        let again: Calendar = serde_json::from_value(serde_json::to_value(&calendar).unwrap()).unwrap();
        assert_eq!(again, calendar, "{text}");
    }
}

#[test]
fn bad_json_is_refused() {
    for text in [
        r#"{"type": "fortnightly"}"#,
        r#"{"type": "daily", "rangeStart": "9h", "rangeEnd": "17:00"}"#,
        r#"{"type": "weekly", "excludedDays": ["funday"]}"#,
        r#"{"type": "cron", "expression": "not a cron"}"#,
        r#"{"type": "holiday", "excludedDates": ["2026-02-30"]}"#,
    ] {
        assert!(serde_json::from_str::<Calendar>(text).is_err(), "{text}");
    }
}

#[test]
fn validation_names_the_field() {
    let cases = [
        (r#"{"type": "daily", "rangeStart": "17:00", "rangeEnd": "09:00"}"#, "rangeEnd"),
        (r#"{"type": "daily", "rangeStart": "09:00", "rangeEnd": "09:00"}"#, "rangeEnd"),
        (r#"{"type": "daily", "rangeStart": "25:00", "rangeEnd": "26:00"}"#, "rangeStart"),
        (r#"{"type": "monthly", "excludedDays": [0]}"#, "excludedDays"),
        (r#"{"type": "monthly", "excludedDays": [32]}"#, "excludedDays"),
        (r#"{"type": "annual", "excludedDays": ["02-30"]}"#, "excludedDays"),
        (r#"{"type": "weekly", "excludedDays": [1, 2, 3, 4, 5, 6, 7]}"#, "excludedDays"),
        (r#"{"type": "holiday", "timeZone": "Atlantis/Capital"}"#, "timeZone"),
        (
            r#"{"type": "holiday", "baseCalendar": {"type": "daily", "rangeStart": "10:00", "rangeEnd": "09:00"}}"#,
            "baseCalendar.rangeEnd",
        ),
    ];
    for (text, field) in cases {
        let calendar: Calendar = serde_json::from_str(text).unwrap();
        let error = calendar.validate().unwrap_err();
        assert_eq!(error.field(), field, "{text}: {error}");
    }
    let all: Calendar = serde_json::from_value(serde_json::json!({
        "type": "monthly", "excludedDays": (1..=31).collect::<Vec<u8>>()
    }))
    .unwrap();
    assert_eq!(all.validate().unwrap_err().field(), "excludedDays");
    assert!(weekly().with_base(holiday(&["2026-01-01"])).validate().is_ok());
}

// Quartz's CronCalendarTest (1.x; as kept in Quartz.NET's CronCalendarTest.TestTimeIncluded and
// MillisecondsShouldBeIgnored)
#[test]
fn a_cron_calendar_works_on_whole_seconds() {
    let every_15 = Calendar::new(CalendarKind::Cron { expression: CronExpr::parse("0/15 * * * * ?").unwrap() });
    assert!(!every_15.is_time_included(ts("2026-03-02T10:11:30Z")));
    let every_25 = Calendar::new(CalendarKind::Cron { expression: CronExpr::parse("0/25 * * * * ?").unwrap() });
    assert!(every_25.is_time_included(ts("2026-03-02T10:11:30Z")));
    let night = Calendar::new(CalendarKind::Cron { expression: CronExpr::parse("* * 1-3 ? * *").unwrap() });
    assert!(!night.is_time_included(ts("2017-07-27T02:00:01.123Z")));
}

// Quartz's DailyCalendarTest (as kept in Quartz.NET's DailyCalendarTest.TestTimeZone)
#[test]
fn an_inverted_daily_calendar_in_new_york() {
    let calendar = daily_range("12:00:00", "14:00:00", true).in_zone(Zone::new("America/New_York"));
    // 2012-11-02 17:00 UTC is 13:00 in New York (EDT)
    assert!(calendar.is_time_included(ts("2012-11-02T17:00:00Z")));
    assert!(!calendar.is_time_included(ts("2012-11-02T12:00:00Z")));
}

/// A cron calendar excluding every second (or every second of the cron years) leaves a
/// trigger no fire time. Its expression's years end in 2099, so past it the calendar could
/// no longer say what it excludes: the search gives up there instead of answering 2100, as
/// Quartz gives up at its cron's last year (`YEAR_TO_GIVEUP_SCHEDULING_AT` = `MAX_YEAR`) and
/// refuses the trigger ("will never fire").
#[test]
fn a_trigger_a_cron_calendar_excludes_entirely_never_fires() {
    use kairos_schedule::{IntervalUnit, SignedDuration};
    let start = ts("2026-03-02T09:00:00Z");
    let schedules = [
        Schedule::simple(-1, SignedDuration::from_hours(24)),
        Schedule::calendar_interval(1, IntervalUnit::Day, "UTC"),
        Schedule::daily_time_interval(1, IntervalUnit::Hour, "UTC"),
        Schedule::cron("0 0 9 * * ?", "UTC").unwrap(),
    ];
    for expression in ["* * * * * ?", "* * * * * ? 2026-2099"] {
        for zone in ["UTC", "Pacific/Kiritimati", "America/Los_Angeles"] {
            let calendar = Calendar::new(CalendarKind::Cron { expression: CronExpr::parse(expression).unwrap() })
                .in_zone(Zone::new(zone));
            for schedule in &schedules {
                let mut t = trigger(start, schedule.clone());
                assert_eq!(t.compute_first_fire_time(Some(&calendar)), None, "{expression} in {zone}: {schedule:?}");
                // under a chain too, and when the calendar is swapped in later
                let chain = weekly().with_base(calendar.clone());
                assert_eq!(t.compute_first_fire_time(Some(&chain)), None, "chained {expression} in {zone}");
                let mut t = trigger(start, schedule.clone());
                t.compute_first_fire_time(None);
                t.update_with_new_calendar(Some(&calendar), kairos_schedule::DEFAULT_MISFIRE_THRESHOLD, start);
                assert_eq!(t.next_fire_time, None, "new calendar {expression} in {zone}: {schedule:?}");
            }
        }
    }
    // A calendar that leaves 2099's last day fires then, and not after the cron years.
    let calendar = Calendar::new(CalendarKind::Cron { expression: CronExpr::parse("* * * ? * * 2026-2098").unwrap() });
    let t = trigger(start, Schedule::calendar_interval(1, IntervalUnit::Year, "UTC"));
    assert_eq!(t.fire_times(Some(&calendar), 5), vec![ts("2099-03-02T09:00:00Z")]);
}
