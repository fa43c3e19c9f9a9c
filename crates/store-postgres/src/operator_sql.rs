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
pub(crate) fn number_placeholders(sql: &str) -> (String, usize) {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let end = match c {
            '\'' => {
                // E'...' strings allow backslash escapes.
                let escapes = i > 0 && matches!(chars[i - 1], 'e' | 'E');
                skip_quoted(&chars, i, '\'', escapes)
            }
            '"' => skip_quoted(&chars, i, '"', false),
            '-' if next == Some('-') => chars[i..].iter().position(|&c| c == '\n').map_or(chars.len(), |p| i + p + 1),
            '/' if next == Some('*') => skip_block_comment(&chars, i),
            '$' if next.is_some_and(|c| !c.is_ascii_digit()) => skip_dollar_quoted(&chars, i),
            '?' => {
                n += 1;
                out.push_str(&format!("${n}"));
                i += 1;
                continue;
            }
            _ => i + 1,
        };
        out.extend(&chars[i..end]);
        i = end;
    }
    (out, n)
}

fn skip_quoted(chars: &[char], start: usize, quote: char, escapes: bool) -> usize {
    let mut i = start + 1;
    while i < chars.len() {
        if escapes && chars[i] == '\\' {
            i += 2;
        } else if chars[i] == quote {
            if chars.get(i + 1) == Some(&quote) {
                i += 2; // a doubled quote stays inside
            } else {
                return i + 1;
            }
        } else {
            i += 1;
        }
    }
    chars.len()
}

fn skip_block_comment(chars: &[char], start: usize) -> usize {
    let (mut depth, mut i) = (0, start);
    while i + 1 < chars.len() {
        match (chars[i], chars[i + 1]) {
            ('/', '*') => (depth, i) = (depth + 1, i + 2),
            ('*', '/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    chars.len()
}

/// `$tag$ ... $tag$`; a `$` that does not open a tag is copied as is.
fn skip_dollar_quoted(chars: &[char], start: usize) -> usize {
    let tag_end = chars[start + 1..].iter().position(|c| !(c.is_alphanumeric() || *c == '_'));
    let Some(len) = tag_end else { return start + 1 };
    if chars[start + 1 + len] != '$' {
        return start + 1;
    }
    let tag: Vec<char> = chars[start..start + len + 2].to_vec();
    let body = start + tag.len();
    (body..chars.len()).find(|&i| chars[i..].starts_with(&tag)).map_or(chars.len(), |i| i + tag.len())
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

/// The engine's own writes in one transaction, each checked against the rows it must affect.
/// Runs of inserts are fused into one statement each ([`crate::fuse`]); a list that is one
/// statement without a check needs no transaction of its own (the statement is atomic).
pub(crate) async fn engine_write_all(pool: &PgPool, writes: &[kairos_store::Write]) -> Result<Vec<u64>> {
    let steps = crate::fuse::plan(writes);
    let mut conn = pool.acquire().await.db()?;
    if steps.len() == 1 && writes.iter().all(|w| w.expect.is_none()) {
        return run_steps(&mut conn, writes, steps).await;
    }
    let mut tx = conn.begin().await.db()?;
    let affected = run_steps(&mut tx, writes, steps).await?;
    tx.commit().await.db()?;
    Ok(affected)
}

/// Runs [`engine_write_all`]'s steps on `conn`, checking every write's row count.
async fn run_steps(
    conn: &mut sqlx::PgConnection,
    writes: &[kairos_store::Write],
    steps: Vec<Step>,
) -> Result<Vec<u64>> {
    let mut affected = Vec::with_capacity(writes.len());
    for step in steps {
        let (range, counts) = match step {
            Step::One(i) => {
                let w = &writes[i];
                let sql = engine_sql(&w.sql, &w.binds)?;
                let done = bind_all(sqlx::query(AssertSqlSafe(sql)), &w.binds).execute(&mut *conn).await;
                (i..i + 1, done.db().map(|d| vec![d.rows_affected()]))
            }
            Step::Fused { range, sql, binds } => {
                let sql = engine_sql(&sql, &binds)?;
                let row = bind_all(sqlx::query(AssertSqlSafe(sql)), &binds).fetch_one(&mut *conn).await;
                let counts = row.db().and_then(|row| {
                    (0..range.len()).map(|k| row.try_get::<i64, _>(k).map(|n| n as u64).db()).collect()
                });
                (range, counts)
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
}
