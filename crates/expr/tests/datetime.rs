//! `dateTime()` and the Joda-Time methods on it, against a fixed clock:
//! what Camunda models write in due dates and timers.

mod common;

use common::{TestContext, eval, standard};
use kairos_expr::{EvalError, Expression};
use serde_json::{Map, Value, json};

/// The clock every table reads: Monday 5 January 2026, 09:00 UTC.
const NOW: &str = "2026-01-05T09:00:00Z";

fn clocked(now: &str) -> TestContext {
    let mut ctx = standard();
    ctx.now = Some(now.parse().unwrap());
    ctx
}

fn check(ctx: &TestContext, table: &[(&str, Value)]) {
    for (text, expected) in table {
        match eval(text, ctx) {
            Ok(got) => assert_eq!(&got, expected, "{text}"),
            Err(e) => panic!("{text}: expected {expected}, got error {e}"),
        }
    }
}

#[test]
fn camunda_due_dates_become_rfc_3339_strings() {
    let ctx = clocked(NOW);
    let due = Expression::parse("${dateTime().plusDays(2).toDate()}").unwrap();
    assert_eq!(due.eval(&ctx).unwrap(), json!("2026-01-07T09:00:00.000Z"));
    assert_eq!(due.eval_string(&ctx).unwrap(), "2026-01-07T09:00:00.000Z");
    let timer = Expression::parse("${dateTime().plusHours(1).toString()}").unwrap();
    assert_eq!(timer.eval(&ctx).unwrap(), json!("2026-01-05T10:00:00.000Z"));
    assert_eq!(timer.eval_string(&ctx).unwrap(), "2026-01-05T10:00:00.000Z");
    assert!(!due.is_literal());
    assert!(due.variables().is_empty());
}

#[test]
fn plus_and_minus_every_unit() {
    check(
        &clocked(NOW),
        &[
            ("${dateTime()}", json!("2026-01-05T09:00:00.000Z")),
            ("${dateTime().toDate()}", json!("2026-01-05T09:00:00.000Z")),
            ("${dateTime().plusYears(1)}", json!("2027-01-05T09:00:00.000Z")),
            ("${dateTime().plusMonths(1)}", json!("2026-02-05T09:00:00.000Z")),
            ("${dateTime().plusWeeks(2)}", json!("2026-01-19T09:00:00.000Z")),
            ("${dateTime().plusDays(2)}", json!("2026-01-07T09:00:00.000Z")),
            ("${dateTime().plusHours(1)}", json!("2026-01-05T10:00:00.000Z")),
            ("${dateTime().plusMinutes(90)}", json!("2026-01-05T10:30:00.000Z")),
            ("${dateTime().plusSeconds(-30)}", json!("2026-01-05T08:59:30.000Z")),
            ("${dateTime().plusMillis(1500)}", json!("2026-01-05T09:00:01.500Z")),
            ("${dateTime().minusYears(1)}", json!("2025-01-05T09:00:00.000Z")),
            ("${dateTime().minusMonths(2)}", json!("2025-11-05T09:00:00.000Z")),
            ("${dateTime().minusWeeks(1)}", json!("2025-12-29T09:00:00.000Z")),
            ("${dateTime().minusDays(5)}", json!("2025-12-31T09:00:00.000Z")),
            ("${dateTime().minusHours(10)}", json!("2026-01-04T23:00:00.000Z")),
            ("${dateTime().minusMinutes(1)}", json!("2026-01-05T08:59:00.000Z")),
            ("${dateTime().minusSeconds(1)}", json!("2026-01-05T08:59:59.000Z")),
            ("${dateTime().minusMillis(1)}", json!("2026-01-05T08:59:59.999Z")),
            ("${dateTime().minusDays(-1)}", json!("2026-01-06T09:00:00.000Z")),
            // Months clamp to the last day, as in Joda: 31 January + 1 month.
            ("${dateTime().plusDays(26).plusMonths(1)}", json!("2026-02-28T09:00:00.000Z")),
            // Arguments coerce as EL coerces to an int.
            ("${dateTime().plusDays(n)}", json!("2026-01-10T09:00:00.000Z")),
            ("${dateTime().plusDays('3')}", json!("2026-01-08T09:00:00.000Z")),
            ("${dateTime().plusDays(2.0)}", json!("2026-01-07T09:00:00.000Z")),
            ("${dateTime().plusDays(m * 7)}", json!("2026-01-19T09:00:00.000Z")),
            ("${dateTime().plusDays(1).minusHours(1).plusMinutes(1).toDate()}", json!("2026-01-06T08:01:00.000Z")),
        ],
    );
}

