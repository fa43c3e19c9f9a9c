//! Composite text and EL expressions to [`Part`]s and [`Node`]s.
//!
//! A recursive-descent parser, one function per EL precedence level
//! (lowest first): `?:`, `|| or`, `&& and`, `== != eq ne`,
//! `< > <= >= lt gt le ge`, `+ -`, `* / div % mod`, unary `- ! not empty`,
//! then `.`/`[]` access on a literal, identifier, `dateTime()` or
//! parenthesised expression.
//! Nesting is bounded twice: by the parser's own recursion (so `((((…` cannot
//! overflow the stack) and by the depth of the tree it builds (so evaluation
//! cannot either).

use crate::MAX_DEPTH;
use crate::ast::{BinaryOp, Kind, Node, Part, UnaryOp};
use crate::error::ExprError;
use crate::lexer::{Lexer, Spanned, Tok};
use crate::methods;

/// Parses a whole expression text (already checked against the size limit).
pub(crate) fn parse_template(chars: &[char]) -> Result<Vec<Part>, ExprError> {
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut sigil: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let opens = |at: usize| matches!(chars.get(at), Some('$' | '#')) && chars.get(at + 1) == Some(&'{');
        if c == '\\' && opens(i + 1) {
            // `\${` is the literal text `${`, as in EL.
            text.push(chars[i + 1]);
            i += 2;
            continue;
        }
        if !opens(i) {
            text.push(c);
            i += 1;
            continue;
        }
        match sigil {
            Some(first) if first != c => {
                let message = format!("cannot mix '{first}{{' and '{c}{{' in one expression");
                return Err(ExprError::at(chars, i, message));
            }
            _ => sigil = Some(c),
        }
        if !text.is_empty() {
            parts.push(Part::Text(std::mem::take(&mut text)));
        }
        let mut parser = Parser { chars, lexer: Lexer::new(chars, i + 2), peeked: None, nesting: 0 };
        parts.push(Part::Eval(parser.eval_part(i)?));
        i = parser.lexer.pos;
    }
    if !text.is_empty() || parts.is_empty() {
        parts.push(Part::Text(text));
    }
    Ok(parts)
}

struct Parser<'a> {
    chars: &'a [char],
    lexer: Lexer<'a>,
    peeked: Option<Spanned>,
    /// Current recursion depth of `expression` and `unary`.
    nesting: usize,
}

/// Binary precedence levels, lowest first; `?:` sits above the first.
const LEVELS: &[&[(Tok, BinaryOp)]] = &[
    &[(Tok::Or, BinaryOp::Or)],
    &[(Tok::And, BinaryOp::And)],
    &[(Tok::Eq, BinaryOp::Eq), (Tok::Ne, BinaryOp::Ne)],
    &[(Tok::Lt, BinaryOp::Lt), (Tok::Gt, BinaryOp::Gt), (Tok::Le, BinaryOp::Le), (Tok::Ge, BinaryOp::Ge)],
    &[(Tok::Plus, BinaryOp::Add), (Tok::Minus, BinaryOp::Sub)],
    &[(Tok::Star, BinaryOp::Mul), (Tok::Slash, BinaryOp::Div), (Tok::Percent, BinaryOp::Mod)],
];

