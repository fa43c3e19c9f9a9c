//! Fewer statements for the same writes: single-row statements of one text, from commands that
//! do not depend on each other, merged into set-wise ones.
//!
//! Why: on PostgreSQL every statement is a round trip, and a completion batch runs its jobs'
//! staged effects inside one transaction, one after the other. A batch of 500 scheduler firings
//! stages ~2,000 single-row statements; each waits for the previous one's answer, so the batch
//! is bound by latency while both cores sit partly idle. Merged, the same batch is a handful of
//! multi-row INSERTs and `IN`-list DELETEs plus the statements that must stay single (those
//! with a checked row count).
//!
//! Three shapes are merged, and only between statements of the same text (the same table and
//! columns, so the same constraints and the same order of checks):
//! - `INSERT INTO t (cols) VALUES (…)` (no `ON CONFLICT`, no `RETURNING`, no `SELECT`): a
//!   plain single-row insert writes its row or fails the transaction, so the merged statement
//!   affects exactly as many rows as the statements it replaces, and its expected count is
//!   their sum.
//! - `DELETE FROM t WHERE a = ? AND b = ?`: becomes `DELETE FROM t WHERE (a, b) IN (VALUES (?, ?), …)`,
//!   which deletes the union of what each would. With an expected count only when the
//!   statements are [`Write::keyed`]: each tuple then matches at most one row, so the merged
//!   count equals the sum of the expected counts exactly when every one of them holds (a
//!   tuple given twice deletes once, and fails the check as the second statement would).
//! - `UPDATE t SET a = ?, r = r + 1 WHERE k = ? AND v = ?` (each `SET` item a parameter or an
//!   expression without one; each condition a key equality): becomes
//!   `WITH v_ (v_0, …) AS (VALUES (?, …), …) UPDATE t SET a = v_.v_0, r = r + 1 FROM v_ WHERE
//!   k = v_.v_1 AND v = v_.v_2`, each row updated from its own tuple. Checked only when keyed,
//!   as deletes. Only statements with the same parameters NULL merge, and a NULL one is
//!   written `a = NULL`: every column of the `VALUES` list then has a typed value, so
//!   PostgreSQL never has to guess a type for a column of NULLs (it would guess text, which an
//!   instant or number column refuses). A NULL key never matches, so such a statement stays.
//!
//! The caller guarantees that the statements passed to [`coalesce`] may run in any order with
//! respect to each other: the executor passes the k-th effect of every completion in a batch,
//! whose jobs are distinct and whose shared rows are guarded by checked (never merged) writes.

use crate::{SqlValue, Write};

/// At most this many rows per merged statement, and this many parameters (PostgreSQL allows
/// 65,535, SQLite 32,766).
const MAX_ROWS: usize = 512;
const MAX_PARAMS: usize = 20_000;

/// Merges what can be merged; every merged group takes the place of its first statement, so
/// statements that cannot be merged keep their order relative to the groups.
pub fn coalesce(writes: Vec<Write>) -> Vec<Write> {
    enum Slot {
        Single(Write),
        Group(usize),
    }
    struct Group {
        shape: Shape,
        /// The statements merged, in order.
        rows: Vec<Write>,
    }
    let mut slots = Vec::with_capacity(writes.len());
    let mut groups: Vec<Group> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for w in writes {
        let Some(shape) = Shape::of(&w) else {
            slots.push(Slot::Single(w));
            continue;
        };
        // Same text and same promise; a keyed statement with a check never joins unkeyed ones.
        // Updates also need the same NULL parameters (see the module docs).
        let nulls: String = match shape {
            Shape::Update { .. } => w.binds.iter().map(|b| if b.is_null() { 'n' } else { 'v' }).collect(),
            _ => String::new(),
        };
        let key = format!("{}{nulls}{}", u8::from(w.keyed && w.expect.is_some()), w.sql);
        match index.get(&key) {
            Some(&g) => groups[g].rows.push(w),
            None => {
                index.insert(key, groups.len());
                slots.push(Slot::Group(groups.len()));
                groups.push(Group { shape, rows: vec![w] });
            }
        }
    }
    let mut groups: Vec<Option<Group>> = groups.into_iter().map(Some).collect();
    let mut out = Vec::new();
    for slot in slots {
        match slot {
            Slot::Single(w) => out.push(w),
            Slot::Group(g) => {
                let Group { shape, mut rows } = groups[g].take().expect("each group has one slot");
                if rows.len() == 1 {
                    // Alone: the statement as it was (its text keeps its prepared statement).
                    out.append(&mut rows);
                    continue;
                }
                if let Shape::Update { .. } = shape {
                    // A NULL `SET` parameter is written into the text instead (see `Shape::sql`).
                    for r in &mut rows {
                        r.binds.retain(|b| !b.is_null());
                    }
                }
                let per = rows[0].binds.len().max(1);
                // A power of two, so that every padded size below fits too.
                let chunk = 1 << (MAX_PARAMS / per).clamp(1, MAX_ROWS).ilog2();
                for part in rows.chunks_mut(chunk) {
                    let expect = part.iter().map(|r| r.expect).sum::<Option<u64>>();
                    let (keyed, commutes) = (part.iter().all(|r| r.keyed), part.iter().all(|r| r.commutes));
                    let relaxed = part.iter().all(|r| r.relaxed);
                    let mut binds: Vec<SqlValue> = part.iter_mut().flat_map(|r| std::mem::take(&mut r.binds)).collect();
                    let mut n = part.len();
                    if shape.pads() {
                        let last = binds[binds.len() - per..].to_vec();
                        while n < n.next_power_of_two() {
                            binds.extend(last.iter().cloned());
                            n += 1;
                        }
                    }
                    out.push(Write { sql: shape.sql(n), binds, expect, keyed, commutes, relaxed });
                }
            }
        }
    }
    out
}

