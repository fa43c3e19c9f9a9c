//! The rows no instance could be loaded with, listed beside the good ones for an operator
//! (`GET /management/unreadable-rows`, the doctor).

use super::load::{EXECUTIONS, PARTS, execution, json_row};
use super::values::row_value;
use crate::Rows;
use kairos_store::{Result, Sql, Unreadable};

/// Variable and execution rows (of any instance) that cannot be read, at most `limit`: what
/// [`super::instance_load`] would refuse. Variables are narrowed by SQL (a TYPE_ kairos does not
/// know, a number column NULL); executions are few per instance and all read.
pub async fn instance_unreadable(store: &dyn Sql, limit: usize) -> Result<Vec<Unreadable>> {
    const VARIABLE: &[&str] = PARTS[3].columns;
    let mut found = Vec::new();
    let vars = Rows::read(
        store,
        "ACT_RU_VARIABLE",
        VARIABLE,
        "SELECT ID_, REV_, NAME_, EXECUTION_ID_, TYPE_, TEXT_, LONG_, DOUBLE_, TASK_ID_ FROM ACT_RU_VARIABLE \
         WHERE TYPE_ NOT IN ('null', 'boolean', 'integer', 'long', 'short', 'double', 'string', 'date', 'json') \
         OR (TYPE_ IN ('boolean', 'integer', 'long', 'short') AND LONG_ IS NULL) \
         OR (TYPE_ = 'double' AND DOUBLE_ IS NULL) OR (TYPE_ = 'json' AND TEXT_ IS NULL) ORDER BY ID_",
        &[],
    )
    .await?;
    for r in vars.iter() {
        let name = r.opt_text("NAME_").ok().flatten();
        if let Err(e) = row_value(&r, "TYPE_", Some(name.as_deref().unwrap_or_default())) {
            found.extend(e.unreadable.map(|u| *u));
        }
    }
    // As JSON, as [`super::instance_load`] reads them: an instant the driver cannot decode
    // (PostgreSQL's `infinity`) arrives as text to be named.
    let part = &PARTS[EXECUTIONS];
    let sql = format!(
        "SELECT CAST({}({}) AS TEXT) FROM {} ORDER BY e.ID_",
        store.dialect().json_array,
        part.select,
        part.from
    );
    let execs =
        store.read(&sql, &[]).await?.iter().filter_map(|r| r.first().map(json_row)).collect::<Result<Vec<_>>>()?;
    for r in Rows::new(part.table, part.columns, execs)?.iter() {
        if let Err(e) = execution(&r) {
            found.extend(e.unreadable.map(|u| *u));
        }
    }
    found.truncate(limit);
    Ok(found)
}
