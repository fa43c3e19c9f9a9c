//! Quartz's own CronExpressionTest (quartz-core/src/test/java/org/quartz/CronExpressionTest.java),
//! ported case by case. Each test names the Quartz method it ports. Quartz runs them in the
//! JVM's default zone; here they run in UTC (none of them is about DST).

use kairos_cron::{CronExpr, Field, TimeZone, Timestamp};

fn utc(s: &str) -> Timestamp {
    format!("{s}Z").parse().unwrap()
}

fn cron(s: &str) -> CronExpr {
    CronExpr::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

fn refused(s: &str, field: Field) {
    match CronExpr::parse(s) {
        Ok(_) => panic!("{s:?} was accepted"),
        Err(e) => assert_eq!(e.field, field, "{s:?}: {e}"),
    }
}

/// testIsSatisfiedBy
#[test]
fn is_satisfied_by() {
    let c = cron("0 15 10 * * ? 2005");
    assert!(c.is_satisfied_by(utc("2005-06-01T10:15:00"), &TimeZone::UTC));
    assert!(!c.is_satisfied_by(utc("2006-06-01T10:15:00"), &TimeZone::UTC));
    assert!(!c.is_satisfied_by(utc("2005-06-01T10:16:00"), &TimeZone::UTC));
    assert!(!c.is_satisfied_by(utc("2005-06-01T10:14:00"), &TimeZone::UTC));
}

/// testLastDayOffset (its loops over `isSatisfied`, a method Quartz 2.3 does not have, are
/// replaced by the chained-fire-time checks below)
#[test]
fn last_day_offset() {
    let tz = &TimeZone::UTC;
    let c = cron("0 15 10 L-2 * ? 2010");
    assert!(c.is_satisfied_by(utc("2010-10-29T10:15:00"), tz));
    assert!(!c.is_satisfied_by(utc("2010-10-28T10:15:00"), tz));
    // Last day - 5 is Tuesday the 26th: a weekday already.
    assert!(cron("0 15 10 L-5W * ? 2010").is_satisfied_by(utc("2010-10-26T10:15:00"), tz));
    assert!(cron("0 15 10 L-1 * ? 2010").is_satisfied_by(utc("2010-10-30T10:15:00"), tz));
    // Last day - 1 is Saturday the 30th: the nearest weekday is Friday the 29th.
    assert!(cron("0 15 10 L-1W * ? 2010").is_satisfied_by(utc("2010-10-29T10:15:00"), tz));
}

/// testLastDayOffset, second half: the expressions it walks back over 94 days, each fire
/// time checked against the one before.
#[test]
fn last_day_offset_fire_times_are_consistent() {
    let tz = &TimeZone::UTC;
    for expr in ["19 15 10 24 May ?", "0 0 0 LW * ? *", "0 0 0 ? * 2#3 *", "0 0 0 5W * ? *", "0 0 0 ? * SUNL *"] {
        let c = cron(expr);
        let mut at = utc("2017-02-19T10:15:00");
        for _ in 0..12 {
            let next = c.next_after(at, tz).unwrap();
            assert!(next > at, "{expr}");
            assert!(c.is_satisfied_by(next, tz), "{expr} at {next}");
            assert!(!c.is_satisfied_by(next - jiff::SignedDuration::from_secs(1), tz), "{expr}");
            at = next;
        }
    }
}

/// testQuartz571: expressions with months survive serialization.
#[test]
fn quartz_571_serialization() {
    let c = cron("19 15 10 4 Apr ? ");
    let json = serde_json::to_string(&c).unwrap();
    assert_eq!(json, "\"19 15 10 4 Apr ?\"");
    let back: CronExpr = serde_json::from_str(&json).unwrap();
    assert_eq!(back, c);
    assert!(back.next_after(utc("2024-01-01T00:00:00"), &TimeZone::UTC).is_some());
}

/// testQtz259: a last-day offset never repeats a fire time.
#[test]
fn qtz_259_last_day_offset_does_not_repeat() {
    chain_is_strictly_increasing("0 0 0 L-2 * ? *");
}

/// testQtz259LW
#[test]
fn qtz_259_lw_does_not_repeat() {
    chain_is_strictly_increasing("0 0 0 LW * ? *");
}

fn chain_is_strictly_increasing(expr: &str) {
    let c = cron(expr);
    let mut prev = c.next_after(utc("2024-05-17T12:00:00"), &TimeZone::UTC).unwrap();
    for _ in 0..25 {
        let next = c.next_after(prev, &TimeZone::UTC).unwrap();
        assert!(next > prev, "{expr}: {next} after {prev}");
        prev = next;
    }
}

/// testQuartz574: unknown month names.
#[test]
fn quartz_574_month_names() {
    refused("* * * * Foo ? ", Field::Month);
    refused("* * * * Jan-Foo ? ", Field::Month);
}

/// testQuartz621: both day fields given.
#[test]
fn quartz_621_both_day_fields() {
    refused("0 0 * * * *", Field::DayOfWeek);
    refused("0 0 * 4 * *", Field::DayOfWeek);
    refused("0 0 * * * 4", Field::DayOfWeek);
}

/// testQuartz640: `L` with other days in a list.
#[test]
fn quartz_640_l_in_lists() {
    refused("0 43 9 1,5,29,L * ?", Field::DayOfMonth);
    refused("0 43 9 ? * SAT,SUN,L", Field::DayOfWeek);
    refused("0 43 9 ? * 6,7,L", Field::DayOfWeek);
    cron("0 43 9 ? * 5L");
}

/// testQtz96: `W` after a day past 31.
#[test]
fn qtz_96_w_past_31() {
    refused("0/5 * * 32W 1 ?", Field::DayOfMonth);
}

/// testQtz395_CopyConstructorMustPreserveTimeZone: a copy is the same expression (kairos
/// keeps the zone outside the expression, so there is nothing else to preserve).
#[test]
fn qtz_395_copy() {
    let c = cron("0 15 10 * * ? 2005");
    assert_eq!(c.clone(), c);
    assert_eq!(c.clone().as_str(), "0 15 10 * * ? 2005");
}

/// testSecRangeIntervalAfterSlash (issue #58)
#[test]
fn sec_range_interval_after_slash() {
    refused("/120 0 8-18 ? * 2-6", Field::Second);
    refused("0/120 0 8-18 ? * 2-6", Field::Second);
    refused("/ 0 8-18 ? * 2-6", Field::Second);
    refused("0/ 0 8-18 ? * 2-6", Field::Second);
}

/// testMinRangeIntervalAfterSlash (issue #58)
#[test]
fn min_range_interval_after_slash() {
    refused("0 /120 8-18 ? * 2-6", Field::Minute);
    refused("0 0/120 8-18 ? * 2-6", Field::Minute);
    refused("0 / 8-18 ? * 2-6", Field::Minute);
    refused("0 0/ 8-18 ? * 2-6", Field::Minute);
}

/// testHourRangeIntervalAfterSlash (issue #58)
#[test]
fn hour_range_interval_after_slash() {
    refused("0 0 /120 ? * 2-6", Field::Hour);
    refused("0 0 0/120 ? * 2-6", Field::Hour);
    refused("0 0 / ? * 2-6", Field::Hour);
    refused("0 0 0/ ? * 2-6", Field::Hour);
}

/// testDayOfMonthRangeIntervalAfterSlash (issue #58)
#[test]
fn day_of_month_range_interval_after_slash() {
    refused("0 0 0 /120 * 2-6", Field::DayOfMonth);
    refused("0 0 0 0/120 * 2-6", Field::DayOfMonth);
    refused("0 0 0 / * 2-6", Field::DayOfMonth);
    refused("0 0 0 0/ * 2-6", Field::DayOfMonth);
}

/// testMonthRangeIntervalAfterSlash (issue #58)
#[test]
fn month_range_interval_after_slash() {
    refused("0 0 0 ? /120 2-6", Field::Month);
    refused("0 0 0 ? 0/120 2-6", Field::Month);
    refused("0 0 0 ? / 2-6", Field::Month);
    refused("0 0 0 ? 0/ 2-6", Field::Month);
}

/// testDayOfWeekRangeIntervalAfterSlash (issue #58)
#[test]
fn day_of_week_range_interval_after_slash() {
    refused("0 0 0 ? * /120", Field::DayOfWeek);
    refused("0 0 0 ? * 0/120", Field::DayOfWeek);
    refused("0 0 0 ? * /", Field::DayOfWeek);
    refused("0 0 0 ? * 0/", Field::DayOfWeek);
}
