//! Every feature of the dialect and every error (field and position), in UTC.

use kairos_cron::{CronError, CronExpr, Field, TimeZone, Timestamp};

fn utc(s: &str) -> Timestamp {
    format!("{s}Z").parse().unwrap()
}

/// The next `n` fire times after `from` (UTC), as `YYYY-MM-DDTHH:MM:SS`.
fn next(expr: &str, from: &str, n: usize) -> Vec<String> {
    let c = CronExpr::parse(expr).unwrap_or_else(|e| panic!("{expr:?}: {e}"));
    let tz = TimeZone::UTC;
    std::iter::successors(c.next_after(utc(from), &tz), |t| c.next_after(*t, &tz))
        .take(n)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%S").to_string())
        .collect()
}

fn err(expr: &str) -> CronError {
    match CronExpr::parse(expr) {
        Ok(_) => panic!("{expr:?} was accepted"),
        Err(e) => e,
    }
}

/// The error names `field` and the 1-based character `position`.
fn refused_at(expr: &str, field: Field, position: usize) {
    let e = err(expr);
    assert_eq!((e.field, e.position), (field, position), "{expr:?}: {e}");
}

#[test]
fn every_second_and_strictly_after() {
    assert_eq!(
        next("* * * * * ?", "2024-01-01T00:00:00", 3),
        ["2024-01-01T00:00:01", "2024-01-01T00:00:02", "2024-01-01T00:00:03"]
    );
    // The fraction of `after` is dropped, as Quartz drops milliseconds.
    let c = CronExpr::parse("* * * * * ?").unwrap();
    let t = utc("2024-01-01T00:00:00.999");
    assert_eq!(c.next_after(t, &TimeZone::UTC), Some(utc("2024-01-01T00:00:01")));
}

#[test]
fn lists_ranges_and_steps() {
    assert_eq!(
        next("0 0/20 * * * ?", "2024-01-01T00:00:00", 4),
        ["2024-01-01T00:20:00", "2024-01-01T00:40:00", "2024-01-01T01:00:00", "2024-01-01T01:20:00"]
    );
    assert_eq!(
        next("3/20 * * * * ?", "2024-01-01T00:00:00", 3),
        ["2024-01-01T00:00:03", "2024-01-01T00:00:23", "2024-01-01T00:00:43"]
    );
    assert_eq!(
        next("0 10-40/15 * * * ?", "2024-01-01T00:00:00", 3),
        ["2024-01-01T00:10:00", "2024-01-01T00:25:00", "2024-01-01T00:40:00"]
    );
    assert_eq!(next("0 0 8,12,17 * * ?", "2024-01-01T12:00:00", 2), ["2024-01-01T17:00:00", "2024-01-02T08:00:00"]);
    assert_eq!(next("0 0 */6 * * ?", "2024-01-01T01:00:00", 2), ["2024-01-01T06:00:00", "2024-01-01T12:00:00"]);
    assert_eq!(
        next("0 0 0 */10 * ?", "2024-01-02T00:00:00", 3),
        ["2024-01-11T00:00:00", "2024-01-21T00:00:00", "2024-01-31T00:00:00"]
    );
    // `/5` alone is `*/5`, as in Quartz.
    assert_eq!(next("/15 * * * * ?", "2024-01-01T00:00:00", 2), ["2024-01-01T00:00:15", "2024-01-01T00:00:30"]);
    // A step larger than a range keeps its start (Quartz checks no step after a range).
    assert_eq!(next("0 0 5-10/100 * * ?", "2024-01-01T00:00:00", 2), ["2024-01-01T05:00:00", "2024-01-02T05:00:00"]);
}

