//! The wall clock an in-process host's `hook` reads: Unix milliseconds for a few nanoseconds.
//!
//! `SystemTime::now()` costs 50-80 ns on the virtual machines agents run on, most of `hook`'s
//! budget. Here the time is the CPU's cycle counter (through `quanta`, calibrated against the
//! OS clock) plus an offset to Unix time. The offset is re-measured by the exporter's own
//! thread every time it polls ([`WallClock::resync`]), so a stepped system clock or a counter
//! that drifts is followed within milliseconds, and `hook` only ever reads one atomic that
//! rarely changes.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Drift or steps smaller than this (0.2 ms) are not worth a store.
const RESYNC_TOLERANCE_NS: i64 = 200_000;

#[derive(Debug)]
pub struct WallClock {
    counter: quanta::Clock,
    /// Unix nanoseconds minus the counter's nanoseconds.
    offset_ns: AtomicI64,
}

impl Default for WallClock {
    fn default() -> Self {
        Self::new()
    }
}

impl WallClock {
    pub fn new() -> Self {
        let clock = WallClock {
            counter: quanta::Clock::new(),
            offset_ns: AtomicI64::new(0),
        };
        clock.resync();
        clock
    }

    fn counter_ns(&self) -> i64 {
        // `delta_as_nanos(0, raw)` scales the raw counter to nanoseconds since an arbitrary
        // origin; only differences (through the offset) matter.
        self.counter.delta_as_nanos(0, self.counter.raw()) as i64
    }

    /// Unix time in milliseconds.
    pub fn now_ms(&self) -> u64 {
        let ns = self.counter_ns() + self.offset_ns.load(Ordering::Relaxed);
        (ns.max(0) / 1_000_000) as u64
    }

    /// Measures the offset to the system clock again. Stores only when it moved by more than
    /// `RESYNC_TOLERANCE_NS`, so that the readers' cache line stays shared and clean.
    pub fn resync(&self) {
        let unix_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as i64)
            .unwrap_or(0);
        let offset = unix_ns - self.counter_ns();
        if (self.offset_ns.load(Ordering::Relaxed) - offset).abs() > RESYNC_TOLERANCE_NS {
            self.offset_ns.store(offset, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_system_clock() {
        let clock = WallClock::new();
        for _ in 0..1000 {
            let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
            let ours = clock.now_ms();
            let after = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
            // One millisecond either way: the offset itself was measured to the millisecond.
            assert!(
                ours + 1 >= before && ours <= after + 1,
                "{before} <= {ours} <= {after}"
            );
            clock.resync();
        }
    }
}
