//! The metrics worker: sends what the spool (or, without one, memory) holds, one export at a
//! time and oldest first, backing off while the collector fails, and gives back what the
//! close's cut leaves unanswered.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::{Losses, Msg, FIRST_BACKOFF, MAX_BACKOFF, QUEUED};
use crate::export::otlp::{no_metrics_service, MetricsExporter};
use crate::export::{Batch, ExportError};
use crate::pipeline::spool::Spool;
use crate::pipeline::Deadline;

/// Sends the exports one at a time, oldest first, backing off while the collector fails.
pub(super) struct Worker {
    pub(super) exporter: MetricsExporter,
    pub(super) endpoint: String,
    pub(super) spool: Option<Spool>,
    /// Without a spool: exports waiting for the collector, oldest first.
    pub(super) memory: VecDeque<Batch>,
    pub(super) deadline: Deadline,
    /// Backing off after a failure: nothing is tried before this.
    pub(super) retry_at: Option<Instant>,
    pub(super) backoff: Duration,
    /// The last export failed: the next failure is not warned about again.
    pub(super) failing: bool,
    pub(super) losses: Arc<Losses>,
}

impl Worker {
    pub(super) async fn run(mut self, mut inbox: mpsc::Receiver<Msg>) {
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
                Some(Msg::New(batch)) => {
                    if let Some(p) = batch {
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
        batch: Batch,
    ) -> Option<Result<crate::export::Exported, ExportError>> {
        let deadline = self.deadline.clone();
        tokio::select! {
            result = self.exporter.export(batch, self.timeout()) => Some(result),
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
        while let Some(batch) = self.memory.front().cloned() {
            if self.past_the_cut() {
                return;
            }
            let spans = batch.spans;
            let Some(result) = self.export_before_the_cut(batch).await else {
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
            let batch = Batch {
                spans: claim.spans(),
                body: std::mem::take(&mut claim.body).into(),
            };
            let Some(result) = self.export_before_the_cut(batch).await else {
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