/// Whether `w`'s text depends on how many statements were merged into it: a merged insert's
/// does (one tuple per row). Merged deletes and updates are padded to a power of two rows, so
/// their texts are few: worth keeping prepared (PostgreSQL then plans each once per session).
pub fn varies_with_rows(w: &Write) -> bool {
    w.sql.trim_start().starts_with("INSERT INTO ") && w.sql.contains("), (")
}

/// One item of an update's `SET` list.
enum SetItem {
    /// `column = ?`, and whether that parameter is NULL in the group's statements.
    Param { column: String, null: bool },
    /// `column = expression`, the expression without parameters (`REV_ = REV_ + 1`), as written.
    Fixed(String),
}

/// A mergeable statement: its fixed head and the part repeated per row.
enum Shape {
    /// `table` is the updated table, `keys` the equality-tested columns, in bind order after the
    /// `SET` parameters.
    Update { table: String, set: Vec<SetItem>, keys: Vec<String> },
    /// `head` is `INSERT INTO t (cols) VALUES`, `row` the parenthesised tuple.
    Insert { head: String, row: String },
    /// `head` is `DELETE FROM t WHERE`, `columns` the equality-tested columns in bind order.
    Delete { head: String, columns: Vec<String> },
}

impl Shape {
    fn of(w: &Write) -> Option<Shape> {
        let sql = w.sql.trim();
        if sql.starts_with("INSERT INTO ") {
            let at = sql.find(" VALUES (")?;
            let (head, row) = (&sql[..at + 7], sql[at + 8..].trim());
            let upper = row.to_ascii_uppercase();
            // The tuple must be the whole rest of the statement, and every placeholder in it.
            let plain = row.ends_with(')')
                && balanced(row)
                && !upper.contains(" ON CONFLICT")
                && !upper.contains(" RETURNING")
                && !upper.contains("SELECT ")
                && !head.contains('?')
                && row.matches('?').count() == w.binds.len();
            return plain.then(|| Shape::Insert { head: head.to_string(), row: row.to_string() });
        }
        if w.expect.is_some() && !w.keyed {
            return None;
        }
        if sql.starts_with("DELETE FROM ") {
            let at = sql.find(" WHERE ")?;
            let (head, cond) = (&sql[..at + 6], &sql[at + 7..]);
            let columns = key_columns(cond).filter(|c| c.len() == w.binds.len() && !head.contains('?'))?;
            return Some(Shape::Delete { head: head.to_string(), columns });
        }
        if let Some(rest) = sql.strip_prefix("UPDATE ") {
            let (table, rest) = rest.split_once(" SET ")?;
            let (set, cond) = rest.split_once(" WHERE ")?;
            let keys = key_columns(cond)?;
            let mut params = 0;
            let set: Option<Vec<SetItem>> = split_top_level(set)
                .map(|item| {
                    let (col, rhs) = item.split_once('=')?;
                    let (col, rhs) = (col.trim(), rhs.trim());
                    if !ident(col) || !ident(table) {
                        return None;
                    }
                    if rhs == "?" {
                        params += 1;
                        let null = w.binds.get(params - 1)?.is_null();
                        return Some(SetItem::Param { column: col.to_string(), null });
                    }
                    // An expression of the row's own columns only (no string, no parameter).
                    let plain = !rhs.contains(['?', '\'', '(', ';']);
                    plain.then(|| SetItem::Fixed(item.trim().to_string()))
                })
                .collect();
            let set = set?;
            let key_binds = w.binds.get(params..)?;
            let fits = key_binds.len() == keys.len() && !key_binds.iter().any(SqlValue::is_null);
            return fits.then(|| Shape::Update { table: table.to_string(), set, keys });
        }
        None
    }