#[test]
fn reading_and_comparing() {
    check(
        &clocked(NOW),
        &[
            ("${dateTime().getMillis()}", json!(1_767_603_600_000_i64)),
            ("${dateTime().plusMillis(1).getMillis() - dateTime().getMillis()}", json!(1)),
            ("${dateTime().toString()}", json!("2026-01-05T09:00:00.000Z")),
            ("${dateTime().toString().startsWith('2026-01-05')}", json!(true)),
            ("${dateTime().isBefore(dateTime().plusSeconds(1))}", json!(true)),
            ("${dateTime().isAfter(dateTime().plusSeconds(1))}", json!(false)),
            ("${dateTime().isAfter('2026-01-05T08:59:59.999Z')}", json!(true)),
            ("${dateTime().isBefore('2026-01-05T10:00:00+01:00')}", json!(false)),
            ("${dateTime().isAfter('2026-01-05T10:00:00+01:00')}", json!(false)),
            ("${dateTime().isBefore(deadline)}", json!(true)),
            ("${dateTime() < dateTime().plusDays(1)}", json!(true)),
            ("${dateTime() > dateTime().plusDays(1)}", json!(false)),
            ("${dateTime() > '2026-01-01T00:00:00Z'}", json!(true)),
            ("${'2026-01-01T00:00:00Z' < dateTime()}", json!(true)),
            ("${dateTime().plusDays(30) gt deadline}", json!(true)),
            ("${dateTime() <= dateTime()}", json!(true)),
            ("${dateTime() >= dateTime().plusMillis(1)}", json!(false)),
            ("${dateTime() == dateTime()}", json!(true)),
            ("${dateTime() == '2026-01-05T10:00:00+01:00'}", json!(true)),
            ("${'2026-01-05T09:00:00Z' eq dateTime()}", json!(true)),
            ("${dateTime() != dateTime().plusMillis(1)}", json!(true)),
            ("${dateTime() == null}", json!(false)),
            ("${dateTime() != null}", json!(true)),
            ("${dateTime() > null}", json!(false)),
            ("${empty dateTime()}", json!(false)),
            ("${t ? dateTime().plusDays(1) : dateTime()}", json!("2026-01-06T09:00:00.000Z")),
            ("${(no ? dateTime() : dateTime().minusDays(1)).toDate()}", json!("2026-01-04T09:00:00.000Z")),
            ("Due ${dateTime().plusDays(2)}!", json!("Due 2026-01-07T09:00:00.000Z!")),
        ],
    );
}

#[test]
fn now_is_cut_to_the_millisecond() {
    check(
        &clocked("2026-01-05T09:00:00.123456Z"),
        &[
            ("${dateTime()}", json!("2026-01-05T09:00:00.123Z")),
            ("${dateTime().getMillis()}", json!(1_767_603_600_123_i64)),
            ("${dateTime() == '2026-01-05T09:00:00.123Z'}", json!(true)),
        ],
    );
}

#[test]
fn typed_entry_points() {
    let ctx = clocked(NOW);
    let cond = Expression::parse("${dateTime().isBefore(dateTime().plusDays(1))}").unwrap();
    assert!(cond.eval_bool(&ctx).unwrap());
    let e = Expression::parse("${dateTime()}").unwrap().eval_bool(&ctx).unwrap_err();
    let found = "date-time 2026-01-05T09:00:00.000Z".to_owned();
    assert_eq!(e, EvalError::ResultType { expected: "a boolean", found });
    let s = Expression::parse("${dateTime().minusMillis(1)}").unwrap().eval_string(&ctx).unwrap();
    assert_eq!(s, "2026-01-05T08:59:59.999Z");
}

