//! The pure core of kairos.
//!
//! Everything here is a function of its arguments: no database, no network, no wall clock.
//! The executor asks the core *what should happen* to a job after an attempt
//! ([`plan_completion`]), and the store carries the answer out in one transaction. Keeping the
//! decision here means both backends (SQLite, PostgreSQL) behave identically and the rules can
//! be tested without a database.

pub mod clock;
pub mod enqueue;
pub mod error;
pub mod instant;
pub mod job;
pub mod lifecycle;
pub mod outcome;
pub mod repeat;

pub use clock::{Clock, ManualClock, SkewedClock};
pub use enqueue::{EnqueueRequest, MAX_PAYLOAD_BYTES, NewJob};
pub use error::{Error, Result};
pub use job::{Job, JobLogEntry, JobLogOutcome, JobTable, JobType, NodeInfo, NodeSettings, new_id};
pub use lifecycle::{JobEvent, JobState};
pub use outcome::{AttemptResult, Completion, EXCEPTION_MSG_MAX_CHARS, RetryPolicy, plan_completion};
pub use repeat::{DEFAULT_MIN_REPEAT_INTERVAL, Repeat};

pub use jiff::{SignedDuration, Timestamp};
