//! Reading rows by column name.
//!
//! [`Sql::read`] answers rows as positional values. A statement of this crate reads through
//! [`Rows::read`] instead, with the names of the columns it selects (in its select order), and
//! its callers ask each [`Row`] for a column by name and type. A value of the wrong type — text
//! in REV_, garbage in DUEDATE_, a NULL where a value is required — is an error of kind
//! [`ErrorKind::Unreadable`] naming the table, the row (its first column) and the column: never
//! `""`, `0` or 1970, which a later write would store over the operator's evidence.
//!
//! [`Sql::read`]: kairos_store::Sql::read

use jiff::Timestamp;
use kairos_store::{Error, ErrorKind, Result, Sql, SqlValue, Unreadable};

/// The rows of one read, with the names of their columns.
#[derive(Debug)]
pub struct Rows {
    table: &'static str,
    columns: &'static [&'static str],
    rows: Vec<Vec<SqlValue>>,
}

impl Rows {
    /// Runs `sql` (which must select exactly `columns`, in that order) and keeps the names with
    /// the rows. `table` names the rows in errors: the table the first column's id belongs to.
    pub async fn read(
        store: &dyn Sql,
        table: &'static str,
        columns: &'static [&'static str],
        sql: &str,
        binds: &[SqlValue],
    ) -> Result<Rows> {
        let rows = store.read(sql, binds).await?;
        Rows::new(table, columns, rows)
    }

    /// Rows read elsewhere, with their names. Fails when a row's width is not the names'.
    pub fn new(table: &'static str, columns: &'static [&'static str], rows: Vec<Vec<SqlValue>>) -> Result<Rows> {
        if let Some(r) = rows.iter().find(|r| r.len() != columns.len()) {
            return Err(Error::new(
                ErrorKind::Other,
                format!(
                    "a read of {table} answered {} columns, expected {} ({})",
                    r.len(),
                    columns.len(),
                    columns.join(", ")
                ),
            ));
        }
        Ok(Rows { table, columns, rows })
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = Row<'_>> {
        self.rows.iter().map(|values| Row { table: self.table, columns: self.columns, values })
    }

    /// The first row, if any.
    pub fn first(&self) -> Option<Row<'_>> {
        self.iter().next()
    }
}

/// One row of [`Rows`]: its values, asked for by column name.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    table: &'static str,
    columns: &'static [&'static str],
    values: &'a [SqlValue],
}

impl<'a> Row<'a> {
    /// The raw value of `column`. A name the statement does not select is a bug of this crate,
    /// reported as [`ErrorKind::Other`] rather than a panic.
    pub fn value(&self, column: &str) -> Result<&'a SqlValue> {
        match self.columns.iter().position(|c| *c == column) {
            Some(i) => Ok(&self.values[i]),
            None => Err(Error::new(
                ErrorKind::Other,
                format!("column {column} is not among those read from {} ({})", self.table, self.columns.join(", ")),
            )),
        }
    }

    /// The row's id as text (its first column), for messages.
    pub fn id(&self) -> String {
        match self.values.first() {
            Some(SqlValue::Text(s)) => s.clone(),
            Some(SqlValue::Int(i)) => i.to_string(),
            Some(v) => raw_text(v).unwrap_or_default(),
            None => String::new(),
        }
    }

    /// The error naming this row, `column` and its stored value.
    pub fn unreadable(&self, column: &str, problem: &str) -> Error {
        let raw = self.value(column).ok().and_then(raw_text);
        Error::unreadable(Unreadable::new(self.table, self.id(), column, raw, problem))
    }

    fn required(&self, column: &str) -> Result<&'a SqlValue> {
        let v = self.value(column)?;
        if v.is_null() { Err(self.unreadable(column, "is NULL where a value is required")) } else { Ok(v) }
    }

    /// Text; NULL or another type is unreadable.
    pub fn text(&self, column: &str) -> Result<String> {
        self.required(column)?.as_str().map(str::to_string).ok_or_else(|| self.unreadable(column, "is not text"))
    }

    /// Text or NULL.
    pub fn opt_text(&self, column: &str) -> Result<Option<String>> {
        match self.value(column)? {
            SqlValue::Null => Ok(None),
            SqlValue::Text(s) => Ok(Some(s.clone())),
            _ => Err(self.unreadable(column, "is not text")),
        }
    }

    /// A whole number (a boolean column counts as 0/1).
    pub fn int(&self, column: &str) -> Result<i64> {
        whole(self.required(column)?).ok_or_else(|| self.unreadable(column, "is not a whole number"))
    }

    /// A whole number or NULL.
    pub fn opt_int(&self, column: &str) -> Result<Option<i64>> {
        let v = self.value(column)?;
        if v.is_null() {
            return Ok(None);
        }
        whole(v).map(Some).ok_or_else(|| self.unreadable(column, "is not a whole number"))
    }

    /// A number (whole or not).
    pub fn float(&self, column: &str) -> Result<f64> {
        self.required(column)?.as_f64().ok_or_else(|| self.unreadable(column, "is not a number"))
    }

    /// A boolean column of either backend (SQLite keeps 0/1).
    pub fn flag(&self, column: &str) -> Result<bool> {
        self.required(column)?.as_bool().ok_or_else(|| self.unreadable(column, "is not a boolean"))
    }

    /// A boolean or NULL.
    pub fn opt_flag(&self, column: &str) -> Result<Option<bool>> {
        let v = self.value(column)?;
        if v.is_null() {
            return Ok(None);
        }
        v.as_bool().map(Some).ok_or_else(|| self.unreadable(column, "is not a boolean"))
    }

    /// An instant.
    pub fn instant(&self, column: &str) -> Result<Timestamp> {
        self.required(column)?.as_timestamp().ok_or_else(|| self.unreadable(column, "is not an instant"))
    }

    /// An instant or NULL.
    pub fn opt_instant(&self, column: &str) -> Result<Option<Timestamp>> {
        let v = self.value(column)?;
        if v.is_null() {
            return Ok(None);
        }
        v.as_timestamp().map(Some).ok_or_else(|| self.unreadable(column, "is not an instant"))
    }
}

