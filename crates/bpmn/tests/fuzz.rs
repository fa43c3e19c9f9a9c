//! The parser never panics, and every answer is well formed: errors carry a
//! position ≥ 1, models only hold valid indices. Inputs are random text,
//! XML-ish token soup, and corpus files with random damage (mutation,
//! truncation, insertion), which reach far deeper into the builder than
//! random text does.

use std::fs;
use std::path::{Path, PathBuf};

use kairos_bpmn::{Definitions, NodeKind, ParseErrors, parse};
use proptest::prelude::*;

fn corpus_texts() -> &'static [String] {
    static TEXTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    TEXTS.get_or_init(read_corpus)
}

fn read_corpus() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["corpus", "bad"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(dir);
        let mut paths: Vec<PathBuf> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        paths.sort();
        out.extend(paths.iter().map(|p| fs::read_to_string(p).unwrap()));
    }
    out
}

/// Everything a caller may rely on, whatever the input.
fn check(result: Result<Definitions, ParseErrors>) {
    match result {
        Err(errors) => {
            assert!(!errors.is_empty());
            assert!(errors.len() <= kairos_bpmn::MAX_REPORTED_PROBLEMS + 1);
            for e in &errors {
                assert!(e.line >= 1 && e.column >= 1, "{e}");
                assert!(!e.message.is_empty());
            }
            let _ = errors.to_string();
        }
        Ok(defs) => {
            assert!(!defs.processes.is_empty());
            for p in &defs.processes {
                for f in &p.flows {
                    assert!(f.source.index() < p.nodes.len() && f.target.index() < p.nodes.len());
                }
                for (i, n) in p.iter_nodes() {
                    assert_eq!(p.node_idx(&n.id), Some(i));
                    for f in n.incoming.iter().chain(&n.outgoing).chain(&n.default_flow) {
                        assert!(f.index() < p.flows.len());
                    }
                    if let NodeKind::BoundaryEvent(b) = &n.kind {
                        assert!(b.attached_to.index() < p.nodes.len());
                    }
                }
            }
        }
    }
}

/// XML-ish fragments, so that random sequences often look like markup.
const TOKENS: &[&str] = &[
    "<",
    ">",
    "</",
    "/>",
    "=",
    "\"",
    "'",
    " ",
    "\n",
    "&",
    ";",
    "&amp;",
    "&#",
    "x",
    "<!--",
    "-->",
    "<![CDATA[",
    "]]>",
    "<?xml version=\"1.0\"?>",
    "<!DOCTYPE",
    "<!ENTITY",
    "xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\"",
    "xmlns:b=\"http://www.omg.org/spec/BPMN/20100524/MODEL\"",
    "b:",
    "definitions",
    "process",
    "startEvent",
    "endEvent",
    "sequenceFlow",
    "subProcess",
    "boundaryEvent",
    "timerEventDefinition",
    "timeCycle",
    "id=\"a\"",
    "id=\"b\"",
    "sourceRef=\"a\"",
    "targetRef=\"b\"",
    "attachedToRef=\"a\"",
    "triggeredByEvent=\"true\"",
    "default=\"a\"",
    "R3/PT5M",
    "${x}",
    "é",
    "\u{0}",
    "\u{feff}",
];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..200).prop_map(|t| t.concat())
}

#[derive(Debug, Clone)]
enum Damage {
    Truncate(usize),
    Insert(usize, Vec<u8>),
    Overwrite(usize, u8),
    Delete(usize, usize),
    Duplicate(usize, usize),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        any::<usize>().prop_map(Damage::Truncate),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16)).prop_map(|(a, b)| Damage::Insert(a, b)),
        (any::<usize>(), prop::sample::select(b"<>/=\"'&;# \nax".to_vec())).prop_map(|(a, b)| Damage::Overwrite(a, b)),
        (any::<usize>(), 1usize..64).prop_map(|(a, n)| Damage::Delete(a, n)),
        (any::<usize>(), 1usize..400).prop_map(|(a, n)| Damage::Duplicate(a, n)),
    ]
}

fn apply(text: &str, damages: &[Damage]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for d in damages {
        let len = bytes.len().max(1);
        match d {
            Damage::Truncate(at) => bytes.truncate(at % len),
            Damage::Insert(at, b) => {
                let at = at % len;
                bytes.splice(at..at, b.iter().copied());
            }
            Damage::Overwrite(at, b) => {
                if let Some(x) = bytes.get_mut(at % len) {
                    *x = *b;
                }
            }
            Damage::Delete(at, n) => {
                let at = at % len;
                let end = (at + n).min(bytes.len());
                bytes.drain(at.min(end)..end);
            }
            Damage::Duplicate(at, n) => {
                let at = at % len;
                let end = (at + n).min(bytes.len());
                let piece = bytes[at.min(end)..end].to_vec();
                bytes.splice(at..at, piece);
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(s in any::<String>()) {
        check(parse(&s));
    }

    #[test]
    fn token_soup_never_panics(s in token_soup()) {
        check(parse(&s));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn damaged_corpus_files_never_panic(
        pick in any::<prop::sample::Index>(),
        damages in prop::collection::vec(damage(), 1..6),
    ) {
        let texts = corpus_texts();
        let text = &texts[pick.index(texts.len())];
        check(parse(&apply(text, &damages)));
    }
}

/// Every prefix of every corpus file (sampled every 61 bytes): truncated
/// uploads are the most common damage in practice.
#[test]
fn truncated_corpus_files_fail_cleanly() {
    for text in corpus_texts() {
        let mut at = 0;
        while at < text.len() {
            let cut = (0..=at).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
            check(parse(&text[..cut]));
            at += 61;
        }
    }
}
