//! What the export thread counts and says: every delivery, failure and loss goes through
//! here, once, so that the summary at exit adds up and a streak of failures is one warning.

use std::time::Instant;

use super::Delivery;
use crate::export::{ExportError, Exported};
use crate::pipeline::stats::Stats;

impl Delivery {
    pub(super) fn record_success(&mut self, done: Exported, from_spool: bool) {
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
        self.verified = true;
        self.probe_backoff = self.retry.initial_backoff;
        self.next_probe = Instant::now();
    }

    pub(super) fn record_failure(&mut self, error: &ExportError, what: &str) {
        Stats::add(&self.stats.export_errors, 1);
        self.failing += 1;
        if self.failing == 1 {
            tracing::warn!("{error}; {what}");
        } else {
            tracing::debug!("{error}; {what}");
        }
    }

    pub(super) fn lose(&mut self, count: u64, error: &dyn std::fmt::Display) {
        Stats::add(&self.stats.failed, count);
        self.logged_losses += 1;
        if self.logged_losses <= 100 {
            tracing::error!("{count} spans not delivered: {error}");
        }
    }
}
