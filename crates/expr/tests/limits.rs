//! The bounds that keep an expression from exhausting the engine: text
//! size, nesting depth, evaluation steps and string size.

mod common;

use common::{TestContext, standard};
use kairos_expr::{EvalError, Expression, MAX_DEPTH, MAX_STEPS, MAX_STRING_BYTES, MAX_TEXT_BYTES};
use serde_json::json;

#[test]
fn text_longer_than_the_limit_is_refused() {
    let at_limit = format!("${{'{}'}}", "x".repeat(MAX_TEXT_BYTES - 5));
    assert_eq!(at_limit.len(), MAX_TEXT_BYTES);
    assert!(Expression::parse(&at_limit).is_ok());
    let over = format!("${{'{}'}}", "x".repeat(MAX_TEXT_BYTES));
    let e = Expression::parse(&over).unwrap_err();
    assert_eq!(e.message, format!("expression is longer than {MAX_TEXT_BYTES} bytes"));
    assert_eq!(e.position, MAX_TEXT_BYTES);
    // Counted in bytes, reported in characters.
    let e = Expression::parse(&"é".repeat(MAX_TEXT_BYTES)).unwrap_err();
    assert_eq!(e.position, MAX_TEXT_BYTES / 2);
}

#[test]
fn deep_parentheses_are_refused_without_overflowing_the_stack() {
    let ok = format!("${{{}1{}}}", "(".repeat(MAX_DEPTH - 1), ")".repeat(MAX_DEPTH - 1));
    assert_eq!(Expression::parse(&ok).unwrap().eval(&standard()).unwrap(), json!(1));
    for deep in [MAX_DEPTH + 1, 2000] {
        let text = format!("${{{}1{}}}", "(".repeat(deep), ")".repeat(deep));
        let e = Expression::parse(&text).unwrap_err();
        assert_eq!(e.message, format!("expression nests deeper than {MAX_DEPTH} levels"));
    }
}

#[test]
fn every_kind_of_nesting_is_bounded() {
    let n = 2000;
    let texts = [
        format!("${{{}t}}", "!".repeat(n)),
        format!("${{{}n}}", "-".repeat(n)),
        format!("${{{}s}}", "empty ".repeat(n / 6)),
        format!("${{obj{}}}", ".b".repeat(n / 2)),
        format!("${{list{}}}", "[0]".repeat(n / 3)),
        format!("${{s{}}}", ".trim()".repeat(n / 7)),
        format!("${{{}1{}}}", "t ? ".repeat(n / 4), " : 0".repeat(n / 4)),
        format!("${{{}1{}}}", "list[".repeat(n / 5), "]".repeat(n / 5)),
        format!("${{{}'a'{}}}", "s.contains(".repeat(n / 11), ")".repeat(n / 11)),
    ];
    for text in &texts {
        let e = Expression::parse(text).unwrap_err();
        assert!(e.message.contains("nests deeper than"), "{}…: {e}", &text[..20]);
    }
}

#[test]
fn long_flat_sums_parse_and_evaluate() {
    // 4 KiB of `a+a+…` is flat, not deep, and fits the step budget.
    let terms = (MAX_TEXT_BYTES - 3) / 2;
    let text = format!("${{{}}}", vec!["n"; terms].join("+"));
    assert!(text.len() <= MAX_TEXT_BYTES);
    let e = Expression::parse(&text).unwrap();
    assert_eq!(e.eval(&standard()).unwrap(), json!(5 * terms as i64));
    assert!(terms * 2 < MAX_STEPS);
}

#[test]
fn work_over_large_data_is_bounded_by_steps() {
    let mut ctx = TestContext::default();
    ctx.vars.insert("big".into(), json!((0..MAX_STEPS as i64 + 10).collect::<Vec<_>>()));
    ctx.vars.insert("small".into(), json!([1, 2, 3]));
    let contains = Expression::parse("${big.contains(-1)}").unwrap();
    assert_eq!(contains.eval(&ctx).unwrap_err(), EvalError::StepLimit { limit: MAX_STEPS });
    let equal = Expression::parse("${big == big}").unwrap();
    assert_eq!(equal.eval(&ctx).unwrap_err(), EvalError::StepLimit { limit: MAX_STEPS });
    assert_eq!(Expression::parse("${small.contains(3)}").unwrap().eval(&ctx).unwrap(), json!(true));
    assert_eq!(Expression::parse("${big.size()}").unwrap().eval(&ctx).unwrap(), json!(MAX_STEPS + 10));
}

#[test]
fn built_strings_are_bounded() {
    let mut ctx = TestContext::default();
    let half = "x".repeat(MAX_STRING_BYTES / 2 + 1);
    ctx.vars.insert("half".into(), json!(half));
    ctx.vars.insert("full".into(), json!("y".repeat(MAX_STRING_BYTES + 1)));
    // A variable passes through as is; building a bigger string does not.
    assert!(Expression::parse("${half}").unwrap().eval(&ctx).is_ok());
    let e = Expression::parse("${half}${half}").unwrap().eval(&ctx).unwrap_err();
    assert_eq!(e, EvalError::StringTooLong { limit: MAX_STRING_BYTES, position: 9 });
    let e = Expression::parse("${full.toUpperCase()}").unwrap().eval(&ctx).unwrap_err();
    assert!(matches!(e, EvalError::StringTooLong { .. }));
    let e = Expression::parse("${full} ").unwrap().eval(&ctx).unwrap_err();
    assert!(matches!(e, EvalError::StringTooLong { .. }));
    // Many references to one variable cannot multiply it past the limit.
    let many = "${half}".repeat(500);
    assert!(matches!(Expression::parse(&many).unwrap().eval(&ctx), Err(EvalError::StringTooLong { .. })));
}
