//! Metrics on the export thread: one export at a time, in the order they were made, beside the
//! span batches and never in their way (not counted among the exports in flight).
//!
//! In order, because the points are deltas: the collector's `deltatocumulative` and
//! Prometheus' own converter keep a running total per series and drop a delta that ends
//! before the total's last point. So an export the collector could not take goes to a spool of
//! its own (a `metrics` folder in the destination's spool folder, capped at an eighth of the
//! spool's size), and while that spool holds anything, a new export goes in behind it and the
//! spool is sent oldest first: by this process once the collector answers, or by the next one
//! to send to the same collector, before its own points. Without a spool (`--no-spool`) a
//! failed export costs its points (the spans carry the same numbers) and one warning per run
//! of failures. An export the collector refuses for good is dropped, never retried.
//!
//! A collector with no metrics service at all (HTTP 404, gRPC `Unimplemented`: one set up for
//! traces only) gets one warning, and no more metrics for the rest of the process; nothing is
//! spooled for it.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::export::otlp::{no_metrics_service, MetricsExporter};
use crate::export::{ExportError, Payload};
use crate::pipeline::spool::{self, Spool};
use crate::pipeline::{MetricsConfig, SpoolConfig};

/// The metrics spool's share of the spool's size.
const SPOOL_SHARE: u64 = 8;
/// Exports waiting for the one under way; past this, a new one is dropped (and said).
const QUEUED: usize = 64;

enum Msg {
    /// Send, or keep in the spool behind what it holds.
    Send(Payload, Option<Duration>),
    /// Only keep: the close's cut came, nothing more goes to the network.
    Keep(Payload),
    /// Answer once everything before this is dealt with.
    Settle(oneshot::Sender<()>),
}

pub(crate) struct MetricsSender {
    to_worker: mpsc::Sender<Msg>,
    worker: JoinHandle<()>,
}

/// The folder metrics for `settings`' collector are spooled in, below the spool's root.
pub(crate) fn spool_dir(
    root: &std::path::Path,
    otlp: &crate::export::otlp::OtlpSettings,
) -> PathBuf {
    let key = format!("{} {}", otlp.protocol.as_str(), otlp.shown_endpoint());
    spool::for_destination(root, &key).join("metrics")
}

impl MetricsSender {
    /// Call inside the export thread's runtime. A client that cannot be set up is warned about
    /// and leaves metrics off; the traces' own set-up reports the same settings' errors. A
    /// spool that cannot be opened leaves metrics unspooled, with a warning.
    pub(crate) fn new(config: &MetricsConfig, spool: Option<&SpoolConfig>) -> Option<Self> {
        let exporter = match MetricsExporter::new(&config.otlp) {
            Ok(exporter) => exporter,
            Err(e) => {
                tracing::warn!("metrics are off: {e}");
                return None;
            }
        };
        let spool = spool.and_then(|cfg| {
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
        });
        let (to_worker, inbox) = mpsc::channel(QUEUED);
        let worker = Worker {
            endpoint: exporter.endpoint().to_string(),
            exporter,
            spool,
            off: false,
            failing: false,
        };
        Some(MetricsSender {
            to_worker,
            worker: tokio::spawn(worker.run(inbox)),
        })
    }

    /// Sends `payload` after every export made before it.
    pub(crate) fn send(&mut self, payload: Payload, timeout: Option<Duration>) {
        self.queue(Msg::Send(payload, timeout));
    }

    /// Keeps `payload` in the spool, sending nothing (after the close's cut).
    pub(crate) fn keep(&mut self, payload: Payload) {
        self.queue(Msg::Keep(payload));
    }

    fn queue(&mut self, msg: Msg) {
        if self.to_worker.try_send(msg).is_err() {
            tracing::warn!("metrics dropped: {QUEUED} exports already wait for the collector");
        }
    }

    /// Waits until every export made so far is delivered, spooled or given up, until `by` at
    /// the latest; the one under way then goes on, and is lost only if the process ends first.
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
                    tracing::debug!("metrics still under way at the flush deadline");
                }
            }
        }
    }
}

impl Drop for MetricsSender {
    fn drop(&mut self) {
        self.worker.abort();
    }
}

