//! KAIROS_NODE: registration, heartbeats by the database clock, clean stops, and declaring
//! silent nodes dead so their jobs are taken over at once (SPEC J8).

use crate::acquire::add;
use crate::errors::db_err;
use crate::time::to_text;
use crate::{SqliteStore, now_on, rows};
use jiff::{SignedDuration, Timestamp};
use kairos_core::NodeInfo;
use kairos_store::{NodeRegistered, NodeRegistration, Result};
use serde_json::json;

impl SqliteStore {
    /// Registers a starting node and expires the leases a previous incarnation left under its
    /// id, in one `BEGIN IMMEDIATE` transaction.
    pub(crate) async fn register(&self, node: &NodeRegistration) -> Result<NodeRegistered> {
        const OP: &str = "node_register";
        let (ms, tz) = node.settings_columns();
        let mut w = self.write(OP).await?;
        let now = now_on(&mut w.tx, None, OP).await?;
        let at = to_text(now)?;
        sqlx::query(include_str!("sql/node_register.sql"))
            .bind(&node.id)
            .bind(&node.host)
            .bind(node.pid)
            .bind(node.workers)
            .bind(&at)
            .bind(ms[0])
            .bind(ms[1])
            .bind(ms[2])
            .bind(ms[3])
            .bind(ms[4])
            .bind(tz)
            .execute(&mut *w.tx)
            .await
            .map_err(db_err(OP))?;
        let released = sqlx::query(include_str!("sql/node_expire_leases.sql"))
            .bind(json!([node.id]).to_string())
            .bind(&at)
            .execute(&mut *w.tx)
            .await
            .map_err(db_err(OP))?
            .rows_affected();
        w.commit(OP).await?;
        Ok(NodeRegistered { db_now: now, released })
    }

    pub(crate) async fn heartbeat(&self, node: &NodeRegistration) -> Result<Timestamp> {
        const OP: &str = "node_heartbeat";
        let (ms, tz) = node.settings_columns();
        let mut w = self.write(OP).await?;
        let now = now_on(&mut w.tx, None, OP).await?;
        sqlx::query(include_str!("sql/node_heartbeat.sql"))
            .bind(&node.id)
            .bind(&node.host)
            .bind(node.pid)
            .bind(node.workers)
            .bind(to_text(now)?)
            .bind(ms[0])
            .bind(ms[1])
            .bind(ms[2])
            .bind(ms[3])
            .bind(ms[4])
            .bind(tz)
            .execute(&mut *w.tx)
            .await
            .map_err(db_err(OP))?;
        w.commit(OP).await?;
        Ok(now)
    }

    /// Marks the node stopped. A node that never registered has nothing to mark; that is not an
    /// error, so a node can always call this on its way out.
    pub(crate) async fn stop(&self, id: &str) -> Result<()> {
        const OP: &str = "node_stop";
        let mut w = self.write(OP).await?;
        let now = now_on(&mut w.tx, None, OP).await?;
        sqlx::query(include_str!("sql/node_stop.sql"))
            .bind(id)
            .bind(to_text(now)?)
            .execute(&mut *w.tx)
            .await
            .map_err(db_err(OP))?;
        w.commit(OP).await
    }

    pub(crate) async fn nodes(&self) -> Result<Vec<NodeInfo>> {
        sqlx::query(include_str!("sql/node_list.sql"))
            .fetch_all(&self.pool)
            .await
            .map_err(db_err("node_list"))?
            .iter()
            .map(rows::node)
            .collect()
    }

    /// Declares running nodes silent for longer than `stale_after` dead and expires their leases
    /// at the database now, in one transaction.
    pub(crate) async fn reap_dead(&self, stale_after: SignedDuration) -> Result<Vec<String>> {
        const OP: &str = "node_reap_dead";
        let mut w = self.write(OP).await?;
        let now = now_on(&mut w.tx, None, OP).await?;
        let cutoff = add(now, -stale_after, "stale_after")?;
        let dead = sqlx::query(include_str!("sql/node_reap.sql"))
            .bind(to_text(cutoff)?)
            .fetch_all(&mut *w.tx)
            .await
            .map_err(db_err(OP))?
            .iter()
            .map(|r| rows::text(r, "ID_"))
            .collect::<Result<Vec<_>>>()?;
        if !dead.is_empty() {
            sqlx::query(include_str!("sql/node_expire_leases.sql"))
                .bind(json!(dead).to_string())
                .bind(to_text(now)?)
                .execute(&mut *w.tx)
                .await
                .map_err(db_err(OP))?;
        }
        w.commit(OP).await?;
        let mut dead = dead;
        dead.sort();
        Ok(dead)
    }
}
