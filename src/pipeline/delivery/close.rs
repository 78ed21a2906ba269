//! The close, as the export thread sees it: by when it must end, and the cut a little before
//! that, when every export still unanswered is abandoned and its batch kept in the spool (or
//! counted as failed), so that nothing waits past the deadline and nothing is counted twice.

use std::time::{Duration, Instant};

use super::Delivery;
use crate::export::Batch;

impl Delivery {
    pub(super) fn closing_by(&self) -> Option<Instant> {
        self.deadline.by()
    }

    /// How long an export may take: the request timeout, or what is left before the cut.
    pub(super) fn send_timeout(&self) -> Option<Duration> {
        self.deadline.cut_at().map(|d| {
            d.saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1))
        })
    }

    /// The close's cut: every export still unanswered is abandoned (its batch comes back
    /// through `finished` as cancelled), and every waiting retry is settled now.
    pub(super) fn cut_short(&mut self) {
        self.cut = true;
        self.in_flight.abort_all();
        for attempt in std::mem::take(&mut self.retries) {
            self.unanswered(&attempt.batch);
        }
    }

    /// A flush's deadline (with a spool): every export still unanswered is abandoned and its
    /// batch spooled, as at the close's cut, but the delivery goes on. A collector that answers
    /// slowly then costs the flush its deadline, never more, and whoever waits on it (the hook
    /// daemon's checkpoint) finds everything delivered or on disk. The abandoned request may
    /// still have reached the collector: its spans come again, with the same ids.
    pub(super) fn flush_cut(&mut self) {
        if self.in_flight.is_empty() && self.retries.is_empty() {
            return;
        }
        tracing::debug!(
            "a flush's deadline: {} exports unanswered go to the spool",
            self.in_flight.len() + self.retries.len()
        );
        self.in_flight.abort_all();
        for attempt in std::mem::take(&mut self.retries) {
            self.unanswered(&attempt.batch);
        }
    }

    /// A batch the collector did not acknowledge by the cut: kept in the spool, or lost.
    pub(super) fn unanswered(&mut self, batch: &Batch) {
        if self.spool.is_some() {
            self.keep_in_spool(batch);
        } else {
            self.lose(batch.spans, &"unanswered at the flush deadline");
        }
    }
}
