//! Text that must not parse, with the message and the 0-based character
//! position the modeller is pointed to.

use kairos_expr::Expression;

#[test]
fn errors_carry_message_and_position() {
    let table: &[(&str, &str, usize)] = &[
        ("${a + )}", "unexpected ')'", 6),
        ("${(a + b))}", "unexpected ')'", 9),
        ("${a +}", "unexpected '}'", 5),
        ("${a b}", "unexpected 'b'", 4),
        ("${}", "empty expression", 0),
        ("x ${ }", "empty expression", 2),
        ("${a", "missing '}' to close the expression opened at position 0", 3),
        ("ok ${a + 1", "missing '}' to close the expression opened at position 3", 10),
        ("${'abc}", "unterminated string", 2),
        ("${a == 'x}", "unterminated string", 7),
        ("${'a\\x'}", r#"invalid escape '\x' in string (only \\, \' and \" are escapes)"#, 4),
        ("${a = 1}", "'=' is assignment, which expressions cannot do; compare with '=='", 4),
        ("${a & b}", "unexpected '&'; the logical and is '&&' or 'and'", 4),
        ("${a ; b}", "unexpected character ';'", 4),
        ("${a[0}", "unexpected '}'", 5),
        ("${a.}", "unexpected '}'", 4),
        ("${a.1}", "unexpected '.1'", 3),
        ("${a ? b}", "unexpected '}'", 7),
        ("${f(1)}", "function calls are not supported: 'f'", 2),
        ("${s.contains(1,)}", "unexpected ')'", 15),
        ("${a instanceof b}", "'instanceof' is not supported", 4),
        ("${99999999999999999999}", "integer 99999999999999999999 is out of range (at most 9223372036854775807)", 2),
        ("${1e400}", "number 1e400 is out of range", 2),
        ("${a} #{b}", "cannot mix '${' and '#{' in one expression", 5),
        ("${a == 'long string literal here' 1}", "unexpected '1'", 34),
        ("${a == 'a very long string literal that goes on' 'x'}", "unexpected ''x''", 49),
    ];
    for (text, message, position) in table {
        let e = Expression::parse(text).expect_err(text);
        assert_eq!((e.message.as_str(), e.position), (*message, *position), "{text}");
        assert_eq!(e.to_string(), format!("{message} at position {position} (line 1, column {})", position + 1));
    }
}

#[test]
fn long_tokens_are_cut_in_messages() {
    let e = Expression::parse("${a 'a very long unexpected string literal'}").unwrap_err();
    assert_eq!(e.message, "unexpected ''a very long unexpec…'");
}

#[test]
fn only_whitelisted_methods_parse() {
    for (text, name, position) in [
        ("${''.getClass()}", "getClass", 5),
        ("${''.getClass().forName('java.lang.Runtime').getMethod('exec',''.getClass())}", "getClass", 5),
        ("${execution.getEngineServices()}", "getEngineServices", 12),
        ("${execution.removeVariable('x')}", "removeVariable", 12),
        ("${dateTime().getClass()}", "getClass", 13),
        ("${obj.notify()}", "notify", 6),
    ] {
        let e = Expression::parse(text).expect_err(text);
        assert_eq!(e.message, format!("method '{name}' is not allowed in expressions"), "{text}");
        assert_eq!(e.position, position, "{text}");
    }
}

#[test]
fn date_time_methods_only_parse_on_date_times() {
    for (text, message, position) in [
        // `toString` is whitelisted for date-times only, so a variable's
        // `toString()` is still refused before anything runs.
        ("${a.toString()}", "method 'toString' can only be called on a date-time, such as dateTime()", 4),
        ("${dueDate.plusDays(1)}", "method 'plusDays' can only be called on a date-time, such as dateTime()", 10),
        (
            "${dateTime().getMillis().plusDays(1)}",
            "method 'plusDays' can only be called on a date-time, such as dateTime()",
            25,
        ),
        (
            "${dateTime().toString().isBefore(x)}",
            "method 'isBefore' can only be called on a date-time, such as dateTime()",
            24,
        ),
        (
            "${(t ? dateTime() : 'x').plusDays(1)}",
            "method 'plusDays' can only be called on a date-time, such as dateTime()",
            25,
        ),
        ("${dateTime().trim()}", "method 'trim' cannot be called on a date-time", 13),
        ("${dateTime().plusDays(1).contains('x')}", "method 'contains' cannot be called on a date-time", 25),
        ("${(t ? dateTime() : dateTime().minusDays(1)).size()}", "method 'size' cannot be called on a date-time", 45),
        ("${dateTime().withZone('UTC')}", "method 'withZone' is not allowed in expressions", 13),
        ("${dateTime().millis}", "a date-time has no property 'millis'", 13),
        ("${dateTime(1)}", "'dateTime' takes 0 arguments, not 1", 2),
        ("${now()}", "function calls are not supported: 'now'", 2),
        ("${dateTime().plusDays()}", "'plusDays' takes 1 argument, not 0", 13),
        ("${dateTime().toDate(1)}", "'toDate' takes 0 arguments, not 1", 13),
    ] {
        let e = Expression::parse(text).expect_err(text);
        assert_eq!((e.message.as_str(), e.position), (message, position), "{text}");
    }
}

#[test]
fn method_arity_is_checked() {
    let e = Expression::parse("${s.contains()}").unwrap_err();
    assert_eq!((e.message.as_str(), e.position), ("'contains' takes 1 argument, not 0", 4));
    let e = Expression::parse("${s.trim(1)}").unwrap_err();
    assert_eq!(e.message, "'trim' takes 0 arguments, not 1");
    let e = Expression::parse("${execution.getVariable('a', 'b')}").unwrap_err();
    assert_eq!(e.message, "'getVariable' takes 1 argument, not 2");
}

#[test]
fn multi_line_expressions_report_line_and_column() {
    let text = "${amount > 1000\n  && approved ==\n  )}";
    let e = Expression::parse(text).unwrap_err();
    assert_eq!((e.position, e.line, e.column), (35, 3, 3));
    assert_eq!(e.to_string(), "unexpected ')' at position 35 (line 3, column 3)");
}

#[test]
fn positions_count_characters_not_bytes() {
    let e = Expression::parse("é ${ü + )}").unwrap_err();
    assert_eq!((e.position, e.column), (8, 9));
}