    /// Whether a merged statement is padded to a power of two rows by repeating its last tuple
    /// (so that its text is one of a few): a delete removes a row once however often its key
    /// is listed, and an update joins a row to one of its equal tuples, so the rows affected
    /// stay the same. Inserts cannot repeat a row.
    fn pads(&self) -> bool {
        !matches!(self, Shape::Insert { .. })
    }

    fn sql(&self, rows: usize) -> String {
        match self {
            Shape::Update { table, set, keys } => {
                let mut n = 0;
                let mut next = || {
                    n += 1;
                    format!("v_.v_{}", n - 1)
                };
                let set: Vec<String> = set
                    .iter()
                    .map(|item| match item {
                        SetItem::Param { column, null: true } => format!("{column} = NULL"),
                        SetItem::Param { column, null: false } => format!("{column} = {}", next()),
                        SetItem::Fixed(expr) => expr.clone(),
                    })
                    .collect();
                let conds: Vec<String> = keys.iter().map(|k| format!("{table}.{k} = {}", next())).collect();
                let names: Vec<String> = (0..n).map(|i| format!("v_{i}")).collect();
                let tuple = format!("({})", vec!["?"; n].join(", "));
                format!(
                    "WITH v_ ({}) AS (VALUES {}) UPDATE {table} SET {} FROM v_ WHERE {}",
                    names.join(", "),
                    vec![tuple.as_str(); rows].join(", "),
                    set.join(", "),
                    conds.join(" AND ")
                )
            }
            Shape::Insert { head, row } => format!("{head} {}", vec![row.as_str(); rows].join(", ")),
            Shape::Delete { head, columns } if columns.len() == 1 => {
                format!("{head} {} IN ({})", columns[0], vec!["?"; rows].join(", "))
            }
            // `IN (VALUES …)`, not `IN ((…), (…))`: PostgreSQL plans the latter as a chain of
            // ORs (a 200-row delete took a second), the former as a join on the key's index.
            Shape::Delete { head, columns } => {
                let tuple = format!("({})", vec!["?"; columns.len()].join(", "));
                format!("{head} ({}) IN (VALUES {})", columns.join(", "), vec![tuple.as_str(); rows].join(", "))
            }
        }
    }
}

/// The columns of `a = ? AND b = ?`, or `None` for any other condition.
fn key_columns(cond: &str) -> Option<Vec<String>> {
    cond.split(" AND ")
        .map(|c| {
            let (col, rest) = c.split_once('=')?;
            let col = col.trim();
            (ident(col) && rest.trim() == "?").then(|| col.to_string())
        })
        .collect()
}

