//! `NOW()` in an operator's SQL, as the seeds write it (seed 004 §5, for MySQL) and as it runs
//! on PostgreSQL.
//!
//! SQLite has no `NOW()`, and sqlx 0.9 offers no safe way to register a function on its
//! connections (it would take `sqlite3_create_function` through FFI, and the workspace forbids
//! `unsafe`). Even a registered function could not do what the seed needs: it uses `NOW()` as a
//! number in two incompatible ways, `NOW() - LAST_CHECKIN_TIME AS HEARTBEAT_AGE_SEC` (seconds
//! since an epoch-millisecond instant) and `NOW() * 1000 - NEXT_FIRE_TIME AS DELAY_MS` (epoch
//! milliseconds). PostgreSQL gives exactly these two forms their meaning through two operators
//! (`store-postgres/migrations/0004_scheduler.sql`); here the operator's statement text is
//! translated the same way before it runs:
//!
//! | written | means | SQLite |
//! |---|---|---|
//! | `NOW() - x` | seconds since the epoch-ms instant `x`, to the ms | `round((now_ms - x) / 1000.0, 3)` |
//! | `NOW() * n` | epoch seconds × `n` (`NOW() * 1000` = epoch ms) | `(now_ms * n / 1000)` |
//! | `NOW()` elsewhere | the database's now, comparable with the ACT_* times | the stored time text |
//!
//! `x` is one operand (a column, a number or a parenthesised expression), as the seed writes it.
//! String literals, quoted identifiers and comments are left alone. Every `NOW()` of one
//! statement is the same instant (SQLite fixes `'now'` per statement).

/// The database clock in epoch milliseconds.
const NOW_MS: &str = "CAST(round((julianday('now') - 2440587.5) * 86400000) AS INTEGER)";
/// The database clock in the stored time format (see `time.rs`).
const NOW_TEXT: &str = "strftime('%Y-%m-%d %H:%M:%f', 'now')";

/// `sql` with every `NOW()` translated (see the module docs); unchanged when it has none.
pub(crate) fn translate(sql: &str) -> std::borrow::Cow<'_, str> {
    if !sql.to_ascii_lowercase().contains("now") {
        return sql.into();
    }
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 64);
    let mut i = 0;
    let mut changed = false;
    while i < b.len() {
        if let Some(end) = skip_quoted(b, i) {
            out.push_str(&sql[i..end]);
            i = end;
        } else if let Some(after) = now_call(b, i) {
            changed = true;
            let rest = skip_space(b, after);
            match b.get(rest) {
                Some(b'-') => {
                    let start = skip_space(b, rest + 1);
                    let end = operand(b, start);
                    out.push_str(&format!("round(({NOW_MS} - {}) / 1000.0, 3)", &sql[start..end]));
                    i = end;
                }
                Some(b'*') => {
                    let start = skip_space(b, rest + 1);
                    let end = operand(b, start);
                    out.push_str(&format!("({NOW_MS} * {} / 1000)", &sql[start..end]));
                    i = end;
                }
                _ => {
                    out.push_str(NOW_TEXT);
                    i = after;
                }
            }
        } else {
            let c = sql[i..].chars().next().expect("i is on a char boundary");
            out.push(c);
            i += c.len_utf8();
        }
    }
    if changed { out.into() } else { sql.into() }
}

/// The end of the string literal, quoted identifier or comment starting at `i`, if one does.
fn skip_quoted(b: &[u8], i: usize) -> Option<usize> {
    match b[i] {
        q @ (b'\'' | b'"' | b'`') => {
            let mut j = i + 1;
            while j < b.len() {
                if b[j] == q {
                    // A doubled quote is an escaped one.
                    if b.get(j + 1) == Some(&q) {
                        j += 2;
                        continue;
                    }
                    return Some(j + 1);
                }
                j += 1;
            }
            Some(b.len())
        }
        b'-' if b.get(i + 1) == Some(&b'-') => Some(b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p)),
        b'/' if b.get(i + 1) == Some(&b'*') => {
            Some(b[i + 2..].windows(2).position(|w| w == b"*/").map_or(b.len(), |p| i + 2 + p + 2))
        }
        _ => None,
    }
}

/// The index after `NOW ( )` when a call of NOW (any case, not part of a longer name) starts at `i`.
fn now_call(b: &[u8], i: usize) -> Option<usize> {
    let word = b.get(i..i + 3)?;
    if !word.eq_ignore_ascii_case(b"now") || (i > 0 && is_name(b[i - 1])) {
        return None;
    }
    let open = skip_space(b, i + 3);
    if b.get(open) != Some(&b'(') {
        return None;
    }
    let close = skip_space(b, open + 1);
    (b.get(close) == Some(&b')')).then_some(close + 1)
}

/// The end of one operand starting at `i`: a parenthesised expression, or a run of name,
/// number and `.` characters (`LAST_CHECKIN_TIME`, `t.ENTRY_TIME`, `1000`).
fn operand(b: &[u8], i: usize) -> usize {
    if b.get(i) == Some(&b'(') {
        let mut depth = 0;
        let mut j = i;
        while j < b.len() {
            if let Some(end) = skip_quoted(b, j) {
                j = end;
                continue;
            }
            match b[j] {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        return j + 1;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        return b.len();
    }
    let mut j = i;
    while j < b.len() && (is_name(b[j]) || b[j] == b'.') {
        j += 1;
    }
    j
}

fn is_name(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

fn skip_space(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::translate;

    #[test]
    fn statements_without_now_are_untouched() {
        for sql in ["SELECT 1", "SELECT KNOWN_ FROM t", "SELECT 'NOW()' AS x", "SELECT 1 -- NOW()", "SELECT \"NOW()\""]
        {
            assert_eq!(translate(sql), sql);
        }
    }

    #[test]
    fn the_seeds_arithmetic_gets_the_postgres_operators_meaning() {
        let hb = translate("SELECT NOW() - LAST_CHECKIN_TIME AS AGE FROM s");
        assert!(
            hb.starts_with("SELECT round((CAST(") && hb.ends_with(" - LAST_CHECKIN_TIME) / 1000.0, 3) AS AGE FROM s"),
            "{hb}"
        );
        let delay = translate("SELECT (now() * 1000 - NEXT_FIRE_TIME) AS D");
        assert!(
            delay.starts_with("SELECT ((CAST(") && delay.ends_with(" * 1000 / 1000) - NEXT_FIRE_TIME) AS D"),
            "{delay}"
        );
        let bare = translate("SELECT 1 WHERE DUEDATE_ < NOW ( ) AND x = 'now()'");
        assert_eq!(bare, "SELECT 1 WHERE DUEDATE_ < strftime('%Y-%m-%d %H:%M:%f', 'now') AND x = 'now()'");
        let nested = translate("SELECT NOW() - (a + (b * 2)) FROM t");
        assert!(nested.contains(" - (a + (b * 2))) / 1000.0, 3) FROM t"), "{nested}");
    }

    #[test]
    fn odd_text_never_panics() {
        for sql in ["NOW(", "now()", "NOW() -", "NOW() * ", "'unterminated NOW()", "/* NOW()", "é NOW() ü", "SNOW()"]
        {
            let _ = translate(sql);
        }
        assert_eq!(translate("SNOW()"), "SNOW()");
    }
}
