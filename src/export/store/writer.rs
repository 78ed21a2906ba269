//! The store's writer: a thread of its own behind a bounded queue, so that the pipeline waits
//! on the disk only for so long. Rows the queue has no room for within [`ROOM_WITHIN`] are
//! counted and said once (a batch job's store, an import's, waits for room instead: the store
//! is what it is for); a flush waits, up to its deadline, until what was queued before it is
//! on disk, and the close writes what is left within its own.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_channel::{bounded, Receiver, SendTimeoutError, Sender};

use super::db::Store;
use super::rows::{row, Row};
use super::{Limits, StoreConfig};
use crate::assemble::Span;

/// Batches of rows waiting for the writer.
const QUEUE: usize = 256;
/// Batches of rows waiting for a batch job's writer, which the pipeline waits for anyway: a
/// deeper queue would only hold more in memory (a batch of 512 rows is some 150 KiB).
const QUEUE_WAITED_FOR: usize = 8;
/// Rows a batch job's writer gathers for one transaction (some 2.5 MiB)...
const BATCH_JOB_ROWS: usize = 8_192;
/// ... for this long at most, so that a replay of a stream that comes slowly is still written
/// as it comes.
const BATCH_JOB_WAIT: std::time::Duration = std::time::Duration::from_secs(1);
/// How long the pipeline waits for room in a full queue (a disk slower than the spans, an
/// import): back-pressure, not loss. Past it the rows are counted as lost.
const ROOM_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

enum Message {
    Rows(Vec<Row>),
    /// Answer once everything before this is written.
    Flush(Sender<()>),
}

/// Hands finished spans to the store's thread. Dropping it closes the store without waiting;
/// [`close`](Self::close) waits, up to a deadline.
#[must_use = "dropping the writer closes the store without writing what is queued"]
pub struct StoreWriter {
    tx: Option<Sender<Message>>,
    thread: Option<JoinHandle<()>>,
    done: Receiver<()>,
    dropped: Arc<AtomicU64>,
    /// Rows queued and not yet written (or given up on).
    pending: Arc<AtomicU64>,
    /// How long [`take`](Self::take) waits for room; `None`: as long as it takes.
    room_within: Option<std::time::Duration>,
    warned: bool,
}

impl StoreWriter {
    /// Starts the writer for the store `config` names. The store is opened on the writer's
    /// thread: one that cannot be opened is said once in the log, and what would have gone in
    /// is counted as dropped.
    pub fn start(config: &StoreConfig) -> std::io::Result<StoreWriter> {
        let (path, limits, batch_job) = (config.path.clone(), config.limits, config.batch_job);
        let (tx, rx) = bounded(if batch_job { QUEUE_WAITED_FOR } else { QUEUE });
        let (done_tx, done) = bounded(1);
        let dropped = Arc::new(AtomicU64::new(0));
        let pending = Arc::new(AtomicU64::new(0));
        let (lost, queued) = (dropped.clone(), pending.clone());
        let thread = std::thread::Builder::new()
            .name("albedo-otel-store".into())
            .spawn(move || {
                write_all(&path, limits, batch_job, &rx, &lost, &queued);
                let _ = done_tx.send(());
            })?;
        Ok(StoreWriter {
            tx: Some(tx),
            thread: Some(thread),
            done,
            dropped,
            pending,
            room_within: (!config.batch_job).then_some(ROOM_WITHIN),
            warned: false,
        })
    }

    /// Queues what the store keeps of `spans`, waiting for room [`ROOM_WITHIN`] at most (a
    /// batch job's store: until there is room).
    pub fn take(&mut self, spans: &[Span]) {
        let rows: Vec<Row> = spans.iter().filter_map(row).collect();
        if rows.is_empty() {
            return;
        }
        let Some(tx) = &self.tx else { return };
        let n = rows.len() as u64;
        self.pending.fetch_add(n, Ordering::Relaxed);
        let sent = match self.room_within {
            Some(within) => tx.send_timeout(Message::Rows(rows), within),
            None => tx
                .send(Message::Rows(rows))
                .map_err(|e| SendTimeoutError::Disconnected(e.into_inner())),
        };
        if let Err(e) = sent {
            self.pending.fetch_sub(n, Ordering::Relaxed);
            self.dropped.fetch_add(n, Ordering::Relaxed);
            if !std::mem::replace(&mut self.warned, true) {
                let why = match e {
                    SendTimeoutError::Timeout(_) => "it could not keep up",
                    SendTimeoutError::Disconnected(_) => "it stopped",
                };
                tracing::warn!(
                    "the local store is missing rows because {why}; they are counted at the close"
                );
            }
        }
    }

