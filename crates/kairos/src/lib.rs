//! kairos as a library (SPEC I1): build an engine on a store URL, register handlers, start it,
//! enqueue jobs — also inside a database transaction you already hold (SPEC C1) — and stop it.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kairos::Error> {
//! use kairos::{Engine, EnqueueRequest, handler_fn};
//! let engine = Engine::builder("sqlite://kairos.db")
//!     .handler("send-reminder", handler_fn(|ctx| async move {
//!         println!("remind {}", ctx.payload);
//!         Ok(None)
//!     }))
//!     .build()
//!     .await?;
//! engine.start().await?;
//! engine.enqueue(&EnqueueRequest { handler: "send-reminder".into(), ..Default::default() }).await?;
//! engine.shutdown(std::time::Duration::from_secs(30)).await;
//! # Ok(()) }
//! ```

pub mod business;
pub mod commands;
pub mod doctor;
mod engine;
mod error;
pub mod identity;
pub mod outbox;
pub mod process;
pub mod reconcile;
pub mod saga;
pub mod scheduler;
mod store_url;
pub mod transaction;
pub mod two_phase;

pub use engine::{Engine, EngineBuilder, EngineSettings};
pub use error::Error;
/// The script sandbox's limits ([`EngineBuilder::script_limits`]).
pub use kairos_script::Limits as ScriptLimits;
pub use store_url::open_store;
pub use transaction::{CallerTransaction, Within};

pub use kairos_core::{
    Clock, Completion, EnqueueRequest, Job, JobLogEntry, JobLogOutcome, JobState, JobTable, JobType, ManualClock,
    NewJob, NodeInfo, NodeSettings, RetryPolicy, SignedDuration, SkewedClock, Timestamp, new_id, plan_completion,
};
pub use kairos_executor::{
    Answer, ExecutorConfig, Handler, HandlerError, Handlers, JobContext, Metrics, SystemClock, handler_fn,
};
pub use kairos_store::{self as store, Backend, Sql, Store};
