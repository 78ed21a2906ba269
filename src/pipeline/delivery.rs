//! The export thread: encodes each batch once and delivers it, retrying what may succeed later.
//!
//! It owns a single-threaded tokio runtime of its own, so closing never waits on the caller's
//! runtime (blocking on a `current_thread` runtime from its own thread deadlocks), and it
//! learns the outcome of every send itself rather than trusting a provider's `shutdown`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::stats::Stats;
use super::{Deadline, RetryPolicy};
use crate::assemble::Span;
use crate::export::{ExportError, Exporter};

pub(crate) enum ToDelivery {
    Batch(Vec<Span>),
    /// Reply once every batch before this one has been dealt with.
    Flush(Sender<()>),
}

/// Sleeps are cut into steps this long, so a close that begins mid-backoff is noticed.
const SLEEP_STEP: Duration = Duration::from_millis(50);

struct Delivery {
    exporter: Exporter,
    stats: Arc<Stats>,
    deadline: Deadline,
    retry: RetryPolicy,
    /// Failed attempts since the last success; the first of a streak is logged as a warning.
    failing: u64,
    logged_losses: u64,
}

pub(super) fn run<F>(
    make_exporter: F,
    ready: Sender<Result<String, ExportError>>,
    batches: Receiver<ToDelivery>,
    done: Sender<()>,
    stats: Arc<Stats>,
    deadline: Deadline,
    retry: RetryPolicy,
) where
    F: FnOnce() -> Result<Exporter, ExportError>,
{
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(ExportError::Setup(format!("cannot start a runtime: {e}"))));
            return;
        }
    };
    let exporter = {
        let _entered = runtime.enter();
        make_exporter()
    };
    let exporter = match exporter {
        Ok(e) => e,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let _ = ready.send(Ok(exporter.describe()));
    let mut d = Delivery {
        exporter,
        stats,
        deadline,
        retry,
        failing: 0,
        logged_losses: 0,
    };
    for message in batches.iter() {
        match message {
            ToDelivery::Batch(spans) => runtime.block_on(d.deliver(spans)),
            ToDelivery::Flush(ack) => {
                if let Err(e) = d.exporter.force_flush() {
                    tracing::error!("{e}");
                }
                let _ = ack.send(());
            }
        }
    }
    if let Err(e) = d.exporter.shutdown() {
        tracing::error!("{e}");
    }
    let _ = done.send(());
}

impl Delivery {
    fn closing_by(&self) -> Option<Instant> {
        *self.deadline.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn deliver(&mut self, spans: Vec<Span>) {
        let count = spans.len() as u64;
        let payload = self.exporter.prepare(spans);
        let started = Instant::now();
        let mut backoff = self.retry.initial_backoff;
        loop {
            let error = match self.exporter.send(&payload).await {
                Ok(done) => {
                    Stats::add(&self.stats.exported, done.accepted);
                    Stats::add(&self.stats.rejected, done.rejected);
                    if self.failing > 0 {
                        tracing::info!(
                            "delivering to {} again, after {} failed attempts",
                            self.exporter.describe(),
                            self.failing
                        );
                        self.failing = 0;
                    }
                    return;
                }
                Err(e) => e,
            };
            Stats::add(&self.stats.export_errors, 1);
            self.failing += 1;
            let mut give_up_at = started + self.retry.max_elapsed;
            if let Some(d) = self.closing_by() {
                give_up_at = give_up_at.min(d);
            }
            let wait = error
                .retry_after()
                .unwrap_or(backoff)
                .min(self.retry.max_elapsed);
            if self.exporter.retries() && error.is_retryable() && Instant::now() + wait < give_up_at {
                if self.failing == 1 {
                    tracing::warn!("{error}; retrying with backoff");
                } else {
                    tracing::debug!("{error}; retrying in {wait:?}");
                }
                self.sleep(wait).await;
                backoff = (backoff * 2).min(self.retry.max_backoff);
                continue;
            }
            Stats::add(&self.stats.failed, count);
            self.logged_losses += 1;
            if self.logged_losses <= 100 {
                tracing::error!("{count} spans not delivered: {error}");
            }
            return;
        }
    }

    /// Sleeps for `wait`, or less if a close begins meanwhile.
    async fn sleep(&self, wait: Duration) {
        let end = Instant::now() + wait;
        let closing_at_start = self.closing_by().is_some();
        loop {
            let now = Instant::now();
            if now >= end {
                return;
            }
            if !closing_at_start && self.closing_by().is_some() {
                return;
            }
            tokio::time::sleep((end - now).min(SLEEP_STEP)).await;
        }
    }
}
