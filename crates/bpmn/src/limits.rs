//! Hard limits on what one BPMN document may cost to parse.
//!
//! Deployments arrive over HTTP from any client. Without limits a single
//! request could make a node allocate gigabytes or recurse until the stack
//! overflows. Each limit is far above what a real model needs (the largest
//! modeler exports we know are a few hundred kilobytes with a few thousand
//! elements) and each is reported as a clear error, never a crash.

/// Largest accepted document: 10 MiB. Real process models are well under
/// 1 MiB, diagram included; anything bigger is a mistake or an attack.
pub const MAX_INPUT_BYTES: usize = 10 * 1024 * 1024;

/// Deepest element nesting: 100. A process with sub-processes ten deep is
/// still only ~30 levels of XML; the limit bounds the reader's stack.
pub const MAX_DEPTH: usize = 100;

/// Most elements in one document: 20,000 (diagram elements included). Bounds
/// the model's size and every validation pass over it.
pub const MAX_ELEMENTS: usize = 20_000;

/// Most attributes on one element: 256 (namespace declarations included). A modeler writes a
/// handful (the busiest Camunda elements carry about twenty); each attribute is kept and
/// searched by name, so the cost of an element grows with their number.
pub const MAX_ATTRIBUTES: usize = 256;

/// Longest attribute value: 64 KiB. Expressions and ids are short; a longer
/// value would only be copied into rows, logs and error messages.
pub const MAX_ATTRIBUTE_BYTES: usize = 64 * 1024;

/// Most text inside one element: 1 MiB (documentation included).
pub const MAX_TEXT_BYTES: usize = 1024 * 1024;
