//! Parsed definitions by ACT_RE_PROCDEF.ID_, bounded by the size of their XML.
//!
//! A definition never changes once deployed, so its parsed model can be kept; but kept without
//! a bound, every definition a node ever ran stays in memory (60 large ones held 745 MB). The
//! cache keeps the most recently used ones while their XML totals at most a budget (the parsed
//! model's size follows its XML's); the least recently used go first and are parsed again when
//! asked for. The one just added is kept even when it alone is over the budget.

use kairos_bpmn::Definitions;
use std::collections::HashMap;
use std::sync::Arc;

/// The default budget: 16 MiB of BPMN XML (hundreds of ordinary models; docs/limits.md).
pub const DEFAULT_CACHE_BYTES: usize = 16 * 1024 * 1024;

pub(crate) struct DefinitionCache {
    budget: usize,
    total: usize,
    /// Bumped on every use: an entry's `used` orders it for eviction.
    clock: u64,
    entries: HashMap<String, Entry>,
}

struct Entry {
    defs: Arc<Definitions>,
    bytes: usize,
    used: u64,
}

impl DefinitionCache {
    pub(crate) fn new(budget: usize) -> DefinitionCache {
        DefinitionCache { budget, total: 0, clock: 0, entries: HashMap::new() }
    }

    pub(crate) fn get(&mut self, id: &str) -> Option<Arc<Definitions>> {
        self.clock += 1;
        let e = self.entries.get_mut(id)?;
        e.used = self.clock;
        Some(e.defs.clone())
    }

    /// Adds the model parsed from `bytes` of XML, evicting the least recently used beyond the
    /// budget.
    pub(crate) fn insert(&mut self, id: &str, defs: Arc<Definitions>, bytes: usize) {
        self.clock += 1;
        if let Some(old) = self.entries.insert(id.to_string(), Entry { defs, bytes, used: self.clock }) {
            self.total -= old.bytes;
        }
        self.total += bytes;
        while self.total > self.budget && self.entries.len() > 1 {
            let Some(oldest) = self.entries.iter().min_by_key(|(_, e)| e.used).map(|(k, _)| k.clone()) else { break };
            if let Some(e) = self.entries.remove(&oldest) {
                self.total -= e.bytes;
            }
        }
    }

    #[cfg(test)]
    fn ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = self.entries.keys().map(String::as_str).collect();
        ids.sort_unstable();
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> Arc<Definitions> {
        let xml = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"><process id="p">
            <startEvent id="s"/><sequenceFlow id="f" sourceRef="s" targetRef="e"/><endEvent id="e"/></process></definitions>"#;
        Arc::new(kairos_bpmn::parse(xml).unwrap())
    }

    #[test]
    fn the_least_recently_used_go_when_the_xml_exceeds_the_budget() {
        let mut c = DefinitionCache::new(100);
        c.insert("a", model(), 40);
        c.insert("b", model(), 40);
        assert!(c.get("a").is_some()); // b is now the least recently used
        c.insert("c", model(), 40);
        assert_eq!(c.ids(), ["a", "c"]);
        assert_eq!(c.total, 80);
        c.insert("huge", model(), 1_000);
        assert_eq!(c.ids(), ["huge"], "the newest stays even alone over the budget");
        assert!(c.get("a").is_none());
    }
}
