//! What the benchmark handler records: one lateness sample per call (start minus due date, both
//! on the database clock), and a wake-up when the expected number of calls is reached.

use jiff::Timestamp;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

#[derive(Debug, Default)]
pub struct Recorder {
    /// Lateness in microseconds, in call order.
    samples: Mutex<Vec<i64>>,
    /// The latest attempt start seen in the phase.
    last_start: Mutex<Option<Timestamp>>,
    calls: AtomicU64,
    target: AtomicU64,
    reached: Notify,
}

impl Recorder {
    /// Starts a phase: forgets earlier samples and waits for `target` calls.
    pub fn begin(&self, target: u64) {
        let mut s = self.lock();
        s.clear();
        s.reserve(usize::try_from(target).unwrap_or(0).min(10_000_000));
        *self.last_start.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.calls.store(0, Ordering::SeqCst);
        self.target.store(target, Ordering::SeqCst);
    }

    /// Called by the handler.
    pub fn record(&self, started: Timestamp, due: Option<Timestamp>) {
        {
            let mut last = self.last_start.lock().unwrap_or_else(|e| e.into_inner());
            if last.is_none_or(|l| l < started) {
                *last = Some(started);
            }
        }
        if let Some(due) = due {
            let late = started.duration_since(due).as_micros();
            self.lock().push(i64::try_from(late).unwrap_or(i64::MAX));
        }
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if n == self.target.load(Ordering::SeqCst) {
            self.reached.notify_one();
        }
    }

    /// The latest attempt start of the phase.
    pub fn last_start(&self) -> Option<Timestamp> {
        *self.last_start.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }

    /// Waits until the phase's target is reached or `timeout` passes, calling `tick` with the
    /// number of calls so far every 100 ms (for a progress bar). Returns whether it was reached.
    pub async fn wait(&self, timeout: Duration, mut tick: impl FnMut(u64)) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if self.calls() >= self.target.load(Ordering::SeqCst) {
                tick(self.calls());
                return true;
            }
            let next = (tokio::time::Instant::now() + Duration::from_millis(100)).min(deadline);
            tokio::select! {
                _ = self.reached.notified() => {}
                _ = tokio::time::sleep_until(next) => {}
            }
            tick(self.calls());
            if tokio::time::Instant::now() >= deadline {
                return self.calls() >= self.target.load(Ordering::SeqCst);
            }
        }
    }

    /// The samples of the phase, sorted.
    pub fn sorted_samples(&self) -> Vec<i64> {
        let mut s = self.lock().clone();
        s.sort_unstable();
        s
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<i64>> {
        self.samples.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The nearest-rank percentile `p` (0 < p ≤ 100) of sorted microseconds, in milliseconds with
/// one decimal; `None` without samples.
pub fn percentile_ms(sorted: &[i64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    let v = sorted[rank.clamp(1, sorted.len()) - 1];
    Some(micros_to_ms(v))
}

pub fn micros_to_ms(v: i64) -> f64 {
    (v as f64 / 100.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let v: Vec<i64> = (1..=100).map(|i| i * 1000).collect();
        assert_eq!(percentile_ms(&v, 50.0), Some(50.0));
        assert_eq!(percentile_ms(&v, 99.0), Some(99.0));
        assert_eq!(percentile_ms(&v, 100.0), Some(100.0));
        assert_eq!(percentile_ms(&[1234], 50.0), Some(1.2));
        assert_eq!(percentile_ms(&[], 50.0), None);
    }

    #[tokio::test]
    async fn waiting_ends_when_the_target_is_reached() {
        let r = std::sync::Arc::new(Recorder::default());
        r.begin(2);
        let t: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let r2 = r.clone();
        tokio::spawn(async move {
            r2.record(t + jiff::SignedDuration::from_millis(5), Some(t));
            r2.record(t, None);
        });
        assert!(r.wait(Duration::from_secs(5), |_| {}).await);
        assert_eq!(r.sorted_samples(), vec![5000]);
    }
}