fn ident(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// `s` split at its commas outside parentheses.
fn split_top_level(s: &str) -> impl Iterator<Item = &str> {
    let mut depth = 0i32;
    let mut start = 0;
    let mut parts = Vec::new();
    for (i, ch) in s.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts.into_iter()
}

/// Whether the parentheses of `s` close in order and the first one closes last.
fn balanced(s: &str) -> bool {
    let mut depth = 0i32;
    let mut in_str = false;
    for (i, ch) in s.char_indices() {
        match ch {
            '\'' => in_str = !in_str,
            '(' if !in_str => depth += 1,
            ')' if !in_str => {
                depth -= 1;
                if depth == 0 && i + 1 != s.len() {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0 && !in_str
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SqlValue;

    fn t(s: &str) -> SqlValue {
        SqlValue::Text(s.into())
    }

    #[test]
    fn inserts_of_one_text_merge_in_place_of_the_first() {
        let ins = |v: &str| Write::new("INSERT INTO A (X, Y) VALUES (?, 'k')", vec![t(v)]).expect(1);
        let other = Write::new("UPDATE B SET X = ? WHERE ID_ = ?", vec![t("1"), t("2")]).expect(1);
        let out = coalesce(vec![ins("a"), other.clone(), ins("b"), ins("c")]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].sql, "INSERT INTO A (X, Y) VALUES (?, 'k'), (?, 'k'), (?, 'k')");
        assert_eq!(out[0].binds, vec![t("a"), t("b"), t("c")]);
        assert_eq!(out[0].expect, Some(3));
        assert_eq!(out[1], other);
    }

    #[test]
    fn key_deletes_without_a_checked_count_merge_into_an_in_list() {
        let del = |a: &str, b: &str| Write::new("DELETE FROM F WHERE S = ? AND E = ?", vec![t(a), t(b)]);
        let out = coalesce(vec![del("s", "1"), del("s", "2")]);
        assert_eq!(
            out,
            vec![Write::new(
                "DELETE FROM F WHERE (S, E) IN (VALUES (?, ?), (?, ?))",
                vec![t("s"), t("1"), t("s"), t("2")]
            )]
        );
        let one = |id: &str| Write::new("DELETE FROM G WHERE ID_ = ?", vec![t(id)]);
        assert_eq!(coalesce(vec![one("1"), one("2")])[0].sql, "DELETE FROM G WHERE ID_ IN (?, ?)");
        // Checked and keyed: merged, the check is the sum; unkeyed checked ones stay apart.
        let cas = |id: &str| Write::new("DELETE FROM G WHERE ID_ = ? AND V = ?", vec![t(id), t("7")]).expect(1);
        let out = coalesce(vec![cas("1").keyed(), cas("2").keyed(), cas("3")]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].sql, "DELETE FROM G WHERE (ID_, V) IN (VALUES (?, ?), (?, ?))");
        assert_eq!((out[0].expect, out[0].keyed), (Some(2), true));
        assert_eq!(out[1], cas("3"));
    }

    #[test]
    fn updates_by_key_merge_into_one_update_from_a_values_list() {
        let upd = |id: &str, end: Option<&str>| {
            Write::new(
                "UPDATE H SET END_ = ?, REASON_ = ?, REV_ = REV_ + 1 WHERE ID_ = ?",
                vec![t("2026"), end.map_or(SqlValue::Null, t), t(id)],
            )
        };
        let out = coalesce(vec![upd("1", None), upd("2", Some("x")), upd("3", None)]);
        // The two with REASON_ NULL merge, writing it as NULL; the other stays as it was.
        assert_eq!(out.len(), 2);
        assert_eq!(
            out[0].sql,
            "WITH v_ (v_0, v_1) AS (VALUES (?, ?), (?, ?)) UPDATE H SET END_ = v_.v_0, REASON_ = NULL, \
             REV_ = REV_ + 1 FROM v_ WHERE H.ID_ = v_.v_1"
        );
        assert_eq!(out[0].binds, vec![t("2026"), t("1"), t("2026"), t("3")]);
        assert_eq!(out[1], upd("2", Some("x")));
        // Checked: merged when keyed (the check is the sum), never when not.
        let cas = |id: &str| {
            Write::new("UPDATE G SET A_ = ? WHERE ID_ = ? AND REV_ = ?", vec![t("a"), t(id), t("1")]).expect(1)
        };
        let out = coalesce(vec![cas("1").keyed(), cas("2").keyed()]);
        assert_eq!(out.len(), 1);
        assert_eq!(
            out[0].sql,
            "WITH v_ (v_0, v_1, v_2) AS (VALUES (?, ?, ?), (?, ?, ?)) UPDATE G SET A_ = v_.v_0 FROM v_ WHERE G.ID_ = v_.v_1 AND G.REV_ = v_.v_2"
        );
        assert_eq!(out[0].expect, Some(2));
        assert_eq!(coalesce(vec![cas("1"), cas("2")]), vec![cas("1"), cas("2")]);
    }

    #[test]
    fn what_is_not_a_plain_single_row_statement_stays_as_it_is() {
        let keep = vec![
            // A checked delete: the optimistic lock needs each statement's own count.
            Write::new("DELETE FROM E WHERE ID_ = ? AND REV_ = ?", vec![t("1"), t("2")]).expect(1),
            Write::new("DELETE FROM E WHERE ID_ = ? AND REV_ = ?", vec![t("1"), t("2")]).expect(1),
            Write::new("INSERT INTO A (X) VALUES (?) ON CONFLICT DO NOTHING", vec![t("1")]),
            Write::new("INSERT INTO A (X) VALUES (?) ON CONFLICT DO NOTHING", vec![t("2")]),
            Write::new("INSERT INTO A (X) SELECT ? FROM B WHERE Y = ?", vec![t("1"), t("2")]),
            Write::new("INSERT INTO A (X) SELECT ? FROM B WHERE Y = ?", vec![t("1"), t("2")]),
            Write::new("DELETE FROM F WHERE S = ? AND E <> ?", vec![t("1"), t("2")]),
            Write::new("DELETE FROM F WHERE S = ? AND E <> ?", vec![t("1"), t("2")]),
            Write::new("DELETE FROM F WHERE S = ? OR E = ?", vec![t("1"), t("2")]),
            Write::new("DELETE FROM F WHERE S = ? OR E = ?", vec![t("1"), t("2")]),
            // A NULL key, an expression with a parameter or a function, a condition not a key.
            Write::new("UPDATE H SET A_ = ? WHERE ID_ = ?", vec![t("1"), SqlValue::Null]),
            Write::new("UPDATE H SET A_ = ? WHERE ID_ = ?", vec![t("2"), SqlValue::Null]),
            Write::new("UPDATE H SET A_ = A_ + ? WHERE ID_ = ?", vec![t("1"), t("2")]),
            Write::new("UPDATE H SET A_ = A_ + ? WHERE ID_ = ?", vec![t("1"), t("2")]),
            Write::new("UPDATE H SET A_ = lower(B_) WHERE ID_ = ?", vec![t("1")]),
            Write::new("UPDATE H SET A_ = lower(B_) WHERE ID_ = ?", vec![t("1")]),
            Write::new("UPDATE H SET A_ = ? WHERE ID_ < ?", vec![t("1"), t("2")]),
            Write::new("UPDATE H SET A_ = ? WHERE ID_ < ?", vec![t("1"), t("2")]),
        ];
        assert_eq!(coalesce(keep.clone()), keep);
    }

    #[test]
    fn large_groups_are_split_by_rows_and_parameters() {
        let ins = |i: i64| Write::new("INSERT INTO A (X) VALUES (?)", vec![SqlValue::Int(i)]).expect(1);
        let out = coalesce((0..1_201).map(ins).collect());
        assert_eq!(out.iter().map(|w| w.binds.len()).collect::<Vec<_>>(), vec![512, 512, 177]);
        assert_eq!(out.iter().map(|w| w.expect).collect::<Vec<_>>(), vec![Some(512), Some(512), Some(177)]);
        // 40 parameters a row: 500 rows fit the parameter limit, so chunks of 256 (a power of two).
        let wide = |i: i64| {
            Write::new(
                format!(
                    "DELETE FROM A WHERE {}",
                    (0..40).map(|c| format!("C{c} = ?")).collect::<Vec<_>>().join(" AND ")
                ),
                vec![SqlValue::Int(i); 40],
            )
        };
        let out = coalesce((0..600).map(wide).collect());
        assert_eq!(out.iter().map(|w| w.binds.len() / 40).collect::<Vec<_>>(), vec![256, 256, 128]);
    }

    #[test]
    fn merged_deletes_and_updates_are_padded_to_a_power_of_two_rows_by_repeating_the_last() {
        let del = |id: &str| Write::new("DELETE FROM G WHERE ID_ = ? AND V = ?", vec![t(id), t("7")]).keyed().expect(1);
        let out = coalesce(vec![del("1"), del("2"), del("3")]);
        assert_eq!(out[0].sql, "DELETE FROM G WHERE (ID_, V) IN (VALUES (?, ?), (?, ?), (?, ?), (?, ?))");
        assert_eq!(out[0].binds, vec![t("1"), t("7"), t("2"), t("7"), t("3"), t("7"), t("3"), t("7")]);
        assert_eq!(out[0].expect, Some(3), "the check counts the statements, not the padding");
        let upd = |id: &str| Write::new("UPDATE H SET A = ?, REV_ = REV_ + 1 WHERE ID_ = ?", vec![t("a"), t(id)]);
        let out = coalesce((0..5).map(|i| upd(&i.to_string())).collect());
        assert_eq!(out[0].binds.len(), 16, "8 tuples of 2");
        assert_eq!(out[0].binds[14..], [t("a"), t("4")]);
        assert!(!varies_with_rows(&out[0]));
        let ins = |v: &str| Write::new("INSERT INTO A (X) VALUES (?)", vec![t(v)]);
        let out = coalesce(vec![ins("a"), ins("b"), ins("c")]);
        assert_eq!(out[0].sql, "INSERT INTO A (X) VALUES (?), (?), (?)", "an insert cannot repeat a row");
        assert!(varies_with_rows(&out[0]) && !varies_with_rows(&ins("a")));
    }
}
