//! Messages and signals (SPEC P4): delivered to the instances waiting for them, or starting
//! the definitions whose start event waits for them; idempotent by requestId (SPEC C2).

use super::requests::{Recorded, Request};
use super::{Processes, StartRequest};
use crate::Error;
use kairos_executor::JobContext;
use kairos_process::{Command, ErrorKind, ProcessError};
use kairos_store::{Sql, Write};
use kairos_store_engine::process as tables;
use serde_json::{Map, Value as Json};

/// The inbox consumer of messages correlated with an `eventId` ([`Processes::message_event`]).
pub const MESSAGE_INBOX: &str = "kairos:runtime/messages";

impl Processes {
    /// Delivers a message to the instance waiting for it: by instance id, or by business key.
    pub async fn message(
        &self,
        name: &str,
        instance: Option<&str>,
        business_key: Option<&str>,
        variables: Map<String, Json>,
    ) -> Result<String, Error> {
        self.message_on(self.store.as_ref(), name, instance, business_key, variables, None, None).await
    }

    /// [`Processes::message`], idempotent by `request_id` (SPEC C2): a retry gets the instance
    /// the first delivery reached (or started) without delivering again; of concurrent
    /// duplicates one delivers and all answer with its instance.
    pub async fn message_once(
        &self,
        name: &str,
        instance: Option<&str>,
        business_key: Option<&str>,
        variables: Map<String, Json>,
        request_id: &str,
    ) -> Result<String, Error> {
        self.message_on(self.store.as_ref(), name, instance, business_key, variables, Some(request_id), None).await
    }

    /// [`Processes::message`] (with `request_id`, [`Processes::message_once`]) within `tenant`:
    /// only its instances receive it, only its definitions start by it (`None`: every tenant's).
    pub async fn message_in(
        &self,
        tenant: Option<&str>,
        name: &str,
        (instance, business_key): (Option<&str>, Option<&str>),
        variables: Map<String, Json>,
        request_id: Option<&str>,
    ) -> Result<String, Error> {
        self.message_on(self.store.as_ref(), name, instance, business_key, variables, request_id, tenant).await
    }

