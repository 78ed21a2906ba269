//! Metrics on the export thread: each request is sent once, beside the span batches and never
//! in their way (not counted among the exports in flight, never spooled, never retried).
//!
//! The spans are the record that is kept through an outage; the metrics are a summary of
//! them, and a failed metrics export costs its points and one warning per run of failures.
//! A collector with no metrics service at all (HTTP 404, gRPC `Unimplemented`: one set up for
//! traces only) gets one warning, and no more metrics for the rest of the process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::task::JoinSet;

use crate::export::otlp::{no_metrics_service, MetricsExporter};
use crate::export::{ExportError, Exported, Payload};
use crate::pipeline::MetricsConfig;

#[derive(Default)]
struct Outcomes {
    /// The collector said it has no metrics service: nothing more is sent.
    off: AtomicBool,
    /// The last export failed: the next failure is not warned about again.
    failing: AtomicBool,
}

pub(crate) struct MetricsSender {
    exporter: MetricsExporter,
    tasks: JoinSet<()>,
    outcomes: Arc<Outcomes>,
}

impl MetricsSender {
    /// Call inside the export thread's runtime. A client that cannot be set up is warned about
    /// and leaves metrics off; the traces' own set-up reports the same settings' errors.
    pub(crate) fn new(config: &MetricsConfig) -> Option<Self> {
        match MetricsExporter::new(&config.otlp) {
            Ok(exporter) => Some(MetricsSender {
                exporter,
                tasks: JoinSet::new(),
                outcomes: Arc::default(),
            }),
            Err(e) => {
                tracing::warn!("metrics are off: {e}");
                None
            }
        }
    }

    /// Starts one export of `payload`, unless the collector said it takes no metrics.
    pub(crate) fn send(&mut self, payload: Payload, timeout: Option<Duration>) {
        while self.tasks.try_join_next().is_some() {}
        if self.outcomes.off.load(Ordering::Relaxed) {
            return;
        }
        let export = self.exporter.export(payload, timeout);
        let outcomes = self.outcomes.clone();
        let endpoint = self.exporter.endpoint().to_string();
        self.tasks.spawn(async move {
            outcomes.settle(&endpoint, export.await);
        });
    }

    /// Waits for the exports under way, until `by` at the latest (then they are abandoned).
    pub(crate) async fn settle(&mut self, by: Option<Instant>) {
        let all = async { while self.tasks.join_next().await.is_some() {} };
        match by {
            None => all.await,
            Some(by) => {
                if tokio::time::timeout_at(by.into(), all).await.is_err() {
                    tracing::debug!("metrics unanswered at the flush deadline were dropped");
                    self.tasks.abort_all();
                }
            }
        }
    }
}

impl Outcomes {
    fn settle(&self, endpoint: &str, result: Result<Exported, ExportError>) {
        match result {
            Ok(_) => self.failing.store(false, Ordering::Relaxed),
            Err(e) if no_metrics_service(&e) => {
                if !self.off.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "the collector at {endpoint} takes no OTLP metrics ({e}); metrics are dropped for the rest of this run, traces are not affected (OTEL_METRICS_EXPORTER=none stops trying)"
                    );
                }
            }
            Err(e) => {
                if !self.failing.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "metrics were not delivered, and are dropped (the spans carry the same numbers): {e}"
                    );
                } else {
                    tracing::debug!("metrics were not delivered: {e}");
                }
            }
        }
    }
}
