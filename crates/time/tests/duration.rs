//! IsoDuration: every accepted form, every rejection, and the round trip.

use kairos_time::{Error, IsoDuration, SignedDuration, Timestamp, parse_instant};

fn ts(s: &str) -> Timestamp {
    parse_instant(s).unwrap()
}

fn d(s: &str) -> IsoDuration {
    IsoDuration::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// Asserts that `s` is rejected at `position` with a message containing `needle`.
fn rejects(s: &str, position: usize, needle: &str) {
    let e = IsoDuration::parse(s).expect_err(s);
    let msg = e.to_string();
    match &e {
        Error::InvalidDuration { position: p, .. } => assert_eq!(*p, position, "{msg}"),
        other => panic!("wrong variant for {s:?}: {other:?}"),
    }
    assert!(msg.contains(&format!("at position {position}:")), "{msg}");
    assert!(msg.contains(needle), "{msg:?} should contain {needle:?}");
    assert!(msg.contains(&format!("{s:?}")), "{msg} should quote the input");
}

#[test]
fn fixed_durations() {
    let at = ts("2026-01-01T00:00:00Z");
    let cases = [
        ("PT48H", SignedDuration::from_hours(48)),
        ("PT5M", SignedDuration::from_mins(5)),
        ("PT0.5S", SignedDuration::from_millis(500)),
        ("PT1.5H", SignedDuration::from_mins(90)),
        ("PT1,5M", SignedDuration::from_secs(90)),
        ("PT0.000000001S", SignedDuration::from_nanos(1)),
        ("PT1H30M15.25S", SignedDuration::new(5415, 250_000_000)),
        ("PT90M", SignedDuration::from_mins(90)),
    ];
    for (s, want) in cases {
        let dur = d(s);
        assert!(!dur.has_calendar_units(), "{s}");
        assert_eq!(dur.to_signed_duration_at(at).unwrap(), want, "{s}");
        assert_eq!(dur.add_to(at).unwrap(), at + want, "{s}");
    }
}

#[test]
fn calendar_durations_are_applied_in_utc() {
    let jan = ts("2026-01-01T00:00:00Z");
    let feb = ts("2026-02-01T00:00:00Z");
    assert_eq!(d("P1D").to_signed_duration_at(jan).unwrap(), SignedDuration::from_hours(24));
    assert_eq!(d("P1W").to_signed_duration_at(jan).unwrap(), SignedDuration::from_hours(168));
    assert_eq!(d("P1M").to_signed_duration_at(jan).unwrap(), SignedDuration::from_hours(31 * 24));
    assert_eq!(d("P1M").to_signed_duration_at(feb).unwrap(), SignedDuration::from_hours(28 * 24));
    assert_eq!(d("P1Y").to_signed_duration_at(ts("2028-01-01T00:00:00Z")).unwrap().as_hours(), 366 * 24);
    // Month arithmetic clamps to the end of the month rather than spilling over.
    assert_eq!(d("P1M").add_to(ts("2026-01-31T10:00:00Z")).unwrap(), ts("2026-02-28T10:00:00Z"));
    // An offset in the input instant does not matter: arithmetic is in UTC.
    assert_eq!(d("P1D").add_to(ts("2026-03-28T23:30:00+01:00")).unwrap(), ts("2026-03-29T22:30:00Z"));
    let all = d("P1Y2M10DT2H30M");
    assert!(all.has_calendar_units());
    assert_eq!(all.add_to(jan).unwrap(), ts("2027-03-11T02:30:00Z"));
    assert_eq!(d("P1M1D").add_to(jan).unwrap(), ts("2026-02-02T00:00:00Z"));
}

#[test]
fn overflow_is_an_error() {
    let late = ts("9000-01-01T00:00:00Z");
    assert!(matches!(d("P5000Y").add_to(late), Err(Error::Overflow { .. })));
    assert!(matches!(d("P5000Y").to_signed_duration_at(late), Err(Error::Overflow { .. })));
    assert!(matches!(d("PT175307616H").add_to(late), Err(Error::Overflow { .. })));
    // Fixed durations do not depend on `at`, even where adding would overflow.
    assert_eq!(d("PT1H").to_signed_duration_at(Timestamp::MAX).unwrap(), SignedDuration::from_hours(1));
    let e = d("P5000Y").add_to(late).unwrap_err().to_string();
    assert!(e.contains("P5000Y") && e.contains("9000-01-01T00:00:00Z"), "{e}");
}

#[test]
fn canonical_text_and_round_trip() {
    let cases = [
        ("PT48H", "PT48H"),
        ("pt5m", "PT5M"),
        ("  P1D\t", "P1D"),
        ("PT0,5S", "PT0.5S"),
        ("p1y2m10dt2h30m", "P1Y2M10DT2H30M"),
        ("PT60M", "PT60M"),
        ("P0DT1S", "P0DT1S"),
    ];
    for (input, canonical) in cases {
        let dur = d(input);
        assert_eq!(dur.as_str(), canonical);
        assert_eq!(dur.to_string(), canonical);
        assert_eq!(d(&dur.to_string()), dur);
        assert_eq!(input.parse::<IsoDuration>().unwrap(), dur);
    }
    assert_eq!(d("pt5m"), d("PT5M"));
    assert_eq!(d(" PT5M "), d("PT5M"));
    assert_ne!(d("PT60M"), d("PT1H"));
}

#[test]
fn the_documented_example_message() {
    let e = IsoDuration::parse("PT5X").unwrap_err();
    assert_eq!(e.to_string(), r#"invalid ISO 8601 duration "PT5X" at position 4: unknown unit 'X'"#);
}

#[test]
fn rejections() {
    rejects("", 1, "empty duration");
    rejects("   ", 4, "empty duration");
    rejects("-PT5M", 1, "negative durations are not allowed");
    rejects("PT0S", 1, "zero-length");
    rejects("P0D", 1, "zero-length");
    rejects("PT0.000S", 1, "zero-length");
    rejects("P0Y0M0W0DT0H0M0S", 1, "zero-length");
    rejects("P", 2, "at least one component");
    rejects("PT", 3, "a number after 'T'");
    rejects("P1DT", 5, "a number after 'T'");
    rejects("5M", 1, "expected 'P'");
    rejects("+PT5M", 1, "expected 'P'");
    rejects("P5", 3, "missing unit after number 5");
    rejects("PT5M5H", 6, "'H' is repeated or out of order");
    rejects("PT5M5M", 6, "'M' is repeated or out of order");
    rejects("P1D1Y", 5, "'Y' is repeated or out of order");
    rejects("P1H", 3, "needs a 'T'");
    rejects("PT1D", 4, "belongs to the date part");
    rejects("PTT1H", 3, "'T' may appear only once");
    rejects("P1.5D", 3, "fractions are only allowed on hours, minutes or seconds");
    rejects("PT1.5H30M", 7, "only the last component may have a fraction");
    rejects("PT1.S", 5, "digits after the decimal separator");
    rejects("PT0.1234567891S", 14, "at most 9 fractional digits");
    rejects("PT99999999999999H", 3, "99999999999999H is out of range");
    rejects("PT99999999999999999999999S", 3, "is out of range");
    rejects("P99999Y", 2, "99999Y is out of range");
    rejects("PT5分", 4, "unknown unit '分'");
    rejects("ПT5M", 1, "expected 'P' to start the duration, found 'П'");
    rejects("  PT5X", 6, "unknown unit 'X'");
    rejects("PT5M\u{0}", 5, "'\\0'");
    rejects("P1D X", 4, "found ' '");
}

/// A one-shot delay may be zero (a BPMN `timeDuration` of `PT0S` means now); it is still
/// checked as strictly as any duration.
#[test]
fn a_delay_may_be_zero() {
    let at = ts("2026-01-01T00:00:00Z");
    for zero in ["PT0S", "P0D", "PT0.000S", " pt0s "] {
        let delay = IsoDuration::parse_delay(zero).unwrap_or_else(|e| panic!("{zero}: {e}"));
        assert!(delay.is_zero(), "{zero}");
        assert_eq!(delay.add_to(at).unwrap(), at, "{zero}");
    }
    assert!(!IsoDuration::parse_delay("PT5M").unwrap().is_zero());
    let e = IsoDuration::parse_delay("-PT5M").unwrap_err().to_string();
    assert!(e.contains("negative durations are not allowed"), "{e}");
    assert!(IsoDuration::parse_delay("PT5X").is_err());
    assert!(IsoDuration::parse("PT0S").is_err(), "plain parse keeps refusing zero");
}
