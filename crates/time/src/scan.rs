//! A tiny byte cursor shared by the hand-written parsers.
//!
//! The grammars here are ASCII-only, so the cursor walks bytes and only ever
//! stops on an ASCII byte or on the first byte of a character it rejects; the
//! offsets it reports are therefore always char boundaries, which is what lets
//! error messages name the exact offending character without panicking.

use crate::error::Fail;

pub(crate) struct Cursor<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(s: &'a str) -> Self {
        Cursor { s, pos: 0 }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }

    /// The next byte if it is ASCII; non-ASCII is reported as `None` so callers
    /// treat it like any other unexpected character.
    pub(crate) fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied().filter(u8::is_ascii)
    }

    /// Consumes `c` (ASCII, case-insensitive) if it is next.
    pub(crate) fn eat(&mut self, c: u8) -> bool {
        if self.peek().is_some_and(|b| b.eq_ignore_ascii_case(&c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Consumes any one of `set` (case-insensitive) and returns it upper-cased.
    pub(crate) fn eat_any(&mut self, set: &[u8]) -> Option<u8> {
        let b = self.peek()?.to_ascii_uppercase();
        if set.contains(&b) {
            self.pos += 1;
            Some(b)
        } else {
            None
        }
    }

    /// Consumes a run of ASCII digits and returns it (possibly empty).
    pub(crate) fn digits(&mut self) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        &self.s[start..self.pos]
    }

    /// Consumes exactly `n` digits as a number, failing with `what` otherwise.
    pub(crate) fn fixed(&mut self, n: usize, what: &str) -> Result<u32, Fail> {
        let start = self.pos;
        let run = self.digits();
        if run.len() != n {
            let found = if run.is_empty() { crate::error::describe_at(self.s, start) } else { format!("{run:?}") };
            return Err(Fail::new(start, format!("expected {n}-digit {what}, found {found}")));
        }
        Ok(run.bytes().fold(0, |acc, b| acc * 10 + u32::from(b - b'0')))
    }

    /// Consumes exactly `n` digits even if more follow (for `+hhmm` offsets).
    pub(crate) fn fixed_prefix(&mut self, n: usize, what: &str) -> Result<u32, Fail> {
        let bytes = self.s.as_bytes();
        let end = self.pos + n;
        match bytes.get(self.pos..end) {
            Some(run) if run.iter().all(u8::is_ascii_digit) => {
                self.pos = end;
                Ok(run.iter().fold(0, |acc, b| acc * 10 + u32::from(b - b'0')))
            }
            _ => self.fixed(n, what),
        }
    }

    /// Fails unless the next byte is `c`, naming `what` was expected.
    pub(crate) fn expect(&mut self, c: u8, what: &str) -> Result<(), Fail> {
        if self.eat(c) { Ok(()) } else { Err(self.unexpected(what)) }
    }

    /// A failure at the cursor: "expected X, found 'Y'".
    pub(crate) fn unexpected(&self, expected: &str) -> Fail {
        let found = crate::error::describe_at(self.s, self.pos);
        Fail::new(self.pos, format!("expected {expected}, found {found}"))
    }
}

/// Parses an all-digit string into `u64`, or `None` when it does not fit.
/// Callers turn `None` into a positioned "too large" error.
pub(crate) fn parse_u64(digits: &str) -> Option<u64> {
    digits.bytes().try_fold(0u64, |acc, b| acc.checked_mul(10)?.checked_add(u64::from(b - b'0')))
}

/// Splits `s` on `sep`, yielding each piece with its byte offset in `s`.
pub(crate) fn split_with_offsets(s: &str, sep: char) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    s.split(sep).map(move |piece| {
        let at = offset;
        offset += piece.len() + sep.len_utf8();
        (at, piece)
    })
}

/// Trims whitespace, returning the trimmed text and its byte offset in `s`.
pub(crate) fn trim_with_offset(s: &str) -> (usize, &str) {
    let start = s.len() - s.trim_start().len();
    (start, s.trim())
}
