//! The operator's commands on calendars (QRTZ_CALENDARS): store (moving the waiting triggers
//! that use a replaced one), read, list, delete.

use super::state::{TriggerEvent, edge, edge_to};
use super::{CalendarSpec, Scheduler, SchedulerError, TriggerState, check_name, not_found, why};
use kairos_store_engine::scheduler as rows;
use serde_json::Value as Json;

impl Scheduler {
    /// Stores a calendar (Quartz's addCalendar with replace). `baseCalendar`, if given, names a
    /// stored calendar, which is copied in (as Quartz serializes the base with the calendar).
    /// Replacing a calendar moves the waiting triggers that use it to their next fire time
    /// under the new one (Quartz's updateTriggers = true).
    pub async fn put_calendar(
        &self,
        name: &str,
        spec: &CalendarSpec,
    ) -> Result<kairos_schedule::Calendar, crate::Error> {
        check_name("name", name)?;
        let mut json = spec.clone();
        let base_name = match json.as_object_mut().map(|o| o.remove("baseCalendar")) {
            None => return Err(SchedulerError::invalid("calendar", "must be a JSON object with a \"type\"").into()),
            Some(None | Some(Json::Null)) => None,
            Some(Some(Json::String(b))) => Some(b),
            Some(Some(other)) => {
                return Err(SchedulerError::invalid("baseCalendar", format!("{other} is not a calendar name")).into());
            }
        };
        let mut cal: kairos_schedule::Calendar =
            serde_json::from_value(json).map_err(|e| SchedulerError::invalid("calendar", e.to_string()))?;
        if let Some(b) = &base_name {
            if b == name {
                return Err(SchedulerError::invalid("baseCalendar", "a calendar cannot be its own base").into());
            }
            let base = self
                .calendar_model(self.name(), b)
                .await?
                .ok_or_else(|| SchedulerError::invalid("baseCalendar", format!("no calendar '{b}'")))?;
            cal = cal.with_base(base);
        }
        cal.validate().map_err(|e| SchedulerError::invalid(e.field().to_string(), e.to_string()))?;
        let text = serde_json::to_string(&cal).map_err(|e| SchedulerError::invalid("calendar", e.to_string()))?;
        let exists = self.calendar_model(self.name(), name).await?.is_some();
        let mut writes = vec![rows::calendar_put(self.name(), name, &text, exists).expect(1)];
        if exists {
            let now = self.store.db_now().await?;
            let waiting = rows::triggers_waiting_on_calendar(self.store(), self.name(), name).await?;
            for l in waiting.into_iter().filter_map(Result::ok) {
                let mut tr = l.trigger;
                let was = tr.next_fire_time;
                tr.update_with_new_calendar(Some(&cal), self.settings.misfire_threshold, now);
                let (g, n) = (tr.key.group.clone(), tr.key.name.clone());
                let to = edge_to(TriggerState::Waiting, TriggerEvent::Reschedule);
                writes.extend(rows::trigger_advance(self.name(), &tr, was, to));
                writes.push(rows::trigger_job_delete(self.name(), &g, &n));
                match tr.next_fire_time {
                    Some(next) => {
                        writes.push(rows::trigger_job_insert(self.name(), &g, &n, tr.priority, next, now, self.ahead()))
                    }
                    None => {
                        edge(Some(to), TriggerEvent::Delete);
                        writes.extend(rows::trigger_delete(self.name(), &g, &n, now))
                    }
                }
            }
        }
        self.store.write_all(&writes).await?;
        Ok(cal)
    }

    pub async fn calendar(&self, name: &str) -> Result<kairos_schedule::Calendar, crate::Error> {
        self.calendar_model(self.name(), name).await?.ok_or_else(|| not_found(format!("no calendar '{name}'")))
    }

    pub async fn calendars(&self) -> Result<Vec<String>, crate::Error> {
        Ok(rows::calendar_names(self.store(), self.name()).await?)
    }

    /// Deletes a calendar no trigger uses (Quartz refuses the others too).
    pub async fn delete_calendar(&self, name: &str) -> Result<(), crate::Error> {
        let users = rows::calendar_users(self.store(), self.name(), name).await?;
        if let Some((group, trigger)) = users.first() {
            return Err(SchedulerError::Conflict(format!(
                "calendar '{name}' is used by trigger {group}.{trigger} (and {} more)",
                users.len() - 1
            ))
            .into());
        }
        let n = self.store.write_all(&[rows::calendar_delete(self.name(), name)]).await?;
        if n[0] == 0 {
            return Err(not_found(format!("no calendar '{name}'")));
        }
        Ok(())
    }

    /// A stored calendar, or None.
    pub(crate) async fn calendar_model(
        &self,
        sched: &str,
        name: &str,
    ) -> Result<Option<kairos_schedule::Calendar>, crate::Error> {
        rows::calendar_get(self.store(), sched, name).await.map_err(|e| match e.unreadable {
            // A stored calendar that does not parse: the command that needs it is refused.
            Some(u) => SchedulerError::Conflict(format!("calendar '{name}': {}", why(&u))).into(),
            None => e.into(),
        })
    }
}
