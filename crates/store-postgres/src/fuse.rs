//! One round trip for a run of inserts: consecutive `INSERT … VALUES` writes of a
//! [`Sql::write_all`](kairos_store::Sql::write_all) become one statement, each insert a
//! data-modifying `WITH` part.
//!
//! Why: every statement is a round trip, and starting a process instance is five inserts
//! into five tables (execution rows, history, its first job) — with BEGIN and COMMIT, seven
//! round trips. Fused, a write list of inserts only is one autocommitted statement: atomic on
//! its own, so it needs no BEGIN/COMMIT either.
//!
//! Why it is the same: the parts of one statement run on one snapshot and cannot see each
//! other's rows — which plain inserts never need (they read nothing; unique and foreign-key
//! checks see the other parts' rows, as they would see earlier statements'). So only inserts of
//! literal rows are fused: no `SELECT`, no `ON CONFLICT` (two parts could update one row), no
//! `RETURNING` of their own. Statements before and after a fused run keep their order with it.
//!
//! Row counts: a plain insert of literal rows writes every one of its rows or fails the
//! statement, so each part's count is its number of rows ([`rows`]), known without asking.
//! The parts return nothing and the statement ends in `SELECT 1`: PostgreSQL runs every
//! data-modifying `WITH` part to completion whether or not it is read, and counting each
//! part's `RETURNING` rows cost an aggregate per part (measured: ~5 % of the server's CPU in
//! `kairos bench process --mode async`).
//! PostgreSQL only: SQLite has no data-modifying `WITH`, and its statements cost no round trip.

use kairos_store::{SqlValue, Write};
use std::ops::Range;

/// A fused statement's parameters stay well below PostgreSQL's 65,535.
const MAX_PARAMS: usize = 30_000;

/// How [`plan`] runs the writes: one statement each, or a fused run of them.
#[derive(Debug, PartialEq)]
pub(crate) enum Step {
    /// `writes[i]` on its own.
    One(usize),
    /// `writes[range]` as one statement; `rows` is what each write affects when it succeeds.
    Fused { range: Range<usize>, sql: String, binds: Vec<SqlValue>, rows: Vec<u64> },
}

/// Whether `w` inserts literal rows only (see the module docs).
pub(crate) fn fusable(w: &Write) -> bool {
    let upper = w.sql.trim().to_ascii_uppercase();
    upper.starts_with("INSERT INTO ")
        && upper.contains(" VALUES ")
        && !upper.contains("SELECT")
        && !upper.contains("ON CONFLICT")
        && !upper.contains("RETURNING")
        && !upper.contains(';')
        && w.binds.len() < MAX_PARAMS
        && rows(w).is_some()
}

/// The rows a [`fusable`] insert writes: the parenthesized tuples after its `VALUES` (quoted
/// text skipped); `None` when they cannot be told apart.
pub(crate) fn rows(w: &Write) -> Option<usize> {
    let at = w.sql.to_ascii_uppercase().find(" VALUES ")? + " VALUES ".len();
    let (mut depth, mut rows, mut quote) = (0usize, 0, None);
    for c in w.sql[at..].bytes() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None, // a doubled quote closes and reopens
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(c),
            (None, b'(') => {
                rows += usize::from(depth == 0);
                depth += 1;
            }
            (None, b')') => depth = depth.checked_sub(1)?,
            (None, b',' | b' ' | b'\n' | b'\t' | b'\r') => {}
            (None, _) if depth == 0 => return None,
            (None, _) => {}
        }
    }
    (depth == 0 && quote.is_none() && rows > 0).then_some(rows)
}