#[test]
fn wrapping_ranges() {
    assert_eq!(
        next("0 0 22-2 * * ?", "2024-01-01T12:00:00", 6),
        [
            "2024-01-01T22:00:00",
            "2024-01-01T23:00:00",
            "2024-01-02T00:00:00",
            "2024-01-02T01:00:00",
            "2024-01-02T02:00:00",
            "2024-01-02T22:00:00"
        ]
    );
    // FRI-MON: Friday, Saturday, Sunday, Monday. 2024-06-05 is a Wednesday.
    assert_eq!(
        next("0 0 9 ? * FRI-MON", "2024-06-05T00:00:00", 5),
        [
            "2024-06-07T09:00:00",
            "2024-06-08T09:00:00",
            "2024-06-09T09:00:00",
            "2024-06-10T09:00:00",
            "2024-06-14T09:00:00"
        ]
    );
    assert_eq!(
        next("0 0 0 1 NOV-FEB ?", "2024-03-01T00:00:00", 4),
        ["2024-11-01T00:00:00", "2024-12-01T00:00:00", "2025-01-01T00:00:00", "2025-02-01T00:00:00"]
    );
    assert_eq!(
        next("0 50-10/10 * * * ?", "2024-01-01T00:45:00", 4),
        ["2024-01-01T00:50:00", "2024-01-01T01:00:00", "2024-01-01T01:10:00", "2024-01-01T01:50:00"]
    );
    // Day-of-month ranges wrap at 31 whatever the month (Quartz): 30-2 in April is 30, 1, 2.
    assert_eq!(
        next("0 0 0 30-2 * ?", "2024-04-29T00:00:00", 4),
        ["2024-04-30T00:00:00", "2024-05-01T00:00:00", "2024-05-02T00:00:00", "2024-05-30T00:00:00"]
    );
}

#[test]
fn names_are_case_insensitive() {
    assert_eq!(next("0 0 12 ? jan,Jul mon", "2024-01-01T00:00:00", 2), ["2024-01-01T12:00:00", "2024-01-08T12:00:00"]);
    assert_eq!(CronExpr::parse("0 0 12 ? jan mon").unwrap().as_str(), "0 0 12 ? jan mon");
}

#[test]
fn day_of_week_numbers_start_on_sunday() {
    // 1 = Sunday; 2024-06-09 is a Sunday.
    assert_eq!(next("0 0 0 ? * 1", "2024-06-05T00:00:00", 1), ["2024-06-09T00:00:00"]);
    assert_eq!(next("0 0 0 ? * 7", "2024-06-05T00:00:00", 1), ["2024-06-08T00:00:00"]);
    // `L` alone in day-of-week is 7, Saturday (Quartz).
    assert_eq!(next("0 0 0 ? * L", "2024-06-05T00:00:00", 1), ["2024-06-08T00:00:00"]);
}

#[test]
fn last_day_and_offsets() {
    assert_eq!(
        next("0 0 0 L * ?", "2024-01-15T00:00:00", 3),
        ["2024-01-31T00:00:00", "2024-02-29T00:00:00", "2024-03-31T00:00:00"]
    );
    assert_eq!(
        next("0 0 0 L-3 * ?", "2024-01-15T00:00:00", 3),
        ["2024-01-28T00:00:00", "2024-02-26T00:00:00", "2024-03-28T00:00:00"]
    );
    // L-30 is the 1st of 31-day months only.
    assert_eq!(next("0 0 0 L-30 * ?", "2024-01-15T00:00:00", 2), ["2024-03-01T00:00:00", "2024-05-01T00:00:00"]);
}

#[test]
fn last_weekday() {
    // 2024-03-31 is a Sunday → Friday the 29th; 2024-08-31 a Saturday → Friday the 30th.
    assert_eq!(next("0 0 0 LW * ?", "2024-03-01T00:00:00", 1), ["2024-03-29T00:00:00"]);
    assert_eq!(next("0 0 0 LW * ?", "2024-08-01T00:00:00", 1), ["2024-08-30T00:00:00"]);
    assert_eq!(next("0 0 0 LW * ?", "2024-07-01T00:00:00", 1), ["2024-07-31T00:00:00"]);
    // L-2W: 2024-06-28 is a Friday (June has 30 days).
    assert_eq!(next("0 0 0 L-2W * ?", "2024-06-01T00:00:00", 1), ["2024-06-28T00:00:00"]);
}

