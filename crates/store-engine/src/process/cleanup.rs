//! History cleanup (SPEC P11): which ended instances are past their definition's
//! `historyTimeToLive`, deleting their history, and the retention of the job log and of
//! recorded requestIds.

use super::{i, t, ts};
use crate::Rows;
use jiff::Timestamp;
use kairos_store::{Result, Sql, Write};

/// The history tables an instance has rows in, with the column naming the instance; the
/// instance row last.
const TABLES: [(&str, &str); 8] = [
    ("ACT_HI_ACTINST", "PROC_INST_ID_"),
    ("ACT_HI_COMMENT", "PROC_INST_ID_"),
    ("ACT_HI_TASKINST", "PROC_INST_ID_"),
    ("ACT_HI_VARINST", "PROC_INST_ID_"),
    ("ACT_HI_DETAIL", "PROC_INST_ID_"),
    ("ACT_HI_JOB_LOG", "PROCESS_INSTANCE_ID_"),
    // The record of its withdrawal, termination or deletion (seed 002 §27) is part of its
    // history. Its binding stays: the business object's lifecycle numbers count on it.
    ("kairos_termination", "process_instance_id"),
    ("ACT_HI_PROCINST", "PROC_INST_ID_"),
];

/// The distinct times to live (in days) of the deployed definitions that have one.
pub async fn history_ttls(store: &dyn Sql) -> Result<Vec<i64>> {
    let rows = Rows::read(
        store,
        "ACT_RE_PROCDEF",
        &["HISTORY_TTL_"],
        "SELECT DISTINCT HISTORY_TTL_ FROM ACT_RE_PROCDEF WHERE HISTORY_TTL_ IS NOT NULL",
        &[],
    )
    .await?;
    rows.iter().map(|r| r.int("HISTORY_TTL_")).collect()
}

/// At most `limit` instances of definitions with a time to live of `days` that ended before
/// `cutoff`, the earliest ended first.
pub async fn history_expired(store: &dyn Sql, days: i64, cutoff: Timestamp, limit: usize) -> Result<Vec<String>> {
    let rows = Rows::read(
        store,
        "ACT_HI_PROCINST",
        &["PROC_INST_ID_"],
        "SELECT h.PROC_INST_ID_ FROM ACT_HI_PROCINST h JOIN ACT_RE_PROCDEF d ON d.ID_ = h.PROC_DEF_ID_ \
         WHERE d.HISTORY_TTL_ = ? AND h.END_TIME_ IS NOT NULL AND h.END_TIME_ < ? \
         ORDER BY h.END_TIME_ LIMIT ?",
        &[i(days), ts(cutoff), i(limit as i64)],
    )
    .await?;
    rows.iter().map(|r| r.text("PROC_INST_ID_")).collect()
}

/// The statements that delete the history of instances `ids` (ended ones: their runtime rows
/// are gone): one per table, each instance's deletes merged into one `IN` list.
pub fn history_delete(ids: &[String]) -> Vec<Write> {
    let writes: Vec<Write> = TABLES
        .iter()
        .flat_map(|(table, column)| {
            ids.iter().map(move |id| Write::new(format!("DELETE FROM {table} WHERE {column} = ?"), vec![t(id)]))
        })
        .collect();
    kairos_store::coalesce(writes)
}

/// Deletes at most `limit` rows of the job log (any job's) that ended before `cutoff`, the
/// oldest first; returns how many.
pub async fn job_log_delete_older(store: &dyn Sql, cutoff: Timestamp, limit: usize) -> Result<u64> {
    delete_older(store, ("ACT_HI_JOB_LOG", "ID_", "END_TIME_"), cutoff, limit).await
}

/// Deletes at most `limit` recorded requestIds made before `cutoff`, the oldest first;
/// returns how many.
pub async fn requests_delete_older(store: &dyn Sql, cutoff: Timestamp, limit: usize) -> Result<u64> {
    delete_older(store, ("KAIROS_REQUEST", "REQUEST_ID_", "CREATE_TIME_"), cutoff, limit).await
}

async fn delete_older(
    store: &dyn Sql,
    (table, key, time): (&str, &str, &str),
    cutoff: Timestamp,
    limit: usize,
) -> Result<u64> {
    let n = store
        .write_all(&[Write::new(
            format!("DELETE FROM {table} WHERE {key} IN (SELECT {key} FROM {table} WHERE {time} < ? ORDER BY {time} LIMIT ?)"),
            vec![ts(cutoff), i(limit as i64)],
        )])
        .await?;
    Ok(n.first().copied().unwrap_or(0))
}
