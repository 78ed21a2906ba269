//! The store's writer: a thread of its own behind a bounded queue, so that the pipeline never
//! waits on the disk. Rows the queue has no room for are counted and said once, never waited
//! for; a flush waits, up to its deadline, until what was queued before it is on disk, and the
//! close writes what is left within its own.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_channel::{bounded, Receiver, SendTimeoutError, Sender};

use super::db::Store;
use super::rows::{row, Row};
use crate::assemble::Span;

/// Batches of rows waiting for the writer.
const QUEUE: usize = 256;
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
    warned: bool,
}

impl StoreWriter {
    /// Starts the writer for the store at `path`. The store is opened on the writer's thread:
    /// one that cannot be opened is said once in the log, and what would have gone in is
    /// counted as dropped.
    pub fn start(path: PathBuf) -> std::io::Result<StoreWriter> {
        let (tx, rx) = bounded(QUEUE);
        let (done_tx, done) = bounded(1);
        let dropped = Arc::new(AtomicU64::new(0));
        let lost = dropped.clone();
        let thread = std::thread::Builder::new()
            .name("albedo-otel-store".into())
            .spawn(move || {
                write_all(&path, &rx, &lost);
                let _ = done_tx.send(());
            })?;
        Ok(StoreWriter {
            tx: Some(tx),
            thread: Some(thread),
            done,
            dropped,
            warned: false,
        })
    }

    /// Queues what the store keeps of `spans`, waiting for room [`ROOM_WITHIN`] at most.
    pub fn take(&mut self, spans: &[Span]) {
        let rows: Vec<Row> = spans.iter().filter_map(row).collect();
        if rows.is_empty() {
            return;
        }
        let Some(tx) = &self.tx else { return };
        let n = rows.len() as u64;
        if let Err(e) = tx.send_timeout(Message::Rows(rows), ROOM_WITHIN) {
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
        } else {
            tracing::warn!("the local store did not finish writing by the close's deadline");
        }
        self.dropped()
    }
}

/// The writer's loop: each batch in one transaction, until the queue closes.
fn write_all(path: &std::path::Path, rx: &Receiver<Message>, lost: &AtomicU64) {
    let mut store = match Store::open(path) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!("the local store is off: {e}");
            None
        }
    };
    while let Ok(message) = rx.recv() {
        match message {
            Message::Rows(mut rows) => {
                // What else is waiting goes in the same transaction: one sync for many.
                let mut acks = Vec::new();
                while let Ok(more) = rx.try_recv() {
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
