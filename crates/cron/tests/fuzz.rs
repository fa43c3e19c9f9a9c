//! The parser never panics, and its errors always carry a position within the text; valid
//! expressions evaluate without panicking and move forward.

use kairos_cron::{CronExpr, TimeZone, Timestamp};
use proptest::prelude::*;

fn check_error_position(text: &str) {
    if let Err(e) = CronExpr::parse(text) {
        let len = text.chars().count();
        assert!(e.position >= 1 && e.position <= len + 1, "{text:?}: {e} (length {len})");
        assert!(!e.message.is_empty());
    }
}

/// Text made of cron's own alphabet, so that many inputs get deep into the parser.
fn cron_like() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("*".to_string()),
        Just("?".to_string()),
        Just("L".to_string()),
        Just("W".to_string()),
        Just("LW".to_string()),
        Just("#".to_string()),
        Just("/".to_string()),
        Just("-".to_string()),
        Just(",".to_string()),
        Just(" ".to_string()),
        Just("\t".to_string()),
        Just("MON".to_string()),
        Just("jan".to_string()),
        Just("FRI".to_string()),
        (0u32..100).prop_map(|n| n.to_string()),
        (1900u32..2200).prop_map(|n| n.to_string()),
        Just("99999999999".to_string()),
        Just("é".to_string()),
    ];
    prop::collection::vec(token, 0..30).prop_map(|v| v.concat())
}

/// Six or seven fields, each a small piece of the grammar: mostly valid expressions.
fn fields() -> impl Strategy<Value = String> {
    let item = prop_oneof![
        Just("*".to_string()),
        (0u32..60).prop_map(|n| n.to_string()),
        (0u32..60, 0u32..60).prop_map(|(a, b)| format!("{a}-{b}")),
        (0u32..60, 1u32..30).prop_map(|(a, s)| format!("{a}/{s}")),
        (1u32..30).prop_map(|s| format!("*/{s}")),
    ];
    let day = prop_oneof![
        Just("L".to_string()),
        Just("LW".to_string()),
        (0u32..31).prop_map(|n| format!("L-{n}")),
        (1u32..32).prop_map(|n| format!("{n}W")),
        (1u32..8).prop_map(|n| format!("{n}L")),
        (1u32..8, 1u32..6).prop_map(|(w, k)| format!("{w}#{k}")),
        (1u32..32).prop_map(|n| n.to_string()),
        Just("*".to_string()),
    ];
    (item.clone(), item.clone(), item, day, 1u32..13, any::<bool>(), prop::option::of(1990u32..2100)).prop_map(
        |(s, m, h, d, mon, by_week, year)| {
            let (dom, dow) = if by_week { ("?".to_string(), d) } else { (d, "?".to_string()) };
            let year = year.map(|y| format!(" {y}")).unwrap_or_default();
            format!("{s} {m} {h} {dom} {mon} {dow}{year}")
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        check_error_position(&text);
    }

    #[test]
    fn cron_like_text_never_panics(text in cron_like()) {
        check_error_position(&text);
    }

    #[test]
    fn valid_expressions_evaluate(text in fields(), secs in 0i64..4_102_444_800, zone in 0usize..4) {
        check_error_position(&text);
        if let Ok(cron) = CronExpr::parse(&text) {
            let tz = TimeZone::get(["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe"][zone]).unwrap();
            let from = Timestamp::from_second(secs).unwrap();
            if let Some(next) = cron.next_after(from, &tz) {
                prop_assert!(next > from);
                prop_assert!(cron.is_satisfied_by(next, &tz), "{text:?}: {next}");
                if let Some(after) = cron.next_after(next, &tz) {
                    prop_assert!(after > next);
                }
            }
            if let Some(invalid) = cron.next_invalid_after(from, &tz) {
                prop_assert!(invalid > from);
                prop_assert!(!cron.is_satisfied_by(invalid, &tz), "{text:?}: {invalid}");
            }
            // The expression round-trips through its text.
            prop_assert_eq!(CronExpr::parse(cron.as_str()).unwrap(), cron);
        }
    }
}
