//! The parsed form of an expression.
//!
//! Runs of one precedence level (`a + b - c`, `a && b && c`) are kept flat in
//! a [`Kind::Chain`] rather than as a left-leaning tree: a 4 KiB `a+a+a+…`
//! then stays two levels deep, so neither the evaluator's recursion nor the
//! depth limit depends on how long a sum is, only on how deeply it nests.

use crate::methods::Method;

/// One node and the character position errors about it point to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub kind: Kind,
    pub pos: usize,
    /// 1 for a leaf; 1 + the deepest child otherwise. Checked against
    /// [`MAX_DEPTH`](crate::MAX_DEPTH) as the parser builds the tree.
    pub depth: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// A variable, or one of the implicit objects `execution` and `task`.
    Ident(String),
    /// `dateTime()`, the one function call: "now" from the context.
    Now,
    /// `target.name`.
    Property {
        target: Box<Node>,
        name: String,
    },
    /// `target[index]`.
    Index {
        target: Box<Node>,
        index: Box<Node>,
    },
    /// `target.name(args)`: only whitelisted methods parse at all.
    Call {
        target: Box<Node>,
        method: Method,
        name: String,
        args: Vec<Node>,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Node>,
    },
    /// `first op rest[0] op rest[1] …`, all operators of one precedence level,
    /// evaluated left to right; each carries its own position.
    Chain {
        first: Box<Node>,
        rest: Vec<(BinaryOp, usize, Node)>,
    },
    /// `cond ? then : otherwise`.
    Choice {
        cond: Box<Node>,
        then: Box<Node>,
        otherwise: Box<Node>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnaryOp {
    Neg,
    Not,
    Empty,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

impl BinaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Mod => "%",
            BinaryOp::Lt => "<",
            BinaryOp::Gt => ">",
            BinaryOp::Le => "<=",
            BinaryOp::Ge => ">=",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }
}

impl Kind {
    /// Depth of the deepest direct child (0 for a leaf).
    pub fn child_depth(&self) -> usize {
        match self {
            Kind::Null | Kind::Bool(_) | Kind::Int(_) | Kind::Float(_) | Kind::Str(_) | Kind::Ident(_) | Kind::Now => 0,
            Kind::Property { target, .. } => target.depth,
            Kind::Index { target, index } => target.depth.max(index.depth),
            Kind::Call { target, args, .. } => args.iter().map(|a| a.depth).fold(target.depth, usize::max),
            Kind::Unary { operand, .. } => operand.depth,
            Kind::Chain { first, rest } => rest.iter().map(|(_, _, n)| n.depth).fold(first.depth, usize::max),
            Kind::Choice { cond, then, otherwise } => cond.depth.max(then.depth).max(otherwise.depth),
        }
    }

    /// Whether this always evaluates to a date-time (when it evaluates at
    /// all): `dateTime()`, a date-time method that returns one, or a choice
    /// between two such. Date-time methods parse only on these, and other
    /// methods not on these, so a misplaced method fails at deployment.
    pub fn is_date_time(&self) -> bool {
        match self {
            Kind::Now => true,
            Kind::Call { method, .. } => method.returns_date_time(),
            Kind::Choice { then, otherwise, .. } => then.kind.is_date_time() && otherwise.kind.is_date_time(),
            _ => false,
        }
    }

    /// Calls `visit` on each direct child, in source order.
    pub fn for_each_child<'a>(&'a self, mut visit: impl FnMut(&'a Node)) {
        match self {
            Kind::Null | Kind::Bool(_) | Kind::Int(_) | Kind::Float(_) | Kind::Str(_) | Kind::Ident(_) | Kind::Now => {}
            Kind::Property { target, .. } => visit(target),
            Kind::Index { target, index } => {
                visit(target);
                visit(index);
            }
            Kind::Call { target, args, .. } => {
                visit(target);
                args.iter().for_each(visit);
            }
            Kind::Unary { operand, .. } => visit(operand),
            Kind::Chain { first, rest } => {
                visit(first);
                rest.iter().for_each(|(_, _, n)| visit(n));
            }
            Kind::Choice { cond, then, otherwise } => {
                visit(cond);
                visit(then);
                visit(otherwise);
            }
        }
    }
}

/// A piece of a composite expression: literal text or one `${…}`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part {
    Text(String),
    Eval(Node),
}
