//! Every operator and coercion, as tables of expression → expected value,
//! evaluated against `common::standard()`.

mod common;

use common::{eval, standard};
use kairos_expr::EvalError;
use serde_json::{Value, json};

fn check(table: &[(&str, Value)]) {
    let ctx = standard();
    for (text, expected) in table {
        match eval(text, &ctx) {
            Ok(got) => assert_eq!(&got, expected, "{text}"),
            Err(e) => panic!("{text}: expected {expected}, got error {e}"),
        }
    }
}

#[test]
fn literals() {
    check(&[
        ("${42}", json!(42)),
        ("${-7}", json!(-7)),
        ("${4.5}", json!(4.5)),
        ("${.5}", json!(0.5)),
        ("${1e3}", json!(1000.0)),
        ("${2.5E-1}", json!(0.25)),
        ("${'single'}", json!("single")),
        (r#"${"double"}"#, json!("double")),
        (r#"${'it\'s \\ \"x\"'}"#, json!(r#"it's \ "x""#)),
        ("${true}", json!(true)),
        ("${false}", json!(false)),
        ("${null}", json!(null)),
        ("${ ( 42 ) }", json!(42)),
    ]);
}

#[test]
fn arithmetic() {
    check(&[
        ("${n + m}", json!(7)),
        ("${n - m}", json!(3)),
        ("${n * m}", json!(10)),
        ("${n / m}", json!(2.5)),
        ("${n div m}", json!(2.5)),
        ("${4 / 2}", json!(2.0)),
        ("${n % m}", json!(1)),
        ("${n mod m}", json!(1)),
        ("${-n % m}", json!(-1)),
        ("${f + 1}", json!(3.5)),
        ("${f * m}", json!(5.0)),
        ("${7.5 % 2}", json!(1.5)),
        ("${1 + 2 * 3 - 4 / 2}", json!(5.0)),
        ("${(1 + 2) * 3}", json!(9)),
        ("${10 - 2 - 3}", json!(5)),
        ("${-(-n)}", json!(5)),
        ("${--n}", json!(5)),
        ("${-f}", json!(-2.5)),
        ("${big - 1}", json!(i64::MAX - 1)),
        ("${small % -1}", json!(0)),
    ]);
}

#[test]
fn arithmetic_coercions() {
    check(&[
        // Numeric strings are numbers; a '.', 'e' or 'E' makes them floats.
        ("${num + 1}", json!(43)),
        ("${'2' * '3'}", json!(6)),
        ("${dec + 1}", json!(2.5)),
        ("${'1e2' + 0}", json!(100.0)),
        ("${-num}", json!(-42)),
        ("${-dec}", json!(-1.5)),
        // Null is 0; null + null is the integer 0.
        ("${nil + 1}", json!(1)),
        ("${nil + nil}", json!(0)),
        ("${nil * 5}", json!(0)),
        ("${nil / nil}", json!(0)),
        ("${-nil}", json!(0)),
        ("${'' + 3}", json!(3)),
    ]);
}

#[test]
fn comparisons() {
    check(&[
        ("${n > m}", json!(true)),
        ("${n gt m}", json!(true)),
        ("${n < m}", json!(false)),
        ("${n lt m}", json!(false)),
        ("${n >= 5}", json!(true)),
        ("${n ge 6}", json!(false)),
        ("${n <= 5}", json!(true)),
        ("${n le 4}", json!(false)),
        // Across integer and float.
        ("${f > 2}", json!(true)),
        ("${2 < f}", json!(true)),
        ("${5 >= 5.0}", json!(true)),
        // A string against a number compares numerically.
        ("${num > 5}", json!(true)),
        ("${'10' > 9}", json!(true)),
        ("${dec < 2}", json!(true)),
        // Two strings compare lexically ('10' < '9').
        ("${'10' < '9'}", json!(true)),
        ("${'abc' < 'abd'}", json!(true)),
        ("${s >= 'abc'}", json!(true)),
        // Null is never less or greater, but null <= null holds.
        ("${nil < 1}", json!(false)),
        ("${nil > 1}", json!(false)),
        ("${nil <= nil}", json!(true)),
        ("${nil < nil}", json!(false)),
        ("${amount > 1000}", json!(true)),
    ]);
}

#[test]
fn equality() {
    check(&[
        ("${n == 5}", json!(true)),
        ("${n eq 5}", json!(true)),
        ("${n != 5}", json!(false)),
        ("${n ne 4}", json!(true)),
        ("${5 == 5.0}", json!(true)),
        ("${f == 2.5}", json!(true)),
        ("${num == 42}", json!(true)),
        ("${42 == num}", json!(true)),
        ("${dec == 1.5}", json!(true)),
        ("${s == 'abc'}", json!(true)),
        ("${s eq \"abc\"}", json!(true)),
        ("${s == 'ABC'}", json!(false)),
        ("${t == true}", json!(true)),
        ("${strtrue == true}", json!(true)),
        ("${'false' == false}", json!(true)),
        ("${nil == null}", json!(true)),
        ("${null == null}", json!(true)),
        ("${nil == 0}", json!(false)),
        ("${nil != s}", json!(true)),
        ("${s == null}", json!(false)),
        ("${list == list}", json!(true)),
        ("${obj.b == obj.b}", json!(true)),
        ("${obj == list}", json!(false)),
        ("${list == 's'}", json!(false)),
        ("${emptyList != emptyObj}", json!(true)),
    ]);
}

#[test]
fn logic() {
    check(&[
        ("${t && no}", json!(false)),
        ("${t and t}", json!(true)),
        ("${t || no}", json!(true)),
        ("${no or no}", json!(false)),
        ("${!t}", json!(false)),
        ("${not no}", json!(true)),
        ("${!!t}", json!(true)),
        ("${not nil}", json!(true)),
        ("${strtrue && 'false' == false}", json!(true)),
        ("${t && t && no}", json!(false)),
        ("${no || no || t}", json!(true)),
        // && binds tighter than ||.
        ("${t || no && no}", json!(true)),
        ("${(t || no) && no}", json!(false)),
        // Short-circuit: the right side is never evaluated.
        ("${no && undefinedVariable}", json!(false)),
        ("${t || undefinedVariable}", json!(true)),
        ("${nil != null && nil.x}", json!(false)),
        ("${n > 1 && n < 10}", json!(true)),
        ("${!(n > 1)}", json!(false)),
    ]);
}

#[test]
fn empty_and_choice() {
    check(&[
        ("${empty nil}", json!(true)),
        ("${empty ''}", json!(true)),
        ("${empty obj.blank}", json!(true)),
        ("${empty emptyList}", json!(true)),
        ("${empty emptyObj}", json!(true)),
        ("${empty s}", json!(false)),
        ("${empty list}", json!(false)),
        ("${empty 0}", json!(false)),
        ("${not empty s}", json!(true)),
        ("${!empty list && n > 1}", json!(true)),
        ("${t ? 'yes' : 'no'}", json!("yes")),
        ("${no ? 'yes' : 'no'}", json!("no")),
        ("${nil ? 1 : 2}", json!(2)),
        ("${n > 3 ? n * 2 : 0}", json!(10)),
        // Right-associative: a ? b : (c ? d : e).
        ("${no ? 1 : t ? 2 : 3}", json!(2)),
        ("${t ? no ? 1 : 2 : 3}", json!(2)),
        ("${(t ? 1 : 2) + 1}", json!(2)),
        // The branch not taken is not evaluated.
        ("${t ? 1 : undefinedVariable}", json!(1)),
    ]);
}

#[test]
fn access() {
    check(&[
        ("${obj.a}", json!(1)),
        ("${obj.b.c}", json!("deep")),
        ("${obj['a']}", json!(1)),
        ("${obj[\"b\"]['c']}", json!("deep")),
        ("${obj['b'].c}", json!("deep")),
        ("${list[0]}", json!(1)),
        ("${list[1]}", json!("two")),
        ("${list[2]}", json!(3.0)),
        ("${list[3]}", json!(null)),
        ("${list['1']}", json!("two")),
        ("${list[1.0]}", json!("two")),
        ("${list[n - 4]}", json!("two")),
        ("${list}", json!([1, "two", 3.0, null])),
        ("${obj.b}", json!({ "c": "deep" })),
    ]);
}

#[test]
fn composite_text() {
    check(&[
        ("plain text", json!("plain text")),
        ("", json!("")),
        ("Hello ${s}!", json!("Hello abc!")),
        ("${n}${m}", json!("52")),
        ("${n} + ${m} = ${n + m}", json!("5 + 2 = 7")),
        ("${f}/${4/2}", json!("2.5/2.0")),
        ("[${nil}]", json!("[]")),
        ("${t}-${list}", json!(r#"true-[1,"two",3.0,null]"#)),
        ("#{n + 1} items", json!("6 items")),
        (r"cost: \${n}", json!("cost: ${n}")),
        (r"\#{x} and ${n}", json!("#{x} and 5")),
        ("price $ 5 and # 3 {x}", json!("price $ 5 and # 3 {x}")),
        ("${'}'} closes", json!("} closes")),
        (r"a\b", json!(r"a\b")),
    ]);
}

#[test]
fn string_methods() {
    check(&[
        ("${s.contains('b')}", json!(true)),
        ("${s.contains('x')}", json!(false)),
        ("${s.startsWith('ab')}", json!(true)),
        ("${s.endsWith('bc')}", json!(true)),
        ("${s.endsWith('ab')}", json!(false)),
        ("${s.length()}", json!(3)),
        ("${s.size()}", json!(3)),
        ("${'héllo'.length()}", json!(5)),
        ("${s.toUpperCase()}", json!("ABC")),
        ("${'ÀB'.toLowerCase()}", json!("àb")),
        ("${name.trim()}", json!("Ada Lovelace")),
        ("${name.trim().length() > 3}", json!(true)),
        ("${s.equals('abc')}", json!(true)),
        ("${s.equals(n)}", json!(false)),
        ("${n.equals(5)}", json!(true)),
        ("${s.equalsIgnoreCase('ABC')}", json!(true)),
        ("${s.equalsIgnoreCase(null)}", json!(false)),
        ("${s.isEmpty()}", json!(false)),
        ("${obj.blank.isEmpty()}", json!(true)),
        ("${num.contains(2)}", json!(true)),
    ]);
}

#[test]
fn collection_methods() {
    check(&[
        ("${list.size()}", json!(4)),
        ("${list.length()}", json!(4)),
        ("${list.contains('two')}", json!(true)),
        ("${list.contains(3)}", json!(true)),
        ("${list.contains(null)}", json!(true)),
        ("${list.contains('3')}", json!(false)),
        ("${emptyList.isEmpty()}", json!(true)),
        ("${obj.size()}", json!(3)),
        ("${obj.containsKey('a')}", json!(true)),
        ("${obj.containsKey('z')}", json!(false)),
        ("${obj.containsKey('a') ? obj.a : 0}", json!(1)),
        ("${emptyObj.isEmpty()}", json!(true)),
        ("${list.equals(list)}", json!(true)),
    ]);
}

/// Operations EL would answer with a guess (or Java would wrap), and kairos
/// refuses; each entry names a fragment the error message must contain.
#[test]
fn type_errors() {
    let ctx = standard();
    let table: &[(&str, &str)] = &[
        ("${s + 1}", "cannot use string 'abc' as a number ('+' only adds numbers"),
        ("${'a' + 'b'}", "join text with"),
        ("${t + 1}", "cannot use boolean true as a number"),
        ("${list * 2}", "cannot use list as a number"),
        ("${-s}", "cannot use string 'abc' as a number"),
        ("${-t}", "cannot use boolean true as a number"),
        ("${s == 5}", "cannot use string 'abc' as a number"),
        ("${t == 1}", "cannot compare boolean true with integer 1"),
        ("${s == true}", "cannot use string 'abc' as a boolean"),
        ("${t < no}", "cannot compare boolean true with boolean false using '<'"),
        ("${list > 1}", "cannot compare list with integer 1 using '>'"),
        ("${s > 1}", "cannot use string 'abc' as a number"),
        ("${n && t}", "cannot use integer 5 as a boolean"),
        ("${!s}", "cannot use string 'abc' as a boolean"),
        ("${n ? 1 : 2}", "cannot use integer 5 as a boolean"),
        ("${s.size2}", "no property 'size2' on string 'abc'"),
        ("${n.trim()}", "cannot call 'trim' on integer 5"),
        ("${nil.trim()}", "cannot call 'trim' on null"),
        ("${nil.equals(1)}", "cannot call 'equals' on null"),
        ("${list.startsWith('x')}", "cannot call 'startsWith' on list"),
        ("${s.contains(nil)}", "'contains' needs a string argument, not null"),
        ("${s.contains(list)}", "'contains' needs a string argument, not list"),
        ("${nil.x}", "cannot read property 'x' of null"),
        ("${s[0]}", "cannot index string 'abc'"),
        ("${nil[0]}", "cannot index null"),
        ("${list['x']}", "a list index must be an integer, not string 'x'"),
        ("${list[1.5]}", "a list index must be an integer, not float 1.5"),
        ("${obj[list]}", "cannot use list as a property name"),
    ];
    for (text, fragment) in table {
        match eval(text, &ctx) {
            Err(e @ (EvalError::Type { .. } | EvalError::NoSuchProperty { .. })) => {
                assert!(e.to_string().contains(fragment), "{text}: {e}")
            }
            other => panic!("{text}: expected an error containing {fragment:?}, got {other:?}"),
        }
    }
}

#[test]
fn overflow_and_division_by_zero_are_errors() {
    let ctx = standard();
    let table: &[(&str, EvalError)] = &[
        ("${big + 1}", EvalError::Overflow { operator: "+".into(), position: 6 }),
        ("${small - 1}", EvalError::Overflow { operator: "-".into(), position: 8 }),
        ("${big * 2}", EvalError::Overflow { operator: "*".into(), position: 6 }),
        ("${-small}", EvalError::Overflow { operator: "-".into(), position: 2 }),
        ("${1e308 * 10}", EvalError::Overflow { operator: "*".into(), position: 8 }),
        ("${n / 0}", EvalError::DivisionByZero { position: 4 }),
        ("${n div 0.0}", EvalError::DivisionByZero { position: 4 }),
        ("${n % 0}", EvalError::DivisionByZero { position: 4 }),
        ("${f mod 0}", EvalError::DivisionByZero { position: 4 }),
        ("${n / nil}", EvalError::DivisionByZero { position: 4 }),
        ("${1 + n / (m - 2)}", EvalError::DivisionByZero { position: 8 }),
    ];
    for (text, expected) in table {
        assert_eq!(&eval(text, &ctx).unwrap_err(), expected, "{text}");
    }
}

#[test]
fn missing_properties_and_indexes_are_errors() {
    let ctx = standard();
    let table: &[(&str, EvalError)] = &[
        ("${obj.z}", EvalError::NoSuchProperty { property: "z".into(), target: "object".into(), position: 6 }),
        ("${obj.b.zz}", EvalError::NoSuchProperty { property: "zz".into(), target: "object".into(), position: 8 }),
        ("${obj['z']}", EvalError::NoSuchProperty { property: "z".into(), target: "object".into(), position: 5 }),
        ("${list[4]}", EvalError::IndexOutOfBounds { index: 4, len: 4, position: 6 }),
        ("${list[-1]}", EvalError::IndexOutOfBounds { index: -1, len: 4, position: 6 }),
        ("${emptyList[0]}", EvalError::IndexOutOfBounds { index: 0, len: 0, position: 11 }),
    ];
    for (text, expected) in table {
        assert_eq!(&eval(text, &ctx).unwrap_err(), expected, "{text}");
    }
}