/// A whole number: an integer, a boolean, or text that parses as one — but not a float, which
/// [`SqlValue::as_i64`] would truncate.
fn whole(v: &SqlValue) -> Option<i64> {
    match v {
        SqlValue::Float(_) => None,
        other => other.as_i64(),
    }
}

/// A stored value as the text an operator would see.
fn raw_text(v: &SqlValue) -> Option<String> {
    match v {
        SqlValue::Null => None,
        SqlValue::Text(s) => Some(s.clone()),
        SqlValue::Int(i) => Some(i.to_string()),
        SqlValue::Float(f) => Some(f.to_string()),
        SqlValue::Bool(b) => Some(b.to_string()),
        SqlValue::Timestamp(t) => Some(t.to_string()),
        SqlValue::Bytes(b) => Some(format!("<{} bytes>", b.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLS: &[&str] = &["ID_", "REV_", "DUEDATE_", "NAME_"];

    fn rows(values: Vec<SqlValue>) -> Rows {
        Rows::new("ACT_RU_JOB", COLS, vec![values]).unwrap()
    }

    #[test]
    fn a_value_of_the_wrong_type_names_table_row_and_column() {
        let r = rows(vec![
            SqlValue::Text("j1".into()),
            SqlValue::Text("abc".into()),
            SqlValue::Text("0000-garbage".into()),
            SqlValue::Null,
        ]);
        let row = r.first().unwrap();
        let e = row.int("REV_").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unreadable);
        let u = e.unreadable.unwrap();
        assert_eq!((u.table.as_str(), u.id.as_str(), u.column.as_str()), ("ACT_RU_JOB", "j1", "REV_"));
        assert_eq!(u.raw.as_deref(), Some("abc"));
        assert!(row.instant("DUEDATE_").unwrap_err().message.contains("DUEDATE_ \"0000-garbage\" is not an instant"));
        assert!(row.text("NAME_").unwrap_err().message.contains("NULL"));
        assert_eq!(row.opt_text("NAME_").unwrap(), None);
        assert_eq!(row.value("NOPE_").unwrap_err().kind, ErrorKind::Other);
    }

    #[test]
    fn good_values_read_by_name() {
        let r = rows(vec![
            SqlValue::Text("j1".into()),
            SqlValue::Int(3),
            SqlValue::Text("2026-12-01 10:00:00.000".into()),
            SqlValue::Text("n".into()),
        ]);
        let row = r.first().unwrap();
        assert_eq!(row.int("REV_").unwrap(), 3);
        assert_eq!(row.instant("DUEDATE_").unwrap().to_string(), "2026-12-01T10:00:00Z");
        assert_eq!(row.text("NAME_").unwrap(), "n");
        assert_eq!(row.id(), "j1");
    }

    #[test]
    fn a_float_is_not_a_whole_number_and_a_wrong_width_is_refused() {
        let r = rows(vec![SqlValue::Text("j1".into()), SqlValue::Float(1.5), SqlValue::Null, SqlValue::Null]);
        assert!(r.first().unwrap().int("REV_").is_err());
        assert!(Rows::new("ACT_RU_JOB", COLS, vec![vec![SqlValue::Null]]).is_err());
    }
}
