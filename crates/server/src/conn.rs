//! The HTTP server loop: what one connection may hold, so that slow or half-sent requests
//! cannot take a node down (Slowloris).
//!
//! `axum::serve` reads request headers with no time limit and accepts connections until the
//! process runs out of file descriptors: 1,100 connections that each sent half a request kept
//! a node from answering anything, `/health` included. Here, over hyper's HTTP/1 server:
//!
//! * **header read timeout**: a request head (and, between requests, the next one on a kept-alive
//!   connection) must arrive within [`ConnLimits::header_read_timeout`], or the connection is
//!   closed;
//! * **body read timeout**: a request body must arrive within
//!   [`ConnLimits::body_read_timeout`] of its head, or the request is answered 408;
//! * **connection limit**: at most [`ConnLimits::max_connections`] at once. A connection over the
//!   limit makes room by closing the one that has waited longest without a request in flight
//!   (half-sent or idle; it would be closed by its timeout anyway). Only when every connection
//!   is running a request does a new one wait to be accepted. So a flood of half-sent requests
//!   cannot lock out a client that sends whole ones, and the descriptors in use stay bounded.
//!   The limit is lowered at start to what the process's descriptor limit (`ulimit -n`) can
//!   hold beside the database pool and files ([`ConnLimits::fit_to_descriptors`]): a limit above
//!   it would let `accept` fail with "too many open files" before any connection is evicted,
//!   and `/health` would wait for a header timeout to free one.

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::response::Response;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{Notify, watch};
use tower::ServiceExt;

/// Bounds on what connections may hold (`kairos serve --header-read-timeout`,
/// `--body-read-timeout`, `--max-connections`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnLimits {
    /// A request head must arrive within this; also how long a kept-alive connection may idle.
    pub header_read_timeout: Duration,
    /// A request body must arrive within this, counted from its head.
    pub body_read_timeout: Duration,
    /// Connections open at once. [`serve`] lowers it to fit the process's file-descriptor
    /// limit (`ulimit -n`, often 1024), keeping [`RESERVED_DESCRIPTORS`] for the database and
    /// log files.
    pub max_connections: usize,
}

impl Default for ConnLimits {
    /// 30 s for headers (hyper's own default once a timer is set), 60 s for a body (2 MiB at
    /// 35 KB/s), 512 connections (half the usual descriptor limit of 1024).
    fn default() -> Self {
        ConnLimits {
            header_read_timeout: Duration::from_secs(30),
            body_read_timeout: Duration::from_secs(60),
            max_connections: 512,
        }
    }
}

/// Descriptors kept back from HTTP connections: the database pool, the SQLite file and its
/// WAL, log files, the listener, and the runtime's own (epoll, eventfd, signal pipe).
pub const RESERVED_DESCRIPTORS: u64 = 128;

impl ConnLimits {
    /// These limits with `max_connections` lowered, if need be, to what a descriptor limit of
    /// `soft` (RLIMIT_NOFILE; `None`: unlimited or unknown) can hold: `soft` minus
    /// [`RESERVED_DESCRIPTORS`], or half of `soft` when that is less than the reserve.
    pub fn fit_to_descriptors(self, soft: Option<u64>) -> ConnLimits {
        let Some(soft) = soft else { return self };
        let room = if soft > 2 * RESERVED_DESCRIPTORS { soft - RESERVED_DESCRIPTORS } else { soft / 2 };
        let room = usize::try_from(room.max(1)).unwrap_or(usize::MAX);
        ConnLimits { max_connections: self.max_connections.min(room), ..self }
    }
}

/// The process's soft limit on open descriptors, `None` when unlimited or not known here.
pub fn descriptor_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        rustix::process::getrlimit(rustix::process::Resource::Nofile).current
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Raises the soft descriptor limit to the hard one (as Go's runtime does at start), so a
/// shell's default of 1,024 does not bound a server whose administrator allowed more. Returns
/// the soft limit in force afterwards. For binaries: a library must not change its host
/// process's limits.
pub fn raise_descriptor_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let now = getrlimit(Resource::Nofile);
        if now.current.is_some() && now.current != now.maximum {
            let raised = Rlimit { current: now.maximum, maximum: now.maximum };
            if let Err(e) = setrlimit(Resource::Nofile, raised) {
                tracing::debug!(error = %e, "cannot raise the descriptor limit to the hard limit");
            }
        }
    }
    descriptor_limit()
}