#[test]
fn nearest_weekday() {
    // 2024-06-15 is a Saturday → Friday 14th; 2024-09-15 a Sunday → Monday 16th.
    assert_eq!(next("0 0 0 15W * ?", "2024-06-01T00:00:00", 1), ["2024-06-14T00:00:00"]);
    assert_eq!(next("0 0 0 15W * ?", "2024-09-01T00:00:00", 1), ["2024-09-16T00:00:00"]);
    // 1W never leaves the month: 2024-06-01 is a Saturday → Monday the 3rd.
    assert_eq!(next("0 0 0 1W * ?", "2024-05-31T12:00:00", 1), ["2024-06-03T00:00:00"]);
    // The last day on a Sunday moves back to Friday: 2024-06-30.
    assert_eq!(next("0 0 0 30W 6 ?", "2024-06-01T00:00:00", 1), ["2024-06-28T00:00:00"]);
    // A month without the day does not fire (2023-06-30 is a Friday: Quartz fires there or
    // not depending on where its search enters June; kairos never does).
    assert_eq!(next("0 0 0 31W 6,7 ?", "2023-06-01T00:00:00", 1), ["2023-07-31T00:00:00"]);
    assert_eq!(next("0 0 0 30W * ?", "2024-01-31T00:00:00", 2), ["2024-03-29T00:00:00", "2024-04-30T00:00:00"]);
}

#[test]
fn last_weekday_of_the_month() {
    // 6L: the last Friday. 2024-05-31 is a Friday.
    assert_eq!(next("0 0 0 ? * 6L", "2024-05-01T00:00:00", 2), ["2024-05-31T00:00:00", "2024-06-28T00:00:00"]);
    assert_eq!(next("0 0 0 ? * FRIL", "2024-05-01T00:00:00", 1), ["2024-05-31T00:00:00"]);
    assert_eq!(next("0 0 0 ? * sunl", "2024-05-01T00:00:00", 1), ["2024-05-26T00:00:00"]);
}

#[test]
fn nth_weekday_of_the_month() {
    // 6#3: the third Friday; MON#5 only in months with five Mondays.
    assert_eq!(next("0 0 0 ? * 6#3", "2024-05-01T00:00:00", 2), ["2024-05-17T00:00:00", "2024-06-21T00:00:00"]);
    assert_eq!(
        next("0 0 0 ? * MON#5", "2024-01-01T00:00:00", 3),
        ["2024-01-29T00:00:00", "2024-04-29T00:00:00", "2024-07-29T00:00:00"]
    );
    assert_eq!(next("0 0 0 ? * 2#1", "2024-06-03T00:00:00", 1), ["2024-07-01T00:00:00"]);
}

#[test]
fn short_months_are_skipped() {
    assert_eq!(next("0 0 0 31 * ?", "2024-01-31T00:00:00", 2), ["2024-03-31T00:00:00", "2024-05-31T00:00:00"]);
    assert_eq!(next("0 0 0 29 2 ?", "2024-03-01T00:00:00", 2), ["2028-02-29T00:00:00", "2032-02-29T00:00:00"]);
    // Never: 30 February.
    assert_eq!(next("0 0 0 30 2 ?", "2024-01-01T00:00:00", 1), Vec::<String>::new());
}

#[test]
fn years() {
    assert_eq!(
        next("0 0 0 1 1 ? 2030-2032", "2024-01-01T00:00:00", 5),
        ["2030-01-01T00:00:00", "2031-01-01T00:00:00", "2032-01-01T00:00:00"]
    );
    assert_eq!(
        next("0 0 0 1 1 ? 2030/10", "2024-01-01T00:00:00", 9),
        [
            "2030-01-01T00:00:00",
            "2040-01-01T00:00:00",
            "2050-01-01T00:00:00",
            "2060-01-01T00:00:00",
            "2070-01-01T00:00:00",
            "2080-01-01T00:00:00",
            "2090-01-01T00:00:00"
        ]
    );
    // The year range ends with 2099: past it, nothing.
    assert_eq!(next("0 0 0 1 1 ?", "2098-06-01T00:00:00", 5), ["2099-01-01T00:00:00"]);
    // Before 1970 the first fire time is in 1970.
    assert_eq!(next("0 0 0 1 1 ?", "1960-06-01T00:00:00", 1), ["1970-01-01T00:00:00"]);
}

#[test]
fn is_satisfied_by_whole_seconds() {
    let c = CronExpr::parse("30 15 10 ? * MON-FRI").unwrap();
    let tz = TimeZone::UTC;
    assert!(c.is_satisfied_by(utc("2024-06-03T10:15:30"), &tz));
    assert!(c.is_satisfied_by(utc("2024-06-03T10:15:30.750"), &tz));
    assert!(!c.is_satisfied_by(utc("2024-06-03T10:15:31"), &tz));
    assert!(!c.is_satisfied_by(utc("2024-06-01T10:15:30"), &tz), "a Saturday");
}

