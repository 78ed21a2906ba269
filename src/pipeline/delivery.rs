//! The export thread: encodes each batch once and delivers it; what the collector cannot take
//! now goes to the spool on disk, and comes back when it answers again.
//!
//! It owns a single-threaded tokio runtime of its own, so closing never waits on the caller's
//! runtime (blocking on a `current_thread` runtime from its own thread deadlocks), and it
//! learns the outcome of every send itself rather than trusting a provider's `shutdown`.
//!
//! With a spool, an outage costs the agent nothing: the first failed send marks the collector
//! as down, later batches go straight to disk without a network attempt, and a probe with the
//! oldest spooled batch, on exponential backoff, finds out when it is back; then the spool
//! drains, oldest first. Without a spool, a batch is retried with backoff until it succeeds,
//! its retry budget runs out, or the close deadline comes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use super::spool::{self, Spool};
use super::stats::Stats;
use super::{Deadline, RetryPolicy, SpoolConfig};
use crate::export::{ExportError, Exported, Payload, SpanExporter};

pub(crate) enum ToDelivery {
    /// A batch the assemble thread encoded.
    Batch(Payload),
    /// Reply once every batch before this one has been dealt with.
    Flush(Sender<()>),
}

/// Sleeps are cut into steps this long, so a close that begins mid-backoff is noticed.
const SLEEP_STEP: Duration = Duration::from_millis(50);
/// How often an idle exporter looks for batches other processes spooled.
const RESCAN_EVERY: Duration = Duration::from_secs(10);
/// Longest wait between probes of a collector that is down: a probe costs one request, and
/// this is how late, at worst, the spool starts to drain after the collector comes back.
const MAX_PROBE_BACKOFF: Duration = Duration::from_secs(10);

