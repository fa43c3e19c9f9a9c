//! `kairos cron next`, through the real binary.

mod support;

use support::{Kairos, assert_one_line_error};

#[test]
fn prints_the_next_fire_times_one_instant_a_line() {
    let k = Kairos::new();
    let out = k.ok(&["cron", "next", "0 15 10 ? * MON-FRI", "--from", "2024-06-01T00:00:00Z", "--count", "3"]);
    assert_eq!(out, "2024-06-03T10:15:00Z\n2024-06-04T10:15:00Z\n2024-06-05T10:15:00Z\n");
    assert!(!k.path("kairos.db").exists(), "cron next must not open the store");
}

#[test]
fn defaults_to_five_times_from_now() {
    let k = Kairos::new();
    let out = k.ok(&["cron", "next", "* * * * * ?"]);
    let times: Vec<jiff::Timestamp> = out.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(times.len(), 5);
    assert!(times.windows(2).all(|w| (w[1] - w[0]).get_seconds() == 1), "{out}");
}

#[test]
fn reads_local_times_in_the_zone_and_follows_the_dst_policy() {
    let k = Kairos::new();
    // 02:30 does not exist in New York on 2024-03-10: it fires at the gap's end, 03:00 EDT.
    let args =
        ["cron", "next", "0 30 2 * * ?", "--tz", "America/New_York", "--from", "2024-03-09T12:00:00Z", "--count", "2"];
    assert_eq!(k.ok(&args), "2024-03-10T07:00:00Z\n2024-03-11T06:30:00Z\n");
    let mut local = args.to_vec();
    local.push("--local");
    assert_eq!(k.ok(&local), "2024-03-10T03:00:00-04:00\n2024-03-11T02:30:00-04:00\n");
}

#[test]
fn json_has_the_shape_of_the_http_answer() {
    let k = Kairos::new();
    let doc = k.json(&["cron", "next", "0 0 12 L * ? 2030", "--from", "2030-10-01T00:00:00Z", "--count", "5"]);
    assert_eq!(
        doc,
        serde_json::json!({ "times": ["2030-10-31T12:00:00Z", "2030-11-30T12:00:00Z", "2030-12-31T12:00:00Z"] })
    );
}

#[test]
fn an_invalid_expression_exits_2_naming_field_and_position() {
    let k = Kairos::new();
    let out = k.run(&["cron", "next", "0 0 12 ? * MON-FRX"]);
    let line = assert_one_line_error(&out, 2, "bad day-of-week");
    assert!(line.contains("invalid cron expression: day-of-week field, position 16"), "{line}");
    let out = k.run(&["cron", "next", "0 0 12 * *"]);
    let line = assert_one_line_error(&out, 2, "five fields");
    assert!(line.contains("expression field"), "{line}");
}

#[test]
fn an_invalid_zone_or_count_exits_2() {
    let k = Kairos::new();
    let out = k.run(&["cron", "next", "0 0 12 * * ?", "--tz", "Mars/Olympus"]);
    let line = assert_one_line_error(&out, 2, "bad zone");
    assert!(line.contains("Mars/Olympus"), "{line}");
    let out = k.run(&["cron", "next", "0 0 12 * * ?", "--count", "0"]);
    assert_one_line_error(&out, 2, "count 0");
    let out = k.run(&["cron", "next", "0 0 12 * * ?", "--from", "yesterday"]);
    assert_one_line_error(&out, 2, "bad --from");
}
