//! Metrics on the export thread: written ahead to a spool of their own, then sent one export
//! at a time, in the order they were made, by a worker beside the span batches and never in
//! their way: a flush of spans never waits for a metrics export, and a collector that hangs on
//! metrics holds up nothing else.
//!
//! In order, because the points are deltas: the collector's `deltatocumulative` and
//! Prometheus' own converter keep a running total per series and drop a delta that ends
//! before the total's last point. So every export first goes to the metrics spool (a `metrics`
//! folder in the destination's spool folder, capped at an eighth of the spool's size), and the
//! worker sends the spool oldest first: this process, or the next one to send to the same
//! collector, before its own points. Once written, an export is safe: a resume point saved
//! after a flush never waits on a metrics endpoint answering.
//!
//! A failed export stays in the spool and the worker backs off (1 s, doubling, at most five
//! minutes) before it tries again; a collector with no metrics service (HTTP 404, gRPC
//! `Unimplemented`: one set up for traces only, or one restarting behind an ingress) is
//! treated the same way, so a later 200 resumes them. Without a spool (`--no-spool`) exports
//! wait in memory (a few at most) while the collector fails, and what cannot be kept is
//! counted and reported as lost at the end. An export the collector refuses for good is
//! dropped, never retried.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

mod worker;

use worker::Worker;

use crate::export::otlp::MetricsExporter;
use crate::export::Batch;
use crate::pipeline::spool::{self, Spool};
use crate::pipeline::{Deadline, MetricsConfig, SpoolConfig};

/// The metrics spool's share of the spool's size.
const SPOOL_SHARE: u64 = 8;
/// Messages waiting for the worker; without a spool, also the exports kept in memory while
/// the collector fails.
const QUEUED: usize = 64;
/// The first wait after a failure; it doubles up to [`MAX_BACKOFF`].
pub(super) const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(300);

pub(super) enum Msg {
    /// New points: in the spool already (`None`), or to send from memory (no spool).
    New(Option<Batch>),
    /// Answer once what came before was tried (the close).
    Settle(oneshot::Sender<()>),
}

/// Points that never reached the collector, for the report at the end.
#[derive(Default)]
pub(super) struct Losses {
    points: AtomicU64,
    exports: AtomicU64,
    /// Points waiting in memory (no spool): lost if the process ends first.
    pub(super) waiting: AtomicU64,
}

impl Losses {
    pub(super) fn add(&self, points: u64) {
        self.points.fetch_add(points, Ordering::Relaxed);
        self.exports.fetch_add(1, Ordering::Relaxed);
    }
}

pub(crate) struct MetricsSender {
    /// Where each export is written before it is sent, if anywhere.
    spool: Option<Spool>,
    to_worker: mpsc::Sender<Msg>,
    worker: JoinHandle<()>,
    losses: Arc<Losses>,
    /// The spool was full once: said once per process.
    warned_full: bool,
}

/// The folder metrics for `settings`' collector are spooled in, below the spool's root.
pub(crate) fn spool_dir(
    root: &std::path::Path,
    otlp: &crate::export::otlp::OtlpSettings,
) -> PathBuf {
    let key = format!("{} {}", otlp.protocol.as_str(), otlp.shown_endpoint());
    spool::for_destination(root, &key).join("metrics")
}

/// Opens the metrics spool for `config`, taking over the folder an earlier version named with
/// the endpoint's password; `None` (with a warning) when it cannot be opened.
fn open_spool(config: &MetricsConfig, cfg: &SpoolConfig) -> Option<Spool> {
    let dir = spool_dir(&cfg.root, &config.otlp);
    let former = format!("{} {}", config.otlp.protocol.as_str(), config.otlp.endpoint);
    spool::adopt(
        &spool::for_destination(&cfg.root, &former).join("metrics"),
        &dir,
    );
    let max = (cfg.max_bytes / SPOOL_SHARE).max(1 << 20);
    match Spool::open(&dir, max) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(
                "metrics are not spooled: cannot open {}: {e}",
                dir.display()
            );
            None
        }
    }
}