#[test]
fn next_invalid_after() {
    let tz = TimeZone::UTC;
    let inv = |expr: &str, from: &str| CronExpr::parse(expr).unwrap().next_invalid_after(utc(from), &tz).unwrap();
    // Not a fire time: the next second.
    assert_eq!(inv("0 0 12 * * ?", "2024-01-01T00:00:00"), utc("2024-01-01T00:00:01"));
    // Working hours: the first second after them.
    assert_eq!(inv("* * 9-17 ? * MON-FRI", "2024-06-03T09:00:05"), utc("2024-06-03T18:00:00"));
    // From the last second of the run: the next second.
    assert_eq!(inv("* * 9-17 ? * MON-FRI", "2024-06-07T17:59:58"), utc("2024-06-07T18:00:00"));
    assert_eq!(inv("* 0-29 * * * ?", "2024-01-01T10:05:00"), utc("2024-01-01T10:30:00"));
    assert_eq!(inv("0-9 * * * * ?", "2024-01-01T10:05:05"), utc("2024-01-01T10:05:10"));
    // 50-59 and 0-9: the run crosses the minute.
    assert_eq!(inv("50-9 * * * * ?", "2024-01-01T10:05:55"), utc("2024-01-01T10:06:10"));
    // Every second until 2099: answered at once.
    assert_eq!(inv("* * * * * ?", "2024-01-01T00:00:00"), utc("2100-01-01T00:00:00"));
    // Whole days: June 2024 is every second of every day.
    assert_eq!(inv("* * * * 6 ?", "2024-06-10T00:00:00"), utc("2024-07-01T00:00:00"));
}

#[test]
fn display_serde_and_from_str() {
    let c: CronExpr = "  0 0 12 * * ?  ".parse().unwrap();
    assert_eq!(c.to_string(), "0 0 12 * * ?");
    assert_eq!(serde_json::to_value(&c).unwrap(), serde_json::json!("0 0 12 * * ?"));
    let e = serde_json::from_value::<CronExpr>(serde_json::json!("0 0 12 * *")).unwrap_err();
    assert!(e.to_string().contains("expression field"), "{e}");
    // Tabs separate fields too.
    assert!(CronExpr::parse("0\t0\t12\t*\t*\t?").is_ok());
}

#[test]
fn error_display_names_field_and_position() {
    let e = err("0 0 12 ? * MON-FRX");
    assert_eq!(e.to_string(), "day-of-week field, position 16: unknown name 'FRX': day-of-week names are SUN-SAT");
}

#[test]
fn field_count_errors() {
    refused_at("", Field::Expression, 1);
    refused_at("   ", Field::Expression, 1);
    refused_at("0 0 12 * *", Field::Expression, 11);
    refused_at("0 0 0 * * ? 2030 x", Field::Expression, 18);
    // Positions count from the text as given, leading spaces included.
    refused_at("  0 0 12 * *", Field::Expression, 13);
}

#[test]
fn value_errors() {
    refused_at("60 * * * * ?", Field::Second, 1);
    refused_at("0 60 * * * ?", Field::Minute, 3);
    refused_at("0 0 24 * * ?", Field::Hour, 5);
    refused_at("0 0 0 32 * ?", Field::DayOfMonth, 7);
    refused_at("0 0 0 0 * ?", Field::DayOfMonth, 7);
    refused_at("0 0 0 1 13 ?", Field::Month, 9);
    refused_at("0 0 0 ? * 8", Field::DayOfWeek, 11);
    refused_at("0 0 0 ? * 0", Field::DayOfWeek, 11);
    refused_at("0 0 0 * * ? 2100", Field::Year, 13);
    refused_at("0 0 0 * * ? 1969", Field::Year, 13);
    refused_at("0 0 0 * * ? 2030-2020", Field::Year, 18);
    refused_at("0 0 0 * * ? 99999999999", Field::Year, 13);
    refused_at("0 5-60 * * * ?", Field::Minute, 5);
    refused_at("0 0 0 5-0 * ?", Field::DayOfMonth, 9);
}

