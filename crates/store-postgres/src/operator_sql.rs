//! Operators' SQL (the seeds' diagnostic queries, test fixtures, repair tooling) with JDBC-style
//! `?` placeholders, run verbatim against our schema (SPEC J11). The engine itself never uses
//! this; it is the one place where SQL text arrives at run time.

use crate::error::DbResultExt;
use crate::fuse::Step;
use jiff_sqlx::ToSqlx;
use kairos_store::{Error, ErrorKind, Result, SqlValue};
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::postgres::types::Oid;
use sqlx::postgres::{PgArgumentBuffer, PgArguments, PgRow, PgTypeInfo};
use sqlx::query::Query;
use sqlx::{Acquire, AssertSqlSafe, Column, Executor, PgPool, Postgres, Row, SqlSafeStr, TypeInfo};

/// How a result column is read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Bool,
    Text,
    Timestamptz,
    Timestamp,
    Bytes,
    /// Any other type: the query is wrapped to cast it (`numeric` to float8, the rest to text).
    Cast(&'static str),
}

fn read_of(type_name: &str) -> Read {
    match type_name.to_ascii_lowercase().as_str() {
        "int2" => Read::Int2,
        "int4" => Read::Int4,
        "int8" => Read::Int8,
        "float4" => Read::Float4,
        "float8" => Read::Float8,
        "numeric" => Read::Cast("float8"),
        "bool" => Read::Bool,
        "text" | "varchar" | "bpchar" | "char" | "name" | "unknown" => Read::Text,
        "timestamptz" => Read::Timestamptz,
        "timestamp" => Read::Timestamp,
        "bytea" => Read::Bytes,
        _ => Read::Cast("text"),
    }
}

/// Rewrites `?` placeholders to `$1..$n`, leaving those inside string literals, quoted
/// identifiers, dollar-quoted strings and comments alone. Returns the SQL and the count.
///
/// Runs on every statement of the engine, so it scans bytes and copies whole spans between the
/// few characters that matter (all ASCII, so every cut is on a character boundary).
pub(crate) fn number_placeholders(sql: &str) -> (String, usize) {
    use std::fmt::Write as _;
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 16);
    let (mut n, mut i, mut copied) = (0, 0, 0);
    while i < b.len() {
        let next = b.get(i + 1).copied();
        i = match b[i] {
            // E'...' strings allow backslash escapes.
            b'\'' => skip_quoted(b, i, b'\'', i > 0 && matches!(b[i - 1], b'e' | b'E')),
            b'"' => skip_quoted(b, i, b'"', false),
            b'-' if next == Some(b'-') => b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p + 1),
            b'/' if next == Some(b'*') => skip_block_comment(b, i),
            b'$' if next.is_some_and(|c| !c.is_ascii_digit()) => skip_dollar_quoted(b, i),
            b'?' => {
                n += 1;
                out.push_str(&sql[copied..i]);
                let _ = write!(out, "${n}");
                copied = i + 1;
                i + 1
            }
            _ => i + 1,
        };
    }
    out.push_str(&sql[copied..]);
    (out, n)
}

