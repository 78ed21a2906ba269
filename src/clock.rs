//! Wall-clock time: [`unix_ms`] for everyone, and [`WallClock`], the clock an in-process
//! host's `hook` reads, Unix milliseconds for a few nanoseconds.
//!
//! `SystemTime::now()` costs 50-80 ns on the virtual machines agents run on, most of `hook`'s
//! budget. Here the time is the CPU's cycle counter (through `quanta`, calibrated against the
//! OS clock) plus an offset to Unix time. The offset is re-measured by the exporter's own
//! thread every time it polls ([`WallClock::resync`]), so a stepped system clock or a counter
//! that drifts is followed within milliseconds, and `hook` only ever reads one atomic that
//! rarely changes.
//!
//! Calibrating the counter takes `quanta` 15-20 ms of spinning on the OS clock, so it is done
//! only for in-process hosts, on a thread of its own ([`WallClock::calibrate_in_background`]);
//! until it is done, and in processes that never ask (the CLI), the system clock is read.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// Drift or steps smaller than this (0.2 ms) are not worth a store.
const RESYNC_TOLERANCE_NS: i64 = 200_000;

#[derive(Debug)]
pub struct WallClock {
    /// Set once calibrated; the offset below is valid from then on.
    counter: OnceLock<quanta::Clock>,
    /// Unix nanoseconds minus the counter's nanoseconds.
    offset_ns: AtomicI64,
}

impl Default for WallClock {
    fn default() -> Self {
        Self::new()
    }
}

impl WallClock {
    /// A clock that reads the system clock until it is calibrated.
    pub fn new() -> Self {
        WallClock {
            counter: OnceLock::new(),
            offset_ns: AtomicI64::new(0),
        }
    }

    /// Calibrates the cycle counter on a thread of its own; `now_ms` uses it once done.
    pub fn calibrate_in_background(self: &Arc<Self>) {
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name("albedo-otel-clock".into())
            .spawn(move || {
                let counter = quanta::Clock::new();
                // The offset first: once `counter` is visible, the offset is valid.
                me.store_offset(&counter);
                let _ = me.counter.set(counter);
            });
        if spawned.is_err() {
            tracing::debug!("no thread to calibrate the fast clock: the system clock is read");
        }
    }

    /// Unix time in milliseconds.
    pub fn now_ms(&self) -> u64 {
        match self.counter.get() {
            Some(c) => {
                let ns = counter_ns(c) + self.offset_ns.load(Ordering::Relaxed);
                (ns.max(0) / 1_000_000) as u64
            }
            None => unix_ms(),
        }
    }

    /// Measures the offset to the system clock again (once calibrated).
    pub fn resync(&self) {
        if let Some(c) = self.counter.get() {
            self.store_offset(c);
        }
    }

    /// Stores only when the offset moved by more than `RESYNC_TOLERANCE_NS`, so that the
    /// readers' cache line stays shared and clean.
    fn store_offset(&self, counter: &quanta::Clock) {
        let offset = unix_ns() as i64 - counter_ns(counter);
        if (self.offset_ns.load(Ordering::Relaxed) - offset).abs() > RESYNC_TOLERANCE_NS {
            self.offset_ns.store(offset, Ordering::Relaxed);
        }
    }
}

/// Unix time in nanoseconds, from the system clock; 0 for a clock set before 1970.
pub fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Unix time in milliseconds, from the system clock: the one place it is read that way.
pub fn unix_ms() -> u64 {
    unix_ns() / 1_000_000
}

fn counter_ns(c: &quanta::Clock) -> i64 {
    // `delta_as_nanos(0, raw)` scales the raw counter to nanoseconds since an arbitrary
    // origin; only differences (through the offset) matter.
    c.delta_as_nanos(0, c.raw()) as i64
}

impl WallClock {
    /// Whether the cycle counter is in use yet.
    pub fn is_calibrated(&self) -> bool {
        self.counter.get().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_system_clock_before_and_after_calibration() {
        let clock = Arc::new(WallClock::new());
        let check = |clock: &WallClock| {
            let before = unix_ms();
            let ours = clock.now_ms();
            let after = unix_ms();
            // One millisecond either way: the offset itself was measured to the millisecond.
            assert!(
                ours + 1 >= before && ours <= after + 1,
                "{before} <= {ours} <= {after}"
            );
        };
        check(&clock);
        clock.calibrate_in_background();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !clock.is_calibrated() {
            assert!(
                std::time::Instant::now() < deadline,
                "calibrated within 10 s"
            );
            check(&clock);
            std::thread::yield_now();
        }
        for _ in 0..1000 {
            check(&clock);
            clock.resync();
        }
    }
}