/// Serves `app` on `listener` within `limits` (the connection limit fitted to the descriptor
/// limit) until `shutdown`; then stops accepting, lets requests in flight finish and returns
/// when every connection has closed.
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    limits: ConnLimits,
) -> std::io::Result<()> {
    let soft = descriptor_limit();
    let asked = limits.max_connections;
    let limits = limits.fit_to_descriptors(soft);
    if limits.max_connections < asked {
        tracing::warn!(
            asked,
            max_connections = limits.max_connections,
            descriptor_limit = soft,
            "fewer HTTP connections than asked: the process may open only {} descriptors (ulimit -n), \
             {RESERVED_DESCRIPTORS} of which are kept for the database and files; raise the limit to allow more",
            soft.unwrap_or_default()
        );
    }
    let conns = Arc::new(Conns::default());
    let (stop_tx, stop_rx) = watch::channel(());
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                accept_failed(e).await;
                continue;
            }
        };
        let (id, slot) = tokio::select! {
            admitted = conns.admit(limits.max_connections) => admitted,
            () = &mut shutdown => break,
        };
        let api = Api {
            app: app.clone(),
            conns: conns.clone(),
            busy: slot.busy.clone(),
            body_read_timeout: limits.body_read_timeout,
        };
        let conn = http.serve_connection(TokioIo::new(stream), api);
        tokio::spawn(run(conn, conns.clone(), id, slot, stop_rx.clone()));
    }
    drop(listener);
    drop(stop_tx);
    conns.drained().await;
    Ok(())
}

