//! The nodes of the cluster (KAIROS_NODE): registration, heartbeats by the database clock, and
//! reaping nodes that stopped heartbeating (SPEC J8).

use crate::error::DbResultExt;
use crate::rows::{self, get};
use jiff::{SignedDuration, Timestamp};
use kairos_core::NodeInfo;
use kairos_store::{Error, ErrorKind, NodeRegistered, NodeRegistration, Result};
use sqlx::PgPool;
use sqlx::postgres::types::PgInterval;

const REGISTER: &str = include_str!("sql/node_register.sql");
const HEARTBEAT: &str = include_str!("sql/node_heartbeat.sql");
const STOP: &str = include_str!("sql/node_stop.sql");
const LIST: &str = include_str!("sql/node_list.sql");
const REAP_DEAD: &str = include_str!("sql/node_reap_dead.sql");

/// Registers a starting node and expires the leases a previous incarnation left under its id,
/// in one statement.
pub(crate) async fn register(pool: &PgPool, node: &NodeRegistration) -> Result<NodeRegistered> {
    let row = bind_node(sqlx::query(REGISTER), node).fetch_one(pool).await.db()?;
    let released: i64 = get(&row, "released_")?;
    Ok(NodeRegistered { db_now: rows::instant(&row, "db_now_")?, released: released.max(0) as u64 })
}

/// Binds what a node says about itself: $1 id, $2 host, $3 pid, $4 workers, then its settings
/// ($5..$9 lock time, heartbeat interval, dead-after, lookahead, poll interval in milliseconds,
/// $10 time zone; null keeps what the row holds).
fn bind_node<'q>(
    q: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    node: &'q NodeRegistration,
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    let (ms, tz) = node.settings_columns();
    let q = q.bind(&node.id).bind(&node.host).bind(node.pid).bind(node.workers);
    ms.into_iter().fold(q, |q, m| q.bind(m)).bind(tz)
}

pub(crate) async fn heartbeat(pool: &PgPool, node: &NodeRegistration) -> Result<Timestamp> {
    let row = bind_node(sqlx::query(HEARTBEAT), node).fetch_one(pool).await.db()?;
    rows::instant(&row, "heartbeat_")
}

/// Marks a node stopped; an unknown id is not an error (stopping is idempotent).
pub(crate) async fn stop(pool: &PgPool, id: &str) -> Result<()> {
    sqlx::query(STOP).bind(id).execute(pool).await.db()?;
    Ok(())
}

pub(crate) async fn list(pool: &PgPool) -> Result<Vec<NodeInfo>> {
    let found = sqlx::query(LIST).fetch_all(pool).await.db()?;
    found.iter().map(rows::node).collect()
}

pub(crate) async fn reap_dead(pool: &PgPool, stale_after: SignedDuration) -> Result<Vec<String>> {
    let microseconds = i64::try_from(stale_after.as_micros())
        .ok()
        .filter(|m| *m >= 0)
        .ok_or_else(|| Error::new(ErrorKind::Invalid, format!("stale_after {stale_after} must not be negative")))?;
    let found =
        sqlx::query(REAP_DEAD).bind(PgInterval { months: 0, days: 0, microseconds }).fetch_all(pool).await.db()?;
    found.iter().map(|r| get(r, "id_")).collect()
}
