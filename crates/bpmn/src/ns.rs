//! The namespace URIs kairos understands, and their classification.
//!
//! Matching is by URI, never by prefix: modelers pick prefixes freely
//! (`bpmn:`, `bpmn2:`, `semantic:`, a default namespace), and two files that
//! differ only in prefixes must parse to the same model.

use serde::Serialize;

/// BPMN 2.0 semantic model elements (`process`, `userTask`, …).
pub const BPMN_MODEL: &str = "http://www.omg.org/spec/BPMN/20100524/MODEL";
/// BPMN diagram interchange (`BPMNShape`, `BPMNEdge`).
pub const BPMN_DI: &str = "http://www.omg.org/spec/BPMN/20100524/DI";
/// Diagram commons (`Bounds`).
pub const DC: &str = "http://www.omg.org/spec/DD/20100524/DC";
/// Diagram interchange (`waypoint`).
pub const DI: &str = "http://www.omg.org/spec/DD/20100524/DI";
/// Activiti designer extensions (`activiti:async`, `activiti:class`, …).
pub const ACTIVITI: &str = "http://activiti.org/bpmn";
/// Flowable designer extensions.
pub const FLOWABLE: &str = "http://flowable.org/bpmn";
/// Camunda Modeler extensions.
pub const CAMUNDA: &str = "http://camunda.org/schema/1.0/bpmn";
/// The namespace early Camunda Modeler versions (2.x) and many of Camunda 7's own engine test
/// models declare for the same extensions.
pub const CAMUNDA_EARLY: &str = "http://camunda.org/bpmn";
/// kairos' own extensions (`kairos:handler`).
pub const KAIROS: &str = "urn:kairos:bpmn";

/// The vendor namespaces whose extension attributes and elements kairos reads.
///
/// They are treated alike: `activiti:async`, `flowable:async`,
/// `camunda:async` and `kairos:async` mean the same thing. When one element
/// carries the same attribute in several vendor namespaces, the first in this
/// order wins (kairos' own name is the most specific statement).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    /// `urn:kairos:bpmn`
    Kairos,
    /// `http://camunda.org/schema/1.0/bpmn`
    Camunda,
    /// `http://flowable.org/bpmn`
    Flowable,
    /// `http://activiti.org/bpmn`
    Activiti,
}

impl Vendor {
    /// All vendors, in precedence order.
    pub const ALL: [Vendor; 4] = [Vendor::Kairos, Vendor::Camunda, Vendor::Flowable, Vendor::Activiti];

    /// The usual prefix, for messages (`camunda:asyncBefore`).
    pub fn prefix(self) -> &'static str {
        match self {
            Vendor::Kairos => "kairos",
            Vendor::Camunda => "camunda",
            Vendor::Flowable => "flowable",
            Vendor::Activiti => "activiti",
        }
    }
}

/// A resolved namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ns {
    /// No namespace (unprefixed attributes, elements without a default ns).
    None,
    Bpmn,
    BpmnDi,
    Dc,
    Di,
    Vendor(Vendor),
    /// Any other namespace: extensions kairos ignores.
    Other,
}

pub(crate) fn classify(uri: &[u8]) -> Ns {
    match uri {
        u if u == BPMN_MODEL.as_bytes() => Ns::Bpmn,
        u if u == BPMN_DI.as_bytes() => Ns::BpmnDi,
        u if u == DC.as_bytes() => Ns::Dc,
        u if u == DI.as_bytes() => Ns::Di,
        u if u == KAIROS.as_bytes() => Ns::Vendor(Vendor::Kairos),
        u if u == CAMUNDA.as_bytes() || u == CAMUNDA_EARLY.as_bytes() => Ns::Vendor(Vendor::Camunda),
        u if u == FLOWABLE.as_bytes() => Ns::Vendor(Vendor::Flowable),
        u if u == ACTIVITI.as_bytes() => Ns::Vendor(Vendor::Activiti),
        _ => Ns::Other,
    }
}
