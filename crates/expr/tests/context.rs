//! What an expression sees through its context: variables (and what happens
//! when one is missing), the `execution` and `task` objects, and the typed
//! entry points `eval_bool` / `eval_string`.

mod common;

use common::{TestContext, eval, standard};
use kairos_expr::{EvalError, ExecutionInfo, Expression, TaskInfo};
use serde_json::{Map, json};

fn with_execution() -> TestContext {
    let mut ctx = standard();
    ctx.locals.insert("localOnly".into(), json!("here"));
    ctx.execution = Some(ExecutionInfo {
        id: "exec-7".into(),
        process_instance_id: "pi-1".into(),
        process_business_key: Some("order-42".into()),
        current_activity_id: None,
    });
    ctx.task = Some(TaskInfo { id: "task-3".into(), name: Some("Approve".into()), assignee: None });
    ctx
}

#[test]
fn undefined_variables_are_errors_with_their_position() {
    let ctx = standard();
    let table = [
        ("${missing}", "missing", 2),
        ("${n > 1 && approvd}", "approvd", 11),
        ("${missing == null}", "missing", 2),
        ("${empty missing}", "missing", 8),
        ("Dear ${firstName}", "firstName", 7),
        ("${missing.x}", "missing", 2),
        // Without an execution in the context, `execution` is just a name.
        ("${execution.id}", "execution", 2),
        ("${task.name}", "task", 2),
    ];
    for (text, name, position) in table {
        let expected = EvalError::UndefinedVariable { name: name.into(), position };
        assert_eq!(eval(text, &ctx).unwrap_err(), expected, "{text}");
    }
    let e = Expression::parse("${approvd}").unwrap().eval_bool(&ctx).unwrap_err();
    assert_eq!(e.to_string(), "undefined variable 'approvd' at position 2");
}

#[test]
fn execution_object() {
    let ctx = with_execution();
    let table = [
        ("${execution.id}", json!("exec-7")),
        ("${execution.processInstanceId}", json!("pi-1")),
        ("${execution.processBusinessKey}", json!("order-42")),
        ("${execution.currentActivityId}", json!(null)),
        ("${execution.getProcessBusinessKey()}", json!("order-42")),
        ("${execution['id']}", json!("exec-7")),
        ("${execution.getVariable('n')}", json!(5)),
        ("${execution.getVariable('absent')}", json!(null)),
        ("${execution.getVariable('absent') == null}", json!(true)),
        ("${execution.getVariableLocal('localOnly')}", json!("here")),
        ("${execution.getVariableLocal('n')}", json!(null)),
        ("${execution.hasVariable('n')}", json!(true)),
        ("${execution.hasVariable('absent')}", json!(false)),
        ("${execution.hasVariable('absent') && absent > 1}", json!(false)),
        ("${execution.getVariable('obj').b.c}", json!("deep")),
        ("${execution.getVariable(s)}", json!(null)),
        ("${execution.processBusinessKey.startsWith('order-')}", json!(true)),
        ("${execution == execution}", json!(true)),
    ];
    for (text, expected) in table {
        assert_eq!(eval(text, &ctx).unwrap(), expected, "{text}");
    }
}

#[test]
fn task_object() {
    let ctx = with_execution();
    let table = [
        ("${task.id}", json!("task-3")),
        ("${task.name}", json!("Approve")),
        ("${task.getName()}", json!("Approve")),
        ("${task.assignee}", json!(null)),
        ("${empty task.assignee}", json!(true)),
        ("${task.getVariable('n')}", json!(5)),
        ("${task.hasVariable('nope')}", json!(false)),
    ];
    for (text, expected) in table {
        assert_eq!(eval(text, &ctx).unwrap(), expected, "{text}");
    }
}

#[test]
fn implicit_objects_expose_only_their_fields() {
    let ctx = with_execution();
    let e = eval("${execution.processDefinition}", &ctx).unwrap_err();
    assert_eq!(
        e,
        EvalError::NoSuchProperty { property: "processDefinition".into(), target: "execution".into(), position: 12 }
    );
    assert!(matches!(eval("${task.owner}", &ctx), Err(EvalError::NoSuchProperty { .. })));
    assert!(matches!(eval("${s.getVariable('n')}", &ctx), Err(EvalError::Type { .. })));
    assert!(matches!(eval("${execution.getName()}", &ctx), Err(EvalError::NoSuchProperty { .. })));
    assert!(matches!(eval("${execution.trim()}", &ctx), Err(EvalError::Type { .. })));
    assert!(matches!(eval("${execution.getVariable(nil)}", &ctx), Err(EvalError::Type { .. })));
    // The objects are not values: they cannot be returned, printed or added.
    let e = eval("${execution}", &ctx).unwrap_err();
    assert_eq!(e.to_string(), "the expression gave the execution object where a value is needed");
    assert!(eval("id: ${task}", &ctx).is_err());
    assert!(eval("${execution + 1}", &ctx).is_err());
}

#[test]
fn a_variable_named_execution_is_used_when_there_is_no_execution() {
    let mut ctx = standard();
    ctx.vars.insert("execution".into(), json!({ "id": "from-variable" }));
    assert_eq!(eval("${execution.id}", &ctx).unwrap(), json!("from-variable"));
    let ctx = with_execution();
    assert_eq!(eval("${execution.id}", &ctx).unwrap(), json!("exec-7"));
}

