//! Parse and evaluate arbitrary text: nothing may panic, every parse error
//! must point inside (or just past) the text, and anything that parses must
//! evaluate to a value or an error.

mod common;

use common::{TestContext, standard};
use kairos_expr::{ExecutionInfo, Expression};
use proptest::prelude::*;

/// Fragments of the grammar, so that random strings often get deep into the
/// parser and evaluator instead of failing on the first character.
const TOKENS: &[&str] = &[
    "${",
    "#{",
    "}",
    "\\${",
    "(",
    ")",
    "[",
    "]",
    ".",
    ",",
    "?",
    ":",
    "+",
    "-",
    "*",
    "/",
    "%",
    "==",
    "!=",
    "<",
    ">",
    "<=",
    ">=",
    "&&",
    "||",
    "!",
    " and ",
    " or ",
    " not ",
    " eq ",
    " div ",
    " mod ",
    " empty ",
    "n",
    "m",
    "f",
    "s",
    "num",
    "dec",
    "t",
    "no",
    "nil",
    "list",
    "obj",
    "big",
    "small",
    "missing",
    "execution",
    "task",
    "0",
    "1",
    "-1",
    "2.5",
    "1e3",
    "9223372036854775807",
    "'a'",
    "'",
    "\"",
    "\\",
    "'}'",
    "true",
    "null",
    ".a",
    ".b",
    ".c",
    "[0]",
    "[3]",
    ".size()",
    ".trim()",
    ".contains('a')",
    ".getVariable('n')",
    ".getVariable('obj')",
    ".hasVariable('x')",
    ".processBusinessKey",
    ".toUpperCase()",
    "dateTime()",
    "dateTime",
    ".plusDays(2)",
    ".minusMonths(1)",
    ".plusYears(9999)",
    ".plusMillis(big)",
    ".toDate()",
    ".toString()",
    ".getMillis()",
    ".isBefore(",
    ".isAfter('2026-01-05T09:00:00Z')",
    "'2026-01-05T09:00:00Z'",
    " ",
    "\n",
    "é",
];

fn context() -> TestContext {
    let mut ctx = standard();
    ctx.execution = Some(ExecutionInfo { id: "e".into(), process_instance_id: "p".into(), ..Default::default() });
    ctx.now = Some("2026-01-05T09:00:00.123456Z".parse().unwrap());
    ctx
}

fn check(text: &str, ctx: &TestContext) {
    match Expression::parse(text) {
        Ok(e) => {
            let _ = e.eval(ctx);
            let _ = e.eval_bool(ctx);
            let _ = e.eval_string(ctx);
            let _ = e.variables();
            assert_eq!(e.to_string(), text);
        }
        Err(e) => {
            assert!(e.position <= text.chars().count(), "{text:?}: {e}");
            assert!(e.line >= 1 && e.column >= 1);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,80}") {
        check(&text, &context());
        check(&format!("${{{text}}}"), &context());
    }

    #[test]
    fn token_soup_never_panics(picks in proptest::collection::vec(0..TOKENS.len(), 0..40)) {
        let body: String = picks.iter().map(|&i| TOKENS[i]).collect();
        check(&body, &context());
        check(&format!("${{{body}}}"), &context());
        // And without a clock (or an execution), where `dateTime()` fails.
        check(&format!("${{{body}}}"), &standard());
    }
}
