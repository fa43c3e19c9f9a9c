//! The corpus: every file in `tests/corpus/` parses, and its header comments
//! (`<!-- trace: … -->`, `called: …`) name real nodes; every file in
//! `tests/bad/` fails exactly as its `<!-- expect: … -->` comment says.

use std::fs;
use std::path::{Path, PathBuf};

use kairos_bpmn::{Definitions, parse};

fn files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(dir);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "bpmn"))
        .collect();
    files.sort();
    files
}

/// The text of the first `<!-- key: … -->` comment.
fn header<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let start = text.find(&format!("<!-- {key}:"))? + key.len() + 6;
    let end = start + text[start..].find("-->")?;
    Some(text[start..end].trim())
}

fn node_exists(defs: &Definitions, id: &str) -> bool {
    defs.processes.iter().any(|p| p.node_by_id(id).is_some())
}

#[test]
fn every_corpus_file_parses_and_its_trace_names_real_nodes() {
    let files = files("corpus");
    assert!(files.len() >= 40, "corpus has only {} files", files.len());
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = fs::read_to_string(&path).unwrap();
        let defs = parse(&text).unwrap_or_else(|e| panic!("{name} does not parse:\n{e}"));
        let trace = header(&text, "trace").unwrap_or_else(|| panic!("{name} has no trace comment"));
        let ids: Vec<&str> = trace.split(',').map(str::trim).collect();
        for id in &ids {
            assert!(node_exists(&defs, id), "{name}: trace names '{id}', which is not a node");
        }
        // The trace starts at a start event of the first process.
        let first = defs.processes[0].node_by_id(ids[0]);
        assert!(
            first.is_some_and(|n| n.element == "startEvent" && n.scope.is_none()),
            "{name}: trace must start at a start event of the first process"
        );
        if let Some(called) = header(&text, "called") {
            let (key, trace) = called.split_once(" trace: ").unwrap();
            let p = defs.process(key.trim()).unwrap_or_else(|| panic!("{name}: called process {key} missing"));
            for id in trace.split(',').map(str::trim) {
                assert!(p.node_by_id(id).is_some(), "{name}: called trace names '{id}'");
            }
        }
        if let Some(vars) = header(&text, "vars") {
            serde_json::from_str::<serde_json::Value>(vars)
                .unwrap_or_else(|e| panic!("{name}: vars are not JSON: {e}"));
        }
        // The model serializes (the console and the REST API will need it).
        serde_json::to_string(&defs).unwrap();
    }
}

/// `<!-- expect: line=N id=ID message=TEXT -->` (`id=-` when the problem is
/// about the markup, not an element).
struct Expect {
    line: u32,
    id: Option<String>,
    message: String,
}

fn expectation(name: &str, text: &str) -> Expect {
    let spec = header(text, "expect").unwrap_or_else(|| panic!("{name} has no expect comment"));
    let rest = spec.strip_prefix("line=").unwrap_or_else(|| panic!("{name}: expect starts with line="));
    let (line, rest) = rest.split_once(' ').unwrap();
    let rest = rest.strip_prefix("id=").unwrap_or_else(|| panic!("{name}: expect has id="));
    let (id, rest) = rest.split_once(' ').unwrap();
    let message = rest.strip_prefix("message=").unwrap_or_else(|| panic!("{name}: expect has message="));
    Expect { line: line.parse().unwrap(), id: (id != "-").then(|| id.to_owned()), message: message.to_owned() }
}

#[test]
fn every_bad_file_fails_as_stated() {
    let files = files("bad");
    assert!(files.len() >= 25, "only {} bad files", files.len());
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = fs::read_to_string(&path).unwrap();
        let want = expectation(&name, &text);
        let errors = match parse(&text) {
            Ok(_) => panic!("{name} parsed, but should fail with: {}", want.message),
            Err(e) => e,
        };
        assert_eq!(errors.len(), 1, "{name}: expected exactly one problem, got:\n{errors}");
        let got = errors.first();
        assert!(got.message.contains(&want.message), "{name}: expected '{}', got:\n{got}", want.message);
        assert_eq!(got.line, want.line, "{name}: wrong line in:\n{got}");
        assert_eq!(got.element_id, want.id, "{name}: wrong element id in:\n{got}");
        assert!(got.column >= 1);
        if let Some(id) = &want.id {
            assert!(got.to_string().contains(&format!("'{id}'")), "{name}: message does not name '{id}': {got}");
        }
    }
}
