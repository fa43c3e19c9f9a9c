//! BPMN DI: shape bounds and edge waypoints, kept for the console.

use super::Ctx;
use crate::error::quote;
use crate::model::{Bounds, Diagram, Point};
use crate::ns::Ns;
use crate::xml::Element;

/// Reads one `BPMNDiagram` into `diagram` (several diagrams merge).
pub(crate) fn read(ctx: &mut Ctx<'_>, el: &Element, diagram: &mut Diagram) {
    for plane in el.children.iter().filter(|c| c.ns == Ns::BpmnDi && c.local == "BPMNPlane") {
        for item in plane.children.iter().filter(|c| c.ns == Ns::BpmnDi) {
            let Some(target) = item.attr("bpmnElement") else { continue };
            match item.local.as_str() {
                "BPMNShape" => {
                    let Some(b) = item.children.iter().find(|c| c.ns == Ns::Dc && c.local == "Bounds") else {
                        continue;
                    };
                    if let (Some(x), Some(y), Some(width), Some(height)) =
                        (number(ctx, b, "x"), number(ctx, b, "y"), number(ctx, b, "width"), number(ctx, b, "height"))
                    {
                        diagram.shapes.insert(target.to_owned(), Bounds { x, y, width, height });
                    }
                }
                "BPMNEdge" => {
                    let points = item
                        .children
                        .iter()
                        .filter(|c| c.ns == Ns::Di && c.local == "waypoint")
                        .filter_map(|w| Some(Point { x: number(ctx, w, "x")?, y: number(ctx, w, "y")? }))
                        .collect();
                    diagram.edges.insert(target.to_owned(), points);
                }
                _ => {}
            }
        }
    }
}

/// A finite number attribute; anything else is a problem (a console cannot
/// draw `NaN`, and a broken diagram usually means a broken export).
fn number(ctx: &mut Ctx<'_>, el: &Element, attr: &str) -> Option<f64> {
    let Some(text) = el.attr(attr) else {
        ctx.problem(el, format!("has no {attr}"));
        return None;
    };
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Some(v),
        _ => {
            ctx.problem(el, format!("{attr} '{}' is not a number", quote(text)));
            None
        }
    }
}
