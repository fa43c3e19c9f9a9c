//! The clock seam.
//!
//! Due dates and leases are compared with the *database's* clock (SPEC J9), so the node's clock
//! is used only for what is local to a node: measuring how long a handler ran and when to poll
//! next. It is injected so tests can set a node's clock minutes ahead and show that nothing
//! fires early.

use jiff::{SignedDuration, Timestamp};
use std::sync::Mutex;

/// A source of the current instant for one node.
pub trait Clock: Send + Sync + std::fmt::Debug + 'static {
    fn now(&self) -> Timestamp;
}

/// A clock that only moves when told to; for tests.
#[derive(Debug)]
pub struct ManualClock(Mutex<Timestamp>);

impl ManualClock {
    pub fn new(at: Timestamp) -> Self {
        ManualClock(Mutex::new(at))
    }
    pub fn set(&self, at: Timestamp) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = at;
    }
    pub fn advance(&self, by: SignedDuration) {
        let mut t = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *t = t.saturating_add(by).unwrap_or(*t);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A clock offset from another one, e.g. a node whose clock runs three minutes fast.
#[derive(Debug)]
pub struct SkewedClock<C> {
    pub inner: C,
    pub skew: SignedDuration,
}

impl<C: Clock> Clock for SkewedClock<C> {
    fn now(&self) -> Timestamp {
        let t = self.inner.now();
        t.saturating_add(self.skew).unwrap_or(t)
    }
}
