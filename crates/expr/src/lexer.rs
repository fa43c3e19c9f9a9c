//! Turns the text inside `${ … }` into tokens, one at a time.
//!
//! The lexer works on a `&[char]` so that every offset it reports is already
//! the character position users see; the 4 KiB text limit keeps the copy
//! small. It is pulled on demand by the parser because where an expression
//! ends (its closing `}`) is only known once the parser has read it: a `}`
//! inside a string literal does not close anything.

use crate::error::ExprError;

/// One token. Word operators (`and`, `eq`, `div`, …) become the same token as
/// their symbol (`&&`, `==`, `/`), so the parser has one case for both.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Int(i64),
    Float(f64),
    Str(String),
    Ident(String),
    True,
    False,
    Null,
    Empty,
    Not,
    And,
    Or,
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Question,
    Colon,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Dot,
    Comma,
    RBrace,
    End,
}

/// A token and the character range `[start, end)` it came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spanned {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

pub(crate) struct Lexer<'a> {
    chars: &'a [char],
    pub pos: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(chars: &'a [char], pos: usize) -> Self {
        Lexer { chars, pos }
    }

    fn peek_char(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn fail(&self, at: usize, message: impl Into<String>) -> ExprError {
        ExprError::at(self.chars, at, message)
    }

    pub fn next_token(&mut self) -> Result<Spanned, ExprError> {
        while self.peek_char(0).is_some_and(|c| matches!(c, ' ' | '\t' | '\n' | '\r')) {
            self.pos += 1;
        }
        let start = self.pos;
        let Some(c) = self.peek_char(0) else {
            return Ok(Spanned { tok: Tok::End, start, end: start });
        };
        let tok = if c.is_ascii_digit() || (c == '.' && self.peek_char(1).is_some_and(|d| d.is_ascii_digit())) {
            self.number()?
        } else if c == '\'' || c == '"' {
            self.string(c)?
        } else if is_ident_start(c) {
            self.word()?
        } else {
            self.symbol(c)?
        };
        Ok(Spanned { tok, start, end: self.pos })
    }

    fn symbol(&mut self, c: char) -> Result<Tok, ExprError> {
        let next = self.peek_char(1);
        let (tok, len) = match (c, next) {
            ('=', Some('=')) => (Tok::Eq, 2),
            ('!', Some('=')) => (Tok::Ne, 2),
            ('<', Some('=')) => (Tok::Le, 2),
            ('>', Some('=')) => (Tok::Ge, 2),
            ('&', Some('&')) => (Tok::And, 2),
            ('|', Some('|')) => (Tok::Or, 2),
            ('<', _) => (Tok::Lt, 1),
            ('>', _) => (Tok::Gt, 1),
            ('!', _) => (Tok::Not, 1),
            ('+', _) => (Tok::Plus, 1),
            ('-', _) => (Tok::Minus, 1),
            ('*', _) => (Tok::Star, 1),
            ('/', _) => (Tok::Slash, 1),
            ('%', _) => (Tok::Percent, 1),
            ('?', _) => (Tok::Question, 1),
            (':', _) => (Tok::Colon, 1),
            ('(', _) => (Tok::LParen, 1),
            (')', _) => (Tok::RParen, 1),
            ('[', _) => (Tok::LBracket, 1),
            (']', _) => (Tok::RBracket, 1),
            ('.', _) => (Tok::Dot, 1),
            (',', _) => (Tok::Comma, 1),
            ('}', _) => (Tok::RBrace, 1),
            ('=', _) => {
                return Err(self.fail(self.pos, "'=' is assignment, which expressions cannot do; compare with '=='"));
            }
            ('&', _) => return Err(self.fail(self.pos, "unexpected '&'; the logical and is '&&' or 'and'")),
            ('|', _) => return Err(self.fail(self.pos, "unexpected '|'; the logical or is '||' or 'or'")),
            _ => return Err(self.fail(self.pos, format!("unexpected character {c:?}"))),
        };
        self.pos += len;
        Ok(tok)
    }

    /// Identifiers follow Java's rules (letters, digits, `_`, `$`); the EL
    /// reserved words become operator or literal tokens.
    fn word(&mut self) -> Result<Tok, ExprError> {
        let start = self.pos;
        while self.peek_char(0).is_some_and(is_ident_part) {
            self.pos += 1;
        }
        let word: String = self.chars[start..self.pos].iter().collect();
        Ok(match word.as_str() {
            "true" => Tok::True,
            "false" => Tok::False,
            "null" => Tok::Null,
            "empty" => Tok::Empty,
            "not" => Tok::Not,
            "and" => Tok::And,
            "or" => Tok::Or,
            "eq" => Tok::Eq,
            "ne" => Tok::Ne,
            "lt" => Tok::Lt,
            "gt" => Tok::Gt,
            "le" => Tok::Le,
            "ge" => Tok::Ge,
            "div" => Tok::Slash,
            "mod" => Tok::Percent,
            "instanceof" => return Err(self.fail(start, "'instanceof' is not supported")),
            _ => Tok::Ident(word),
        })
    }

    /// EL strings: `'…'` or `"…"`, where a backslash escapes only a quote or
    /// another backslash. Any other escape is refused rather than guessed.
    fn string(&mut self, quote: char) -> Result<Tok, ExprError> {
        let start = self.pos;
        self.pos += 1;
        let mut text = String::new();
        loop {
            match self.peek_char(0) {
                None => return Err(self.fail(start, "unterminated string")),
                Some(c) if c == quote => {
                    self.pos += 1;
                    return Ok(Tok::Str(text));
                }
                Some('\\') => match self.peek_char(1) {
                    Some(e @ ('\\' | '\'' | '"')) => {
                        text.push(e);
                        self.pos += 2;
                    }
                    Some(e) => {
                        let message = format!("invalid escape '\\{e}' in string (only \\\\, \\' and \\\" are escapes)");
                        return Err(self.fail(self.pos, message));
                    }
                    None => return Err(self.fail(start, "unterminated string")),
                },
                Some(c) => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// Integer (`42`), decimal (`4.2`, `.5`, `4.`) and exponent (`4e2`,
    /// `4.2E-1`) literals. An integer that does not fit an i64 is an error, not
    /// a silently rounded float.
    fn number(&mut self) -> Result<Tok, ExprError> {
        let start = self.pos;
        let mut is_float = false;
        self.skip_digits();
        if self.peek_char(0) == Some('.') && !self.peek_char(1).is_some_and(is_ident_start) {
            is_float = true;
            self.pos += 1;
            self.skip_digits();
        }
        if matches!(self.peek_char(0), Some('e' | 'E')) {
            let sign = usize::from(matches!(self.peek_char(1), Some('+' | '-')));
            if self.peek_char(1 + sign).is_some_and(|c| c.is_ascii_digit()) {
                is_float = true;
                self.pos += 1 + sign;
                self.skip_digits();
            }
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        if is_float {
            match text.parse::<f64>() {
                Ok(f) if f.is_finite() => Ok(Tok::Float(f)),
                _ => Err(self.fail(start, format!("number {text} is out of range"))),
            }
        } else {
            text.parse::<i64>()
                .map(Tok::Int)
                .map_err(|_| self.fail(start, format!("integer {text} is out of range (at most {})", i64::MAX)))
        }
    }

    fn skip_digits(&mut self) {
        while self.peek_char(0).is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == '$'
}

fn is_ident_part(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(text: &str) -> Result<Vec<Tok>, ExprError> {
        let chars: Vec<char> = text.chars().collect();
        let mut lexer = Lexer::new(&chars, 0);
        let mut out = Vec::new();
        loop {
            let t = lexer.next_token()?;
            if t.tok == Tok::End {
                return Ok(out);
            }
            out.push(t.tok);
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(
            lex("42 4.5 .5 4. 1e3 2.5E-1").unwrap(),
            vec![Tok::Int(42), Tok::Float(4.5), Tok::Float(0.5), Tok::Float(4.0), Tok::Float(1000.0), Tok::Float(0.25)]
        );
        assert_eq!(lex("1eq 1").unwrap(), vec![Tok::Int(1), Tok::Eq, Tok::Int(1)]);
        assert!(lex("99999999999999999999").unwrap_err().message.contains("out of range"));
        assert!(lex("1e999").unwrap_err().message.contains("out of range"));
    }

    #[test]
    fn strings_and_escapes() {
        assert_eq!(
            lex(r#"'a\'b' "c\"d\\" 'x"y'"#).unwrap(),
            vec![Tok::Str("a'b".into()), Tok::Str("c\"d\\".into()), Tok::Str("x\"y".into())]
        );
        let e = lex("  'abc").unwrap_err();
        assert_eq!((e.message.as_str(), e.position), ("unterminated string", 2));
        let e = lex(r"'a\nb'").unwrap_err();
        assert_eq!(e.position, 2);
        assert!(e.message.starts_with("invalid escape '\\n'"));
    }

    #[test]
    fn word_operators_are_symbols() {
        assert_eq!(lex("a and b or not c eq d ne e lt f gt g le h ge i div j mod k").unwrap().len(), 22);
        assert_eq!(lex("x div y").unwrap()[1], Tok::Slash);
        assert_eq!(
            lex("émile $x _y").unwrap(),
            vec![Tok::Ident("émile".into()), Tok::Ident("$x".into()), Tok::Ident("_y".into())]
        );
    }

    #[test]
    fn helpful_messages_for_near_misses() {
        assert!(lex("a = b").unwrap_err().message.contains("'=='"));
        assert!(lex("a & b").unwrap_err().message.contains("'&&'"));
        assert!(lex("a | b").unwrap_err().message.contains("'||'"));
        assert_eq!(lex("a ; b").unwrap_err().message, "unexpected character ';'");
    }
}
