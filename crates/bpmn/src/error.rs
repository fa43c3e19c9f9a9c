//! Parse problems, and the byte offset → line/column translation behind them.
//!
//! Modelers show element ids and editors show lines, so every problem names
//! both: an operator handed "line 12, column 5: sequenceFlow 'Flow_3':
//! targetRef 'Task_9' does not exist" can fix the file without a debugger.
//! The XML reader only knows byte offsets; [`LineIndex`] turns them into
//! 1-based lines and character columns exactly once, when a problem is made.

use std::fmt;

use serde::Serialize;

/// Longest piece of user text copied into a message. Attribute values may be
/// 64 KiB; an error that echoes one must stay a readable, loggable line.
const MAX_QUOTED_CHARS: usize = 120;

/// At most this many problems are reported; a generated file with thousands
/// of broken flows should produce a readable report, not megabytes of it.
pub const MAX_REPORTED_PROBLEMS: usize = 100;

/// One problem found in a BPMN document.
///
/// `message` is a whole sentence that already names the element (`userTask
/// 'Task_1': …`), so it can be shown alone; `element` and `element_id` are
/// the same facts for programs (the console highlights the element).
/// `line` and `column` are 1-based; the column counts characters, not bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ParseError {
    /// What is wrong, naming the element when there is one.
    pub message: String,
    /// The `id` attribute of the element at fault, when it has one.
    pub element_id: Option<String>,
    /// The local tag name of the element at fault (`sequenceFlow`).
    pub element: Option<String>,
    /// 1-based line of the element's `<` (or of the offending markup).
    pub line: u32,
    /// 1-based character column on that line.
    pub column: u32,
}

impl ParseError {
    /// A problem about the document as a whole or its markup (no element).
    pub(crate) fn at(pos: Pos, message: impl Into<String>) -> Self {
        ParseError { message: message.into(), element_id: None, element: None, line: pos.line, column: pos.column }
    }

    /// A problem about one element: the message becomes `tag 'id': detail`
    /// (or `tag: detail` when the element has no id).
    pub(crate) fn element(pos: Pos, tag: &str, id: Option<&str>, detail: impl fmt::Display) -> Self {
        let message = match id {
            Some(id) => format!("{tag} '{}': {detail}", quote(id)),
            None => format!("{tag}: {detail}"),
        };
        ParseError {
            message,
            element_id: id.map(str::to_owned),
            element: Some(tag.to_owned()),
            line: pos.line,
            column: pos.column,
        }
    }

    /// An element kairos does not execute. The message is the fixed phrase
    /// `unsupported element <tag> 'id'` so tools can search for it, followed by
    /// why, because "unsupported" alone does not tell a modeler what to change.
    pub(crate) fn unsupported(pos: Pos, tag: &str, id: Option<&str>, why: &str) -> Self {
        let mut message = match id {
            Some(id) => format!("unsupported element {tag} '{}'", quote(id)),
            None => format!("unsupported element {tag}"),
        };
        if !why.is_empty() {
            message.push_str(": ");
            message.push_str(why);
        }
        ParseError {
            message,
            element_id: id.map(str::to_owned),
            element: Some(tag.to_owned()),
            line: pos.line,
            column: pos.column,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Every problem found in a document: never empty, sorted by position.
///
/// Validation goes on after the first problem so that a modeler fixes a file
/// in one round trip instead of one error per deploy attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ParseErrors(Vec<ParseError>);

impl ParseErrors {
    /// Sorts, de-duplicates and caps the list; `None` when it is empty.
    pub(crate) fn from_vec(mut errors: Vec<ParseError>) -> Option<Self> {
        errors.sort_by_key(|e| (e.line, e.column));
        errors.dedup();
        if errors.len() > MAX_REPORTED_PROBLEMS {
            let more = errors.len() - MAX_REPORTED_PROBLEMS;
            let at = &errors[MAX_REPORTED_PROBLEMS];
            let pos = Pos { line: at.line, column: at.column };
            errors.truncate(MAX_REPORTED_PROBLEMS);
            errors.push(ParseError::at(pos, format!("{more} more problems not shown")));
        }
        (!errors.is_empty()).then_some(ParseErrors(errors))
    }

    pub(crate) fn one(error: ParseError) -> Self {
        ParseErrors(vec![error])
    }

    /// The first problem in document order.
    pub fn first(&self) -> &ParseError {
        // Never empty: every constructor guarantees at least one problem.
        &self.0[0]
    }

    /// All problems, in document order.
    pub fn as_slice(&self) -> &[ParseError] {
        &self.0
    }

    /// Iterates over the problems in document order.
    pub fn iter(&self) -> std::slice::Iter<'_, ParseError> {
        self.0.iter()
    }

    /// Number of problems (at least 1).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always false; present because clippy expects it next to `len`.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The problems as a vector.
    pub fn into_vec(self) -> Vec<ParseError> {
        self.0
    }
}

impl fmt::Display for ParseErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseErrors {}

impl<'a> IntoIterator for &'a ParseErrors {
    type Item = &'a ParseError;
    type IntoIter = std::slice::Iter<'a, ParseError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// A 1-based line and character column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Pos {
    pub line: u32,
    pub column: u32,
}

/// Bytes between two character-count checkpoints of a [`LineIndex`].
const CHECKPOINT_BYTES: usize = 256;

/// Start offsets of every line of a document, for offset → [`Pos`].
///
/// Columns count characters, and a modeler may write a whole file on one
/// line, so counting from the line start for each of thousands of elements
/// would be quadratic. Character counts are therefore kept at checkpoints
/// every [`CHECKPOINT_BYTES`]; a position costs a binary search and a short
/// scan.
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// `(byte offset, characters before it)`, at char boundaries, ascending.
    checkpoints: Vec<(usize, usize)>,
}

impl<'a> LineIndex<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i + 1));
        let mut checkpoints = vec![(0, 0)];
        let mut next = CHECKPOINT_BYTES;
        for (chars, (i, _)) in text.char_indices().enumerate() {
            if i >= next {
                checkpoints.push((i, chars));
                next = i + CHECKPOINT_BYTES;
            }
        }
        LineIndex { text, starts, checkpoints }
    }

    /// Position of byte `offset`. Never panics: an offset past the end points
    /// just past the text, one inside a character points at that character.
    pub(crate) fn pos(&self, offset: usize) -> Pos {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1];
        let column = if offset - start <= CHECKPOINT_BYTES {
            count_chars(self.text, start, offset)
        } else {
            self.chars_before(offset) - self.chars_before(start)
        };
        Pos { line: clamp_u32(line), column: clamp_u32(column + 1) }
    }

    /// Number of characters that start before byte `offset`.
    fn chars_before(&self, offset: usize) -> usize {
        let i = self.checkpoints.partition_point(|&(b, _)| b <= offset).max(1);
        let (byte, chars) = self.checkpoints[i - 1];
        chars + count_chars(self.text, byte, offset)
    }
}

