//! RepeatCycle parsing: every form, rejections and the Display round trip.
//! Scheduling is covered in `cycle_schedule.rs`.

use kairos_time::{Error, IsoDuration, RepeatCycle, Timestamp, parse_instant};

fn ts(s: &str) -> Timestamp {
    parse_instant(s).unwrap()
}

fn cycle(s: &str) -> RepeatCycle {
    RepeatCycle::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn rejects(s: &str, position: usize, needle: &str) {
    let e = RepeatCycle::parse(s).expect_err(s);
    let msg = e.to_string();
    match &e {
        Error::InvalidCycle { position: p, .. } => assert_eq!(*p, position, "{msg}"),
        other => panic!("wrong variant for {s:?}: {other:?}"),
    }
    assert!(msg.contains(&format!("at position {position}:")), "{msg}");
    assert!(msg.contains(needle), "{msg:?} should contain {needle:?}");
    assert!(msg.contains(&format!("{s:?}")), "{msg} should quote the input");
}

#[test]
fn parses_every_form() {
    let p = |s: &str| IsoDuration::parse(s).unwrap();
    let c = cycle("R3/PT5M");
    assert_eq!((c.repetitions, c.start, c.end), (Some(3), None, None));
    assert_eq!(c.period, p("PT5M"));
    assert_eq!(cycle("R/PT1H").repetitions, None);
    let c = cycle("R/2026-01-01T08:00:00Z/P1D");
    assert_eq!((c.repetitions, c.start, c.end), (None, Some(ts("2026-01-01T08:00:00Z")), None));
    let c = cycle("R5/2026-01-01T08:00:00Z/PT1H");
    assert_eq!((c.repetitions, c.period.clone()), (Some(5), p("PT1H")));
    let c = cycle("R3/PT10M/2026-12-31T00:00:00Z");
    assert_eq!((c.start, c.end), (None, Some(ts("2026-12-31T00:00:00Z"))));
    let c = cycle("R/2026-01-01T08:00:00Z/P1D/2026-02-01T00:00:00Z");
    assert_eq!(c.start, Some(ts("2026-01-01T08:00:00Z")));
    assert_eq!(c.end, Some(ts("2026-02-01T00:00:00Z")));
    assert_eq!(cycle("R4294967295/PT1S").repetitions, Some(u32::MAX));
    assert_eq!("R2/PT1S".parse::<RepeatCycle>().unwrap(), cycle("R2/PT1S"));
}

#[test]
fn display_round_trips() {
    let cases = [
        ("R2/PT1S", "R2/PT1S"),
        ("r/pt1h", "R/PT1H"),
        (" R3 / PT5M ", "R3/PT5M"),
        ("R/2026-01-01T08:00:00Z/P1D", "R/2026-01-01T08:00:00Z/P1D"),
        ("R/2026-01-01T09:00:00+01:00/P1D", "R/2026-01-01T08:00:00Z/P1D"),
        ("R5/2026-01-01T08:00:00.25Z/PT1H", "R5/2026-01-01T08:00:00.25Z/PT1H"),
        ("R3/PT10M/2026-12-31T00:00:00Z", "R3/PT10M/2026-12-31T00:00:00Z"),
        ("R/2026-01-01T08:00:00Z/P1D/2026-02-01T00:00:00Z", "R/2026-01-01T08:00:00Z/P1D/2026-02-01T00:00:00Z"),
        ("R/0001-01-01T00:00:00Z/P1Y2M10DT2H30M", "R/0001-01-01T00:00:00Z/P1Y2M10DT2H30M"),
    ];
    for (input, canonical) in cases {
        let c = cycle(input);
        assert_eq!(c.to_string(), canonical);
        assert_eq!(cycle(&c.to_string()), c);
    }
    let min = RepeatCycle {
        repetitions: None,
        start: Some(Timestamp::MIN),
        period: IsoDuration::parse("PT1S").unwrap(),
        end: Some(Timestamp::MAX),
    };
    assert_eq!(cycle(&min.to_string()), min);
}

#[test]
fn rejections() {
    rejects("", 1, "empty repeating interval");
    rejects("R0/PT1S", 2, "R0 would never fire");
    rejects("R99999999999/PT1S", 2, "repetition count 99999999999 is too large");
    rejects("R3", 3, "missing period");
    rejects("PT5M", 1, "expected 'R' to start a repeating interval");
    rejects("Rx/PT1H", 2, "expected a repetition count or '/', found 'x'");
    rejects("R3/PT5X", 7, "period \"PT5X\": unknown unit 'X'");
    rejects("R/PT0S", 3, "zero-length");
    rejects("R/-PT1H", 3, "negative durations are not allowed");
    rejects("R/2026-01-01T08:00:00/P1D", 22, "start \"2026-01-01T08:00:00\": missing UTC offset");
    rejects("R3/PT10M/2026-12-31", 20, "end \"2026-12-31\": missing time and UTC offset");
    rejects(
        "R/2026-02-01T00:00:00Z/P1D/2026-01-01T00:00:00Z",
        28,
        "end 2026-01-01T00:00:00Z is before start 2026-02-01T00:00:00Z",
    );
    rejects("R//PT1H", 3, "empty part");
    rejects("R/PT1H/", 8, "empty part");
    rejects("R/PT1H/PT2H", 8, "expected an end instant after the period");
    rejects("R/2026-01-01T00:00:00Z", 3, "missing period");
    rejects("R/2026-01-01T00:00:00Z/2026-02-01T00:00:00Z", 24, "missing period: start/end intervals are not supported");
    rejects("R/PT1H/PT1H/2026-01-01T00:00:00Z", 3, "expected a start instant");
    rejects("R/2026-01-01T00:00:00Z/2026-01-01T00:00:00Z/2026-01-01T00:00:00Z", 24, "expected the period");
    rejects("R/2026-01-01T00:00:00Z/PT1H/PT1H", 29, "expected an end instant");
    rejects("R/a/b/c/d", 8, "too many '/'-separated parts");
    rejects("R/PT99999999999999H", 5, "99999999999999H is out of range");
    rejects("Я/PT1H", 1, "found 'Я'");
    rejects("R/PT1H/2026-01-01T00:00:00Z[Europe/Paris]", 28, "time zone annotations");
}

/// An instant the date library cannot hold, as a cycle's start or end, is refused in the words
/// every instant field uses (years 1970 through 9998), naming start or end, not in the
/// library's range (-9999..=9999).
#[test]
fn a_start_or_end_beyond_the_date_librarys_years_is_refused_in_kaiross_words() {
    for (s, role) in [
        ("R/+010000-01-01T00:00:00Z/PT1H", "start"),
        ("R/-010000-01-01T00:00:00Z/PT1H", "start"),
        ("R3/9999-12-31T23:59:59Z/PT1H", "start"),
        ("R/PT1H/+010000-01-01T00:00:00Z", "end"),
        ("R/2026-01-01T00:00:00Z/PT1H/9999-12-31T23:59:59-01:00", "end"),
    ] {
        let msg = RepeatCycle::parse(s).expect_err(s).to_string();
        assert!(msg.contains(&format!("{role} \"")) && msg.contains("years 1970 through 9998"), "{s}: {msg}");
        assert!(!msg.contains("-9999..=9999"), "{s}: {msg}");
    }
}
