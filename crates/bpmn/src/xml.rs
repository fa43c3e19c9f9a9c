//! A small, defensive XML reader: BPMN text → a bounded element tree.
//!
//! BPMN files arrive from users over HTTP, so the reader treats its input as
//! hostile. It refuses any DOCTYPE: a DTD is the only place entities can be
//! declared, and declared entities are how "billion laughs" (exponential
//! expansion) and XXE (external entities reading local files or URLs) work;
//! no modeler writes a DTD into a BPMN file, so nothing legitimate is lost.
//! Only the five predefined entities and numeric character references are
//! decoded. Every dimension that costs memory or time has a limit
//! ([`crate::limits`]), so parse cost stays proportional to a small input.
//!
//! Namespaces are resolved to URIs here, so the model builder matches
//! `bpmn:task`, `bpmn2:task`, `semantic:task` and a default-namespace `task`
//! alike, and never looks at prefixes.

use std::collections::HashSet;

use quick_xml::escape::{EscapeError, resolve_xml_entity};
use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;

use crate::error::{LineIndex, ParseError, quote};
use crate::limits::{MAX_ATTRIBUTE_BYTES, MAX_ATTRIBUTES, MAX_DEPTH, MAX_ELEMENTS, MAX_INPUT_BYTES, MAX_TEXT_BYTES};
use crate::ns::{self, Ns};

/// One element, with its namespace resolved and its direct text collected.
#[derive(Debug, Clone)]
pub(crate) struct Element {
    pub ns: Ns,
    pub local: String,
    pub attrs: Vec<Attr>,
    pub children: Vec<Element>,
    /// Direct text and CDATA content, entities decoded.
    pub text: String,
    /// Byte offset of the element's `<` in the document.
    pub offset: usize,
}

/// One attribute (namespace declarations are not kept).
#[derive(Debug, Clone)]
pub(crate) struct Attr {
    pub ns: Ns,
    pub local: String,
    pub value: String,
}

/// Reads the whole document into a tree, or returns the first markup problem
/// (after a markup error nothing later in the file can be trusted).
pub(crate) fn read(xml: &str, lines: &LineIndex<'_>) -> Result<Element, ParseError> {
    let fail = |offset: usize, message: String| ParseError::at(lines.pos(offset), message);
    if xml.len() > MAX_INPUT_BYTES {
        return Err(fail(0, format!("document is {} bytes; the limit is {MAX_INPUT_BYTES} bytes (10 MiB)", xml.len())));
    }
    let mut reader = NsReader::from_str(xml);
    reader.config_mut().check_comments = true;
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let mut elements = 0usize;
    loop {
        let offset = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
        let (resolved, event) = match reader.read_resolved_event() {
            Ok((r, e)) => (namespace_of(&r), e),
            Err(e) => {
                let at = usize::try_from(reader.error_position()).unwrap_or(usize::MAX);
                return Err(fail(at, format!("malformed XML: {}", xml_error_text(&e))));
            }
        };
        match event {
            Event::Start(ref start) | Event::Empty(ref start) => {
                elements += 1;
                if elements > MAX_ELEMENTS {
                    return Err(fail(offset, format!("document has more than {MAX_ELEMENTS} elements")));
                }
                let ns = resolved
                    .map_err(|prefix| fail(offset, format!("undeclared namespace prefix '{}'", quote(&prefix))))?;
                let element = open(&reader, ns, start, offset).map_err(|m| fail(offset, m))?;
                if matches!(event, Event::Start(_)) {
                    if stack.len() >= MAX_DEPTH {
                        return Err(fail(offset, format!("elements are nested deeper than {MAX_DEPTH} levels")));
                    }
                    stack.push(element);
                } else {
                    attach(&mut stack, &mut root, element).map_err(|m| fail(offset, m))?;
                }
            }
            Event::End(_) => {
                // quick-xml has already checked that the end tag matches.
                let Some(element) = stack.pop() else {
                    return Err(fail(offset, "end tag without a start tag".to_owned()));
                };
                attach(&mut stack, &mut root, element).map_err(|m| fail(offset, m))?;
            }
            Event::Text(t) => {
                let text = t.xml10_content().map_err(|e| fail(offset, format!("malformed text: {e}")))?;
                push_text(&mut stack, &text).map_err(|m| fail(offset, m))?;
            }
            Event::CData(c) => {
                let text = c.decode().map_err(|e| fail(offset, format!("malformed CDATA: {e}")))?;
                push_text(&mut stack, &text).map_err(|m| fail(offset, m))?;
            }
            Event::GeneralRef(r) => {
                let name = r.decode().map_err(|e| fail(offset, format!("malformed reference: {e}")))?;
                let text = match r.resolve_char_ref() {
                    Ok(Some(c)) => c.to_string(),
                    Ok(None) => match resolve_xml_entity(&name) {
                        Some(s) => s.to_owned(),
                        None => return Err(fail(offset, undeclared_entity(&name))),
                    },
                    Err(e) => return Err(fail(offset, format!("invalid character reference &{};: {e}", quote(&name)))),
                };
                push_text(&mut stack, &text).map_err(|m| fail(offset, m))?;
            }
            Event::DocType(_) => {
                return Err(fail(
                    offset,
                    "DOCTYPE is refused: BPMN files need no DTD, and DTD entities enable \
                     entity-expansion (billion laughs) and external-entity (XXE) attacks"
                        .to_owned(),
                ));
            }
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
            Event::Eof => break,
        }
    }
    if let Some(open) = stack.last() {
        return Err(fail(xml.len(), format!("document ends before <{}> is closed", quote(&open.local))));
    }
    root.ok_or_else(|| fail(xml.len(), "document has no root element".to_owned()))
}