#[test]
fn eval_bool_accepts_booleans_and_their_strings_only() {
    let ctx = standard();
    for (text, expected) in [
        ("${n > 1}", true),
        ("${no}", false),
        ("${strtrue}", true),
        ("${'False'}", false),
        ("true", true),
        ("false", false),
        ("${t}", true),
    ] {
        assert_eq!(Expression::parse(text).unwrap().eval_bool(&ctx), Ok(expected), "{text}");
    }
    for (text, found) in [
        ("${nil}", "null"),
        ("${n}", "integer 5"),
        ("${f}", "float 2.5"),
        ("${s}", "string 'abc'"),
        ("${''}", "string ''"),
        ("${list}", "list"),
        ("${obj}", "object"),
        ("yes", "string 'yes'"),
        (" ${t}", "string ' true'"),
    ] {
        let e = Expression::parse(text).unwrap().eval_bool(&ctx).unwrap_err();
        assert_eq!(e, EvalError::ResultType { expected: "a boolean", found: found.into() }, "{text}");
    }
    let e = Expression::parse("${n}").unwrap().eval_bool(&ctx).unwrap_err();
    assert_eq!(e.to_string(), "the expression gave integer 5 where a boolean is needed");
}

#[test]
fn eval_string_prints_scalars_and_refuses_the_rest() {
    let ctx = with_execution();
    for (text, expected) in [
        ("${s}", "abc"),
        ("${n}", "5"),
        ("${f}", "2.5"),
        ("${n / 1}", "5.0"),
        ("${t}", "true"),
        ("kermit", "kermit"),
        ("${execution.processBusinessKey}", "order-42"),
        ("user-${n}", "user-5"),
        ("${nil}x", "x"),
    ] {
        assert_eq!(Expression::parse(text).unwrap().eval_string(&ctx).unwrap(), expected, "{text}");
    }
    for (text, found) in [("${nil}", "null"), ("${list}", "list"), ("${obj}", "object"), ("${task.assignee}", "null")] {
        let e = Expression::parse(text).unwrap().eval_string(&ctx).unwrap_err();
        assert_eq!(e, EvalError::ResultType { expected: "a string", found: found.into() }, "{text}");
    }
}

#[test]
fn plain_maps_are_contexts() {
    let mut map = Map::new();
    map.insert("x".into(), json!(2));
    let e = Expression::parse("${x * 21}").unwrap();
    assert_eq!(e.eval(&map).unwrap(), json!(42));
    let hash: std::collections::HashMap<String, serde_json::Value> = [("x".to_owned(), json!(1))].into();
    assert_eq!(e.eval(&hash).unwrap(), json!(21));
    let tree: std::collections::BTreeMap<String, serde_json::Value> = [("x".to_owned(), json!(3))].into();
    assert_eq!(e.eval(&tree).unwrap(), json!(63));
    // `execution` is only an object when the context provides one.
    let e = Expression::parse("${execution.getVariable('x')}").unwrap();
    assert!(matches!(e.eval(&map), Err(EvalError::UndefinedVariable { .. })));
}

#[test]
fn variables_lists_the_names_read() {
    let e = Expression::parse("${a + b.c > a && execution.getVariable('d') != e[f]} ${g.size()}").unwrap();
    assert_eq!(e.variables(), vec!["a", "b", "e", "f", "g"]);
    assert!(Expression::parse("${task.name} ${1 + 2}").unwrap().variables().is_empty());
    assert!(Expression::parse("plain").unwrap().variables().is_empty());
}

#[test]
fn literal_display_and_equality() {
    assert!(Expression::parse("kermit").unwrap().is_literal());
    assert!(Expression::parse("").unwrap().is_literal());
    assert!(Expression::parse(r"\${not an expression}").unwrap().is_literal());
    assert!(!Expression::parse("${true}").unwrap().is_literal());
    assert!(!Expression::parse("a ${b}").unwrap().is_literal());
    let text = "${amount >  1000}";
    let e: Expression = text.parse().unwrap();
    assert_eq!(e.to_string(), text);
    assert_eq!(e.as_str(), text);
    assert_eq!(e, Expression::parse(text).unwrap());
}

#[test]
fn spin_style_json_access_reads_json_variables() {
    let mut ctx = standard();
    ctx.vars
        .insert("customer".into(), json!({"name": "Ada", "age": 36, "vip": true, "tags": ["a", "b"], "note": null}));
    let ok = |t: &str| eval(t, &ctx).unwrap_or_else(|e| panic!("{t}: {e}"));
    assert_eq!(ok(r#"${customer.prop("age").numberValue() >= 18}"#), json!(true));
    assert_eq!(ok(r#"${customer.prop('name').stringValue()}"#), json!("Ada"));
    assert_eq!(ok(r#"${customer.prop('vip').boolValue()}"#), json!(true));
    assert_eq!(ok(r#"${customer.prop('tags').elements().size()}"#), json!(2));
    assert_eq!(ok(r#"${customer.hasProp('age') && !customer.hasProp('email')}"#), json!(true));
    assert_eq!(
        ok(r#"${customer.prop('note').isNull() && customer.isObject() && customer.prop('tags').isArray()}"#),
        json!(true)
    );
    for (bad, says) in [
        (r#"${customer.prop('email')}"#, "no property 'email'"),
        (r#"${customer.prop('name').numberValue()}"#, "numberValue"),
        (r#"${customer.prop('age').stringValue()}"#, "stringValue"),
    ] {
        let e = eval(bad, &ctx).unwrap_err().to_string();
        assert!(e.contains(says), "{bad}: {e}");
    }
}
