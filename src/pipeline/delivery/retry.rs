//! Without a spool (or for a batch the collector refused for good), a failed export is tried
//! again with backoff until it succeeds, its retry budget runs out, or the close deadline
//! comes; waiting retries hold their place among the exports in flight.

use std::time::Instant;

use super::{Attempt, Delivery};
use crate::export::ExportError;
use crate::pipeline::stats::Stats;

impl Delivery {
    /// Retries whose time has come, while there is room; all of them once a close begins.
    pub(super) fn start_due_retries(&mut self) {
        if self.retries.is_empty() {
            return;
        }
        let now = Instant::now();
        if !self.closing_seen && self.closing_by().is_some() {
            self.closing_seen = true;
            for a in &mut self.retries {
                a.due = now;
            }
        }
        while self.in_flight.len() < self.max_in_flight {
            let Some(i) = self.retries.iter().position(|a| a.due <= now) else {
                return;
            };
            let attempt = self.retries.swap_remove(i);
            if self.spool.is_some() && self.outage {
                self.keep_in_spool(&attempt.batch);
            } else {
                self.spawn(attempt, None);
            }
        }
    }

    /// A failed attempt: to the spool if the collector may come back and there is one, else
    /// another try later if the budget allows, else counted as lost.
    pub(super) fn failed(&mut self, mut attempt: Attempt, error: ExportError) {
        let retryable = error.is_retryable();
        if retryable && self.spool.is_some() {
            self.record_failure(&error, "keeping batches in the spool until it answers");
            self.verified = false;
            if !self.outage {
                self.outage = true;
                self.next_probe = Instant::now() + self.probe_backoff;
            }
            self.keep_in_spool(&attempt.batch);
            return;
        }
        let mut give_up_at = attempt.started + self.retry.max_elapsed;
        if let Some(d) = self.closing_by() {
            give_up_at = give_up_at.min(d);
        }
        let wait = error
            .retry_after()
            .unwrap_or(attempt.backoff)
            .min(self.retry.max_elapsed);
        let now = Instant::now();
        if retryable && now + wait < give_up_at {
            self.record_failure(&error, "retrying with backoff");
            attempt.due = now + wait;
            attempt.backoff = (attempt.backoff * 2).min(self.retry.max_backoff);
            self.retries.push(attempt);
            return;
        }
        Stats::add(&self.stats.export_errors, 1);
        self.failing += 1;
        self.lose(attempt.batch.spans, &error);
    }
}
