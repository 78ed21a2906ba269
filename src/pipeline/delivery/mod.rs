//! The export thread: delivers each encoded batch, several at once; what the collector cannot
//! take now goes to the spool on disk, and comes back when it answers again.
//!
//! It owns a single-threaded tokio runtime of its own, so closing never waits on the caller's
//! runtime (blocking on a `current_thread` runtime from its own thread deadlocks), and it
//! learns the outcome of every export itself rather than trusting a provider's `shutdown`.
//!
//! Up to `max_in_flight` exports run at once (`OTEL_BSP_MAX_CONCURRENT_EXPORTS`): a collector
//! tens of milliseconds away would otherwise cap the rate at one batch per round trip, and on
//! one HTTP/2 connection the next request's data also acknowledges what the collector sent
//! last, where a lone request can wait on the collector's Nagle and our delayed ACK. Batches
//! complete in any order; each is in exactly one place at a time (in flight, waiting to be
//! retried, in the spool, delivered, or counted as lost), so nothing is sent twice and no
//! loss goes uncounted.
//!
//! Nothing waits past the close: a fifth of the close window before its deadline (at most
//! half a second), every export still unanswered is abandoned and its batch, whose bytes are
//! kept until its answer, goes to the spool (or, with none, is counted as failed), so that a
//! collector that accepts connections and never answers costs no span that a spool could keep.
//! Each batch is counted by this thread alone, once.
//!
//! Batches waiting for a retry hold their place among the exports in flight: while the
//! collector is down, no new batch is taken until one of them settles, so memory stays bounded
//! and back-pressure reaches the input (a stream waits; an in-process hook drops and counts).
//!
//! With a spool, an outage costs the agent nothing: the first failed export marks the
//! collector as down, later batches go straight to disk without a network attempt, and a probe
//! with the oldest spooled batch, on exponential backoff, finds out when it is back; then the
//! spool drains, oldest first, with as many exports in flight as live traffic gets, in the
//! room live batches leave (`spooling`). Without a spool, a batch is retried with backoff
//! until it succeeds, its retry budget runs out, or the close deadline comes.

mod close;
mod counts;
mod metrics;
mod retry;
mod spooling;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::spool::{self, Claimed, Spool};
use super::stats::Stats;
use super::{Deadline, RetryPolicy, SpoolConfig};
use crate::export::{Batch, ExportError, Exported, SpanExporter};

pub(crate) enum ToDelivery {
    /// A batch the assemble thread encoded.
    Batch(Batch),
    /// Reply once every batch before this one has been dealt with: delivered, refused, or
    /// (with a spool) in it. At the instant given, exports still unanswered are abandoned and
    /// their batches spooled, so that a flush never waits on a slow collector for longer.
    Flush(Sender<()>, Instant),
    /// An encoded `ExportMetricsServiceRequest`: sent on its own, in order (`metrics`).
    Metrics(Batch),
}

/// How often an idle exporter looks for batches other processes spooled.
const RESCAN_EVERY: Duration = Duration::from_secs(10);
/// Longest wait between probes of a collector that is down: a probe costs one request, and
/// this is how late, at worst, the spool starts to drain after the collector comes back.
const MAX_PROBE_BACKOFF: Duration = Duration::from_secs(10);

/// One batch on its way: what it is, since when, and when to try it next.
struct Attempt {
    batch: Batch,
    started: Instant,
    backoff: Duration,
    due: Instant,
}

/// An export under way: its batch, and the spool file the batch came from, if it did.
struct Flight {
    attempt: Attempt,
    claim: Option<Claimed>,
}

/// How an export task ended: its answer, or the task was abandoned (or died).
type Finished = Result<(tokio::task::Id, Result<Exported, ExportError>), tokio::task::JoinError>;

struct Delivery {
    exporter: Arc<dyn SpanExporter>,
    stats: Arc<Stats>,
    deadline: Deadline,
    retry: RetryPolicy,
    spool: Option<Spool>,
    max_in_flight: usize,
    in_flight: JoinSet<Result<Exported, ExportError>>,
    /// Each running export's batch, by task, until its answer: a task abandoned at the close,
    /// or one that dies, still has its batch spooled, given back to the spool, or counted.
    flights: std::collections::HashMap<tokio::task::Id, Flight>,
    /// Failed batches waiting for their next attempt (no spool).
    retries: Vec<Attempt>,
    /// A close began, and the retries waiting for it were made due at once.
    closing_seen: bool,
    /// The close's cut came: nothing more goes to the network.
    cut: bool,
    /// The last export failed in a way that may pass: batches go to the spool until a probe
    /// gets through.
    outage: bool,
    /// An export got through since the last failure: the spool drains with several exports
    /// in flight, not one probe at a time.
    verified: bool,
    next_probe: Instant,
    probe_backoff: Duration,
    /// Failed attempts since the last success; the first of a streak is logged as a warning.
    failing: u64,
    logged_losses: u64,
    warned_spool_full: bool,
    /// Where metrics go, if anywhere.
    metrics: Option<metrics::MetricsSender>,
}

