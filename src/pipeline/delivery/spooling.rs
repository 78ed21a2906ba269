//! The export thread's side of the spool: keeping a batch the collector cannot take, probing
//! with the oldest one until the collector answers, draining it once it does, and sending
//! what the spool holds at close.
//!
//! The probe is one batch at a time: while the collector may be down, one request finds out.
//! Once an export got through, spooled batches are independent exports like live ones, oldest
//! first, with as many in flight as `max_in_flight` allows, so a backlog drains at the live
//! rate rather than one batch per round trip. Live batches come first: no spooled batch is
//! started while a live one waits, so fresh turns wait at most for one export to finish. A
//! spooled batch in flight stays claimed on disk until its answer: delivered, it is removed;
//! failed or abandoned at the close, it is given back, in its place by age.

use std::time::Instant;

use super::{spool_dir, Attempt, Delivery, MAX_PROBE_BACKOFF, RESCAN_EVERY};
use crate::export::{Batch, ExportError, Exported};
use crate::pipeline::spool::{Claimed, Spool};
use crate::pipeline::stats::Stats;
use crate::pipeline::SpoolConfig;

/// Opens the spool for destination `key`, saying what an earlier run left in it.
pub(super) fn open(
    cfg: &SpoolConfig,
    key: &str,
    former: Option<&str>,
) -> Result<Spool, ExportError> {
    let dir = spool_dir(cfg, key);
    if let Some(former) = former {
        crate::pipeline::spool::adopt(&spool_dir(cfg, former), &dir);
    }
    match Spool::open(&dir, cfg.max_bytes) {
        Ok(s) => {
            if !s.is_empty() {
                tracing::info!(
                    "{} spans from earlier runs wait in the spool {}; sending them",
                    s.spans(),
                    dir.display()
                );
            }
            Ok(s)
        }
        Err(e) => Err(ExportError::Setup(format!(
            "cannot open the spool {}: {e}",
            dir.display()
        ))),
    }
}

/// What a probe found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Probe {
    /// The spool is empty (or unreadable): nothing was sent.
    Nothing,
    /// The batch was delivered, or refused for good (and counted).
    Settled,
    /// The collector answered but cannot take it now: it is up, and worth waiting for.
    Busy,
    /// The collector could not be reached.
    Down,
    /// The close's cut came first: the batch went back to the spool unanswered.
    Cut,
}

impl Delivery {
    /// How long until a probe or a look at the spool may be due. While the spool drains, or
    /// exports are in flight, or after the cut, no probe is sent, and what wakes the thread is
    /// an export finishing: waking for the probe's time then would spin.
    pub(super) fn time_to_probe(&self) -> std::time::Duration {
        if self.cut || (self.verified && !self.outage) || !self.in_flight.is_empty() {
            return RESCAN_EVERY;
        }
        match &self.spool {
            Some(s) if !s.is_empty() => self.next_probe.saturating_duration_since(Instant::now()),
            Some(_) => RESCAN_EVERY,
            None => std::time::Duration::from_secs(3600),
        }
    }