/// `Err(prefix)` when the element's prefix is not declared.
fn namespace_of(r: &ResolveResult<'_>) -> Result<Ns, String> {
    match r {
        ResolveResult::Bound(n) => Ok(ns::classify(n.into_inner())),
        ResolveResult::Unbound => Ok(Ns::None),
        ResolveResult::Unknown(prefix) => Err(String::from_utf8_lossy(prefix).into_owned()),
    }
}

fn open(reader: &NsReader<&[u8]>, ns: Ns, start: &BytesStart<'_>, offset: usize) -> Result<Element, String> {
    let local = utf8(start.local_name().into_inner())?;
    let mut attrs = Vec::new();
    // quick-xml's own duplicate check compares each attribute with every earlier one (quadratic
    // in their number); a set of names seen does it in one pass.
    let mut seen = HashSet::new();
    for (n, attr) in start.attributes().with_checks(false).enumerate() {
        let attr = attr.map_err(|e| format!("malformed attribute in <{}>: {e}", quote(&local)))?;
        if n >= MAX_ATTRIBUTES {
            return Err(format!("<{}> has more than {MAX_ATTRIBUTES} attributes", quote(&local)));
        }
        if !seen.insert(attr.key.0) {
            return Err(format!(
                "malformed attribute in <{}>: attribute {} is repeated",
                quote(&local),
                quote(&String::from_utf8_lossy(attr.key.0))
            ));
        }
        if attr.key.as_namespace_binding().is_some() {
            continue;
        }
        if attr.value.len() > MAX_ATTRIBUTE_BYTES {
            return Err(format!(
                "attribute {} of <{}> is {} bytes; the limit is {MAX_ATTRIBUTE_BYTES} bytes (64 KiB)",
                quote(&String::from_utf8_lossy(attr.key.0)),
                quote(&local),
                attr.value.len()
            ));
        }
        let (resolved, name) = reader.resolve_attribute(attr.key);
        let ns = namespace_of(&resolved).map_err(|p| format!("undeclared namespace prefix '{}'", quote(&p)))?;
        let name = utf8(name.into_inner())?;
        // `resolve_xml_entity` knows exactly the five XML entities, even if some
        // other crate turns on quick-xml's `escape-html` feature.
        let value = attr.decode_and_unescape_value_with(reader.decoder(), resolve_xml_entity).map_err(|e| match e {
            quick_xml::Error::Escape(EscapeError::UnrecognizedEntity(_, entity)) => undeclared_entity(&entity),
            other => format!("attribute {} of <{}>: {}", quote(&name), quote(&local), xml_error_text(&other)),
        })?;
        attrs.push(Attr { ns, local: name, value: value.into_owned() });
    }
    Ok(Element { ns, local, attrs, children: Vec::new(), text: String::new(), offset })
}

