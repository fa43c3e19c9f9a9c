//! Random schedules, calendars and instants: no operation panics, and fire times only move
//! forward.

mod common;

use common::trigger;
use kairos_schedule::{
    Calendar, CalendarIntervalSchedule, CalendarKind, DailyTimeIntervalSchedule, DaysOfWeek, IntervalUnit,
    MisfireInstruction, MonthDay, Schedule, SignedDuration, SimpleSchedule, TimeOfDay, Timestamp, Trigger, Zone,
};
use proptest::prelude::*;

const ZONES: [&str; 6] =
    ["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kathmandu", "Unknown/Zone"];

const CRONS: [&str; 6] =
    ["0 0 12 * * ?", "0/7 * * * * ?", "0 30 2 * * ?", "0 15 10 ? * 6L", "0 0 0 29 2 ? *", "0 0/20 8-17 ? * MON-FRI"];

const UNITS: [IntervalUnit; 7] = [
    IntervalUnit::Second,
    IntervalUnit::Minute,
    IntervalUnit::Hour,
    IntervalUnit::Day,
    IntervalUnit::Week,
    IntervalUnit::Month,
    IntervalUnit::Year,
];

/// Instants from 1960 to 2160, at millisecond precision.
fn instant() -> impl Strategy<Value = Timestamp> {
    (-315_619_200_000i64..5_995_987_200_000).prop_map(|ms| Timestamp::from_millisecond(ms).unwrap())
}

fn zone() -> impl Strategy<Value = Zone> {
    prop::sample::select(ZONES.to_vec()).prop_map(|name| Zone::new(name.to_string()))
}

fn time_of_day() -> impl Strategy<Value = TimeOfDay> {
    (0u8..26, 0u8..61, 0u8..61).prop_map(|(h, m, s)| TimeOfDay::new(h, m, s))
}

fn schedule() -> impl Strategy<Value = Schedule> {
    prop_oneof![
        (-2i32..30, -5i64..200_000_000_000, 0i32..40).prop_map(|(repeat_count, interval_ms, times_triggered)| {
            Schedule::Simple(SimpleSchedule { repeat_count, interval_ms, times_triggered })
        }),
        (prop::sample::select(CRONS.to_vec()), zone())
            .prop_map(|(text, zone)| Schedule::cron(text, zone.name()).unwrap()),
        (-1i32..400, prop::sample::select(UNITS.to_vec()), zone(), any::<bool>(), any::<bool>()).prop_map(
            |(interval, unit, zone, preserve, skip)| {
                Schedule::CalendarInterval(CalendarIntervalSchedule {
                    preserve_hour_of_day_across_dst: preserve,
                    skip_day_if_hour_does_not_exist: skip,
                    ..CalendarIntervalSchedule::new(interval, unit, zone)
                })
            }
        ),
        (-1i32..5000, prop::sample::select(UNITS.to_vec()), zone(), time_of_day(), time_of_day(), 0u8..128, -2i32..20)
            .prop_map(|(interval, unit, zone, start, end, days, repeat_count)| {
                Schedule::DailyTimeInterval(DailyTimeIntervalSchedule {
                    start_time_of_day: start,
                    end_time_of_day: end,
                    days_of_week: DaysOfWeek::from_quartz_numbers(
                        &(1..=7).filter(|n| days & (1 << (n - 1)) != 0).collect::<Vec<i64>>(),
                    )
                    .unwrap(),
                    repeat_count,
                    ..DailyTimeIntervalSchedule::new(interval, unit, zone)
                })
            }),
    ]
}