    /// [`Processes::message`] (with a requestId: [`Processes::message_once`]; with `tenant`,
    /// [`Processes::message_in`]) on session `db`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn message_on(
        &self,
        db: &dyn Sql,
        name: &str,
        instance: Option<&str>,
        business_key: Option<&str>,
        variables: Map<String, Json>,
        request_id: Option<&str>,
        tenant: Option<&str>,
    ) -> Result<String, Error> {
        let Some(request_id) = request_id else {
            return self.message_with(db, (name, tenant), instance, business_key, variables, None).await;
        };
        let mut fingerprint = serde_json::json!({
            "messageName": name, "processInstanceId": instance, "businessKey": business_key, "variables": variables,
        });
        // Only when given, so that the requests recorded before tenants keep their fingerprint.
        if let Some(t) = tenant {
            fingerprint["tenantId"] = Json::String(t.to_string());
        }
        let request = Request::new(request_id, "message", &fingerprint)?;
        if let Recorded::Done(first) = request.recorded(db).await? {
            return Ok(first.as_ref().and_then(Json::as_str).unwrap_or_default().to_string());
        }
        match self.message_with(db, (name, tenant), instance, business_key, variables, Some(&request)).await {
            Ok(id) => Ok(id),
            Err(e) => {
                let first = request.settle(db, e).await?;
                Ok(first.as_ref().and_then(Json::as_str).unwrap_or_default().to_string())
            }
        }
    }

    /// [`Processes::message`] for an event that may arrive more than once (SPEC C5, seed 002
    /// §15): the first delivery of `event_id` correlates it and records it in the inbox
    /// (consumer [`MESSAGE_INBOX`], the instance it reached as result code); every later one
    /// answers that instance and `true` (a duplicate) without delivering again. The delivery is
    /// itself idempotent by a requestId derived from the event id, so a crash between it and
    /// the inbox row, or two copies arriving at once, still deliver once.
    pub async fn message_event(
        &self,
        name: &str,
        instance: Option<&str>,
        business_key: Option<&str>,
        variables: Map<String, Json>,
        event_id: &str,
    ) -> Result<(String, bool), Error> {
        self.message_event_in(None, name, (instance, business_key), variables, event_id).await
    }

    /// [`Processes::message_event`] within `tenant` (see [`Processes::message_in`]).
    pub async fn message_event_in(
        &self,
        tenant: Option<&str>,
        name: &str,
        (instance, business_key): (Option<&str>, Option<&str>),
        variables: Map<String, Json>,
        event_id: &str,
    ) -> Result<(String, bool), Error> {
        let db = self.store.as_ref();
        if let Some(first) = kairos_store_engine::business::inbox_result(db, MESSAGE_INBOX, event_id).await? {
            crate::business::count_duplicate();
            return Ok((first.unwrap_or_default(), true));
        }
        let request_id = Request::derived("message-event", &[event_id], &Json::Null).id;
        let reached = self.message_on(db, name, instance, business_key, variables, Some(&request_id), tenant).await?;
        let first = crate::business::inbox_first(db, MESSAGE_INBOX, event_id, Some(&reached)).await?;
        Ok((reached, !first))
    }

    /// Delivers a message; with `request`, its record commits with the delivery (or, for a
    /// message start, right after the start, which is itself idempotent by a derived id).
    async fn message_with(
        &self,
        db: &dyn Sql,
        (name, tenant): (&str, Option<&str>),
        instance: Option<&str>,
        business_key: Option<&str>,
        variables: Map<String, Json>,
        request: Option<&Request>,
    ) -> Result<String, Error> {
        let mut ids = tables::message_waiting(db, name, instance, business_key, tenant).await?;
        ids.dedup();
        match ids.as_slice() {
            [] if instance.is_none() => {
                // No instance waits: a definition whose message start event has this name starts one.
                let starts = tables::start_subscriptions(db, tables::StartTrigger::Message, name, tenant).await?;
                let Some(r) = starts.first() else {
                    return Err(Error::Process(ProcessError::new(
                        ErrorKind::NotFound,
                        format!("no process instance waits for message '{name}' and no definition starts by it"),
                    )));
                };
                let started = self
                    .start_on(
                        db,
                        StartRequest {
                            process_definition_id: Some(r.definition_id.clone()),
                            start_event: Some(r.activity_id.clone()),
                            business_key: business_key.map(str::to_string),
                            variables,
                            request_id: request.map(|q| Request::derived("message-start", &[&q.id], &Json::Null).id),
                            ..Default::default()
                        },
                    )
                    .await?;
                if let Some(q) = request {
                    self.record_answer(db, q, &Json::String(started.id.clone())).await?;
                }
                Ok(started.id)
            }
            [] => Err(Error::Process(ProcessError::new(
                ErrorKind::NotFound,
                format!("no process instance waits for message '{name}'"),
            ))),
            [one] => {
                let record: Vec<Write> = request.iter().map(|q| q.record(Some(&Json::String(one.clone())))).collect();
                self.command_with(db, one, Command::Message { name: name.into(), variables }, &[], &record).await?;
                Ok(one.clone())
            }
            many => Err(Error::Process(ProcessError::new(
                ErrorKind::Conflict,
                format!(
                    "{} process instances wait for message '{name}'; name one by processInstanceId or businessKey",
                    many.len()
                ),
            ))),
        }
    }

    /// The definition (latest version, of `tenant` when given) and start event that message
    /// `name` starts, as Flowable's start by `message` needs them; 404 when none does.
    pub async fn message_start_of(&self, name: &str, tenant: Option<&str>) -> Result<(String, String), Error> {
        let starts =
            tables::start_subscriptions(self.store.as_ref(), tables::StartTrigger::Message, name, tenant).await?;
        starts.into_iter().next().map(|s| (s.definition_id, s.activity_id)).ok_or_else(|| {
            Error::Process(ProcessError::new(
                ErrorKind::NotFound,
                format!("no process definition starts by message '{name}'"),
            ))
        })
    }

    /// Broadcasts a signal to every instance waiting for it; returns how many received it.
    pub async fn signal(&self, name: &str, variables: Map<String, Json>) -> Result<usize, Error> {
        self.signal_on(self.store.as_ref(), name, variables, None, None).await
    }

    /// [`Processes::signal`], idempotent by `request_id` (SPEC C2). Each delivery commits with
    /// a request derived from this one and its instance, so a retry after a broadcast that
    /// failed half-way reaches only the instances it had not; once the broadcast finished, a
    /// retry gets its count without delivering again. Concurrent duplicates deliver once per
    /// instance.
    pub async fn signal_once(
        &self,
        name: &str,
        variables: Map<String, Json>,
        request_id: &str,
    ) -> Result<usize, Error> {
        self.signal_on(self.store.as_ref(), name, variables, Some(request_id), None).await
    }

    /// [`Processes::signal`] (with `request_id`, [`Processes::signal_once`]) within `tenant`:
    /// only its instances receive it, only its definitions start by it (`None`: every tenant's).
    pub async fn signal_in(
        &self,
        tenant: Option<&str>,
        name: &str,
        variables: Map<String, Json>,
        request_id: Option<&str>,
    ) -> Result<usize, Error> {
        self.signal_on(self.store.as_ref(), name, variables, request_id, tenant).await
    }

    /// [`Processes::signal`] (with a requestId: [`Processes::signal_once`]) on session `db`.
    pub(crate) async fn signal_on(
        &self,
        db: &dyn Sql,
        name: &str,
        variables: Map<String, Json>,
        request_id: Option<&str>,
        tenant: Option<&str>,
    ) -> Result<usize, Error> {
        let Some(request_id) = request_id else {
            return self.signal_except(db, (name, tenant), variables, None, None).await;
        };
        let mut fingerprint = serde_json::json!({"signalName": name, "variables": variables});
        if let Some(t) = tenant {
            fingerprint["tenantId"] = Json::String(t.to_string());
        }
        let request = Request::new(request_id, "signal", &fingerprint)?;
        if let Recorded::Done(first) = request.recorded(db).await? {
            return Ok(first.as_ref().and_then(Json::as_u64).unwrap_or_default() as usize);
        }
        let n = self.signal_except(db, (name, tenant), variables, None, Some(&request.id)).await?;
        let first = self.record_answer(db, &request, &Json::from(n)).await?;
        Ok(first.as_ref().and_then(Json::as_u64).map_or(n, |f| f as usize))
    }

    /// Records `request` with `answer` on its own; when a concurrent duplicate recorded it
    /// first, its answer.
    async fn record_answer(&self, db: &dyn Sql, request: &Request, answer: &Json) -> Result<Option<Json>, Error> {
        match db.write_all(&[request.record(Some(answer))]).await {
            Ok(_) => Ok(Some(answer.clone())),
            Err(e) => request.settle(db, e.into()).await,
        }
    }

    /// Delivers a signal thrown by instance `from` (its own waits had it at once) to the
    /// others. An instance that ended or stopped waiting meanwhile is passed over. Each
    /// delivery (and each start by a signal start event) commits with a request derived from
    /// the job and the instance (`requests.rs`): a retried job — its earlier attempt failed
    /// half-way, the database gone — skips those it reached, so a non-interrupting signal
    /// boundary event does not fire twice.
    pub(super) async fn deliver_thrown_signal(&self, ctx: &JobContext) -> Result<usize, Error> {
        let name = ctx.payload.get("signal").and_then(Json::as_str).unwrap_or_default().to_string();
        let from = ctx.payload.get("from").and_then(Json::as_str).map(str::to_string);
        // A thrown signal reaches its thrower's tenant only (as in Flowable).
        let db = self.store.as_ref();
        let tenant = match &from {
            Some(pi) => kairos_store_engine::tenants::tenant_of(db, super::Owned::Instance, pi).await?,
            None => None,
        };
        self.signal_except(db, (&name, tenant.as_deref()), Map::new(), from.as_deref(), Some(&ctx.job_id)).await
    }

    /// Delivers a signal, passing `except` (the instance that threw it) over. With `once` (the
    /// delivery job of a thrown signal, or a caller's requestId) it delivers at most once per
    /// instance and start event however often it is retried.
    async fn signal_except(
        &self,
        db: &dyn Sql,
        (name, tenant): (&str, Option<&str>),
        variables: Map<String, Json>,
        except: Option<&str>,
        once: Option<&str>,
    ) -> Result<usize, Error> {
        let delivery = |to: &str| {
            once.map(|key| Request::derived("signal", &[key, to], &serde_json::json!({"signal": name, "to": to})))
        };
        // In instance order (ids are time-ordered): a retried delivery meets them as before.
        let waiting = tables::signal_waiting(db, name, tenant).await?;
        let mut n = 0;
        let starts = tables::start_subscriptions(db, tables::StartTrigger::Signal, name, tenant).await?;
        for r in &starts {
            let (def, event) = (r.definition_id.as_str(), r.activity_id.as_str());
            let start = StartRequest {
                process_definition_id: Some(def.to_string()),
                start_event: Some(event.to_string()),
                variables: variables.clone(),
                request_id: once.map(|key| Request::derived("signal-start", &[key, def, event], &Json::Null).id),
                ..Default::default()
            };
            self.start_on(db, start).await?;
            n += 1;
        }
        for id in waiting.iter().map(String::as_str).filter(|id| Some(*id) != except) {
            let request = delivery(id);
            if let Some(req) = &request
                && let Recorded::Done(_) = req.recorded(db).await?
            {
                n += 1; // reached by an earlier attempt
                continue;
            }
            let record: Vec<Write> = request.iter().map(|r| r.record(None)).collect();
            let command = Command::Signal { name: name.into(), variables: variables.clone() };
            match self.command_with(db, id, command, &[], &record).await {
                Ok(()) => n += 1,
                // Another attempt of this job (its lease expired) delivered it meanwhile.
                Err(Error::Process(p)) if p.kind == ErrorKind::Conflict => {
                    if let Some(req) = &request
                        && let Recorded::Done(_) = req.recorded(db).await?
                    {
                        n += 1;
                        continue;
                    }
                    return Err(Error::Process(p));
                }
                Err(Error::Process(e)) if except.is_some() && e.kind == ErrorKind::NotFound => {
                    tracing::info!(instance = id, signal = name, "instance ended before the thrown signal reached it");
                }
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }
}