impl MetricsSender {
    /// Call inside the export thread's runtime. A client that cannot be set up is warned about
    /// and leaves metrics off; the traces' own set-up reports the same settings' errors. A
    /// spool that cannot be opened leaves metrics unspooled, with a warning.
    pub(crate) fn new(
        config: &MetricsConfig,
        spool: Option<&SpoolConfig>,
        deadline: Deadline,
    ) -> Option<Self> {
        let exporter = match MetricsExporter::new(&config.otlp) {
            Ok(exporter) => exporter,
            Err(e) => {
                tracing::warn!("metrics are off: {e}");
                return None;
            }
        };
        // Two handles on one folder: this one writes, the worker's sends and removes.
        let (ours, workers) = match spool.and_then(|cfg| open_spool(config, cfg)) {
            Some(s) => match Spool::open(s.dir(), s.max_bytes()) {
                Ok(w) => (Some(s), Some(w)),
                Err(_) => (None, None),
            },
            None => (None, None),
        };
        let (to_worker, inbox) = mpsc::channel(QUEUED);
        let losses = Arc::new(Losses::default());
        let worker = Worker {
            endpoint: exporter.endpoint().to_string(),
            exporter,
            spool: workers,
            memory: std::collections::VecDeque::new(),
            deadline,
            retry_at: None,
            backoff: FIRST_BACKOFF,
            failing: false,
            losses: losses.clone(),
        };
        Some(MetricsSender {
            spool: ours,
            to_worker,
            worker: tokio::spawn(worker.run(inbox)),
            losses,
            warned_full: false,
        })
    }

    /// Sends `batch` after every export made before it: written to the spool first, so that
    /// once this returns it is safe whatever the collector does.
    pub(crate) fn send(&mut self, batch: Batch) {
        if self.keep(&batch) {
            // A wake-up the full queue refuses is not needed: the worker sends all it finds.
            let _ = self.to_worker.try_send(Msg::New(None));
        } else if self
            .to_worker
            .try_send(Msg::New(Some(batch.clone())))
            .is_err()
        {
            self.losses.add(batch.spans);
            tracing::warn!("metrics dropped: {QUEUED} exports already wait for the collector");
        }
    }

    /// Keeps `batch` in the spool; false without one (or when it cannot be written).
    pub(crate) fn keep(&mut self, batch: &Batch) -> bool {
        let Some(spool) = self.spool.as_mut() else {
            return false;
        };
        // The worker takes files away: its room is counted afresh before the oldest are
        // dropped to make more.
        let _ = spool.rescan();
        match spool.push(&batch.body, batch.spans) {
            Ok(evicted) => {
                if evicted.files > 0 && !std::mem::replace(&mut self.warned_full, true) {
                    tracing::warn!(
                        "the metrics spool {} is full: its oldest exports are dropped to make room ({} so far); a collector that takes no metrics is best told so with OTEL_METRICS_EXPORTER=none",
                        spool.dir().display(),
                        evicted.files
                    );
                }
                true
            }
            Err(e) => {
                tracing::warn!(
                    "cannot write the metrics spool {}: {e}; these points are sent from memory",
                    spool.dir().display()
                );
                false
            }
        }
    }

    /// After the close's cut: kept in the spool, or counted as lost.
    pub(crate) fn keep_or_lose(&mut self, batch: Batch) {
        if !self.keep(&batch) {
            self.losses.add(batch.spans);
        }
    }

    /// Waits until every export made so far was tried (delivered, kept in the spool, or given
    /// up on), until `by` at the latest: for the close. A flush never waits for metrics.
    pub(crate) async fn settle(&mut self, by: Option<Instant>) {
        let (ack, settled) = oneshot::channel();
        if self.to_worker.send(Msg::Settle(ack)).await.is_err() {
            return;
        }
        let settled = async {
            let _ = settled.await;
        };
        match by {
            None => settled.await,
            Some(by) => {
                if tokio::time::timeout_at(by.into(), settled).await.is_err() {
                    tracing::debug!("metrics still under way at the close's deadline");
                }
            }
        }
    }
}

impl Drop for MetricsSender {
    fn drop(&mut self) {
        self.worker.abort();
        let waiting = self.losses.waiting.load(Ordering::Relaxed);
        if waiting > 0 {
            self.losses.add(waiting);
        }
        let points = self.losses.points.load(Ordering::Relaxed);
        if points > 0 {
            tracing::warn!(
                "{points} metric points in {} exports never reached the collector and are lost (the spans carry the same numbers); a spool keeps them for the next run",
                self.losses.exports.load(Ordering::Relaxed)
            );
        }
    }
}