fn calendar_kind() -> impl Strategy<Value = CalendarKind> {
    prop_oneof![
        prop::collection::btree_set(
            (0i64..2000).prop_map(|d| jiff::civil::date(2020, 1, 1).checked_add(jiff::Span::new().days(d)).unwrap()),
            0..20
        )
        .prop_map(|excluded_dates| CalendarKind::Holiday { excluded_dates }),
        prop::collection::btree_set((1u8..14, 1u8..33).prop_map(|(m, d)| MonthDay::new(m, d)), 0..40)
            .prop_map(|excluded_days| CalendarKind::Annual { excluded_days }),
        prop::collection::btree_set(0u8..34, 0..34).prop_map(|excluded_days| CalendarKind::Monthly { excluded_days }),
        (0u8..128).prop_map(|bits| CalendarKind::Weekly {
            excluded_days: DaysOfWeek::from_quartz_numbers(
                &(1..=7).filter(|n| bits & (1 << (n - 1)) != 0).collect::<Vec<i64>>(),
            )
            .unwrap(),
        }),
        (time_of_day(), time_of_day(), any::<bool>()).prop_map(|(range_start, range_end, invert_time_range)| {
            CalendarKind::Daily { range_start, range_end, invert_time_range }
        }),
        prop::sample::select(CRONS.to_vec()).prop_map(|text| CalendarKind::Cron { expression: text.parse().unwrap() }),
    ]
}

fn calendar() -> impl Strategy<Value = Option<Calendar>> {
    prop::option::of((calendar_kind(), prop::option::of(zone()), prop::option::of(calendar_kind())).prop_map(
        |(kind, zone, base)| {
            let mut calendar = Calendar::new(kind);
            calendar.time_zone = zone;
            calendar.base_calendar = base.map(|kind| Box::new(Calendar::new(kind)));
            calendar
        },
    ))
}

fn misfire() -> impl Strategy<Value = MisfireInstruction> {
    prop::sample::select(vec![
        MisfireInstruction::Smart,
        MisfireInstruction::IgnoreMisfires,
        MisfireInstruction::FireNow,
        MisfireInstruction::RescheduleNowWithExistingRepeatCount,
        MisfireInstruction::RescheduleNowWithRemainingRepeatCount,
        MisfireInstruction::RescheduleNextWithRemainingCount,
        MisfireInstruction::RescheduleNextWithExistingCount,
        MisfireInstruction::FireOnceNow,
        MisfireInstruction::DoNothing,
    ])
}

fn random_trigger() -> impl Strategy<Value = Trigger> {
    (schedule(), instant(), prop::option::of(0i64..400_000_000_000), misfire()).prop_map(
        |(schedule, start, end_after, instruction)| {
            let mut t = trigger(start, schedule).with_misfire_instruction(instruction);
            t.end_time = end_after.and_then(|ms| start.checked_add(SignedDuration::from_millis(ms)).ok());
            t
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn fire_time_after_is_strictly_later_and_increasing(t in random_trigger(), after in instant()) {
        let _ = t.validate();
        let mut previous = after;
        for _ in 0..5 {
            match t.fire_time_after(previous) {
                Some(next) => {
                    prop_assert!(next > previous, "{next} after {previous}: {t:?}");
                    if let Some(end) = t.end_time { prop_assert!(next <= end); }
                    prop_assert!(next >= t.start_time.checked_sub(SignedDuration::from_secs(1)).unwrap());
                    previous = next;
                }
                None => break,
            }
        }
    }

    #[test]
    fn no_operation_panics(
        t in random_trigger(),
        calendar in calendar(),
        now in instant(),
        threshold in 0i64..10_000_000,
    ) {
        let calendar = calendar.as_ref();
        if let Some(c) = calendar {
            let _ = c.validate();
            let _ = c.is_time_included(now);
            if let Some(next) = c.next_included_time(now) {
                prop_assert!(next >= now);
                prop_assert!(c.is_time_included(next), "{next} {c:?}");
            }
        }
        let mut t = t;
        let _ = t.validate();
        let _ = t.final_fire_time();
        let first = t.compute_first_fire_time(calendar);
        if let (Some(first), Some(c)) = (first, calendar) {
            prop_assert!(c.is_time_included(first));
        }
        let threshold = SignedDuration::from_millis(threshold);
        let _ = t.is_misfired(now, threshold);
        let mut copy = t.clone();
        let _ = copy.update_after_misfire(now, calendar);
        let mut last = None;
        for _ in 0..3 {
            let Some(next) = copy.next_fire_time else { break };
            if let Some(last) = last { prop_assert!(next > last, "{next} after {last}"); }
            last = Some(next);
            copy.triggered_at(calendar, now.max(next));
        }
        t.update_with_new_calendar(calendar, threshold, now);
        let times = t.fire_times(calendar, 4);
        prop_assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
        let _ = serde_json::to_string(&t).unwrap();
    }
}
