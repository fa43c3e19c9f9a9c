//! kairos's DST policy, end to end (docs/cron.md "Daylight saving time"):
//! * a matching local time that does not exist fires once, at the end of the gap (all the
//!   gap's matching times, and the gap's end itself, collapse into that one firing);
//! * a matching local time that occurs twice fires at its first occurrence, except when the
//!   hour field is every hour: then both occurrences fire (interval-like schedules keep going).
//!
//! In America/New_York, Europe/Berlin and Australia/Lord_Howe (a 30-minute shift), and
//! against the brute-force reference of `support/model.rs` near many transitions.

mod support;

use jiff::SignedDuration;
use kairos_cron::{CronExpr, TimeZone, Timestamp};
use support::model::{Rng, gen_case, reference};

fn ts(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn zone(name: &str) -> TimeZone {
    TimeZone::get(name).unwrap()
}

/// The next `n` fire times after `from` in `tz`, as UTC instants.
fn next(expr: &str, tz: &str, from: &str, n: usize) -> Vec<Timestamp> {
    let c = CronExpr::parse(expr).unwrap();
    let tz = zone(tz);
    std::iter::successors(c.next_after(ts(from), &tz), |t| c.next_after(*t, &tz)).take(n).collect()
}

fn times(list: &[&str]) -> Vec<Timestamp> {
    list.iter().map(|s| ts(s)).collect()
}

// America/New_York 2024: 03-10 02:00 EST → 03:00 EDT (07:00Z); 11-03 02:00 EDT → 01:00 EST (06:00Z).

#[test]
fn new_york_spring_forward_fires_at_the_end_of_the_gap() {
    let ny = "America/New_York";
    assert_eq!(
        next("0 30 2 * * ?", ny, "2024-03-09T12:00:00Z", 2),
        times(&["2024-03-10T03:00:00-04:00", "2024-03-11T02:30:00-04:00"])
    );
    // Four matching times in the gap: one firing.
    assert_eq!(
        next("0 0/15 2 * * ?", ny, "2024-03-09T12:00:00Z", 2),
        times(&["2024-03-10T03:00:00-04:00", "2024-03-11T02:00:00-04:00"])
    );
    // The gap's end matches too: still once, then on as usual.
    assert_eq!(
        next("0 0/15 2-3 * * ?", ny, "2024-03-10T06:50:00Z", 3),
        times(&["2024-03-10T03:00:00-04:00", "2024-03-10T03:15:00-04:00", "2024-03-10T03:30:00-04:00"])
    );
    assert_eq!(
        next("0 */15 * * * ?", ny, "2024-03-10T06:40:00Z", 3),
        times(&["2024-03-10T01:45:00-05:00", "2024-03-10T03:00:00-04:00", "2024-03-10T03:15:00-04:00"])
    );
}

#[test]
fn new_york_fall_back_fires_once_at_the_first_occurrence() {
    let ny = "America/New_York";
    assert_eq!(
        next("0 30 1 * * ?", ny, "2024-11-02T12:00:00Z", 2),
        times(&["2024-11-03T01:30:00-04:00", "2024-11-04T01:30:00-05:00"])
    );
    // From inside the repeated hour (01:10 EST), 01:30 has fired already (as EDT).
    assert_eq!(next("0 30 1 * * ?", ny, "2024-11-03T06:10:00Z", 1), times(&["2024-11-04T01:30:00-05:00"]));
    let c = CronExpr::parse("0 30 1 * * ?").unwrap();
    assert!(c.is_satisfied_by(ts("2024-11-03T01:30:00-04:00"), &zone(ny)));
    assert!(!c.is_satisfied_by(ts("2024-11-03T01:30:00-05:00"), &zone(ny)));
}

#[test]
fn new_york_fall_back_every_hour_schedules_keep_firing() {
    let ny = "America/New_York";
    assert_eq!(
        next("0 */30 * * * ?", ny, "2024-11-03T04:00:00Z", 6),
        times(&[
            "2024-11-03T00:30:00-04:00",
            "2024-11-03T01:00:00-04:00",
            "2024-11-03T01:30:00-04:00",
            "2024-11-03T01:00:00-05:00",
            "2024-11-03T01:30:00-05:00",
            "2024-11-03T02:00:00-05:00",
        ])
    );
    // From inside the repeated hour: the second occurrence fires.
    assert_eq!(next("0 30 * * * ?", ny, "2024-11-03T06:10:00Z", 1), times(&["2024-11-03T01:30:00-05:00"]));
}

#[test]
fn new_york_every_second_through_the_repeated_hour() {
    let ny = "America/New_York";
    let got = next("* * * * * ?", ny, "2024-11-03T05:00:00Z", 2 * 3600);
    let want: Vec<Timestamp> =
        (1..=2 * 3600).map(|s| ts("2024-11-03T05:00:00Z") + SignedDuration::from_secs(s)).collect();
    assert_eq!(got, want, "every UTC second from 01:00 EDT to 01:00 EST and beyond");
    // Hour 1 only (not every hour): silent in the second 01:00-01:59.
    assert_eq!(
        next("* * 1 * * ?", ny, "2024-11-03T05:59:58Z", 2),
        times(&["2024-11-03T05:59:59Z", "2024-11-04T06:00:00Z"])
    );
    let c = CronExpr::parse("* * 1 * * ?").unwrap();
    assert_eq!(c.next_invalid_after(ts("2024-11-03T05:00:00Z"), &zone(ny)), Some(ts("2024-11-03T06:00:00Z")));
    let every = CronExpr::parse("* * * * * ?").unwrap();
    assert!(every.is_satisfied_by(ts("2024-11-03T01:30:00-05:00"), &zone(ny)));
}

#[test]
fn new_york_next_invalid_after_across_the_gap() {
    let ny = zone("America/New_York");
    // 01:00-03:59 local every second: 01:59:59 EST is followed by 03:00:00 EDT; the run
    // goes on to 04:00 EDT.
    let c = CronExpr::parse("* * 1-3 * * ?").unwrap();
    assert_eq!(c.next_invalid_after(ts("2024-03-10T06:00:00Z"), &ny), Some(ts("2024-03-10T04:00:00-04:00")));
    // Hour 2 only: it fires once, at 03:00:00 EDT; 03:00:01 is not a fire time.
    let c = CronExpr::parse("* * 2 * * ?").unwrap();
    assert_eq!(c.next_after(ts("2024-03-10T06:59:59Z"), &ny), Some(ts("2024-03-10T07:00:00Z")));
    assert_eq!(c.next_invalid_after(ts("2024-03-10T06:59:59Z"), &ny), Some(ts("2024-03-10T07:00:01Z")));
}

// Europe/Berlin 2024: 03-31 02:00 CET → 03:00 CEST (01:00Z); 10-27 03:00 CEST → 02:00 CET (01:00Z).

#[test]
fn berlin_spring_forward_and_fall_back() {
    let berlin = "Europe/Berlin";
    assert_eq!(
        next("0 30 2 * * ?", berlin, "2024-03-30T12:00:00Z", 2),
        times(&["2024-03-31T03:00:00+02:00", "2024-04-01T02:30:00+02:00"])
    );
    assert_eq!(
        next("0 30 2 * * ?", berlin, "2024-10-26T12:00:00Z", 2),
        times(&["2024-10-27T02:30:00+02:00", "2024-10-28T02:30:00+01:00"])
    );
    assert_eq!(
        next("0 0/30 * * * ?", berlin, "2024-10-27T00:00:00Z", 4),
        times(&[
            "2024-10-27T02:30:00+02:00",
            "2024-10-27T02:00:00+01:00",
            "2024-10-27T02:30:00+01:00",
            "2024-10-27T03:00:00+01:00"
        ])
    );
    // A weekly job at 02:30 on Sundays: the spring-forward Sunday fires at 03:00.
    assert_eq!(
        next("0 30 2 ? * SUN", berlin, "2024-03-25T00:00:00Z", 2),
        times(&["2024-03-31T03:00:00+02:00", "2024-04-07T02:30:00+02:00"])
    );
}

// Australia/Lord_Howe: +10:30 standard, +11 summer. 2024-10-06 02:00 → 02:30 (15:30Z on
// the 5th); 2024-04-07 02:00 → 01:30 (15:00Z on the 6th): 01:30-01:59 occurs twice.

#[test]
fn lord_howe_half_hour_gap() {
    let lh = "Australia/Lord_Howe";
    assert_eq!(
        next("0 15 2 * * ?", lh, "2024-10-05T00:00:00Z", 2),
        times(&["2024-10-06T02:30:00+11:00", "2024-10-07T02:15:00+11:00"])
    );
    // 02:00, 02:10, 02:20 do not exist; 02:30 (the gap's end) matches too: one firing.
    assert_eq!(
        next("0 0/10 2 * * ?", lh, "2024-10-05T15:00:00Z", 4),
        times(&[
            "2024-10-06T02:30:00+11:00",
            "2024-10-06T02:40:00+11:00",
            "2024-10-06T02:50:00+11:00",
            "2024-10-07T02:00:00+11:00"
        ])
    );
}

#[test]
fn lord_howe_half_hour_fold() {
    let lh = "Australia/Lord_Howe";
    assert_eq!(
        next("0 45 1 * * ?", lh, "2024-04-06T00:00:00Z", 2),
        times(&["2024-04-07T01:45:00+11:00", "2024-04-08T01:45:00+10:30"])
    );
    assert_eq!(
        next("0 0/15 * * * ?", lh, "2024-04-06T14:20:00Z", 5),
        times(&[
            "2024-04-07T01:30:00+11:00",
            "2024-04-07T01:45:00+11:00",
            "2024-04-07T01:30:00+10:30",
            "2024-04-07T01:45:00+10:30",
            "2024-04-07T02:00:00+10:30",
        ])
    );
}

/// Random expressions (every feature, often on the DST hours) from instants near
/// transitions: kairos equals the brute-force reference of the policy.
#[test]
fn the_policy_matches_the_brute_force_reference_near_transitions() {
    let mut rng = Rng::new(0x6b61_6972_6f73);
    let zones: Vec<TimeZone> =
        ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe"].iter().map(|z| zone(z)).collect();
    let mut checked = 0;
    for i in 0..600 {
        let tz = &zones[i % zones.len()];
        let year = rng.range(1995, 2035);
        let around = Timestamp::from_second((year - 1970) * 365 * 86_400 + rng.range(0, 365 * 86_400)).unwrap();
        let transition = tz.following(around).next().unwrap().timestamp();
        let start = transition + SignedDuration::from_secs(rng.range(-7200, 3600));
        let case = gen_case(&mut rng);
        let c = CronExpr::parse(&case.text).unwrap_or_else(|e| panic!("{}: {e}", case.text));
        // The reference scans local time; keep to fire times within 40 days.
        let until = start + SignedDuration::from_hours(24 * 40);
        let ours: Vec<Timestamp> = std::iter::successors(c.next_after(start, tz), |t| c.next_after(*t, tz))
            .take(4)
            .take_while(|t| *t <= until)
            .collect();
        let expected = reference(&case.model, tz, start, 4, until);
        assert_eq!(ours, expected, "{:?} in {} from {start}", case.text, tz.iana_name().unwrap());
        checked += 1;
    }
    assert_eq!(checked, 600);
}
