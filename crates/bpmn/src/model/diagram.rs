//! The diagram (BPMN DI): where each element is drawn.
//!
//! The engine never looks at it; the console does (SPEC I5: live counts drawn
//! on each activity), and re-reading the XML there would mean a second parser.

use std::collections::BTreeMap;

use serde::Serialize;

/// Shapes and edges by the id of the element they draw (`bpmnElement`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Diagram {
    /// `BPMNShape` bounds by element id.
    pub shapes: BTreeMap<String, Bounds>,
    /// `BPMNEdge` waypoints by element id.
    pub edges: BTreeMap<String, Vec<Point>>,
}

/// A shape's rectangle (`dc:Bounds`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bounds {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// An edge waypoint (`di:waypoint`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}