/// Characters of `text` that start in `from..to` (`from` is a char boundary).
fn count_chars(text: &str, from: usize, to: usize) -> usize {
    text.get(from..).unwrap_or_default().char_indices().take_while(|(j, _)| from + j < to).count()
}

fn clamp_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Copies at most [`MAX_QUOTED_CHARS`] characters of user text into a message,
/// with control characters escaped so a message stays on one line.
pub(crate) fn quote(text: &str) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == MAX_QUOTED_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_lines_and_char_columns() {
        let idx = LineIndex::new("ab\néx<y\n");
        assert_eq!(idx.pos(0), Pos { line: 1, column: 1 });
        assert_eq!(idx.pos(3), Pos { line: 2, column: 1 });
        assert_eq!(idx.pos(6), Pos { line: 2, column: 3 }); // after 'é' (2 bytes) and 'x'
        assert_eq!(idx.pos(4), Pos { line: 2, column: 2 }); // inside 'é': no panic
        assert_eq!(idx.pos(999), Pos { line: 3, column: 1 });
        assert_eq!(LineIndex::new("").pos(5), Pos { line: 1, column: 1 });
    }

    #[test]
    fn columns_on_long_lines_use_checkpoints() {
        let text = format!("{}\n{}<x", "é".repeat(3000), "ü".repeat(2500));
        let idx = LineIndex::new(&text);
        assert!(idx.checkpoints.len() > 5);
        let at = text.find('<').unwrap();
        assert_eq!(idx.pos(at), Pos { line: 2, column: 2501 });
        for probe in (0..text.len()).step_by(997) {
            let line_start = text.as_bytes()[..probe].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let naive = text[line_start..].char_indices().take_while(|(j, _)| line_start + j < probe).count() + 1;
            assert_eq!(idx.pos(probe).column as usize, naive, "offset {probe}");
        }
    }

    #[test]
    fn display_names_line_column_element_and_id() {
        let e = ParseError::element(
            Pos { line: 12, column: 5 },
            "sequenceFlow",
            Some("Flow_3"),
            "targetRef 'Task_9' does not exist",
        );
        assert_eq!(e.to_string(), "line 12, column 5: sequenceFlow 'Flow_3': targetRef 'Task_9' does not exist");
        let u = ParseError::unsupported(Pos { line: 3, column: 1 }, "scriptTask", Some("S"), "");
        assert_eq!(u.to_string(), "line 3, column 1: unsupported element scriptTask 'S'");
    }

    #[test]
    fn reports_are_sorted_deduplicated_and_capped() {
        let at = |l| ParseError::at(Pos { line: l, column: 1 }, "x");
        let errors = ParseErrors::from_vec(vec![at(3), at(1), at(3)]).unwrap();
        assert_eq!(errors.iter().map(|e| e.line).collect::<Vec<_>>(), [1, 3]);
        let many = ParseErrors::from_vec((1..=500).map(at).collect()).unwrap();
        assert_eq!(many.len(), MAX_REPORTED_PROBLEMS + 1);
        assert!(many.as_slice()[MAX_REPORTED_PROBLEMS].message.contains("400 more"));
        assert!(ParseErrors::from_vec(vec![]).is_none());
    }

    #[test]
    fn quotes_are_clipped_and_single_line() {
        assert_eq!(quote("a\nb"), "a\\nb");
        assert_eq!(quote(&"x".repeat(500)).chars().count(), MAX_QUOTED_CHARS + 1);
    }
}
