//! Counters for everything that enters, leaves, or is lost, so that no loss is silent.
//!
//! Every place that can drop data counts it here, and the totals are logged at shutdown and
//! returned to whoever closes the pipeline.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

#[derive(Debug, Default)]
pub struct Stats {
    /// Non-blank lines handed to the pipeline (one count per chunk).
    pub(crate) handed_lines: AtomicU64,
    /// Of those, the ones the assembly is done with (counted after each one).
    pub(crate) lines: AtomicU64,
    pub(crate) events: AtomicU64,
    pub(crate) bad_lines: AtomicU64,
    pub(crate) dropped_events: AtomicU64,
    pub(crate) repairs: AtomicU64,
    pub(crate) spans: AtomicU64,
    pub(crate) exported: AtomicU64,
    pub(crate) rejected: AtomicU64,
    pub(crate) failed: AtomicU64,
    pub(crate) export_errors: AtomicU64,
    pub(crate) spooled: AtomicU64,
    pub(crate) unspooled: AtomicU64,
    pub(crate) spool_dropped: AtomicU64,
    pub(crate) encode_errors: AtomicU64,
    pub(crate) store_lost: AtomicU64,
}

/// A snapshot of the counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Non-blank input lines read and assembled (or skipped as malformed).
    pub lines: u64,
    /// Non-blank input lines handed over that the assembly is not done with: queued while it
    /// runs; at the end, lines read whose events were never assembled, so never exported
    /// (the assembly was held up past the flush deadline).
    pub unassembled: u64,
    /// Events accepted (from lines or from the in-process hook).
    pub events: u64,
    /// Lines skipped as malformed.
    pub bad_lines: u64,
    /// Events the in-process hook dropped because the queue was full or closed.
    pub dropped_events: u64,
    /// Repairs made to out-of-order or inconsistent input.
    pub repairs: u64,
    /// Spans assembled.
    pub spans: u64,
    /// Spans the receiver accepted.
    pub exported: u64,
    /// Spans the receiver refused (OTLP partial success).
    pub rejected: u64,
    /// Spans given up on: refused for good, out of retries, or unanswered at the flush
    /// deadline with no spool to keep them in.
    pub failed: u64,
    /// Failed delivery attempts, retried or not.
    pub export_errors: u64,
    /// Spans written to the spool because the collector could not take them.
    pub spooled: u64,
    /// Spans delivered from the spool (this run's or an earlier one's).
    pub unspooled: u64,
    /// Spans dropped from a full spool, oldest first.
    pub spool_dropped: u64,
    /// Batches the fast encoder miscounted (a bug), sent encoded the slow way instead.
    pub encode_errors: u64,
    /// Rows (turns, model calls, tool calls) that never reached the local store: its disk
    /// too slow for the wait, or the store not there.
    pub store_lost: u64,
}

impl Stats {
    pub fn summary(&self) -> Summary {
        Summary {
            lines: self.lines.load(Relaxed),
            // Counted by the handle before the worker can take them: never fewer than done.
            unassembled: self
                .handed_lines
                .load(Relaxed)
                .saturating_sub(self.lines.load(Relaxed)),
            events: self.events.load(Relaxed),
            bad_lines: self.bad_lines.load(Relaxed),
            dropped_events: self.dropped_events.load(Relaxed),
            repairs: self.repairs.load(Relaxed),
            spans: self.spans.load(Relaxed),
            exported: self.exported.load(Relaxed),
            rejected: self.rejected.load(Relaxed),
            failed: self.failed.load(Relaxed),
            export_errors: self.export_errors.load(Relaxed),
            spooled: self.spooled.load(Relaxed),
            unspooled: self.unspooled.load(Relaxed),
            spool_dropped: self.spool_dropped.load(Relaxed),
            encode_errors: self.encode_errors.load(Relaxed),
            store_lost: self.store_lost.load(Relaxed),
        }
    }

    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Relaxed);
    }
}

impl Summary {
    /// Adds `other`'s counts to these (the daemon's pipelines, one per destination).
    pub fn add(&mut self, other: &Summary) {
        self.lines += other.lines;
        self.unassembled += other.unassembled;
        self.events += other.events;
        self.bad_lines += other.bad_lines;
        self.dropped_events += other.dropped_events;
        self.repairs += other.repairs;
        self.spans += other.spans;
        self.exported += other.exported;
        self.rejected += other.rejected;
        self.failed += other.failed;
        self.export_errors += other.export_errors;
        self.spooled += other.spooled;
        self.unspooled += other.unspooled;
        self.spool_dropped += other.spool_dropped;
        self.encode_errors += other.encode_errors;
        self.store_lost += other.store_lost;
    }

    /// Spans neither delivered, spooled, refused, nor given up on: still in flight.
    pub fn in_flight(&self) -> u64 {
        self.spans
            .saturating_sub(self.exported + self.spooled + self.rejected + self.failed)
    }

    /// Spans this run lost for good: given up on, refused, dropped from a full spool, or still
    /// in flight at the end.
    pub fn lost(&self) -> u64 {
        self.failed + self.rejected + self.spool_dropped + self.in_flight()
    }

    /// Whether anything was lost: dropped events, lines never assembled, or spans lost for
    /// good.
    pub fn lost_anything(&self) -> bool {
        self.dropped_events > 0 || self.unassembled > 0 || self.lost() > 0 || self.store_lost > 0
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} events, {} spans, {} delivered",
            self.events, self.spans, self.exported
        )?;
        if self.spooled > 0 {
            write!(f, ", {} spooled to send later", self.spooled)?;
        }
        if self.failed > 0 {
            write!(f, ", {} NOT delivered", self.failed)?;
        }
        if self.in_flight() > 0 {
            write!(f, ", {} still in flight", self.in_flight())?;
        }
        if self.unassembled > 0 {
            write!(f, ", {} lines read but not assembled", self.unassembled)?;
        }
        if self.store_lost > 0 {
            write!(
                f,
                ", {} rows never reached the local store",
                self.store_lost
            )?;
        }
        if self.rejected > 0 {
            write!(f, ", {} refused by the collector", self.rejected)?;
        }
        if self.unspooled > 0 {
            write!(f, "; {} delivered from the spool", self.unspooled)?;
        }
        if self.spool_dropped > 0 {
            write!(f, "; {} dropped from a full spool", self.spool_dropped)?;
        }
        if self.bad_lines > 0 {
            write!(f, "; {} bad lines skipped", self.bad_lines)?;
        }
        if self.dropped_events > 0 {
            write!(f, "; {} events dropped (queue full)", self.dropped_events)?;
        }
        if self.encode_errors > 0 {
            write!(
                f,
                "; {} batches re-encoded (encoder bug)",
                self.encode_errors
            )?;
        }
        if self.repairs > 0 {
            write!(f, "; {} repairs to out-of-order input", self.repairs)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_handed_over_and_never_assembled_are_lost() {
        let stats = Stats::default();
        Stats::add(&stats.handed_lines, 4);
        Stats::add(&stats.lines, 1);
        let s = stats.summary();
        assert_eq!((s.lines, s.unassembled), (1, 3));
        assert!(
            s.lost_anything() && s.lost() == 0,
            "no span was made to lose"
        );
        assert!(s.to_string().contains("3 lines read but not assembled"));
        Stats::add(&stats.lines, 3);
        assert_eq!(stats.summary().unassembled, 0);
        assert!(!stats.summary().lost_anything());
    }
}
