//! RetryCycle: both forms, bounds, rejections and the round trip.

use kairos_time::{Error, IsoDuration, RetryCycle};

fn d(s: &str) -> IsoDuration {
    IsoDuration::parse(s).unwrap()
}

fn rejects(s: &str, position: usize, needle: &str) {
    let e = RetryCycle::parse(s).expect_err(s);
    let msg = e.to_string();
    match &e {
        Error::InvalidRetryCycle { position: p, .. } => assert_eq!(*p, position, "{msg}"),
        other => panic!("wrong variant for {s:?}: {other:?}"),
    }
    assert!(msg.contains(&format!("at position {position}:")), "{msg}");
    assert!(msg.contains(needle), "{msg:?} should contain {needle:?}");
    assert!(msg.contains(&format!("{s:?}")), "{msg} should quote the input");
}

#[test]
fn repeat_form() {
    let r = RetryCycle::parse("R5/PT10M").unwrap();
    assert_eq!(r.retries(), 5);
    for n in 0..=7 {
        assert_eq!(r.wait_before_retry(n), &d("PT10M"));
    }
    let none = RetryCycle::parse("R0/PT1M").unwrap();
    assert_eq!(none.retries(), 0);
    assert_eq!(none.wait_before_retry(1), &d("PT1M"));
    assert_eq!(RetryCycle::parse("r4294967295/p1d").unwrap().retries(), u32::MAX);
}

#[test]
fn list_form() {
    let r = RetryCycle::parse("PT1M,PT5M,PT10M").unwrap();
    assert_eq!(r.retries(), 3);
    assert_eq!(r.wait_before_retry(1), &d("PT1M"));
    assert_eq!(r.wait_before_retry(2), &d("PT5M"));
    assert_eq!(r.wait_before_retry(3), &d("PT10M"));
    assert_eq!(r.wait_before_retry(4), &d("PT10M"), "past the list: last wait");
    assert_eq!(r.wait_before_retry(u32::MAX), &d("PT10M"));
    assert_eq!(r.wait_before_retry(0), &d("PT1M"), "0 is treated as 1");
    let single = RetryCycle::parse("PT10M").unwrap();
    assert_eq!(single.retries(), 1);
    assert_eq!(single.wait_before_retry(1), &d("PT10M"));
    let spaced = RetryCycle::parse("  PT1M , PT5M ,\tPT10M ").unwrap();
    assert_eq!(spaced, r);
}

#[test]
fn round_trip() {
    let cases = [
        ("R5/PT10M", "R5/PT10M"),
        ("r0/pt1m", "R0/PT1M"),
        (" R3 / PT1H ", "R3/PT1H"),
        ("PT1M,PT5M,PT10M", "PT1M,PT5M,PT10M"),
        ("PT1M , P1D", "PT1M,P1D"),
        ("PT0.5S", "PT0.5S"),
    ];
    for (input, canonical) in cases {
        let r: RetryCycle = input.parse().unwrap();
        assert_eq!(r.to_string(), canonical);
        assert_eq!(RetryCycle::parse(&r.to_string()).unwrap(), r);
    }
}

#[test]
fn rejections() {
    rejects("", 1, "empty retry cycle");
    rejects("R/PT10M", 2, "unbounded retries (R/...) are not allowed");
    rejects("R5", 3, "missing wait");
    rejects("R5/", 4, "missing wait");
    rejects("R5/PT10M/2026-01-01T00:00:00Z", 9, "start and end instants are not supported");
    rejects("R99999999999/PT1S", 2, "retry count 99999999999 is too large");
    rejects("R-1/PT1M", 2, "expected a retry count or '/', found '-'");
    rejects("R5/PT10X", 8, "wait \"PT10X\": unknown unit 'X'");
    rejects("R5/PT0S", 4, "zero-length");
    rejects("R5/-PT1M", 4, "negative durations are not allowed");
    rejects("PT1M,,PT5M", 6, "entry 2 of the list is empty");
    rejects("PT1M,", 6, "entry 2 of the list is empty");
    rejects("PT1M, PT5X", 10, "entry 2 \"PT5X\": unknown unit 'X'");
    rejects("PT0,5S", 4, "entry 1 \"PT0\": missing unit after number 0");
    rejects("PT1M;PT5M", 5, "entry 1 \"PT1M;PT5M\": expected a number, found ';'");
    rejects("PT99999999999999H", 3, "99999999999999H is out of range");
    rejects("5 minutes", 1, "expected 'P'");
}
