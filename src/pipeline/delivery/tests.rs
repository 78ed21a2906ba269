//! The export thread against an exporter that always fails: what it holds stays bounded, and
//! every span is counted once.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::export::{Batch, ExportError, ExportFuture, SpanExporter};
use crate::pipeline::{self, PipelineConfig, RetryPolicy};
use crate::protocol::LineChunk;
use crate::testing::{generate, GenConfig};

/// Fails every export as "unreachable", and remembers how often it saw each batch.
#[derive(Default)]
struct Down {
    seen: Mutex<HashMap<Vec<u8>, u32>>,
    changed: Condvar,
}

struct DownExporter(Arc<Down>);

impl SpanExporter for DownExporter {
    fn export(&self, batch: Batch, _timeout: Option<Duration>) -> ExportFuture {
        let down = self.0.clone();
        Box::pin(async move {
            *down
                .seen
                .lock()
                .unwrap()
                .entry(batch.body.to_vec())
                .or_default() += 1;
            down.changed.notify_all();
            Err(ExportError::Unreachable {
                endpoint: "nowhere".into(),
                reason: "down for the test".into(),
            })
        })
    }

    fn describe(&self) -> String {
        "a collector that is down".into()
    }
}

/// No spool and a collector that is down: batches waiting for their retry used to leave room
/// for new ones, so every batch of the input piled up in memory (843 MB for a 285 MB replay).
/// They hold their place now: only as many batches as may be in flight are ever taken, the
/// input waits behind them, and at the close every span is counted as not delivered, once.
#[test]
fn retries_hold_their_place_so_a_dead_collector_bounds_what_is_held() {
    let in_flight = 2;
    let config = PipelineConfig {
        batch_size: 4,
        batch_delay: Duration::from_millis(5),
        max_concurrent_exports: in_flight,
        retry: RetryPolicy {
            initial_backoff: Duration::from_millis(20),
            max_backoff: Duration::from_millis(20),
            max_elapsed: Duration::from_secs(600),
        },
        spool: None,
        ..PipelineConfig::default()
    };
    let down = Arc::new(Down::default());
    let exporter = DownExporter(down.clone());
    let (handle, guard) = pipeline::start(config, move || {
        Ok(Box::new(exporter) as Box<dyn SpanExporter>)
    })
    .unwrap();
    let (lines, _) = generate(&GenConfig {
        sessions: 40,
        turns_per_session: 2,
        seed: 3,
        ..GenConfig::default()
    });
    let feeder = {
        let handle = handle.clone();
        std::thread::spawn(move || {
            for (i, l) in lines.iter().enumerate() {
                let chunk = LineChunk {
                    source: "test".into(),
                    first_line: i as u64 + 1,
                    data: format!("{l}\n").into_bytes(),
                    oversize: Vec::new(),
                    max_line: 1 << 20,
                };
                if !handle.send_lines(chunk) {
                    return;
                }
            }
        })
    };
    // Until some batch has been tried five times: by then, with the old accounting, every
    // batch the input makes had been taken (the first retry alone waits 20 ms).
    let seen = down.seen.lock().unwrap();
    let (seen, timeout) = down
        .changed
        .wait_timeout_while(seen, Duration::from_secs(30), |s| {
            s.values().all(|n| *n < 5)
        })
        .unwrap();
    assert!(!timeout.timed_out(), "no batch was retried five times");
    let distinct = seen.len();
    drop(seen);
    assert!(
        distinct <= in_flight,
        "{distinct} batches held for a collector that is down, with {in_flight} exports in flight"
    );
    drop(handle);
    let summary = guard.close_within(Duration::from_secs(2));
    feeder.join().unwrap();
    assert!(summary.spans > 0);
    assert_eq!(summary.in_flight(), 0, "{summary}");
    assert_eq!(
        summary.failed, summary.spans,
        "each span counted once: {summary}"
    );
    assert_eq!(summary.exported, 0);
}

/// Answers every export at once.
struct UpExporter;

impl SpanExporter for UpExporter {
    fn export(&self, batch: Batch, _timeout: Option<Duration>) -> ExportFuture {
        crate::export::ready(Ok(crate::export::Exported {
            accepted: batch.spans,
            rejected: 0,
        }))
    }

    fn describe(&self) -> String {
        "a collector that is up".into()
    }
}

/// A host may wait as long as it likes for a flush: a timeout too long to add to the clock is
/// one that never comes, not a panic.
#[test]
fn a_flush_with_the_longest_timeout_answers() {
    let (handle, guard) = pipeline::start(PipelineConfig::default(), || {
        Ok(Box::new(UpExporter) as Box<dyn SpanExporter>)
    })
    .unwrap();
    assert!(handle.flush(Duration::MAX));
    drop(handle);
    guard.close();
}
