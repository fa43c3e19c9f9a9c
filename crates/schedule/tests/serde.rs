//! Triggers and schedules as JSON: what the scheduler stores and reads back.

mod common;

use common::{trigger, ts};
use kairos_schedule::{
    DailyTimeIntervalSchedule, DaysOfWeek, IntervalUnit, MisfireInstruction, Schedule, SignedDuration, TimeOfDay,
    Trigger, TriggerKind, Weekday, Zone,
};
use serde_json::json;

fn round_trip(t: &Trigger) -> Trigger {
    let text = serde_json::to_string(t).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn every_kind_of_trigger_round_trips() {
    let start = ts("2026-03-02T10:00:00.123Z");
    let daily = DailyTimeIntervalSchedule {
        start_time_of_day: TimeOfDay::new(8, 0, 0),
        end_time_of_day: TimeOfDay::new(17, 30, 0),
        days_of_week: DaysOfWeek::MONDAY_THROUGH_FRIDAY,
        repeat_count: 40,
        ..DailyTimeIntervalSchedule::new(15, IntervalUnit::Minute, Zone::new("Europe/Paris"))
    };
    let schedules = [
        Schedule::simple(5, SignedDuration::from_secs(90)),
        Schedule::cron("0 0/5 9-17 ? * MON-FRI", "America/New_York").unwrap(),
        Schedule::calendar_interval(2, IntervalUnit::Week, "Asia/Tokyo"),
        Schedule::DailyTimeInterval(daily),
    ];
    for schedule in schedules {
        let mut t = trigger(start, schedule)
            .with_end_time(ts("2027-01-01T00:00:00Z"))
            .with_calendar("holidays")
            .with_priority(7);
        t.description = Some("nightly report".to_string());
        t.compute_first_fire_time(None);
        t.triggered(None);
        assert_eq!(round_trip(&t), t, "{:?}", t.kind());
    }
}

#[test]
fn the_json_is_camel_case_with_a_type_tag() {
    let t = trigger(ts("2026-03-02T10:00:00Z"), Schedule::simple(-1, SignedDuration::from_secs(30)))
        .with_misfire_instruction(MisfireInstruction::RescheduleNextWithRemainingCount);
    assert_eq!(
        serde_json::to_value(&t).unwrap(),
        json!({
            "key": {"name": "trigger", "group": "DEFAULT"},
            "jobKey": {"name": "job", "group": "DEFAULT"},
            "priority": 5,
            "startTime": "2026-03-02T10:00:00Z",
            "misfireInstruction": "rescheduleNextWithRemainingCount",
            "schedule": {"type": "simple", "repeatCount": -1, "intervalMs": 30000, "timesTriggered": 0}
        })
    );
    let cal = Schedule::CalendarInterval(kairos_schedule::CalendarIntervalSchedule::new(
        1,
        IntervalUnit::Day,
        Zone::new("Europe/Paris"),
    ));
    assert_eq!(
        serde_json::to_value(&cal).unwrap(),
        json!({
            "type": "calendarInterval", "unit": "day", "interval": 1, "timeZone": "Europe/Paris",
            "preserveHourOfDayAcrossDst": false, "skipDayIfHourDoesNotExist": false,
            "timesTriggered": 0
        })
    );
}

#[test]
fn schedules_read_with_defaults_and_quartz_spellings() {
    let daily: Schedule = serde_json::from_value(json!({
        "type": "dailyTimeInterval", "interval": 1, "unit": "HOUR",
        "daysOfWeek": [2, 3, 4, 5, 6]
    }))
    .unwrap();
    let Schedule::DailyTimeInterval(d) = &daily else { panic!("{daily:?}") };
    assert_eq!(d.days_of_week, DaysOfWeek::MONDAY_THROUGH_FRIDAY);
    assert_eq!(d.start_time_of_day, TimeOfDay::MIDNIGHT);
    assert_eq!(d.end_time_of_day, TimeOfDay::LAST_SECOND);
    assert_eq!(d.repeat_count, -1);
    assert_eq!(d.time_zone, Zone::utc());
    assert_eq!(d.days_of_week.quartz_numbers(), vec![2, 3, 4, 5, 6]);
    assert!(d.days_of_week.contains(Weekday::Friday));

    let cron: Schedule = serde_json::from_value(json!({"type": "cron", "expression": "0 0 12 * * ?"})).unwrap();
    assert_eq!(cron.kind(), TriggerKind::Cron);

    let t: Trigger = serde_json::from_value(json!({
        "key": {"name": "t", "group": "g"}, "jobKey": {"name": "j", "group": "g"},
        "startTime": "2026-03-02T10:00:00Z",
        "misfireInstruction": "MISFIRE_INSTRUCTION_DO_NOTHING",
        "schedule": {"type": "cron", "expression": "0 0 12 * * ?"}
    }))
    .unwrap();
    assert_eq!(t.misfire_instruction, MisfireInstruction::DoNothing);
    assert_eq!(t.priority, 5);
}

#[test]
fn a_stored_row_with_an_unknown_zone_loads_and_is_refused_by_validate() {
    let t: Trigger = serde_json::from_value(json!({
        "key": {"name": "t", "group": "g"}, "jobKey": {"name": "j", "group": "g"},
        "startTime": "2026-03-02T10:00:00Z",
        "schedule": {"type": "calendarInterval", "unit": "day", "interval": 1, "timeZone": "Moon/Tranquility"}
    }))
    .unwrap();
    let error = t.validate().unwrap_err();
    assert_eq!(error.field(), "schedule.timeZone");
    // and computing with it does not panic (UTC is used)
    assert!(t.fire_time_after(ts("2026-03-03T00:00:00Z")).is_some());
}

#[test]
fn bad_json_is_refused() {
    for schedule in [
        json!({"type": "weekly", "interval": 1}),
        json!({"type": "cron", "expression": "0 0 25 * * ?"}),
        json!({"type": "calendarInterval", "unit": "fortnight", "interval": 1}),
        json!({"type": "dailyTimeInterval", "unit": "hour", "interval": 1, "daysOfWeek": [8]}),
        json!({"type": "dailyTimeInterval", "unit": "hour", "interval": 1, "startTimeOfDay": "8am"}),
        json!({"type": "simple", "repeatCount": 1}),
    ] {
        assert!(serde_json::from_value::<Schedule>(schedule.clone()).is_err(), "{schedule}");
    }
    let bad_policy = json!({
        "key": {"name": "t", "group": "g"}, "jobKey": {"name": "j", "group": "g"},
        "startTime": "2026-03-02T10:00:00Z", "misfireInstruction": "whenever",
        "schedule": {"type": "cron", "expression": "0 0 12 * * ?"}
    });
    assert!(serde_json::from_value::<Trigger>(bad_policy).is_err());
}

#[test]
fn trigger_validation_names_the_field() {
    let start = ts("2026-03-02T10:00:00Z");
    let mut t = trigger(start, Schedule::simple(0, SignedDuration::ZERO));
    t.key.name = " ".to_string();
    assert_eq!(t.validate().unwrap_err().field(), "key.name");
    let mut t = trigger(start, Schedule::simple(0, SignedDuration::ZERO));
    t.job_key.group = String::new();
    assert_eq!(t.validate().unwrap_err().field(), "jobKey.group");
    let t = trigger(start, Schedule::simple(0, SignedDuration::ZERO)).with_calendar("");
    assert_eq!(t.validate().unwrap_err().field(), "calendarName");
    let daily = DailyTimeIntervalSchedule {
        days_of_week: DaysOfWeek::NONE,
        ..DailyTimeIntervalSchedule::new(1, IntervalUnit::Hour, Zone::utc())
    };
    let error = trigger(start, Schedule::DailyTimeInterval(daily)).validate().unwrap_err();
    assert_eq!(error.field(), "schedule.daysOfWeek");
    assert_eq!(error.to_string(), "schedule.daysOfWeek: must not be empty");
    let daily = DailyTimeIntervalSchedule {
        start_time_of_day: TimeOfDay::new(24, 0, 0),
        ..DailyTimeIntervalSchedule::new(1, IntervalUnit::Hour, Zone::utc())
    };
    let error = trigger(start, Schedule::DailyTimeInterval(daily)).validate().unwrap_err();
    assert_eq!(error.field(), "schedule.startTimeOfDay");
    assert_eq!(TriggerKind::from_quartz_type("CAL_INT"), Some(TriggerKind::CalendarInterval));
    assert_eq!(TriggerKind::DailyTimeInterval.quartz_type(), "DAILY_I");
}