/// What the export thread is started with.
pub(super) struct Start<F> {
    pub make_exporter: F,
    pub spool: Option<SpoolConfig>,
    pub ready: Sender<Result<String, ExportError>>,
    pub batches: mpsc::Receiver<ToDelivery>,
    pub done: Sender<()>,
    pub stats: Arc<Stats>,
    pub deadline: Deadline,
    pub retry: RetryPolicy,
    pub max_in_flight: usize,
    pub metrics: Option<super::MetricsConfig>,
}

pub(super) fn run<F>(start: Start<F>)
where
    F: FnOnce() -> Result<Box<dyn SpanExporter>, ExportError>,
{
    let Start {
        make_exporter,
        spool,
        ready,
        batches,
        done,
        stats,
        deadline,
        retry,
        max_in_flight,
        metrics,
    } = start;
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
    let exporter: Arc<dyn SpanExporter> = match exporter {
        Ok(e) => e.into(),
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let spool_config = spool;
    let spool = match (&spool_config, exporter.spool_key()) {
        (Some(cfg), Some(key)) => {
            match spooling::open(cfg, &key, exporter.former_spool_key().as_deref()) {
                Ok(s) => Some(s),
                Err(e) => {
                    let _ = ready.send(Err(e));
                    return;
                }
            }
        }
        _ => None,
    };
    let metrics = metrics.and_then(|m| {
        let _entered = runtime.enter();
        metrics::MetricsSender::new(&m, spool_config.as_ref(), deadline.clone())
    });
    let _ = ready.send(Ok(exporter.describe()));
    let mut d = Delivery {
        exporter,
        stats,
        deadline,
        retry,
        spool,
        max_in_flight: max_in_flight.max(1),
        in_flight: JoinSet::new(),
        flights: std::collections::HashMap::new(),
        retries: Vec::new(),
        closing_seen: false,
        cut: false,
        outage: false,
        verified: false,
        next_probe: Instant::now(),
        probe_backoff: retry.initial_backoff,
        failing: 0,
        logged_losses: 0,
        warned_spool_full: false,
        metrics,
    };
    runtime.block_on(d.serve(batches));
    // Closing: what could not be sent is on disk by now; send what the spool holds while
    // the collector answers and the deadline allows, so a restart delivers an old spool.
    if !d.cut {
        runtime.block_on(d.drain_before_close());
    }
    // Until the close's end, not its cut: at the cut the worker gives back what it could not
    // send, and that needs the runtime running.
    if let Some(m) = &mut d.metrics {
        runtime.block_on(m.settle(d.deadline.by()));
    }
    let left = d.closing_by().map_or(Duration::from_secs(5), |by| {
        by.saturating_duration_since(Instant::now())
    });
    if let Err(e) = d.exporter.shutdown_with_timeout(left) {
        tracing::error!("{e}");
    }
    let _ = done.send(());
}

impl Delivery {
    /// Takes batches until the input closes and every batch is settled.
    async fn serve(&mut self, mut batches: mpsc::Receiver<ToDelivery>) {
        let mut open = true;
        loop {
            self.start_due_retries();
            if !open && self.in_flight.is_empty() && self.retries.is_empty() {
                return;
            }
            // Waiting retries hold their place: a collector that is down must not make
            // batches pile up in memory. After the cut every batch goes to the spool at once.
            let room = self.cut || self.in_flight.len() + self.retries.len() < self.max_in_flight;
            let wake = self.next_wake();
            let deadline = self.deadline.clone();
            tokio::select! {
                biased;
                Some(done) = self.in_flight.join_next_with_id(), if !self.in_flight.is_empty() => {
                    self.finished(done);
                }
                _ = deadline.cut(), if !self.cut => self.cut_short(),
                msg = batches.recv(), if open && room => match msg {
                    Some(ToDelivery::Batch(batch)) => self.dispatch(batch),
                    Some(ToDelivery::Metrics(batch)) => {
                        if let Some(m) = &mut self.metrics {
                            if self.cut {
                                m.keep_or_lose(batch);
                            } else {
                                m.send(batch);
                            }
                        }
                    }
                    // Metrics are not waited for: they are in their spool already, or on
                    // their way from memory without one.
                    Some(ToDelivery::Flush(ack, by)) => {
                        self.settle(Some(by)).await;
                        if let Err(e) = self.exporter.force_flush() {
                            tracing::error!("{e}");
                        }
                        let _ = ack.send(());
                    }
                    None => open = false,
                },
                _ = tokio::time::sleep_until(wake.into()) => {}
            }
            if !self.cut {
                let due = self.probe_due();
                if self.verified && !self.outage {
                    self.drain_spool(!batches.is_empty());
                } else if due && self.in_flight.is_empty() {
                    self.probe().await;
                }
            }
        }
    }

    /// Waits until nothing is in flight or waiting for a retry. With a spool and a flush's
    /// deadline `by`, what is still unanswered then goes to the spool instead ([`Self::flush_cut`]).
    async fn settle(&mut self, mut by: Option<Instant>) {
        if self.spool.is_none() {
            // Nothing could keep what is abandoned: waiting is all there is.
            by = None;
        }
        loop {
            self.start_due_retries();
            if self.in_flight.is_empty() && self.retries.is_empty() {
                return;
            }
            let wake = self.next_wake();
            let deadline = self.deadline.clone();
            let flush_due = by.unwrap_or_else(|| wake + Duration::from_secs(3600));
            tokio::select! {
                Some(done) = self.in_flight.join_next_with_id(), if !self.in_flight.is_empty() => {
                    self.finished(done);
                }
                _ = deadline.cut(), if !self.cut => self.cut_short(),
                _ = tokio::time::sleep_until(flush_due.into()), if by.is_some() => {
                    by = None;
                    self.flush_cut();
                }
                _ = tokio::time::sleep_until(wake.into()) => {}
            }
        }
    }

    /// When something may next need doing: a retry falls due, a probe, a look at the spool,
    /// or the close (which makes waiting retries due at once).
    fn next_wake(&self) -> Instant {
        let now = Instant::now();
        let mut wake = now + self.time_to_probe();
        if let Some(a) = self.retries.iter().map(|a| a.due).min() {
            wake = wake.min(a);
        }
        if !self.closing_seen {
            // A close is noticed within this long.
            wake = wake.min(now + Duration::from_millis(50));
        }
        wake.max(now)
    }

    /// A new batch: to the spool during an outage, else out.
    fn dispatch(&mut self, batch: Batch) {
        if self.cut {
            self.unanswered(&batch);
            return;
        }
        if self.spool.is_some() && self.outage {
            self.keep_in_spool(&batch);
            return;
        }
        let attempt = self.first_attempt(batch);
        self.spawn(attempt, None);
    }

    fn first_attempt(&self, batch: Batch) -> Attempt {
        let now = Instant::now();
        Attempt {
            batch,
            started: now,
            backoff: self.retry.initial_backoff,
            due: now,
        }
    }

    fn spawn(&mut self, attempt: Attempt, claim: Option<Claimed>) {
        let export = self
            .exporter
            .export(attempt.batch.clone(), self.send_timeout());
        let handle = self.in_flight.spawn(export);
        self.flights.insert(handle.id(), Flight { attempt, claim });
    }

    fn finished(&mut self, done: Finished) {
        let (id, result) = match done {
            Ok((id, result)) => (id, Ok(result)),
            Err(e) => (e.id(), Err(e)),
        };
        let Some(Flight { attempt, claim }) = self.flights.remove(&id) else {
            return;
        };
        if let Some(claim) = claim {
            return self.spooled_finished(claim, result);
        }
        match result {
            Ok(Ok(exported)) => self.record_success(exported, false),
            // Cut short: kept for later, unless the collector refused it for good.
            Ok(Err(e)) if self.cut && e.is_retryable() => self.unanswered(&attempt.batch),
            Ok(Err(error)) => self.failed(attempt, error),
            Err(e) if e.is_cancelled() => self.unanswered(&attempt.batch),
            // An export that panicked: its batch is lost, and counted.
            Err(e) => self.lose(attempt.batch.spans, &format!("the export failed: {e}")),
        }
    }
}

/// The spool folder for `key` below the configured root.
fn spool_dir(cfg: &SpoolConfig, key: &str) -> std::path::PathBuf {
    spool::for_destination(&cfg.root, key)
}

#[cfg(test)]
mod tests;
