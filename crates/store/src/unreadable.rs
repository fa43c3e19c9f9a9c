//! Rows kairos cannot read back.
//!
//! SQLite stores any value in any column, and an operator's hand-written UPDATE can leave a
//! PostgreSQL row with a TYPE_ kairos does not know or an instant outside the years it can
//! represent. Such a row must not stop the good rows beside it: every read that meets one
//! returns it as an [`Unreadable`] (a list beside the good rows, or an error of kind
//! [`crate::ErrorKind::Unreadable`] when that one row was asked for), naming the table, the
//! row, the column and the stored text, so an operator can fix the column or delete the row.

use serde::Serialize;

/// One stored row that cannot be decoded, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unreadable {
    /// `ACT_RU_JOB`, `ACT_RU_VARIABLE`, `QRTZ_TRIGGERS`, …
    pub table: String,
    /// The row's id (ID_; a trigger's `group.name`).
    pub id: String,
    /// The first column that cannot be read.
    pub column: String,
    /// The stored value as text (`None`: NULL where a value is required).
    pub raw: Option<String>,
    /// What is wrong with it, e.g. "not an instant".
    pub problem: String,
}

impl Unreadable {
    pub fn new(
        table: impl Into<String>,
        id: impl Into<String>,
        column: impl Into<String>,
        raw: Option<String>,
        problem: impl Into<String>,
    ) -> Self {
        Unreadable { table: table.into(), id: id.into(), column: column.into(), raw, problem: problem.into() }
    }

    /// "ACT_RU_JOB row j1: DUEDATE_ '0000-garbage' is not an instant".
    pub fn describe(&self) -> String {
        let raw = self.raw.as_deref().map_or_else(|| "NULL".to_string(), |r| format!("{r:?}"));
        format!("{} row {} cannot be read: {} {raw} {}", self.table, self.id, self.column, self.problem)
    }
}

impl Unreadable {
    /// The EXCEPTION_MSG_ of a job row acquisition set aside in the dead letters (cut to the
    /// column's 4,000 characters by the caller if need be).
    pub fn set_aside_message(&self, node: &str) -> String {
        let raw = self.raw.as_deref().map_or_else(|| "NULL".to_string(), |r| format!("{r:?}"));
        let mut m = format!(
            "set aside by node {node}: kairos cannot read this row ({} {raw} {}); fix the column, then move \
             the job back, or delete it",
            self.column, self.problem
        );
        if m.len() > 4000 {
            let mut end = 4000;
            while !m.is_char_boundary(end) {
                end -= 1;
            }
            m.truncate(end);
        }
        m
    }
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}