/// One connection until it ends, is evicted (dropped: the socket closes) or, on shutdown,
/// finishes its request in flight.
async fn run(conn: Connection, conns: Arc<Conns>, id: u64, slot: Slot, mut stop: watch::Receiver<()>) {
    tokio::pin!(conn);
    let mut draining = false;
    loop {
        tokio::select! {
            ended = conn.as_mut() => {
                if let Err(e) = ended {
                    tracing::debug!(error = %e, "HTTP connection ended");
                }
                break;
            }
            () = slot.evict.notified() => {
                tracing::debug!("HTTP connection closed to make room: it had no request in flight");
                break;
            }
            _ = stop.changed(), if !draining => {
                draining = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
    conns.leave(id);
}

type Connection = hyper::server::conn::http1::Connection<TokioIo<tokio::net::TcpStream>, Api>;

/// The router as the hyper service of one connection: counts its request in flight and puts
/// the body read timeout on the body.
#[derive(Clone)]
struct Api {
    app: Router,
    conns: Arc<Conns>,
    busy: Arc<AtomicUsize>,
    body_read_timeout: Duration,
}

impl hyper::service::Service<Request<hyper::body::Incoming>> for Api {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn call(&self, req: Request<hyper::body::Incoming>) -> Self::Future {
        let in_flight = InFlight::enter(&self.conns, &self.busy);
        let req = req.map(|body| Body::new(Deadline::new(body, self.body_read_timeout)));
        let app = self.app.clone();
        Box::pin(async move {
            let res = app.oneshot(req).await;
            drop(in_flight);
            res
        })
    }
}

/// Errors of `accept` that concern one connection are skipped; others (out of descriptors)
/// get a pause, as axum and hyper do, so the loop does not spin.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind as K;
    if matches!(e.kind(), K::ConnectionAborted | K::ConnectionReset | K::ConnectionRefused) {
        return;
    }
    tracing::warn!(error = %e, "cannot accept HTTP connections; pausing for a second");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// The open connections, oldest first.
#[derive(Default)]
struct Conns {
    slots: Mutex<Registry>,
    /// A connection ended or a request finished: room may have been made.
    changed: Notify,
}

#[derive(Default)]
struct Registry {
    next_id: u64,
    open: BTreeMap<u64, Slot>,
}

/// One open connection: its requests in flight, and the bell that closes it.
#[derive(Clone, Default)]
struct Slot {
    busy: Arc<AtomicUsize>,
    evict: Arc<Notify>,
    /// The bell has rung; the connection is closing.
    evicted: Arc<AtomicBool>,
}

impl Conns {
    /// Makes room for one more connection (see the module doc) and registers it.
    async fn admit(&self, max: usize) -> (u64, Slot) {
        loop {
            let changed = self.changed.notified();
            {
                let mut reg = self.slots.lock().unwrap_or_else(|p| p.into_inner());
                if reg.open.len() < max {
                    let id = reg.next_id;
                    reg.next_id += 1;
                    let slot = Slot::default();
                    reg.open.insert(id, slot.clone());
                    return (id, slot);
                }
                // An evicted connection stays counted until its task has closed the socket
                // (`leave`): counting it out at the bell would let accept outrun the closing and
                // run the process out of descriptors.
                let idle = reg
                    .open
                    .values()
                    .find(|s| s.busy.load(Ordering::Acquire) == 0 && !s.evicted.load(Ordering::Acquire));
                if let Some(slot) = idle {
                    slot.evicted.store(true, Ordering::Release);
                    slot.evict.notify_one();
                }
            }
            changed.await;
        }
    }

    fn leave(&self, id: u64) {
        self.slots.lock().unwrap_or_else(|p| p.into_inner()).open.remove(&id);
        self.changed.notify_waiters();
    }

    /// Waits until no connection is registered.
    async fn drained(&self) {
        loop {
            let changed = self.changed.notified();
            if self.slots.lock().unwrap_or_else(|p| p.into_inner()).open.is_empty() {
                return;
            }
            changed.await;
        }
    }
}

/// A request in flight on a connection; the connection cannot be evicted while one is.
struct InFlight {
    conns: Arc<Conns>,
    busy: Arc<AtomicUsize>,
}

impl InFlight {
    fn enter(conns: &Arc<Conns>, busy: &Arc<AtomicUsize>) -> Self {
        busy.fetch_add(1, Ordering::AcqRel);
        InFlight { conns: conns.clone(), busy: busy.clone() }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.busy.fetch_sub(1, Ordering::AcqRel);
        self.conns.changed.notify_waiters();
    }
}

/// The error of a body that did not arrive in time; [`crate::extract`] answers it with a 408.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?}")]
pub struct BodyTimeout(pub Duration);

impl BodyTimeout {
    /// The limit of the timeout somewhere in `e`'s chain of causes, if it is there.
    pub fn in_chain(e: &(dyn std::error::Error + 'static)) -> Option<Duration> {
        let mut cur = Some(e);
        while let Some(e) = cur {
            if let Some(t) = e.downcast_ref::<BodyTimeout>() {
                return Some(t.0);
            }
            cur = e.source();
        }
        None
    }
}

/// A request body that fails with [`BodyTimeout`] once its deadline passes.
struct Deadline {
    inner: hyper::body::Incoming,
    sleep: Pin<Box<tokio::time::Sleep>>,
    limit: Duration,
}

impl Deadline {
    fn new(inner: hyper::body::Incoming, limit: Duration) -> Self {
        Deadline { inner, sleep: Box::pin(tokio::time::sleep(limit)), limit }
    }
}

impl HttpBody for Deadline {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => Poll::Ready(frame.map(|f| f.map_err(axum::Error::new))),
            Poll::Pending => match this.sleep.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(axum::Error::new(BodyTimeout(this.limit))))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod descriptor_tests {
    use super::*;

    #[test]
    fn the_connection_limit_fits_the_descriptor_limit() {
        let asked = ConnLimits::default();
        assert_eq!(asked.fit_to_descriptors(None).max_connections, 512);
        assert_eq!(asked.fit_to_descriptors(Some(20_000)).max_connections, 512);
        assert_eq!(asked.fit_to_descriptors(Some(1_024)).max_connections, 512);
        assert_eq!(asked.fit_to_descriptors(Some(600)).max_connections, 472);
        assert_eq!(asked.fit_to_descriptors(Some(256)).max_connections, 128);
        assert_eq!(asked.fit_to_descriptors(Some(1)).max_connections, 1);
        assert_eq!(asked.fit_to_descriptors(Some(256)).header_read_timeout, asked.header_read_timeout);
    }
}