#[test]
fn without_a_clock_date_time_is_an_error() {
    let ctx = standard();
    for (text, position) in [("${dateTime()}", 2), ("${dateTime().plusDays(2).toDate()}", 2), ("Due ${dateTime()}", 6)]
    {
        let e = Expression::parse(text).unwrap();
        assert_eq!(e.eval(&ctx).unwrap_err(), EvalError::NoClock { position }, "{text}");
        assert_eq!(e.eval_string(&ctx).unwrap_err(), EvalError::NoClock { position }, "{text}");
    }
    // A plain map of variables has no clock either.
    let e = Expression::parse("${dateTime()}").unwrap().eval(&Map::new()).unwrap_err();
    assert_eq!(e.to_string(), "dateTime() needs a clock, which this context does not provide, at position 2");
    // Short-circuiting never asks for the clock.
    assert_eq!(eval("${no && dateTime().isBefore(deadline)}", &ctx).unwrap(), json!(false));
}

#[test]
fn out_of_range_is_an_overflow() {
    let ctx = clocked(NOW);
    for (text, operator) in [
        ("${dateTime().plusYears(8000)}", "plusYears"),
        ("${dateTime().minusYears(12026)}", "minusYears"),
        ("${dateTime().plusDays(5000000)}", "plusDays"),
        ("${dateTime().plusMillis(big)}", "plusMillis"),
        ("${dateTime().minusMillis(small)}", "minusMillis"),
        ("${dateTime().minusDays(small)}", "minusDays"),
        ("${dateTime().plusMonths(big)}", "plusMonths"),
    ] {
        let expected = EvalError::Overflow { operator: operator.into(), position: 13 };
        assert_eq!(eval(text, &ctx).unwrap_err(), expected, "{text}");
    }
    // The last representable year is fine.
    assert_eq!(eval("${dateTime().plusYears(7973)}", &ctx).unwrap(), json!("9999-01-05T09:00:00.000Z"));
}

#[test]
fn wrong_arguments_and_operands_are_type_errors() {
    let ctx = clocked(NOW);
    let table = [
        ("${dateTime().plusDays('x')}", "'plusDays' needs an integer argument, not string 'x'"),
        ("${dateTime().plusDays(1.5)}", "'plusDays' needs an integer argument, not float 1.5"),
        ("${dateTime().plusDays(nil)}", "'plusDays' needs an integer argument, not null"),
        ("${dateTime().minusHours(t)}", "'minusHours' needs an integer argument, not boolean true"),
        ("${dateTime().isBefore('soon')}", "'isBefore' needs a date-time or an RFC 3339 string, not string 'soon'"),
        (
            "${dateTime().isAfter('2026-01-05')}",
            "'isAfter' needs a date-time or an RFC 3339 string, not string '2026-01-05'",
        ),
        ("${dateTime().isAfter(5)}", "'isAfter' needs a date-time or an RFC 3339 string, not integer 5"),
        ("${dateTime().isBefore(nil)}", "'isBefore' needs a date-time or an RFC 3339 string, not null"),
        ("${dateTime() < 5}", "cannot compare date-time 2026-01-05T09:00:00.000Z with integer 5 using '<'"),
        (
            "${dateTime() == 'tomorrow'}",
            "cannot compare date-time 2026-01-05T09:00:00.000Z with string 'tomorrow' using '=='",
        ),
        ("${list != dateTime()}", "cannot compare list with date-time 2026-01-05T09:00:00.000Z using '=='"),
        ("${(t ? dateTime() : s).trim()}", "cannot call 'trim' on a date-time"),
        ("${(t ? dateTime() : s).equals(s)}", "cannot call 'equals' on a date-time"),
        ("${dateTime()[0]}", "cannot index date-time 2026-01-05T09:00:00.000Z"),
        ("${dateTime() && t}", "cannot use date-time 2026-01-05T09:00:00.000Z as a boolean"),
        ("${-dateTime()}", "cannot use date-time 2026-01-05T09:00:00.000Z as a number"),
    ];
    for (text, message) in table {
        match eval(text, &ctx) {
            Err(EvalError::Type { message: got, .. }) => assert_eq!(got, message, "{text}"),
            other => panic!("{text}: expected a type error, got {other:?}"),
        }
    }
}