#[test]
fn name_errors() {
    refused_at("0 0 0 1 FOO ?", Field::Month, 9);
    refused_at("0 0 0 1 JANUARY ?", Field::Month, 9);
    refused_at("0 0 0 1 JAN-FOO ?", Field::Month, 13);
    refused_at("0 0 0 1 JAN-3 ?", Field::Month, 13);
    refused_at("0 0 0 ? * MONDAY", Field::DayOfWeek, 11);
    refused_at("0 0 MON * * ?", Field::Hour, 5);
    refused_at("0 0 0 1 JAN/2 ?", Field::Month, 12);
    refused_at("0 0 0 ? * MON-FRI/2", Field::DayOfWeek, 18);
}

#[test]
fn step_errors() {
    refused_at("*/0 * * * * ?", Field::Second, 3);
    refused_at("*/60 * * * * ?", Field::Second, 3);
    refused_at("0 0 */24 * * ?", Field::Hour, 7);
    refused_at("0 0 0 */32 * ?", Field::DayOfMonth, 9);
    refused_at("0 0 0 1 */13 ?", Field::Month, 11);
    refused_at("0 0 0 ? * */8", Field::DayOfWeek, 13);
    refused_at("5/ * * * * ?", Field::Second, 2);
    refused_at("*/x * * * * ?", Field::Second, 2);
    refused_at("*5 * * * * ?", Field::Second, 2);
    refused_at("1-5/0 * * * * ?", Field::Second, 5);
}

#[test]
fn special_character_errors() {
    refused_at("? * * * * ?", Field::Second, 1);
    refused_at("0 0 0 ? * ?", Field::DayOfWeek, 11);
    refused_at("0 0 0 * * MON", Field::DayOfWeek, 11);
    refused_at("0 0 0 ?x * MON", Field::DayOfMonth, 7);
    refused_at("0 0 0 1,? * MON", Field::DayOfMonth, 9);
    refused_at("L 30 * * * ?", Field::Second, 1);
    refused_at("0 0 0 5L * ?", Field::DayOfMonth, 8);
    refused_at("0 0 0 1,L * ?", Field::DayOfMonth, 9);
    refused_at("0 0 0 L-31 * ?", Field::DayOfMonth, 9);
    refused_at("0 0 0 L-28W * ?", Field::DayOfMonth, 9);
    refused_at("0 0 0 L-W * ?", Field::DayOfMonth, 9);
    refused_at("0 0 0 LX * ?", Field::DayOfMonth, 8);
    refused_at("0 0 0 0W * ?", Field::DayOfMonth, 7);
    refused_at("0 0 0 32W * ?", Field::DayOfMonth, 7);
    refused_at("0 0 0 1-5W * ?", Field::DayOfMonth, 8);
    refused_at("0 0 0 15W,20 * ?", Field::DayOfMonth, 9);
    refused_at("0 0 0 ? * 6#6", Field::DayOfWeek, 13);
    refused_at("0 0 0 ? * 8#1", Field::DayOfWeek, 11);
    refused_at("0 0 0 ? * 2#1,3", Field::DayOfWeek, 12);
    refused_at("0 0 0 ? * 6L,3", Field::DayOfWeek, 12);
    refused_at("0 0 0 ? * 8L", Field::DayOfWeek, 11);
    refused_at("0 0 0 ? * L-2", Field::DayOfWeek, 11);
    refused_at("0 0 0 ? * 6LX", Field::DayOfWeek, 12);
    refused_at("0 0 # * * ?", Field::Hour, 5);
}

#[test]
fn list_errors() {
    refused_at("1,,2 * * * * ?", Field::Second, 2);
    refused_at(",5 * * * * ?", Field::Second, 1);
    refused_at("5, * * * * ?", Field::Second, 2);
    refused_at("0 0 1-2-3 * * ?", Field::Hour, 8);
}

#[test]
fn non_ascii_is_refused_with_a_character_position() {
    // Positions count characters, not bytes.
    refused_at("é 0 0 * * ?", Field::Second, 1);
    refused_at("0 0 0 ? * ÉÉÉ", Field::DayOfWeek, 11);
    refused_at("0 0 0 ? * MON ☃", Field::Year, 15);
}
