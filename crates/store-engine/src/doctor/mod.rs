//! The doctor's read-only findings over every table (SPEC J11, seed 000 §4, seed 004 §5): each
//! query behind a typed function returning typed finding rows. `kairos::doctor` judges them
//! and words the findings.
//!
//! The queries on the job and process tables are the seeds' diagnostic SQL, run as an
//! operator's ([`Store::sql_query`]); the scheduler's use the engine's read
//! ([`Sql::read`]). Rows are decoded by column name; an instant is a [`Shown`]: the doctor
//! reports on rows kairos cannot read too, so a stored instant that is not one is shown as it
//! is stored rather than failing the diagnosis (the `unreadable-row` finding names that row).
//!
//! - [`cluster`] — ACT_RU_JOB's backlog by TYPE_ and jobs without retries, ACT_HI_PROCINST's
//!   ended instances with runtime rows, ACT_HI_JOB_LOG's handler durations;
//! - [`instance`] — one process instance, or a business key's, and what it waits for;
//! - [`scheduler`] — the QRTZ_* checks of seed 004 §5.
//!
//! [`Store::sql_query`]: kairos_store::Store::sql_query
//! [`Sql::read`]: kairos_store::Sql::read

pub mod cluster;
pub mod instance;
pub mod scheduler;

use crate::Row;
use jiff::Timestamp;
use kairos_store::{Result, SqlValue};
use std::fmt;

/// An instant a diagnostic query read: PostgreSQL's timestamp, SQLite's stored UTC text, or an
/// epoch-millisecond column — or, when the stored value is none of these, that value as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    At(Timestamp),
    /// Not an instant: the stored text, for the report to show.
    Raw(String),
}

impl Shown {
    /// The instant, if the value is one.
    pub fn at(&self) -> Option<Timestamp> {
        match self {
            Shown::At(t) => Some(*t),
            Shown::Raw(_) => None,
        }
    }

    /// Reads `column` of `row` (NULL is None).
    pub fn of(row: &Row<'_>, column: &str) -> Result<Option<Shown>> {
        Ok(match row.value(column)? {
            SqlValue::Null => None,
            SqlValue::Int(ms) => Some(match Timestamp::from_millisecond(*ms) {
                Ok(t) => Shown::At(t),
                Err(_) => Shown::Raw(ms.to_string()),
            }),
            v => Some(match v.as_timestamp() {
                Some(t) => Shown::At(t),
                None => Shown::Raw(match v {
                    SqlValue::Text(s) => s.clone(),
                    SqlValue::Float(f) => f.to_string(),
                    SqlValue::Bool(b) => b.to_string(),
                    SqlValue::Bytes(_) => "<bytes>".into(),
                    _ => String::new(),
                }),
            }),
        })
    }
}

/// RFC 3339 (UTC), or the stored text.
impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shown::At(t) => write!(f, "{t}"),
            Shown::Raw(s) => f.write_str(s),
        }
    }
}
