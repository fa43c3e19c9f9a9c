//! RepeatCycle scheduling: first_due, next_after_fire, the missed-fires
//! policy, end dates and overflow.

use kairos_time::{Error, RepeatCycle, Timestamp, parse_instant};

fn ts(s: &str) -> Timestamp {
    parse_instant(s).unwrap()
}

fn cycle(s: &str) -> RepeatCycle {
    RepeatCycle::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// Fires `c` from its first due until it finishes (or `limit` fires), firing
/// each one exactly on time; returns the due instants.
fn run(c: &RepeatCycle, now: Timestamp, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut due = c.first_due(now).unwrap();
    let mut c = c.clone();
    while let Some(d) = due {
        out.push(d.to_string());
        if out.len() == limit {
            break;
        }
        match c.next_after_fire(d, d).unwrap() {
            Some((rest, next)) => {
                c = rest;
                due = Some(next);
            }
            None => due = None,
        }
    }
    out
}

#[test]
fn bounded_without_start_counts_down() {
    let now = ts("2026-01-01T08:00:00Z");
    let c = cycle("R3/PT5M");
    assert_eq!(run(&c, now, 10), ["2026-01-01T08:05:00Z", "2026-01-01T08:10:00Z", "2026-01-01T08:15:00Z"]);
    let (r2, _) = c.next_after_fire(ts("2026-01-01T08:05:00Z"), now).unwrap().unwrap();
    assert_eq!(r2.to_string(), "R2/PT5M");
    let (r1, _) = r2.next_after_fire(ts("2026-01-01T08:10:00Z"), now).unwrap().unwrap();
    assert_eq!(r1.to_string(), "R1/PT5M");
    assert_eq!(r1.next_after_fire(ts("2026-01-01T08:15:00Z"), now).unwrap(), None);
}

#[test]
fn unbounded_never_finishes() {
    let now = ts("2026-01-01T08:00:00Z");
    let c = cycle("R/PT1H");
    let fires = run(&c, now, 500);
    assert_eq!(fires.len(), 500);
    assert_eq!(fires[499], "2026-01-22T04:00:00Z");
    let (rest, _) = c.next_after_fire(now, now).unwrap().unwrap();
    assert_eq!(rest, c, "an unbounded cycle is stored unchanged");
}

#[test]
fn start_in_future_or_past() {
    let c = cycle("R/2026-01-01T08:00:00Z/P1D");
    assert_eq!(c.first_due(ts("2025-06-01T00:00:00Z")).unwrap(), Some(ts("2026-01-01T08:00:00Z")));
    assert_eq!(c.first_due(ts("2026-01-01T08:00:00Z")).unwrap(), Some(ts("2026-01-01T08:00:00Z")));
    // Past start: first grid instant at or after now, keeping the 08:00 phase.
    assert_eq!(c.first_due(ts("2026-01-10T09:00:00Z")).unwrap(), Some(ts("2026-01-11T08:00:00Z")));
    assert_eq!(c.first_due(ts("2026-01-10T08:00:00Z")).unwrap(), Some(ts("2026-01-10T08:00:00Z")));
    let bounded = cycle("R5/2026-01-01T08:00:00Z/PT1H");
    assert_eq!(
        run(&bounded, ts("2025-01-01T00:00:00Z"), 10),
        [
            "2026-01-01T08:00:00Z",
            "2026-01-01T09:00:00Z",
            "2026-01-01T10:00:00Z",
            "2026-01-01T11:00:00Z",
            "2026-01-01T12:00:00Z"
        ]
    );
}

#[test]
fn far_past_starts_are_computed_without_iterating() {
    let now = ts("2026-05-17T13:14:15Z");
    let monthly = cycle("R/2000-01-01T00:00:00Z/P1M");
    assert_eq!(monthly.first_due(now).unwrap(), Some(ts("2026-06-01T00:00:00Z")));
    let odd = cycle("R/2000-01-01T00:00:00Z/PT7.5S");
    let due = odd.first_due(now).unwrap().unwrap();
    let step = odd.period.to_signed_duration_at(now).unwrap();
    assert!(due >= now && due - step < now, "{due}");
    assert_eq!(due.duration_since(ts("2000-01-01T00:00:00Z")).as_millis() % 7500, 0);
    let ancient = cycle("R/0001-01-01T00:00:00Z/PT0.000000001S");
    assert_eq!(ancient.first_due(now).unwrap(), Some(now));
}

#[test]
fn monthly_cycles_stay_anchored() {
    // start + k*P1M, not repeated +1M (which would drift to the 28th).
    let c = cycle("R/2026-01-31T08:00:00Z/P1M");
    assert_eq!(c.first_due(ts("2026-03-15T00:00:00Z")).unwrap(), Some(ts("2026-03-31T08:00:00Z")));
    // Missed fires: first fired_due + k*P1M strictly after now.
    let (_, next) = c.next_after_fire(ts("2026-01-31T08:00:00Z"), ts("2026-04-15T00:00:00Z")).unwrap().unwrap();
    assert_eq!(next, ts("2026-04-30T08:00:00Z"));
    // On time: fired_due + period.
    let (_, next) = c.next_after_fire(ts("2026-01-31T08:00:00Z"), ts("2026-01-31T08:00:01Z")).unwrap().unwrap();
    assert_eq!(next, ts("2026-02-28T08:00:00Z"));
}

#[test]
fn missed_fires_skip_forward_and_consume_one_repetition() {
    let c = cycle("R5/PT1H");
    let fired = ts("2026-01-01T08:00:00Z");
    let (rest, next) = c.next_after_fire(fired, ts("2026-01-01T12:30:00Z")).unwrap().unwrap();
    assert_eq!((rest.repetitions, next), (Some(4), ts("2026-01-01T13:00:00Z")));
    // A next due exactly at now is not "after now": skip it as well.
    let (_, next) = c.next_after_fire(fired, ts("2026-01-01T12:00:00Z")).unwrap().unwrap();
    assert_eq!(next, ts("2026-01-01T13:00:00Z"));
    // A fire handled early (now before fired_due) still steps one period.
    let (_, next) = c.next_after_fire(fired, ts("2026-01-01T07:00:00Z")).unwrap().unwrap();
    assert_eq!(next, ts("2026-01-01T09:00:00Z"));
    let daily = cycle("R3/2026-01-01T08:00:00Z/P1D");
    let (rest, next) = daily.next_after_fire(ts("2026-01-01T08:00:00Z"), ts("2026-03-01T07:00:00Z")).unwrap().unwrap();
    assert_eq!((rest.to_string(), next), ("R2/2026-01-01T08:00:00Z/P1D".into(), ts("2026-03-01T08:00:00Z")));
}

#[test]
fn end_date_stops_the_cycle() {
    let c = cycle("R3/PT10M/2026-12-31T00:00:00Z");
    assert_eq!(c.first_due(ts("2026-12-30T23:50:00Z")).unwrap(), Some(ts("2026-12-31T00:00:00Z")));
    assert_eq!(c.first_due(ts("2026-12-30T23:50:01Z")).unwrap(), None);
    assert_eq!(c.first_due(ts("2027-01-01T00:00:00Z")).unwrap(), None);
    assert_eq!(c.next_after_fire(ts("2026-12-30T23:55:00Z"), ts("2026-12-30T23:55:00Z")).unwrap(), None);
    // A fire exactly at the end still happens; none after it.
    let c = cycle("R/2026-01-01T00:00:00Z/P1D/2026-01-03T00:00:00Z");
    assert_eq!(
        run(&c, ts("2025-12-01T00:00:00Z"), 10),
        ["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"]
    );
    let c = cycle("R/2026-01-01T08:00:00Z/P1D/2026-02-01T00:00:00Z");
    assert_eq!(run(&c, ts("2025-12-01T00:00:00Z"), 100).len(), 31);
    assert_eq!(c.first_due(ts("2026-02-01T00:00:00Z")).unwrap(), None);
}

#[test]
fn unrepresentable_next_fire() {
    let c = cycle("R/9999-01-01T00:00:00Z/P1Y");
    let start = ts("9999-01-01T00:00:00Z");
    assert!(matches!(c.next_after_fire(start, start), Err(Error::Overflow { .. })));
    let ended = cycle("R/9999-01-01T00:00:00Z/P1Y/9999-06-01T00:00:00Z");
    assert_eq!(ended.next_after_fire(start, start).unwrap(), None);
    let fixed = cycle("R/PT100000H");
    assert!(matches!(fixed.first_due(ts("9999-01-01T00:00:00Z")), Err(Error::Overflow { .. })));
}