    pub(super) fn probe_due(&mut self) -> bool {
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

    pub(super) fn keep_in_spool(&mut self, batch: &Batch) {
        let count = batch.spans;
        let Some(spool) = &mut self.spool else {
            self.lose(count, &"no spool to keep them in");
            return;
        };
        match spool.push(&batch.body, count) {
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

    /// Starts spooled batches, oldest first, in the room live batches leave, once the
    /// collector took something since its last failure; none while a live batch waits.
    pub(super) fn drain_spool(&mut self, live_waiting: bool) {
        if self.cut || self.outage || !self.verified || live_waiting {
            return;
        }
        while self.in_flight.len() + self.retries.len() < self.max_in_flight {
            let Some(spool) = self.spool.as_mut() else {
                return;
            };
            if spool.is_empty() {
                return;
            }
            let mut claim = match spool.take_oldest() {
                Ok(Some(c)) => c,
                Ok(None) => return,
                Err(e) => {
                    tracing::error!("cannot read the spool {}: {e}", spool.dir().display());
                    // Back to probing, which waits before it reads again.
                    self.verified = false;
                    self.next_probe = Instant::now() + MAX_PROBE_BACKOFF;
                    return;
                }
            };
            let batch = Batch {
                body: std::mem::take(&mut claim.body).into(),
                spans: claim.spans(),
            };
            let attempt: Attempt = self.first_attempt(batch);
            self.spawn(attempt, Some(claim));
        }
    }

    /// How a spooled batch's export ended.
    pub(super) fn spooled_finished(
        &mut self,
        claim: Claimed,
        result: Result<Result<Exported, ExportError>, tokio::task::JoinError>,
    ) {
        let cut = self.cut;
        let spans = claim.spans();
        let Some(spool) = self.spool.as_mut() else {
            return;
        };
        match result {
            Ok(Ok(done)) => {
                if let Err(e) = spool.done(claim) {
                    tracing::warn!("a delivered batch stays in the spool: {e}");
                }
                self.record_success(done, true);
            }
            Ok(Err(e)) if !cut && !e.is_retryable() => {
                // The collector will never take this batch; keeping it would block the rest.
                let _ = spool.done(claim);
                self.lose(spans, &format!("a spooled batch was refused: {e}"));
            }
            Ok(Err(e)) => {
                give_back(spool, claim);
                if !cut && !self.outage {
                    // The first failure of the round: back to probing.
                    self.spool_waits(&e);
                }
            }
            // Abandoned at the close: the batch stays on disk for later.
            Err(e) if e.is_cancelled() => {
                give_back(spool, claim);
            }
            // The export panicked: given back, the same batch would be taken again at once.
            Err(e) => {
                let _ = spool.done(claim);
                self.lose(spans, &format!("a spooled batch's export failed: {e}"));
            }
        }
    }

    /// The collector cannot take spooled batches now: they wait for a probe, on backoff (or
    /// when the collector asked to be tried again).
    fn spool_waits(&mut self, e: &ExportError) {
        self.record_failure(e, "spooled batches wait for it");
        self.outage = true;
        self.verified = false;
        let wait = e.retry_after().unwrap_or(self.probe_backoff);
        self.probe_backoff = (self.probe_backoff * 2).min(MAX_PROBE_BACKOFF);
        self.next_probe = Instant::now() + wait.min(MAX_PROBE_BACKOFF);
    }

    /// Sends the oldest spooled batch: the way to find out that the collector is back.
    pub(super) async fn probe(&mut self) -> Probe {
        let Some(spool) = &mut self.spool else {
            return Probe::Nothing;
        };
        let claimed = match spool.take_oldest() {
            Ok(Some(c)) => c,
            Ok(None) => return Probe::Nothing,
            Err(e) => {
                tracing::error!("cannot read the spool {}: {e}", spool.dir().display());
                self.next_probe = Instant::now() + MAX_PROBE_BACKOFF;
                return Probe::Nothing;
            }
        };
        let spans = claimed.spans();
        let batch = Batch {
            body: claimed.body.clone().into(),
            spans,
        };
        let export = self.exporter.export(batch, self.send_timeout());
        let deadline = self.deadline.clone();
        let result = tokio::select! {
            r = export => Some(r),
            _ = deadline.cut() => None,
        };
        let Some(spool) = self.spool.as_mut() else {
            return Probe::Nothing;
        };
        let Some(result) = result else {
            give_back(spool, claimed);
            self.cut_short();
            return Probe::Cut;
        };
        match result {
            Ok(done) => {
                if let Err(e) = spool.done(claimed) {
                    tracing::warn!("a delivered batch stays in the spool: {e}");
                }
                self.record_success(done, true);
                Probe::Settled
            }
            Err(e) if e.is_retryable() => {
                give_back(spool, claimed);
                self.spool_waits(&e);
                if matches!(e, ExportError::Unreachable { .. }) {
                    Probe::Down
                } else {
                    Probe::Busy
                }
            }
            Err(e) => {
                // The collector will never take this batch; keeping it would block the rest.
                let _ = spool.done(claimed);
                self.lose(spans, &format!("a spooled batch was refused: {e}"));
                Probe::Settled
            }
        }
    }

    /// At close: one more look at the collector, even mid-outage (it may be back since the
    /// last probe), and the spool is sent until the deadline. A collector that answers "not
    /// now" (503, UNAVAILABLE) is up, so it is waited for, with backoff, until the deadline;
    /// one that cannot be reached is not, since the spool keeps the batches for the next run
    /// and a closing agent should not wait on a collector that is gone.
    pub(super) async fn drain_before_close(&mut self) {
        self.outage = false;
        loop {
            let spool_empty = self.spool.as_ref().is_none_or(|s| s.is_empty());
            if self.in_flight.is_empty() && (spool_empty || self.cut) {
                return;
            }
            let cut_at = self.deadline.cut_at();
            if self.cut || cut_at.is_some_and(|d| Instant::now() >= d) {
                if !self.cut {
                    self.cut_short();
                }
                // What was abandoned comes back, and goes back to the spool.
                while let Some(done) = self.in_flight.join_next_with_id().await {
                    self.finished(done);
                }
                return;
            }
            if !self.verified && self.in_flight.is_empty() {
                match self.probe().await {
                    Probe::Settled => {}
                    Probe::Nothing | Probe::Down | Probe::Cut => return,
                    Probe::Busy => {
                        let Some(by) = cut_at else { return };
                        if self.next_probe >= by {
                            return;
                        }
                        tokio::time::sleep_until(self.next_probe.into()).await;
                        self.outage = false;
                    }
                }
                continue;
            }
            self.drain_spool(false);
            if self.in_flight.is_empty() {
                continue;
            }
            let deadline = self.deadline.clone();
            tokio::select! {
                Some(done) = self.in_flight.join_next_with_id() => self.finished(done),
                _ = deadline.cut(), if !self.cut => self.cut_short(),
            }
        }
    }
}

/// Puts a claimed batch back in the spool; a failure is logged (the claim is given back when
/// the spool is next opened, once this process is gone).
fn give_back(spool: &mut Spool, claim: Claimed) {
    if let Err(io) = spool.give_back(claim) {
        tracing::error!("cannot return a batch to the spool: {io}");
    }
}