/// Sends the exports one at a time; owns the metrics spool.
struct Worker {
    exporter: MetricsExporter,
    endpoint: String,
    spool: Option<Spool>,
    /// The collector said it has no metrics service: nothing more is sent.
    off: bool,
    /// The last export failed: the next failure is not warned about again.
    failing: bool,
}

impl Worker {
    async fn run(mut self, mut inbox: mpsc::Receiver<Msg>) {
        while let Some(msg) = inbox.recv().await {
            match msg {
                Msg::Send(payload, timeout) => self.deliver(payload, timeout).await,
                Msg::Keep(payload) => {
                    if !self.off {
                        self.keep(&payload);
                    }
                }
                Msg::Settle(ack) => {
                    let _ = ack.send(());
                }
            }
        }
    }

    async fn deliver(&mut self, payload: Payload, timeout: Option<Duration>) {
        if self.off {
            return;
        }
        if self.spooled_before() {
            self.keep(&payload);
            self.drain(timeout).await;
            return;
        }
        let result = self.exporter.export(payload.clone(), timeout).await;
        match result {
            Ok(_) => self.failing = false,
            Err(e) => {
                if self.failed(&e) && self.spool.is_some() {
                    self.keep(&payload);
                }
            }
        }
    }

    /// Whether the spool holds exports (this process's, or an earlier one's).
    fn spooled_before(&mut self) -> bool {
        self.spool
            .as_mut()
            .is_some_and(|s| s.rescan().is_ok() && !s.is_empty())
    }

    /// Sends what the spool holds, oldest first, until the collector fails to take one.
    async fn drain(&mut self, timeout: Option<Duration>) {
        while !self.off {
            let Some(spool) = self.spool.as_mut() else {
                return;
            };
            let mut claim = match spool.take_oldest() {
                Ok(Some(claim)) => claim,
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!(
                        "cannot read the metrics spool {}: {e}",
                        spool.dir().display()
                    );
                    return;
                }
            };
            let payload = Payload {
                spans: claim.spans(),
                body: std::mem::take(&mut claim.body).into(),
            };
            let result = self.exporter.export(payload, timeout).await;
            let again = match &result {
                Ok(_) => {
                    self.failing = false;
                    false
                }
                Err(e) => self.failed(e),
            };
            let Some(spool) = self.spool.as_mut() else {
                return;
            };
            let kept = if again {
                spool.give_back(claim)
            } else {
                spool.done(claim)
            };
            if let Err(e) = kept {
                tracing::warn!("the metrics spool {}: {e}", spool.dir().display());
                return;
            }
            if again {
                return;
            }
        }
    }

    /// Says what a failed export means; true when sending it again later may succeed.
    fn failed(&mut self, e: &ExportError) -> bool {
        let endpoint = &self.endpoint;
        if no_metrics_service(e) {
            if !std::mem::replace(&mut self.off, true) {
                tracing::warn!(
                    "the collector at {endpoint} takes no OTLP metrics ({e}); metrics are dropped for the rest of this run, traces are not affected (OTEL_METRICS_EXPORTER=none stops trying)"
                );
            }
            // Kept, it would only wait for this same collector to say so again.
            return false;
        }
        let retryable = e.is_retryable();
        let first = !std::mem::replace(&mut self.failing, true);
        match (retryable, self.spool.is_some()) {
            (true, true) if first => tracing::warn!(
                "metrics were not delivered, and wait in the spool until the collector answers: {e}"
            ),
            (false, _) => tracing::warn!("metrics were refused, and are dropped: {e}"),
            _ if first => tracing::warn!(
                "metrics were not delivered, and are dropped (the spans carry the same numbers): {e}"
            ),
            _ => tracing::debug!("metrics were not delivered: {e}"),
        }
        retryable
    }

    fn keep(&mut self, payload: &Payload) {
        let Some(spool) = self.spool.as_mut() else {
            return;
        };
        match spool.push(&payload.body, payload.spans) {
            Ok(evicted) if evicted.files > 0 => tracing::warn!(
                "the metrics spool {} is full: its {} oldest exports were dropped",
                spool.dir().display(),
                evicted.files
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!(
                "metrics dropped: cannot write the spool {}: {e}",
                spool.dir().display()
            ),
        }
    }
}