fn skip_quoted(b: &[u8], start: usize, quote: u8, escapes: bool) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        if escapes && b[i] == b'\\' {
            i += 2;
        } else if b[i] == quote {
            if b.get(i + 1) == Some(&quote) {
                i += 2; // a doubled quote stays inside
            } else {
                return i + 1;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

fn skip_block_comment(b: &[u8], start: usize) -> usize {
    let (mut depth, mut i) = (0, start);
    while i + 1 < b.len() {
        match (b[i], b[i + 1]) {
            (b'/', b'*') => (depth, i) = (depth + 1, i + 2),
            (b'*', b'/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    b.len()
}

/// `$tag$ ... $tag$`; a `$` that does not open a tag is copied as is. Bytes of non-ASCII
/// characters count as tag characters (PostgreSQL allows letters of any script there).
fn skip_dollar_quoted(b: &[u8], start: usize) -> usize {
    let tag_end = b[start + 1..].iter().position(|&c| !(c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80));
    let Some(len) = tag_end else { return start + 1 };
    if b[start + 1 + len] != b'$' {
        return start + 1;
    }
    let tag = &b[start..start + len + 2];
    let body = start + tag.len();
    (body..b.len()).find(|&i| b[i..].starts_with(tag)).map_or(b.len(), |i| i + tag.len())
}

/// A NULL whose type PostgreSQL infers from where it is used (parameter type OID 0), since an
/// operator's `?` may stand for any column type.
struct UntypedNull;

impl sqlx::Type<Postgres> for UntypedNull {
    fn type_info() -> PgTypeInfo {
        PgTypeInfo::with_oid(Oid(0))
    }
}

impl sqlx::Encode<'_, Postgres> for UntypedNull {
    fn encode_by_ref(&self, _buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        Ok(IsNull::Yes)
    }
}

fn bind_all<'q>(mut q: Query<'q, Postgres, PgArguments>, binds: &'q [SqlValue]) -> Query<'q, Postgres, PgArguments> {
    for v in binds {
        q = match v {
            SqlValue::Null => q.bind(UntypedNull),
            SqlValue::Bool(b) => q.bind(*b),
            SqlValue::Int(i) => q.bind(*i),
            SqlValue::Float(f) => q.bind(*f),
            SqlValue::Text(s) => q.bind(s.as_str()),
            SqlValue::Timestamp(t) => q.bind(t.to_sqlx()),
            SqlValue::Bytes(b) => q.bind(b.as_slice()),
        };
    }
    q
}

fn prepare(sql: &str, binds: &[SqlValue]) -> Result<String> {
    let (sql, placeholders) = number_placeholders(sql.trim().trim_end_matches(';'));
    if placeholders != binds.len() {
        return Err(Error::new(
            ErrorKind::Invalid,
            format!("the statement has {placeholders} `?` placeholders but {} values were given", binds.len()),
        ));
    }
    Ok(sql)
}

pub(crate) async fn query(pool: &PgPool, sql: &str, binds: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
    let sql = prepare(sql, binds)?;
    let mut conn = pool.acquire().await.db()?;
    let described = (&mut *conn).describe(AssertSqlSafe(sql.clone()).into_sql_str()).await.db()?;
    let mut reads: Vec<Read> = described.columns().iter().map(|c| read_of(c.type_info().name())).collect();
    let sql = if reads.iter().any(|r| matches!(r, Read::Cast(_))) {
        // Cast what we cannot decode, keeping the operator's statement intact inside a CTE
        // (which also accepts INSERT/UPDATE/DELETE ... RETURNING).
        let names: Vec<String> = (1..=reads.len()).map(|i| format!("c{i}")).collect();
        let select: Vec<String> = reads
            .iter()
            .zip(&names)
            .map(|(r, n)| match r {
                Read::Cast(ty) => format!("{n}::{ty}"),
                _ => n.clone(),
            })
            .collect();
        for r in reads.iter_mut() {
            if let Read::Cast(ty) = r {
                *r = if *ty == "float8" { Read::Float8 } else { Read::Text };
            }
        }
        format!(
            "WITH kairos_operator_query({}) AS ({sql}) SELECT {} FROM kairos_operator_query",
            names.join(", "),
            select.join(", ")
        )
    } else {
        sql
    };
    let q = bind_all(sqlx::query(AssertSqlSafe(sql)).persistent(false), binds);
    let rows = q.fetch_all(&mut *conn).await.db()?;
    rows.iter().map(|row| decode_row(row, &reads)).collect()
}

fn decode_row(row: &PgRow, reads: &[Read]) -> Result<Vec<SqlValue>> {
    (0..row.columns().len())
        .map(|i| {
            let read = reads.get(i).copied().unwrap_or_else(|| read_of(row.column(i).type_info().name()));
            decode(row, i, read).db()
        })
        .collect()
}

fn decode(row: &PgRow, i: usize, read: Read) -> Result<SqlValue, sqlx::Error> {
    fn opt<T>(v: Option<T>, f: impl FnOnce(T) -> SqlValue) -> SqlValue {
        v.map_or(SqlValue::Null, f)
    }
    Ok(match read {
        Read::Int2 => opt(row.try_get::<Option<i16>, _>(i)?, |v| SqlValue::Int(v.into())),
        Read::Int4 => opt(row.try_get::<Option<i32>, _>(i)?, |v| SqlValue::Int(v.into())),
        Read::Int8 => opt(row.try_get::<Option<i64>, _>(i)?, SqlValue::Int),
        Read::Float4 => opt(row.try_get::<Option<f32>, _>(i)?, |v| SqlValue::Float(v.into())),
        Read::Float8 => opt(row.try_get::<Option<f64>, _>(i)?, SqlValue::Float),
        Read::Bool => opt(row.try_get::<Option<bool>, _>(i)?, SqlValue::Bool),
        Read::Text | Read::Cast(_) => opt(row.try_get_unchecked::<Option<String>, _>(i)?, SqlValue::Text),
        Read::Timestamptz => {
            opt(row.try_get::<Option<jiff_sqlx::Timestamp>, _>(i)?, |t| SqlValue::Timestamp(t.to_jiff()))
        }
        Read::Timestamp => opt(row.try_get::<Option<jiff_sqlx::DateTime>, _>(i)?, |t| {
            // A timestamp without time zone is read as UTC (kairos's columns are all with).
            SqlValue::Timestamp(
                t.to_jiff().to_zoned(jiff::tz::TimeZone::UTC).map(|z| z.timestamp()).unwrap_or_default(),
            )
        }),
        Read::Bytes => opt(row.try_get::<Option<Vec<u8>>, _>(i)?, SqlValue::Bytes),
    })
}

/// Runs a handler's staged write inside the completion's transaction (see `JobEffect`).
/// Prepared and cached per connection when `cached`: the process engine's effects are a small
/// set of statements run for every job.
pub(crate) async fn execute_effect(
    conn: &mut sqlx::PgConnection,
    sql: &str,
    binds: &[SqlValue],
    cached: bool,
) -> Result<u64> {
    let sql = engine_sql(sql, binds)?;
    let q = bind_all(sqlx::query(AssertSqlSafe(sql)).persistent(cached), binds);
    Ok(q.execute(&mut *conn).await.db()?.rows_affected())
}

/// A cached statement's parameter types are fixed when it is first prepared, and a NULL bound
/// then leaves PostgreSQL to infer the type (an INTEGER column's NULL makes `int4`, into which
/// a later `i64` cannot be sent). So statements are cached per pattern of NULL parameters: the
/// pattern is appended to the text as a comment, giving each its own prepared statement.
fn engine_sql(sql: &str, binds: &[SqlValue]) -> Result<String> {
    let sql = prepare(sql, binds)?;
    if !binds.iter().any(SqlValue::is_null) {
        return Ok(sql);
    }
    let pattern: String = binds.iter().map(|b| if b.is_null() { 'n' } else { 'v' }).collect();
    Ok(format!("{sql} /* {pattern} */"))
}

/// The engine's own reads: prepared statements cached per connection, each column decoded by
/// the type the row reports (the engine's queries only select plain column types).
pub(crate) async fn engine_read(pool: &PgPool, sql: &str, binds: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
    let sql = engine_sql(sql, binds)?;
    let rows = bind_all(sqlx::query(AssertSqlSafe(sql)), binds).fetch_all(pool).await.db()?;
    rows.iter().map(|row| decode_row(row, &[])).collect()
}

/// [`engine_read`] on a connection the caller holds (inside its transaction).
pub(crate) async fn engine_read_on(
    conn: &mut sqlx::PgConnection,
    sql: &str,
    binds: &[SqlValue],
) -> Result<Vec<Vec<SqlValue>>> {
    let sql = engine_sql(sql, binds)?;
    let rows = bind_all(sqlx::query(AssertSqlSafe(sql)), binds).fetch_all(&mut *conn).await.db()?;
    rows.iter().map(|row| decode_row(row, &[])).collect()
}

/// [`engine_write_all`] inside a transaction the caller holds: in a savepoint, so a list that
/// fails (a conflict, a refused value: PostgreSQL would abort the whole transaction) is rolled
/// back alone and the caller's transaction goes on.
pub(crate) async fn engine_write_all_on(
    conn: &mut sqlx::PgConnection,
    writes: &[kairos_store::Write],
) -> Result<Vec<u64>> {
    let steps = crate::fuse::plan(writes);
    sqlx::raw_sql("SAVEPOINT kairos_write").execute(&mut *conn).await.db()?;
    match run_steps(conn, writes, steps, true).await {
        Ok(affected) => {
            sqlx::raw_sql("RELEASE SAVEPOINT kairos_write").execute(&mut *conn).await.db()?;
            Ok(affected)
        }
        Err(e) => {
            sqlx::raw_sql("ROLLBACK TO SAVEPOINT kairos_write").execute(&mut *conn).await.db()?;
            sqlx::raw_sql("RELEASE SAVEPOINT kairos_write").execute(&mut *conn).await.db()?;
            Err(e)
        }
    }
}

/// The engine's own writes in one transaction, each checked against the rows it must affect.
/// Runs of inserts are fused into one statement each ([`crate::fuse`]); a list that is one
/// statement without a check needs no transaction of its own (the statement is atomic).
/// Statements are prepared and kept per connection when `cached`; a caller whose texts vary
/// with a batch's size says `false`, or they would push the steady statements out of the
/// connection's cache (whose every re-preparation is a new plan).
pub(crate) async fn engine_write_all(pool: &PgPool, writes: &[kairos_store::Write], cached: bool) -> Result<Vec<u64>> {
    let steps = crate::fuse::plan(writes);
    let mut conn = pool.acquire().await.db()?;
    let relaxed = !writes.is_empty() && writes.iter().all(|w| w.relaxed);
    if !relaxed && steps.len() == 1 && writes.iter().all(|w| w.expect.is_none()) {
        return run_steps(&mut conn, writes, steps, cached).await;
    }
    let mut tx = conn.begin().await.db()?;
    if relaxed {
        // Only for this transaction (see `Write::relaxed`): the commit returns once the WAL is
        // written, not flushed.
        sqlx::raw_sql("SET LOCAL synchronous_commit TO OFF").execute(&mut *tx).await.db()?;
    }
    let affected = run_steps(&mut tx, writes, steps, cached).await?;
    tx.commit().await.db()?;
    Ok(affected)
}

/// Runs [`engine_write_all`]'s steps on `conn`, checking every write's row count.
async fn run_steps(
    conn: &mut sqlx::PgConnection,
    writes: &[kairos_store::Write],
    steps: Vec<Step>,
    cached: bool,
) -> Result<Vec<u64>> {
    let mut affected = Vec::with_capacity(writes.len());
    for step in steps {
        let (range, counts) = match step {
            Step::One(i) => {
                let w = &writes[i];
                let sql = engine_sql(&w.sql, &w.binds)?;
                let q = sqlx::query(AssertSqlSafe(sql)).persistent(cached);
                let done = bind_all(q, &w.binds).execute(&mut *conn).await;
                (i..i + 1, done.db().map(|d| vec![d.rows_affected()]))
            }
            Step::Fused { range, sql, binds, rows } => {
                let sql = engine_sql(&sql, &binds)?;
                let done =
                    bind_all(sqlx::query(AssertSqlSafe(sql)).persistent(cached), &binds).execute(&mut *conn).await;
                (range, done.db().map(|_| rows))
            }
        };
        let counts = counts.map_err(|mut e| {
            // Say which statement: the process engine writes many per command.
            let w = &writes[range.start];
            let head: String = w.sql.split_whitespace().take(6).collect::<Vec<_>>().join(" ");
            let which =
                if range.len() == 1 { format!("statement {}", range.start) } else { format!("statements {range:?}") };
            e.message = format!("{} ({which}: {head} …)", e.message);
            e
        })?;
        for (i, n) in range.zip(counts) {
            if let Some(want) = writes[i].expect.filter(|&want| want != n) {
                return Err(kairos_store::write_conflict(i, &writes[i], want, n));
            }
            affected.push(n);
        }
    }
    Ok(affected)
}

pub(crate) async fn execute(pool: &PgPool, sql: &str, binds: &[SqlValue]) -> Result<u64> {
    if binds.is_empty() && !sql.contains('?') {
        // No parameters: the simple protocol, so a fixture may hold several statements.
        let done = sqlx::raw_sql(AssertSqlSafe(sql.to_string())).execute(pool).await.db()?;
        return Ok(done.rows_affected());
    }
    let sql = prepare(sql, binds)?;
    let q = bind_all(sqlx::query(AssertSqlSafe(sql)).persistent(false), binds);
    Ok(q.execute(pool).await.db()?.rows_affected())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn question_marks_become_numbered_parameters_outside_quotes_and_comments() {
        let (sql, n) = number_placeholders(
            "SELECT '?', \"a?\", $$?$$, $t$ ? $t$, E'\\'?' FROM x -- what?\nWHERE a = ? /* ? */ AND b <= ?",
        );
        assert_eq!(n, 2);
        assert_eq!(
            sql,
            "SELECT '?', \"a?\", $$?$$, $t$ ? $t$, E'\\'?' FROM x -- what?\nWHERE a = $1 /* ? */ AND b <= $2"
        );
    }

    #[test]
    fn doubled_quotes_stay_inside_the_literal() {
        let (sql, n) = number_placeholders("SELECT 'it''s ?' , ?");
        assert_eq!((sql.as_str(), n), ("SELECT 'it''s ?' , $1", 1));
    }

    #[test]
    fn text_of_any_script_is_copied_unchanged() {
        let (sql, n) = number_placeholders("SELECT 'é?' AS \"名前?\", $тег$ ? $тег$, ? FROM 表 WHERE a = ? -- 注?");
        assert_eq!(n, 2);
        assert_eq!(sql, "SELECT 'é?' AS \"名前?\", $тег$ ? $тег$, $1 FROM 表 WHERE a = $2 -- 注?");
        // Unterminated quotes and comments run to the end, as PostgreSQL reads them.
        assert_eq!(number_placeholders("SELECT ?, 'a?"), ("SELECT $1, 'a?".to_string(), 1));
        assert_eq!(number_placeholders("SELECT ? /* ?"), ("SELECT $1 /* ?".to_string(), 1));
        assert_eq!(number_placeholders("SELECT $1?"), ("SELECT $1$1".to_string(), 1));
    }
}