fn attach(stack: &mut [Element], root: &mut Option<Element>, element: Element) -> Result<(), String> {
    match stack.last_mut() {
        Some(parent) => parent.children.push(element),
        None if root.is_none() => *root = Some(element),
        None => return Err("document has more than one root element".to_owned()),
    }
    Ok(())
}

fn push_text(stack: &mut [Element], text: &str) -> Result<(), String> {
    match stack.last_mut() {
        Some(top) => {
            if top.text.len() + text.len() > MAX_TEXT_BYTES {
                return Err(format!(
                    "text of <{}> exceeds the limit of {MAX_TEXT_BYTES} bytes (1 MiB)",
                    quote(&top.local)
                ));
            }
            top.text.push_str(text);
            Ok(())
        }
        None if text.trim().is_empty() => Ok(()),
        None => Err("text outside the root element".to_owned()),
    }
}

fn undeclared_entity(name: &str) -> String {
    format!(
        "undeclared entity &{};: only &lt; &gt; &amp; &apos; &quot; and character references are decoded",
        quote(name)
    )
}

fn utf8(bytes: &[u8]) -> Result<String, String> {
    std::str::from_utf8(bytes).map(str::to_owned).map_err(|_| "name is not valid UTF-8".to_owned())
}

/// quick-xml's messages, cut to one short line.
fn xml_error_text(e: &quick_xml::Error) -> String {
    quote(&e.to_string())
}

/// Look-ups the model builder needs, all by namespace URI (never by prefix).
impl Element {
    /// An unprefixed attribute (`id`, `name`, `sourceRef`…).
    pub(crate) fn attr(&self, local: &str) -> Option<&str> {
        self.attrs.iter().find(|a| a.ns == Ns::None && a.local == local).map(|a| a.value.as_str())
    }

    /// The `id` attribute.
    pub(crate) fn id(&self) -> Option<&str> {
        self.attr("id")
    }

    /// A vendor extension attribute (`activiti:async`, `camunda:async`, …),
    /// the first found in [`Vendor::ALL`](crate::ns::Vendor::ALL) order.
    pub(crate) fn vendor_attr(&self, local: &str) -> Option<(crate::ns::Vendor, &str)> {
        crate::ns::Vendor::ALL.into_iter().find_map(|v| {
            self.attrs.iter().find(|a| a.ns == Ns::Vendor(v) && a.local == local).map(|a| (v, a.value.as_str()))
        })
    }

    /// True for a BPMN-namespace element with this local name.
    pub(crate) fn is_bpmn(&self, local: &str) -> bool {
        self.ns == Ns::Bpmn && self.local == local
    }

    /// BPMN-namespace children.
    pub(crate) fn bpmn_children(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter(|c| c.ns == Ns::Bpmn)
    }

