//! One round trip for a run of inserts: consecutive `INSERT … VALUES` writes of a
//! [`Store::write_all`](kairos_store::Store::write_all) become one statement, each insert a
//! data-modifying `WITH` part that reports its row count.
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
    /// `writes[range]` as one statement returning one `bigint` row count per write.
    Fused { range: Range<usize>, sql: String, binds: Vec<SqlValue> },
}

/// Whether `w` inserts literal rows only (see the module docs).
fn fusable(w: &Write) -> bool {
    let upper = w.sql.trim().to_ascii_uppercase();
    upper.starts_with("INSERT INTO ")
        && upper.contains(" VALUES ")
        && !upper.contains("SELECT")
        && !upper.contains("ON CONFLICT")
        && !upper.contains("RETURNING")
        && !upper.contains(';')
        && w.binds.len() < MAX_PARAMS
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
        let parts: Vec<String> =
            run.iter().enumerate().map(|(k, w)| format!("w{k} AS ({} RETURNING 1)", w.sql.trim())).collect();
        let counts: Vec<String> = (0..run.len()).map(|k| format!("(SELECT count(*) FROM w{k})")).collect();
        let sql = format!("WITH {} SELECT {}", parts.join(", "), counts.join(", "));
        let binds = run.iter().flat_map(|w| w.binds.iter().cloned()).collect();
        steps.push(Step::Fused { range: i..end, sql, binds });
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
        let [Step::Fused { range, sql, binds }] = steps.as_slice() else { panic!("one fused step: {steps:?}") };
        assert_eq!(*range, 0..3);
        assert_eq!(
            sql,
            "WITH w0 AS (INSERT INTO T1 (A_, B_) VALUES (?, ?) RETURNING 1), \
             w1 AS (INSERT INTO T2 (A_, B_) VALUES (?, ?) RETURNING 1), \
             w2 AS (INSERT INTO T3 (A_, B_) VALUES (?, ?) RETURNING 1) \
             SELECT (SELECT count(*) FROM w0), (SELECT count(*) FROM w1), (SELECT count(*) FROM w2)"
        );
        assert_eq!(binds.len(), 6);
        assert_eq!(binds[4], SqlValue::Int(3));
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