/// The steps that run `writes` in order, with every run of two or more fusable writes fused.
pub(crate) fn plan(writes: &[Write]) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut i = 0;
    while i < writes.len() {
        let (mut end, mut params) = (i, 0);
        while end < writes.len() && fusable(&writes[end]) && params + writes[end].binds.len() <= MAX_PARAMS {
            params += writes[end].binds.len();
            end += 1;
        }
        if end - i < 2 {
            steps.push(Step::One(i));
            i += 1;
            continue;
        }
        let run = &writes[i..end];
        let parts: Vec<String> = run.iter().enumerate().map(|(k, w)| format!("w{k} AS ({})", w.sql.trim())).collect();
        let sql = format!("WITH {} SELECT 1", parts.join(", "));
        let binds = run.iter().flat_map(|w| w.binds.iter().cloned()).collect();
        let rows = run.iter().map(|w| rows(w).unwrap_or_default() as u64).collect();
        steps.push(Step::Fused { range: i..end, sql, binds, rows });
        i = end;
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insert(table: &str, n: i64) -> Write {
        Write::new(format!("INSERT INTO {table} (A_, B_) VALUES (?, ?)"), vec![SqlValue::Int(n), SqlValue::Null])
    }

    #[test]
    fn a_run_of_inserts_becomes_one_statement_with_a_count_per_insert() {
        let writes = vec![insert("T1", 1), insert("T2", 2), insert("T3", 3)];
        let steps = plan(&writes);
        let [Step::Fused { range, sql, binds, rows }] = steps.as_slice() else { panic!("one fused step: {steps:?}") };
        assert_eq!(*range, 0..3);
        assert_eq!(
            sql,
            "WITH w0 AS (INSERT INTO T1 (A_, B_) VALUES (?, ?)), \
             w1 AS (INSERT INTO T2 (A_, B_) VALUES (?, ?)), \
             w2 AS (INSERT INTO T3 (A_, B_) VALUES (?, ?)) \
             SELECT 1"
        );
        assert_eq!(binds.len(), 6);
        assert_eq!(binds[4], SqlValue::Int(3));
        assert_eq!(rows, &[1, 1, 1]);
    }

    #[test]
    fn an_insert_counts_the_tuples_after_values() {
        let rows = |sql: &str| rows(&Write::new(sql, Vec::new()));
        assert_eq!(rows("INSERT INTO T (A_, B_) VALUES (?, ?)"), Some(1));
        assert_eq!(rows("INSERT INTO T (A_, B_) VALUES (?, ?), (?, 'a)('), (?, lower('X'))"), Some(3));
        assert_eq!(rows("INSERT INTO T (A_) VALUES ('it''s (')"), Some(1));
        assert_eq!(rows("INSERT INTO T (A_) VALUES (?) ON CONFLICT DO NOTHING"), None);
        assert_eq!(rows("INSERT INTO T (A_) VALUES (?"), None);
        assert_eq!(rows("INSERT INTO T DEFAULT VALUES"), None);
    }

    #[test]
    fn other_statements_stay_single_and_keep_their_place() {
        let update =
            Write::new("UPDATE T SET A_ = ? WHERE ID_ = ?", vec![SqlValue::Int(1), SqlValue::Int(2)]).expect(1);
        let from_select = Write::new("INSERT INTO T (A_) SELECT A_ FROM U WHERE ID_ = ?", vec![SqlValue::Int(1)]);
        let upsert = Write::new("INSERT INTO T (A_) VALUES (?) ON CONFLICT DO NOTHING", vec![SqlValue::Int(1)]);
        let writes =
            vec![update, insert("T1", 1), insert("T2", 2), from_select, insert("T3", 3), upsert, insert("T4", 4)];
        let steps = plan(&writes);
        assert!(matches!(steps[0], Step::One(0)));
        assert!(matches!(&steps[1], Step::Fused { range, .. } if *range == (1..3)));
        assert_eq!(steps[2..], [Step::One(3), Step::One(4), Step::One(5), Step::One(6)]);
    }

    #[test]
    fn a_run_is_cut_before_it_passes_the_parameter_limit() {
        let wide = |n| Write::new("INSERT INTO T (A_) VALUES (?)", vec![SqlValue::Int(n); MAX_PARAMS / 2]);
        let steps = plan(&[wide(1), wide(2), wide(3)]);
        assert!(matches!(&steps[0], Step::Fused { range, .. } if *range == (0..2)));
        assert_eq!(steps[1], Step::One(2));
    }
}
