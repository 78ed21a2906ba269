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

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::export::otlp::{no_metrics_service, MetricsExporter};
use crate::export::{ExportError, Payload};
use crate::pipeline::spool::{self, Spool};
use crate::pipeline::{Deadline, MetricsConfig, SpoolConfig};

/// The metrics spool's share of the spool's size.
const SPOOL_SHARE: u64 = 8;
/// Messages waiting for the worker; without a spool, also the exports kept in memory while
/// the collector fails.
const QUEUED: usize = 64;
/// The first wait after a failure; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(300);

enum Msg {
    /// New points: in the spool already (`None`), or to send from memory (no spool).
    New(Option<Payload>),
    /// Answer once what came before was tried (the close).
    Settle(oneshot::Sender<()>),
}

/// Points that never reached the collector, for the report at the end.
#[derive(Default)]
struct Losses {
    points: AtomicU64,
    exports: AtomicU64,
    /// Points waiting in memory (no spool): lost if the process ends first.
    waiting: AtomicU64,
}

impl Losses {
    fn add(&self, points: u64) {
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
            memory: VecDeque::new(),
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

    /// Sends `payload` after every export made before it: written to the spool first, so that
    /// once this returns it is safe whatever the collector does.
    pub(crate) fn send(&mut self, payload: Payload) {
        if self.keep(&payload) {
            // A wake-up the full queue refuses is not needed: the worker sends all it finds.
            let _ = self.to_worker.try_send(Msg::New(None));
        } else if self
            .to_worker
            .try_send(Msg::New(Some(payload.clone())))
            .is_err()
        {
            self.losses.add(payload.spans);
            tracing::warn!("metrics dropped: {QUEUED} exports already wait for the collector");
        }
    }

    /// Keeps `payload` in the spool; false without one (or when it cannot be written).
    pub(crate) fn keep(&mut self, payload: &Payload) -> bool {
        let Some(spool) = self.spool.as_mut() else {
            return false;
        };
        // The worker takes files away: its room is counted afresh before the oldest are
        // dropped to make more.
        let _ = spool.rescan();
        match spool.push(&payload.body, payload.spans) {
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
    pub(crate) fn keep_or_lose(&mut self, payload: Payload) {
        if !self.keep(&payload) {
            self.losses.add(payload.spans);
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

/// Sends the exports one at a time, oldest first, backing off while the collector fails.
struct Worker {
    exporter: MetricsExporter,
    endpoint: String,
    spool: Option<Spool>,
    /// Without a spool: exports waiting for the collector, oldest first.
    memory: VecDeque<Payload>,
    deadline: Deadline,
    /// Backing off after a failure: nothing is tried before this.
    retry_at: Option<Instant>,
    backoff: Duration,
    /// The last export failed: the next failure is not warned about again.
    failing: bool,
    losses: Arc<Losses>,
}

impl Worker {
    async fn run(mut self, mut inbox: mpsc::Receiver<Msg>) {
        loop {
            let msg = match self.retry_at {
                Some(at) => tokio::select! {
                    msg = inbox.recv() => msg,
                    _ = tokio::time::sleep_until(at.into()) => {
                        self.retry_at = None;
                        self.send_what_waits().await;
                        continue;
                    }
                },
                None => inbox.recv().await,
            };
            match msg {
                None => break,
                Some(Msg::New(payload)) => {
                    if let Some(p) = payload {
                        self.losses.waiting.fetch_add(p.spans, Ordering::Relaxed);
                        self.memory.push_back(p);
                        while self.memory.len() > QUEUED {
                            if let Some(old) = self.memory.pop_front() {
                                self.losses.waiting.fetch_sub(old.spans, Ordering::Relaxed);
                                self.losses.add(old.spans);
                            }
                        }
                    }
                    self.send_what_waits().await;
                }
                Some(Msg::Settle(ack)) => {
                    let _ = ack.send(());
                }
            }
        }
    }

    /// How long an export may take: the client's timeout, or what is left before the cut.
    fn timeout(&self) -> Option<Duration> {
        self.deadline.cut_at().map(|cut| {
            cut.saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1))
        })
    }

    /// One export, abandoned (`None`) if the close's cut comes first: a collector that never
    /// answers holds the close up until the cut, never past it.
    async fn export_before_the_cut(
        &self,
        payload: Payload,
    ) -> Option<Result<crate::export::Exported, ExportError>> {
        let deadline = self.deadline.clone();
        tokio::select! {
            result = self.exporter.export(payload, self.timeout()) => Some(result),
            _ = deadline.cut() => None,
        }
    }

    fn past_the_cut(&self) -> bool {
        self.deadline
            .cut_at()
            .is_some_and(|cut| Instant::now() >= cut)
    }

    /// Sends the spool, then what waits in memory, oldest first, until one fails.
    async fn send_what_waits(&mut self) {
        if self.retry_at.is_some_and(|at| Instant::now() < at) || self.past_the_cut() {
            return;
        }
        if !self.send_spooled().await {
            return;
        }
        while let Some(payload) = self.memory.front().cloned() {
            if self.past_the_cut() {
                return;
            }
            let spans = payload.spans;
            let Some(result) = self.export_before_the_cut(payload).await else {
                return;
            };
            match result {
                Ok(_) => self.delivered(),
                Err(e) if self.failed(&e) => return,
                // Refused for good.
                Err(_) => self.losses.add(spans),
            }
            self.memory.pop_front();
            self.losses.waiting.fetch_sub(spans, Ordering::Relaxed);
        }
    }

    /// Sends what the spool holds, oldest first; false when an export failed and may pass.
    async fn send_spooled(&mut self) -> bool {
        loop {
            let Some(spool) = self.spool.as_mut() else {
                return true;
            };
            if self
                .deadline
                .cut_at()
                .is_some_and(|cut| Instant::now() >= cut)
            {
                return false;
            }
            // A process that died mid-export (an earlier daemon) left its claim: given back,
            // it goes out first, in its place by age.
            let _ = spool.reclaim_orphans();
            let _ = spool.rescan();
            let mut claim = match spool.take_oldest() {
                Ok(Some(claim)) => claim,
                Ok(None) => return true,
                Err(e) => {
                    tracing::warn!(
                        "cannot read the metrics spool {}: {e}",
                        spool.dir().display()
                    );
                    return true;
                }
            };
            let payload = Payload {
                spans: claim.spans(),
                body: std::mem::take(&mut claim.body).into(),
            };
            let Some(result) = self.export_before_the_cut(payload).await else {
                // Abandoned at the close's cut: back in its place, for the next process.
                if let Some(spool) = self.spool.as_mut() {
                    if let Err(e) = spool.give_back(claim) {
                        tracing::warn!("the metrics spool {}: {e}", spool.dir().display());
                    }
                }
                return false;
            };
            let again = match &result {
                Ok(_) => {
                    self.delivered();
                    false
                }
                Err(e) => self.failed(e),
            };
            let Some(spool) = self.spool.as_mut() else {
                return true;
            };
            let kept = if again {
                spool.give_back(claim)
            } else {
                spool.done(claim)
            };
            if let Err(e) = kept {
                tracing::warn!("the metrics spool {}: {e}", spool.dir().display());
                return false;
            }
            if again {
                return false;
            }
        }
    }

    fn delivered(&mut self) {
        if std::mem::replace(&mut self.failing, false) {
            tracing::info!("metrics are delivered again to {}", self.endpoint);
        }
        self.backoff = FIRST_BACKOFF;
        self.retry_at = None;
    }

    /// Says what a failed export means, and backs off; true when sending it again later may
    /// succeed (it is then kept).
    fn failed(&mut self, e: &ExportError) -> bool {
        let no_service = no_metrics_service(e);
        if !no_service && !e.is_retryable() {
            tracing::warn!("metrics were refused, and are dropped: {e}");
            return false;
        }
        let first = !std::mem::replace(&mut self.failing, true);
        self.backoff = if first {
            FIRST_BACKOFF
        } else {
            (self.backoff * 2).min(MAX_BACKOFF)
        };
        self.retry_at = Some(Instant::now() + self.backoff);
        let endpoint = &self.endpoint;
        let kept = if self.spool.is_some() {
            "they wait in the spool"
        } else {
            "they wait in memory (a few at most; the rest are counted as lost)"
        };
        match (first, no_service) {
            (true, true) => tracing::warn!(
                "the collector at {endpoint} takes no OTLP metrics now ({e}); {kept} and are tried again with backoff; traces are not affected (OTEL_METRICS_EXPORTER=none stops trying)"
            ),
            (true, false) if self.spool.is_some() => tracing::warn!(
                "metrics were not delivered, and wait in the spool until the collector answers: {e}"
            ),
            (true, false) => tracing::warn!(
                "metrics were not delivered, and {kept} until the collector answers: {e}"
            ),
            _ => tracing::debug!("metrics were not delivered: {e}"),
        }
        true
    }
}