    /// The first BPMN-namespace child with this local name.
    pub(crate) fn bpmn_child(&self, local: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.is_bpmn(local))
    }

    /// Vendor-namespace elements inside this element's `<extensionElements>`.
    pub(crate) fn vendor_extensions(&self) -> impl Iterator<Item = (crate::ns::Vendor, &Element)> {
        self.children.iter().filter(|c| c.is_bpmn("extensionElements")).flat_map(|ext| {
            ext.children.iter().filter_map(|c| match c.ns {
                Ns::Vendor(v) => Some((v, c)),
                _ => None,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(xml: &str) -> Result<Element, ParseError> {
        read(xml, &LineIndex::new(xml))
    }

    #[test]
    fn resolves_namespaces_whatever_the_prefix() {
        let xml = r#"<a:definitions xmlns:a="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:c="http://camunda.org/schema/1.0/bpmn">
            <a:task id="t" c:async="true"/></a:definitions>"#;
        let root = read_str(xml).unwrap();
        assert_eq!(root.ns, Ns::Bpmn);
        let task = &root.children[0];
        assert_eq!((task.ns, task.local.as_str(), task.offset), (Ns::Bpmn, "task", xml.find("<a:task").unwrap()));
        assert_eq!(task.attrs[0].ns, Ns::None);
        assert_eq!(task.attrs[1].ns, Ns::Vendor(crate::ns::Vendor::Camunda));
    }

    #[test]
    fn decodes_predefined_entities_and_char_refs_only() {
        let root = read_str("<a x='&lt;&#65;&#x42;'>1 &amp; 2 &#x3c;<![CDATA[<c>]]></a>").unwrap();
        assert_eq!(root.attrs[0].value, "<AB");
        assert_eq!(root.text, "1 & 2 <<c>");
        let err = read_str("<a>\n &lol;</a>").unwrap_err();
        assert!(err.message.contains("undeclared entity &lol;"), "{err}");
        assert_eq!((err.line, err.column), (2, 2));
        assert!(read_str("<a x='&lol;'/>").unwrap_err().message.contains("undeclared entity"));
    }

    #[test]
    fn refuses_doctype() {
        let err = read_str("<?xml version='1.0'?>\n<!DOCTYPE a [<!ENTITY x 'y'>]>\n<a/>").unwrap_err();
        assert!(err.message.starts_with("DOCTYPE is refused"), "{err}");
        assert_eq!(err.line, 2);
    }

    #[test]
    fn enforces_limits() {
        let deep = "<a>".repeat(MAX_DEPTH + 1) + &"</a>".repeat(MAX_DEPTH + 1);
        assert!(read_str(&deep).unwrap_err().message.contains("nested deeper"));
        let ok = "<a>".repeat(MAX_DEPTH) + &"</a>".repeat(MAX_DEPTH);
        assert!(read_str(&ok).is_ok());
        let many = format!("<a>{}</a>", "<b/>".repeat(MAX_ELEMENTS));
        assert!(read_str(&many).unwrap_err().message.contains("more than 20000 elements"));
        let many_attrs =
            |n: usize| format!("<a {}/>", (0..n).map(|i| format!("a{i}='v'")).collect::<Vec<_>>().join(" "));
        assert!(read_str(&many_attrs(MAX_ATTRIBUTES)).is_ok());
        let err = read_str(&many_attrs(MAX_ATTRIBUTES + 1)).unwrap_err();
        assert!(err.message.contains("<a> has more than 256 attributes"), "{err}");
        let long_attr = format!("<a x='{}'/>", "v".repeat(MAX_ATTRIBUTE_BYTES + 1));
        assert!(read_str(&long_attr).unwrap_err().message.contains("64 KiB"));
        let long_text = format!("<a>{}</a>", "t".repeat(MAX_TEXT_BYTES + 1));
        assert!(read_str(&long_text).unwrap_err().message.contains("1 MiB"));
        let huge = " ".repeat(MAX_INPUT_BYTES + 1);
        assert!(read_str(&huge).unwrap_err().message.contains("10 MiB"));
    }

    #[test]
    fn malformed_markup_is_an_error_with_a_line() {
        for bad in ["<a>", "<a></b>", "<a/><b/>", "", "text", "<a x='1' x='2'/>", "<p:a/>", "<a p:x='1'/>"] {
            let err = read_str(bad).unwrap_err();
            assert!(err.line >= 1 && err.column >= 1, "{bad}: {err}");
        }
        let err = read_str("<a>\n  <b>\n</a>").unwrap_err();
        assert_eq!(err.line, 3, "{err}");
    }
}