struct Delivery {
    exporter: Box<dyn SpanExporter>,
    stats: Arc<Stats>,
    deadline: Deadline,
    retry: RetryPolicy,
    spool: Option<Spool>,
    /// The last send failed in a way that may pass: batches go to the spool until a probe
    /// gets through.
    outage: bool,
    next_probe: Instant,
    probe_backoff: Duration,
    /// Failed attempts since the last success; the first of a streak is logged as a warning.
    failing: u64,
    logged_losses: u64,
    warned_spool_full: bool,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn run<F>(
    make_exporter: F,
    spool: Option<SpoolConfig>,
    ready: Sender<Result<String, ExportError>>,
    batches: Receiver<ToDelivery>,
    done: Sender<()>,
    stats: Arc<Stats>,
    deadline: Deadline,
    retry: RetryPolicy,
) where
    F: FnOnce() -> Result<Box<dyn SpanExporter>, ExportError>,
{
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(ExportError::Setup(format!(
                "cannot start a runtime: {e}"
            ))));
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
    let spool = match (spool, exporter.spool_key()) {
        (Some(cfg), Some(key)) => {
            let dir = spool::for_destination(&cfg.root, &key);
            match Spool::open(&dir, cfg.max_bytes) {
                Ok(s) => {
                    if !s.is_empty() {
                        tracing::info!(
                            "{} spans from earlier runs wait in the spool {}; sending them",
                            s.spans(),
                            dir.display()
                        );
                    }
                    Some(s)
                }
                Err(e) => {
                    let _ = ready.send(Err(ExportError::Setup(format!(
                        "cannot open the spool {}: {e}",
                        dir.display()
                    ))));
                    return;
                }
            }
        }
        _ => None,
    };
    let _ = ready.send(Ok(exporter.describe()));
    let mut d = Delivery {
        exporter,
        stats,
        deadline,
        retry,
        spool,
        outage: false,
        next_probe: Instant::now(),
        probe_backoff: retry.initial_backoff,
        failing: 0,
        logged_losses: 0,
        warned_spool_full: false,
    };
    loop {
        match batches.recv_timeout(d.time_to_probe()) {
            Ok(ToDelivery::Batch(payload)) => runtime.block_on(d.deliver(payload)),
            Ok(ToDelivery::Flush(ack)) => {
                if let Err(e) = d.exporter.force_flush() {
                    tracing::error!("{e}");
                }
                let _ = ack.send(());
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if d.probe_due() {
            runtime.block_on(d.probe());
        }
    }
    // Closing: what could not be sent is on disk by now; send what the spool holds while
    // the collector answers and the deadline allows, so a restart delivers an old spool.
    runtime.block_on(d.drain_before_close());
    let left = d.closing_by().map_or(Duration::from_secs(5), |by| {
        by.saturating_duration_since(Instant::now())
    });
    if let Err(e) = d.exporter.shutdown_with_timeout(left) {
        tracing::error!("{e}");
    }
    let _ = done.send(());
}

impl Delivery {
    fn closing_by(&self) -> Option<Instant> {
        *self.deadline.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How long a send may take: the request timeout, or what is left before the deadline.
    fn send_timeout(&self) -> Option<Duration> {
        self.closing_by().map(|d| {
            d.saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1))
        })
    }

    fn time_to_probe(&self) -> Duration {
        match &self.spool {
            Some(s) if !s.is_empty() => self.next_probe.saturating_duration_since(Instant::now()),
            Some(_) => RESCAN_EVERY,
            None => Duration::from_secs(3600),
        }
    }

    fn probe_due(&mut self) -> bool {
        let Some(s) = &mut self.spool else {
            return false;
        };
        if s.is_empty() {
            // Other exporters sharing the spool may have left batches in it.
            if Instant::now() >= self.next_probe {
                let _ = s.rescan();
                self.next_probe = Instant::now() + RESCAN_EVERY;
            }
            return false;
        }
        Instant::now() >= self.next_probe
    }

    fn record_success(&mut self, done: Exported, from_spool: bool) {
        if from_spool {
            Stats::add(&self.stats.unspooled, done.accepted);
        } else {
            Stats::add(&self.stats.exported, done.accepted);
        }
        Stats::add(&self.stats.rejected, done.rejected);
        if self.failing > 0 {
            tracing::info!(
                "delivering to {} again, after {} failed attempts",
                self.exporter.describe(),
                self.failing
            );
            self.failing = 0;
        }
        self.outage = false;
        self.probe_backoff = self.retry.initial_backoff;
        self.next_probe = Instant::now();
    }

    fn record_failure(&mut self, error: &ExportError, what: &str) {
        Stats::add(&self.stats.export_errors, 1);
        self.failing += 1;
        if self.failing == 1 {
            tracing::warn!("{error}; {what}");
        } else {
            tracing::debug!("{error}; {what}");
        }
    }

    fn lose(&mut self, count: u64, error: &dyn std::fmt::Display) {
        Stats::add(&self.stats.failed, count);
        self.logged_losses += 1;
        if self.logged_losses <= 100 {
            tracing::error!("{count} spans not delivered: {error}");
        }
    }

    fn keep_in_spool(&mut self, payload: &Payload) {
        let count = payload.spans;
        let Some(spool) = &mut self.spool else {
            self.lose(count, &"no spool to keep them in");
            return;
        };
        match spool.push(&payload.body, count) {
            Ok(evicted) => {
                Stats::add(&self.stats.spooled, count);
                if evicted.spans > 0 {
                    Stats::add(&self.stats.spool_dropped, evicted.spans);
                    if !self.warned_spool_full {
                        self.warned_spool_full = true;
                        tracing::warn!(
                            "the spool {} is full; its oldest batches are being dropped ({} spans so far; the total is reported at exit)",
                            spool.dir().display(),
                            evicted.spans
                        );
                    }
                }
            }
            Err(e) => {
                let dir = spool.dir().display().to_string();
                self.lose(count, &format!("cannot write to the spool {dir}: {e}"));
            }
        }
    }

    async fn deliver(&mut self, payload: Payload) {
        if self.spool.is_some() && self.outage {
            self.keep_in_spool(&payload);
            return;
        }
        let count = payload.spans;
        let started = Instant::now();
        let mut backoff = self.retry.initial_backoff;
        loop {
            let sent = self.exporter.export(payload.clone(), self.send_timeout());
            let error = match sent.await {
                Ok(done) => return self.record_success(done, false),
                Err(e) => e,
            };
            let retryable = error.is_retryable();
            if retryable && self.spool.is_some() {
                self.record_failure(&error, "keeping batches in the spool until it answers");
                self.outage = true;
                self.next_probe = Instant::now() + self.probe_backoff;
                self.keep_in_spool(&payload);
                return;
            }
            let mut give_up_at = started + self.retry.max_elapsed;
            if let Some(d) = self.closing_by() {
                give_up_at = give_up_at.min(d);
            }
            let wait = error
                .retry_after()
                .unwrap_or(backoff)
                .min(self.retry.max_elapsed);
            if retryable && Instant::now() + wait < give_up_at {
                self.record_failure(&error, "retrying with backoff");
                self.sleep(wait).await;
                backoff = (backoff * 2).min(self.retry.max_backoff);
                continue;
            }
            Stats::add(&self.stats.export_errors, 1);
            self.failing += 1;
            return self.lose(count, &error);
        }
    }

    /// Sends the oldest spooled batch: the way to find out that the collector is back.
    async fn probe(&mut self) {
        let Some(spool) = &mut self.spool else { return };
        let claimed = match spool.take_oldest() {
            Ok(Some(c)) => c,
            Ok(None) => return,
            Err(e) => {
                tracing::error!("cannot read the spool {}: {e}", spool.dir().display());
                self.next_probe = Instant::now() + MAX_PROBE_BACKOFF;
                return;
            }
        };
        let spans = claimed.spans();
        let payload = Payload {
            body: claimed.body.clone().into(),
            spans,
        };
        let result = self.exporter.export(payload, self.send_timeout()).await;
        let Some(spool) = self.spool.as_mut() else {
            return;
        };
        match result {
            Ok(done) => {
                if let Err(e) = spool.done(claimed) {
                    tracing::warn!("a delivered batch stays in the spool: {e}");
                }
                self.record_success(done, true);
            }
            Err(e) if e.is_retryable() => {
                if let Err(io) = spool.give_back(claimed) {
                    tracing::error!("cannot return a batch to the spool: {io}");
                }
                self.record_failure(&e, "spooled batches wait for it");
                self.outage = true;
                self.probe_backoff = (self.probe_backoff * 2).min(MAX_PROBE_BACKOFF);
                self.next_probe = Instant::now() + self.probe_backoff;
            }
            Err(e) => {
                // The collector will never take this batch; keeping it would block the rest.
                let _ = spool.done(claimed);
                self.lose(spans, &format!("a spooled batch was refused: {e}"));
            }
        }
    }

    /// At close: one more look at the collector, even mid-outage (it may be back since the
    /// last probe), and while it answers, the spool is sent until the deadline.
    async fn drain_before_close(&mut self) {
        self.outage = false;
        while self.spool.as_ref().is_some_and(|s| !s.is_empty()) && !self.outage {
            if self.closing_by().is_some_and(|d| Instant::now() >= d) {
                return;
            }
            self.probe().await;
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
