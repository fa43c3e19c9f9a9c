//! Hostile scripts: each must end with a clear error within its limits, and leave nothing behind.
use kairos_script::{ExecutionInfo, Limits, ScriptError, evaluate};
use serde_json::Map;

fn run(src: &str) -> Result<kairos_script::Outcome, ScriptError> {
    evaluate("js", src, &Map::new(), &ExecutionInfo::default(), &Limits::default())
}

#[test]
fn memory_bomb_is_stopped() {
    let r = run("var s='x'; while(true){ s = s + s; }");
    assert!(matches!(r, Err(ScriptError::MemoryLimit(_)) | Err(ScriptError::CpuLimit)), "{r:?}");
}

#[test]
fn recursion_bomb_is_stopped() {
    assert!(run("function f(){ return f() + 1; } f()").is_err());
}

#[test]
fn no_host_objects() {
    assert_eq!(
        run("typeof require + typeof process + typeof std + typeof os").unwrap().value,
        serde_json::json!("undefinedundefinedundefinedundefined")
    );
}

#[test]
fn prototype_pollution_does_not_leak() {
    run("Object.prototype.leak = 1; JSON.parse = null; 0").unwrap();
    assert_eq!(run("typeof ({}).leak").unwrap().value, serde_json::json!("undefined"));
}
