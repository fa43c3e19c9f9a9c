//! QRTZ_CALENDARS: times triggers must not fire at, each a [`kairos_schedule::Calendar`] as
//! JSON (a base calendar is embedded in it when it is stored).

use super::{t, w};
use crate::Rows;
use kairos_schedule::Calendar;
use kairos_store::{Result, Store, Write};

/// A stored calendar: None if absent; a CALENDAR that does not parse is unreadable, naming the
/// calendar.
pub async fn calendar_get(store: &dyn Store, sched: &str, name: &str) -> Result<Option<Calendar>> {
    let rows = Rows::read(
        store,
        "QRTZ_CALENDARS",
        &["CALENDAR_NAME", "CALENDAR"],
        "SELECT CALENDAR_NAME, CALENDAR FROM QRTZ_CALENDARS WHERE SCHED_NAME = ? AND CALENDAR_NAME = ?",
        &[t(sched), t(name)],
    )
    .await?;
    let Some(r) = rows.first() else { return Ok(None) };
    let text = r.text("CALENDAR")?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| r.unreadable("CALENDAR", &format!("does not parse as a calendar: {e}")))
}

/// The calendars' names, in order.
pub async fn calendar_names(store: &dyn Store, sched: &str) -> Result<Vec<String>> {
    let rows = Rows::read(
        store,
        "QRTZ_CALENDARS",
        &["CALENDAR_NAME"],
        "SELECT CALENDAR_NAME FROM QRTZ_CALENDARS WHERE SCHED_NAME = ? ORDER BY CALENDAR_NAME",
        &[t(sched)],
    )
    .await?;
    rows.iter().map(|r| r.text("CALENDAR_NAME")).collect()
}

/// Stores calendar `name` as `json`: an UPDATE when it `exists`, an INSERT otherwise.
pub fn calendar_put(sched: &str, name: &str, json: &str, exists: bool) -> Write {
    if exists {
        w(
            "UPDATE QRTZ_CALENDARS SET CALENDAR = ? WHERE SCHED_NAME = ? AND CALENDAR_NAME = ?",
            vec![t(json), t(sched), t(name)],
        )
    } else {
        w(
            "INSERT INTO QRTZ_CALENDARS (SCHED_NAME, CALENDAR_NAME, CALENDAR) VALUES (?, ?, ?)",
            vec![t(sched), t(name), t(json)],
        )
    }
}

pub fn calendar_delete(sched: &str, name: &str) -> Write {
    w("DELETE FROM QRTZ_CALENDARS WHERE SCHED_NAME = ? AND CALENDAR_NAME = ?", vec![t(sched), t(name)])
}

/// The triggers that use calendar `name`, as (group, name).
pub async fn calendar_users(store: &dyn Store, sched: &str, name: &str) -> Result<Vec<(String, String)>> {
    let rows = Rows::read(
        store,
        "QRTZ_TRIGGERS",
        &["TRIGGER_GROUP", "TRIGGER_NAME"],
        "SELECT TRIGGER_GROUP, TRIGGER_NAME FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND CALENDAR_NAME = ?",
        &[t(sched), t(name)],
    )
    .await?;
    rows.iter().map(|r| Ok((r.text("TRIGGER_GROUP")?, r.text("TRIGGER_NAME")?))).collect()
}