    /// Waits until what was queued before this is on disk, or `by` passes; whether it is.
    pub fn flush(&self, by: Instant) -> bool {
        let Some(tx) = &self.tx else { return true };
        let (ack, answered) = bounded(1);
        let wait = by.saturating_duration_since(Instant::now());
        if tx.send_timeout(Message::Flush(ack), wait).is_err() {
            return false;
        }
        answered
            .recv_timeout(by.saturating_duration_since(Instant::now()))
            .is_ok()
    }

    /// Rows that never reached the store.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Writes what is queued, waiting until `by` at most; rows still queued then are lost,
    /// and counted. Returns how many rows never reached the store.
    pub fn close(mut self, by: Instant) -> u64 {
        self.tx = None;
        let timeout = by.saturating_duration_since(Instant::now());
        if self.done.recv_timeout(timeout).is_ok() {
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
            return self.dropped();
        }
        tracing::warn!("the local store did not finish writing by the close's deadline");
        self.dropped() + self.pending.load(Ordering::Relaxed)
    }
}

/// The writer's loop: each batch in one transaction, until the queue closes.
fn write_all(
    path: &std::path::Path,
    limits: Limits,
    batch_job: bool,
    rx: &Receiver<Message>,
    lost: &AtomicU64,
    queued: &AtomicU64,
) {
    let opened = Store::open(path).and_then(|s| if batch_job { s.for_batch_job() } else { Ok(s) });
    let mut store = match opened {
        Ok(mut s) => {
            let now = jiff::Timestamp::now().as_nanosecond();
            let now = i64::try_from(now).unwrap_or(i64::MAX);
            match s.keep_within(limits, now) {
                Ok(0) => {}
                Ok(n) => tracing::info!("the local store: {n} rows past its limits removed"),
                Err(e) => tracing::warn!("the local store could not keep its limits: {e}"),
            }
            Some(s)
        }
        Err(e) => {
            tracing::warn!("the local store is off: {e}");
            None
        }
    };
    while let Ok(message) = rx.recv() {
        match message {
            Message::Rows(mut rows) => {
                // What else is waiting goes in the same transaction: one sync for many. A
                // batch job's writer waits for more, up to [`BATCH_JOB_ROWS`] or
                // [`BATCH_JOB_WAIT`], a flush or the end: each commit writes every page it
                // touched again, and the keys are random, so the fewer the commits, the fewer
                // the pages written.
                let mut acks = Vec::new();
                let by = Instant::now() + BATCH_JOB_WAIT;
                let more = |rows: &Vec<Row>| match batch_job && rows.len() < BATCH_JOB_ROWS {
                    true => rx.recv_deadline(by).ok(),
                    false => rx.try_recv().ok(),
                };
                while let Some(more) = more(&rows) {
                    match more {
                        Message::Rows(r) => rows.extend(r),
                        Message::Flush(ack) => {
                            acks.push(ack);
                            break;
                        }
                    }
                }
                let n = rows.len() as u64;
                match store.as_mut().map(|s| s.write(&rows)) {
                    Some(Ok(_)) => {}
                    Some(Err(e)) => {
                        lost.fetch_add(n, Ordering::Relaxed);
                        tracing::warn!("could not write to the local store: {e}");
                    }
                    None => {
                        lost.fetch_add(n, Ordering::Relaxed);
                    }
                }
                queued.fetch_sub(n, Ordering::Relaxed);
                for ack in acks {
                    let _ = ack.send(());
                }
            }
            Message::Flush(ack) => {
                let _ = ack.send(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::semconv::{GEN_AI_OPERATION_NAME, OP_EXECUTE_TOOL};
    use crate::assemble::span::{Attr, SpanKind, Status, Value};
    use crate::assemble::{SpanId, TraceId};

    fn tool(n: u64) -> Span {
        Span {
            trace_id: TraceId::from(1u128),
            span_id: SpanId::from(n),
            parent_span_id: None,
            name: "execute_tool run".into(),
            kind: SpanKind::Internal,
            start_ns: n,
            end_ns: n + 1,
            attributes: vec![Attr {
                key: GEN_AI_OPERATION_NAME,
                value: Value::Static(OP_EXECUTE_TOOL),
            }],
            events: Vec::new(),
            links: Vec::new(),
            status: Status::Unset,
        }
    }

    fn config(path: std::path::PathBuf, batch_job: bool) -> StoreConfig {
        StoreConfig {
            path,
            limits: Limits::default(),
            batch_job,
        }
    }

    /// The store held up (another writer holds its lock) while more rows come than its queue
    /// has room for: rows `take` gave up on, once the pipeline is past the queue and
    /// `stalled` holds (the lock still held meanwhile).
    fn held_up(waits: bool, stalled: impl Fn(&StoreWriter) -> bool) -> (u64, u64) {
        let dir = std::env::temp_dir().join(format!(
            "albedo-otel-held-up-{waits}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("store.sqlite");
        drop(Store::open(&path).unwrap());
        let other = rusqlite::Connection::open(&path).unwrap();
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
        let mut w = StoreWriter::start(&config(path.clone(), waits)).unwrap();
        if !waits {
            // The live route's wait, shortened for the test.
            w.room_within = Some(std::time::Duration::from_millis(1));
        }
        let (pending, dropped) = (w.pending.clone(), w.dropped.clone());
        let depth = w.tx.as_ref().and_then(|tx| tx.capacity()).unwrap() as u64;
        let more = depth + 44;
        std::thread::scope(|s| {
            let w = &mut w;
            let taker = s.spawn(move || {
                for n in 1..=more {
                    w.take(&[tool(n)]);
                }
            });
            // Past the queue: a row is counted pending before it is queued, and dropped when
            // given up on.
            let by = Instant::now() + std::time::Duration::from_secs(8);
            while pending.load(Ordering::Relaxed) + dropped.load(Ordering::Relaxed) <= depth {
                assert!(Instant::now() < by, "the queue never filled");
                std::thread::yield_now();
            }
            if !waits {
                taker.join().unwrap();
            }
            other.execute_batch("COMMIT").unwrap();
        });
        assert!(stalled(&w));
        let lost = w.close(Instant::now() + std::time::Duration::from_secs(30));
        let read = Store::open_to_read(&path).unwrap().unwrap();
        let kept = read.holdings().unwrap().tool_calls;
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(kept + lost, more, "each row kept or counted lost");
        (kept, lost)
    }

    /// An import's store loses nothing to a full queue: the pipeline waits for it; the live
    /// route's, held up as long, drops rows rather than hold up the export, and counts them.
    #[test]
    fn a_batch_jobs_store_waits_where_the_live_routes_drops() {
        let (_, lost) = held_up(true, |w| w.room_within.is_none());
        assert_eq!(lost, 0);
        let (_, lost) = held_up(false, |w| w.dropped() > 0);
        assert!(lost > 0);
    }

    /// A batch job's writer gathers rows for a transaction, but not for ever: rows that come
    /// slowly (a replay of a stream still being written) are on disk within a moment, with no
    /// flush and no close.
    #[test]
    fn a_batch_jobs_rows_that_come_slowly_are_written_as_they_come() {
        let dir = std::env::temp_dir().join(format!("albedo-otel-slowly-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("store.sqlite");
        let mut w = StoreWriter::start(&config(path.clone(), true)).unwrap();
        w.take(&[tool(1)]);
        let by = Instant::now() + BATCH_JOB_WAIT * 10;
        let stored = || {
            Store::open_to_read(&path)
                .ok()
                .flatten()
                .and_then(|s| s.holdings().ok())
                .map_or(0, |h| h.tool_calls)
        };
        while stored() == 0 {
            assert!(Instant::now() < by, "the row waited for more");
            // A poll of the file, not a wait for the writer: it says nothing when it is done.
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(
            w.close(Instant::now() + std::time::Duration::from_secs(10)),
            0
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rows_a_store_could_not_take_are_counted_and_the_rest_are_on_disk() {
        let dir = std::env::temp_dir().join(format!("albedo-otel-writer-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // A store under a file: it cannot be opened, and every row is lost, counted.
        std::fs::write(dir.join("file"), "").unwrap();
        let mut w = StoreWriter::start(&config(dir.join("file/store.sqlite"), false)).unwrap();
        w.take(&[tool(1), tool(2), tool(3)]);
        assert_eq!(
            w.close(Instant::now() + std::time::Duration::from_secs(10)),
            3
        );
        // A good one: what a flush answered for is there, and nothing is counted lost.
        let path = dir.join("store.sqlite");
        let mut w = StoreWriter::start(&config(path.clone(), false)).unwrap();
        w.take(&[tool(1), tool(2)]);
        assert!(w.flush(Instant::now() + std::time::Duration::from_secs(10)));
        let read = Store::open_to_read(&path).unwrap().unwrap();
        assert_eq!(read.holdings().unwrap().tool_calls, 2);
        w.take(&[tool(2), tool(3)]);
        assert_eq!(
            w.close(Instant::now() + std::time::Duration::from_secs(10)),
            0
        );
        assert_eq!(read.holdings().unwrap().tool_calls, 3, "tool 2 once");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
