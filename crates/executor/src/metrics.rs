//! The executor's Prometheus metrics (SPEC I6). Labels are few and bounded (outcome, never a
//! job id), so cardinality stays flat however many jobs run.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabel {
    pub outcome: &'static str,
}

/// Counters and histograms of one node's executor.
#[derive(Debug)]
pub struct Metrics {
    /// Attempts finished, by outcome (succeeded, failed, dead-lettered, rescheduled).
    pub attempts: Family<OutcomeLabel, Counter>,
    /// Completions discarded because the lease had been lost (paused or partitioned node).
    pub lease_lost: Counter,
    /// Expired leases this node took over.
    pub takeovers: Counter,
    /// Seconds one acquisition round trip took.
    pub acquisition_seconds: Histogram,
    /// Jobs per acquisition.
    pub acquired_batch: Histogram,
    /// Lateness: due date to handler start, seconds (database clock).
    pub lateness_seconds: Histogram,
    /// Handler run time, seconds.
    pub handler_seconds: Histogram,
}

impl Default for Metrics {
    fn default() -> Self {
        let seconds = || {
            Histogram::new([
                0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
            ])
        };
        Metrics {
            attempts: Family::default(),
            lease_lost: Counter::default(),
            takeovers: Counter::default(),
            acquisition_seconds: seconds(),
            acquired_batch: Histogram::new([0.0, 1.0, 2.0, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0]),
            lateness_seconds: seconds(),
            handler_seconds: seconds(),
        }
    }
}

impl Metrics {
    /// Adds the metrics to `registry` under the `kairos_` prefix.
    pub fn register(&self, registry: &mut Registry) {
        registry.register("kairos_job_attempts", "Job attempts finished, by outcome", self.attempts.clone());
        registry.register(
            "kairos_job_lease_lost",
            "Completions discarded because the lease was lost",
            self.lease_lost.clone(),
        );
        registry.register("kairos_job_takeovers", "Expired leases taken over by this node", self.takeovers.clone());
        registry.register(
            "kairos_job_acquisition_seconds",
            "Time one acquisition took",
            self.acquisition_seconds.clone(),
        );
        registry.register("kairos_job_acquired_batch", "Jobs taken per acquisition", self.acquired_batch.clone());
        registry.register(
            "kairos_job_lateness_seconds",
            "Due date to handler start, by the database clock",
            self.lateness_seconds.clone(),
        );
        registry.register("kairos_job_handler_seconds", "Handler run time", self.handler_seconds.clone());
    }

    pub fn count(&self, outcome: &'static str) {
        self.attempts.get_or_create(&OutcomeLabel { outcome }).inc();
    }
}
