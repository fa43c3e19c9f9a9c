//! parse_instant: RFC 3339 with a mandatory offset.

use kairos_time::{Error, Timestamp, parse_instant};

fn rejects(s: &str, position: usize, needle: &str) {
    let e = parse_instant(s).expect_err(s);
    let msg = e.to_string();
    match &e {
        Error::InvalidInstant { position: p, .. } => assert_eq!(*p, position, "{msg}"),
        other => panic!("wrong variant for {s:?}: {other:?}"),
    }
    assert!(msg.contains(&format!("at position {position}:")), "{msg}");
    assert!(msg.contains(needle), "{msg:?} should contain {needle:?}");
    assert!(msg.contains(&format!("{s:?}")), "{msg} should quote the input");
}

#[test]
fn accepted_forms() {
    let eight: Timestamp = "2026-01-01T08:00:00Z".parse().unwrap();
    let same = [
        "2026-01-01T08:00:00Z",
        "2026-01-01T09:00:00+01:00",
        "2026-01-01T02:30:00-05:30",
        "2026-01-01t08:00:00z",
        "2026-01-01 08:00:00Z",
        "2026-01-01T08:00Z",
        "2026-01-01T09:00:00+0100",
        "2026-01-01T08:00:00-00:00",
        "  2026-01-01T08:00:00Z  ",
        "2026-01-01T08:00:00.000Z",
    ];
    for s in same {
        assert_eq!(parse_instant(s).unwrap(), eight, "{s}");
    }
    assert_eq!(
        parse_instant("2026-01-01T08:00:00.123456789Z").unwrap(),
        "2026-01-01T08:00:00.123456789Z".parse::<Timestamp>().unwrap()
    );
    assert_eq!(parse_instant("2024-02-29T00:00:00Z").unwrap().to_string(), "2024-02-29T00:00:00Z");
    // jiff has no leap seconds: :60 reads as :59.
    assert_eq!(parse_instant("2016-12-31T23:59:60Z").unwrap().to_string(), "2016-12-31T23:59:59Z");
    assert_eq!(parse_instant("+002026-01-01T08:00:00Z").unwrap(), eight);
}

#[test]
fn rejections() {
    rejects("", 1, "empty instant");
    rejects("2026-01-01T08:00:00", 20, "missing UTC offset: add 'Z' or '+hh:mm'");
    rejects("2026-01-01T08:00", 17, "missing UTC offset");
    rejects("2026-01-01", 11, "missing time and UTC offset");
    rejects("2026-13-01T00:00:00Z", 6, "month 13 out of range");
    rejects("2026-00-01T00:00:00Z", 6, "month 00 out of range");
    rejects("2026-02-30T00:00:00Z", 9, "day 30 does not exist in 2026-02");
    rejects("2025-02-29T00:00:00Z", 9, "day 29 does not exist");
    rejects("2026-01-01T24:00:00Z", 12, "hour 24 out of range");
    rejects("2026-01-01T08:60:00Z", 15, "minute 60 out of range");
    rejects("2026-01-01T08:00:61Z", 18, "second 61 out of range");
    rejects("2026-01-01T08:00:00+24:00", 21, "offset hours 24");
    rejects("2026-01-01T08:00:00+01:60", 24, "offset minutes 60");
    rejects("2026-01-01T08:00:00+1", 21, "expected 2-digit offset hours");
    rejects("2026-01-01T08:00:00Z[UTC]", 21, "time zone annotations");
    rejects("2026-01-01T08:00:00ZZ", 21, "expected end of instant, found 'Z'");
    rejects("2026-01-01T08:00:00 Europe/Paris", 20, "expected 'Z' or a '+hh:mm' UTC offset, found ' '");
    rejects("2026-1-01T08:00:00Z", 6, "expected 2-digit month");
    rejects("26-01-01T08:00:00Z", 1, "expected 4-digit year");
    rejects("20260-01-01T08:00:00Z", 1, "expected 4-digit year");
    rejects("2026/01/01T08:00:00Z", 5, "'-' after the year");
    rejects("2026-01-01X08:00:00Z", 11, "'T' between date and time");
    rejects("2026-01-01T08:00:00.Z", 21, "digits after the decimal separator");
    rejects("2026-01-01T08:00:00.1234567890Z", 30, "at most 9 fractional digits");
    rejects("now", 1, "expected 4-digit year");
    rejects("9999-12-31T23:59:59Z", 1, "outside the supported range");
    rejects("+010000-01-01T00:00:00Z", 1, "year 10000 out of range");
    rejects("2026-01-01T08:00:00+01:00é", 26, "found 'é'");
    rejects("ünïcode", 1, "found 'ü'");
}