impl Parser<'_> {
    fn peek(&mut self) -> Result<&Spanned, ExprError> {
        let t = match self.peeked.take() {
            Some(t) => t,
            None => self.lexer.next_token()?,
        };
        Ok(self.peeked.insert(t))
    }

    fn advance(&mut self) -> Result<Spanned, ExprError> {
        match self.peeked.take() {
            Some(t) => Ok(t),
            None => self.lexer.next_token(),
        }
    }

    fn fail(&self, at: usize, message: impl Into<String>) -> ExprError {
        ExprError::at(self.chars, at, message)
    }

    /// "unexpected ')'", quoting the token as written (cut to 20 characters).
    fn unexpected(&self, t: &Spanned) -> ExprError {
        if t.tok == Tok::End {
            return self.fail(t.start, "unexpected end of input");
        }
        let text: String = self.chars[t.start..t.end].iter().take(20).collect();
        let more = if t.end - t.start > 20 { "…" } else { "" };
        self.fail(t.start, format!("unexpected '{text}{more}'"))
    }

    fn expect(&mut self, tok: Tok) -> Result<Spanned, ExprError> {
        let t = self.advance()?;
        if t.tok == tok { Ok(t) } else { Err(self.unexpected(&t)) }
    }

    /// Builds a node, refusing trees deeper than [`MAX_DEPTH`].
    fn node(&self, kind: Kind, pos: usize) -> Result<Node, ExprError> {
        let depth = kind.child_depth() + 1;
        if depth > MAX_DEPTH {
            return Err(self.fail(pos, format!("expression nests deeper than {MAX_DEPTH} levels")));
        }
        Ok(Node { kind, pos, depth })
    }

    fn enter(&mut self) -> Result<(), ExprError> {
        self.nesting += 1;
        if self.nesting > MAX_DEPTH {
            let at = self.peek()?.start;
            return Err(self.fail(at, format!("expression nests deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    /// The inside of one `${…}` opened at `open`, through its closing `}`.
    fn eval_part(&mut self, open: usize) -> Result<Node, ExprError> {
        if self.peek()?.tok == Tok::RBrace {
            return Err(self.fail(open, "empty expression"));
        }
        let node = self.expression()?;
        let t = self.advance()?;
        match t.tok {
            Tok::RBrace => Ok(node),
            Tok::End => {
                Err(self.fail(t.start, format!("missing '}}' to close the expression opened at position {open}")))
            }
            _ => Err(self.unexpected(&t)),
        }
    }

    fn expression(&mut self) -> Result<Node, ExprError> {
        self.enter()?;
        let cond = self.binary(0)?;
        let node = if self.peek()?.tok == Tok::Question {
            let pos = self.advance()?.start;
            let then = self.expression()?;
            self.expect(Tok::Colon)?;
            let otherwise = self.expression()?;
            let kind = Kind::Choice { cond: Box::new(cond), then: Box::new(then), otherwise: Box::new(otherwise) };
            self.node(kind, pos)?
        } else {
            cond
        };
        self.nesting -= 1;
        Ok(node)
    }

    /// One precedence level: operands of the next level joined by this
    /// level's operators, kept flat (see [`Kind::Chain`]).
    fn binary(&mut self, level: usize) -> Result<Node, ExprError> {
        let Some(ops) = LEVELS.get(level) else { return self.unary() };
        let first = self.binary(level + 1)?;
        let mut rest = Vec::new();
        loop {
            let t = self.peek()?;
            let Some(&(_, op)) = ops.iter().find(|(tok, _)| *tok == t.tok) else { break };
            let pos = t.start;
            self.advance()?;
            rest.push((op, pos, self.binary(level + 1)?));
        }
        if rest.is_empty() {
            return Ok(first);
        }
        let pos = first.pos;
        self.node(Kind::Chain { first: Box::new(first), rest }, pos)
    }

    fn unary(&mut self) -> Result<Node, ExprError> {
        let t = self.peek()?;
        let op = match t.tok {
            Tok::Minus => UnaryOp::Neg,
            Tok::Not => UnaryOp::Not,
            Tok::Empty => UnaryOp::Empty,
            _ => return self.postfix(),
        };
        let pos = t.start;
        self.advance()?;
        self.enter()?;
        let operand = self.unary()?;
        self.nesting -= 1;
        self.node(Kind::Unary { op, operand: Box::new(operand) }, pos)
    }

    fn postfix(&mut self) -> Result<Node, ExprError> {
        let mut node = self.primary()?;
        loop {
            match self.peek()?.tok {
                Tok::Dot => {
                    self.advance()?;
                    node = self.member(node)?;
                }
                Tok::LBracket => {
                    let pos = self.advance()?.start;
                    let index = self.expression()?;
                    self.expect(Tok::RBracket)?;
                    node = self.node(Kind::Index { target: Box::new(node), index: Box::new(index) }, pos)?;
                }
                _ => return Ok(node),
            }
        }
    }

    /// `target.name` or `target.name(args)`; only whitelisted methods parse,
    /// and date-time methods only on a date-time (see [`Kind::is_date_time`]).
    fn member(&mut self, target: Node) -> Result<Node, ExprError> {
        let t = self.advance()?;
        let Tok::Ident(name) = t.tok else { return Err(self.unexpected(&t)) };
        let on_date_time = target.kind.is_date_time();
        if self.peek()?.tok != Tok::LParen {
            if on_date_time {
                return Err(self.fail(t.start, format!("a date-time has no property '{name}'")));
            }
            return self.node(Kind::Property { target: Box::new(target), name }, t.start);
        }
        let Some((method, arity)) = methods::lookup(&name) else {
            return Err(self.fail(t.start, format!("method '{name}' is not allowed in expressions")));
        };
        if on_date_time && !method.on_date_time() {
            return Err(self.fail(t.start, format!("method '{name}' cannot be called on a date-time")));
        }
        if !on_date_time && method.on_date_time() {
            let message = format!("method '{name}' can only be called on a date-time, such as dateTime()");
            return Err(self.fail(t.start, message));
        }
        self.advance()?;
        let args = self.arguments()?;
        if args.len() != arity {
            let plural = if arity == 1 { "" } else { "s" };
            let message = format!("'{name}' takes {arity} argument{plural}, not {}", args.len());
            return Err(self.fail(t.start, message));
        }
        self.node(Kind::Call { target: Box::new(target), method, name, args }, t.start)
    }

    /// Comma-separated arguments after `(`, through the `)`.
    fn arguments(&mut self) -> Result<Vec<Node>, ExprError> {
        let mut args = Vec::new();
        if self.peek()?.tok == Tok::RParen {
            self.advance()?;
            return Ok(args);
        }
        loop {
            args.push(self.expression()?);
            let t = self.advance()?;
            match t.tok {
                Tok::Comma => {}
                Tok::RParen => return Ok(args),
                _ => return Err(self.unexpected(&t)),
            }
        }
    }

    fn primary(&mut self) -> Result<Node, ExprError> {
        let t = self.advance()?;
        let kind = match t.tok {
            Tok::Null => Kind::Null,
            Tok::True => Kind::Bool(true),
            Tok::False => Kind::Bool(false),
            Tok::Int(i) => Kind::Int(i),
            Tok::Float(f) => Kind::Float(f),
            Tok::Str(s) => Kind::Str(s),
            Tok::Ident(name) => {
                if self.peek()?.tok != Tok::LParen {
                    Kind::Ident(name)
                } else if name == "dateTime" {
                    self.advance()?;
                    let args = self.arguments()?;
                    if !args.is_empty() {
                        return Err(self.fail(t.start, format!("'dateTime' takes 0 arguments, not {}", args.len())));
                    }
                    Kind::Now
                } else {
                    return Err(self.fail(t.start, format!("function calls are not supported: '{name}'")));
                }
            }
            Tok::LParen => {
                let inner = self.expression()?;
                self.expect(Tok::RParen)?;
                return Ok(inner);
            }
            _ => return Err(self.unexpected(&t)),
        };
        self.node(kind, t.start)
    }
}
