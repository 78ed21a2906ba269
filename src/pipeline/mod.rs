//! The running exporter: threads, bounded channels and deadlines that join the stages.
//!
//! ```text
//!  stdin reader ──lines──┐
//!                        ├─> assemble thread ──batches──> export thread ──> collector
//!  host hook ──events────┘   (decode, assemble, batch)    (encode, send, retry)
//! ```
//!
//! Every channel is bounded. Lines from a stream wait for room (back-pressure reaches the
//! writer through the pipe); events from an in-process hook never wait: when the queue is full
//! they are dropped, counted, and warned about once. Closing is staged, inputs first: the
//! assemble thread drains what was handed over, ends every open turn, and passes its last batch
//! on; the export thread delivers what it holds; the guard waits for both, up to a deadline.

pub mod attribution;
mod deadline;
pub mod defaults;
mod delivery;
mod handover;
pub mod metrics;
mod only;
pub mod spool;
mod stats;
mod worker;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, unbounded, Receiver, Sender, TrySendError};

pub use attribution::UserId;
pub(crate) use deadline::Deadline;
pub use metrics::MetricsConfig;
pub use only::OnlyTraces;
pub use stats::{Stats, Summary};

use crate::assemble::{AssembleConfig, SessionSeed};
use crate::clock::WallClock;
use crate::export::{ExportError, ResourceInfo, SpanExporter};
use crate::protocol::shared::SharedEvent;
use crate::protocol::LineChunk;
use crate::protocol::Record;

/// How the pipeline batches, queues, retries and closes.
#[derive(Debug, Clone)]
pub struct PipelineConfig {
    pub assemble: AssembleConfig,
    /// Who the spans come from: `service.name` and the other resource attributes.
    pub resource: ResourceInfo,
    /// Spans per export request (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`).
    pub batch_size: usize,
    /// Longest a span waits before it is sent (`OTEL_BSP_SCHEDULE_DELAY`).
    pub batch_delay: Duration,
    /// Events the in-process hook may queue before it drops (`OTEL_BSP_MAX_QUEUE_SIZE`).
    pub queue_size: usize,
    /// Deadline for delivering everything at close.
    pub flush_timeout: Duration,
    /// Exports in flight at once (`OTEL_BSP_MAX_CONCURRENT_EXPORTS`).
    pub max_concurrent_exports: usize,
    pub retry: RetryPolicy,
    /// Where to keep batches the collector cannot take now; `None` retries in memory instead.
    pub spool: Option<SpoolConfig>,
    /// `user.id` on every turn and model call (`ALBEDO_OTEL_USER_ID`).
    pub user_id: UserId,
    /// GenAI metrics derived from the spans, and where they go; `None`: none are made.
    pub metrics: Option<MetricsConfig>,
    /// The local store every exported span's turn, model call or tool call is written to;
    /// `None`: none.
    #[cfg(feature = "store")]
    pub store: Option<crate::export::store::StoreConfig>,
    /// Only these traces' spans go on (to the metrics, the store and the export); `None`: all.
    pub only: Option<Arc<OnlyTraces>>,
}

/// The on-disk spool for undeliverable batches.
#[derive(Debug, Clone)]
pub struct SpoolConfig {
    /// One folder per destination is made below this one.
    pub root: std::path::PathBuf,
    /// Oldest batches are dropped (and counted) past this size.
    pub max_bytes: u64,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            assemble: AssembleConfig::default(),
            resource: ResourceInfo::build(None, &[]),
            batch_size: defaults::BATCH_SIZE,
            batch_delay: defaults::BATCH_DELAY,
            queue_size: defaults::QUEUE_SIZE,
            flush_timeout: defaults::FLUSH_TIMEOUT,
            max_concurrent_exports: defaults::MAX_CONCURRENT_EXPORTS,
            retry: RetryPolicy::default(),
            spool: None,
            user_id: UserId::Auto,
            metrics: None,
            #[cfg(feature = "store")]
            store: None,
            only: None,
        }
    }
}

/// Exponential backoff for sends that may succeed later (collector down, 503, UNAVAILABLE).
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// Give up on a batch after this long.
    pub max_elapsed: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            max_elapsed: Duration::from_secs(60),
        }
    }
}

/// What the pipeline's event queue carries: a record (from the hook daemon, say) or an
/// in-process host's shared event.
///
/// The record is boxed to keep queue slots small (64 bytes, not 336): a host's `hook` writes
/// one slot per event, and a slot spanning several cache lines, each last touched by the
/// exporter's thread on another core, costs that many cache misses.
#[derive(Debug)]
pub enum Input {
    Record(Box<Record<'static>>),
    /// Records in the order read, handed over at once (a reader of files, for whom one
    /// hand-over an event was a sixth of its time).
    Records(Vec<Record<'static>>),
    Shared(SharedEvent),
    /// Go on with a session from where an earlier pipeline left it.
    Resume(Box<(String, SessionSeed)>),
}

/// Chunks of lines in flight to the assemble thread; each is at most one read (256 KiB).
const LINE_QUEUE: usize = 16;
/// Batches queued for the export thread (besides those it has in flight).
const BATCH_QUEUE: usize = 8;

pub(crate) enum Control {
    /// Reply once everything handed over before this is exported (or spooled, for what is
    /// still unanswered at the instant given).
    Flush(Sender<()>, Instant),
    /// Reply with what a later pipeline needs to go on with a session, once everything
    /// handed over before this is assembled.
    Seed(String, Sender<Option<SessionSeed>>),
    Shutdown,
}

/// Hands input to a running pipeline. Cheap to clone; every clone feeds the same pipeline.
#[derive(Clone)]
pub struct PipelineHandle {
    lines: Sender<LineChunk>,
    events: Sender<Input>,
    control: Sender<Control>,
    stats: Arc<Stats>,
    warned_full: Arc<AtomicBool>,
    clock: Arc<WallClock>,
}

impl PipelineHandle {
    /// Hands over a chunk of lines, waiting for room. `false` once the pipeline is closed.
    pub fn send_lines(&self, chunk: LineChunk) -> bool {
        // Counted before the assembly can take them, so that what it has not finished at the
        // end is known (`Summary::unassembled`).
        let n = chunk.lines().count() as u64;
        Stats::add(&self.stats.handed_lines, n);
        let sent = self.lines.send(chunk).is_ok();
        if !sent {
            self.stats.handed_lines.fetch_sub(n, Ordering::Relaxed);
        }
        sent
    }

    /// Hands over one event, waiting for room (for a reader that is not on anyone's critical
    /// path). `false` once the pipeline is closed.
    pub fn send(&self, event: Record<'static>) -> bool {
        self.events.send(Input::Record(Box::new(event))).is_ok()
    }

    /// Hands over `events`, in their order, as one, waiting for room. `false` once the
    /// pipeline is closed.
    pub fn send_many(&self, events: Vec<Record<'static>>) -> bool {
        self.events.send(Input::Records(events)).is_ok()
    }

    /// Hands over one event without ever waiting. A full or closed queue drops the event,
    /// counts it, and warns the first time.
    pub fn try_send(&self, event: Record<'static>) -> bool {
        self.try_input(Input::Record(Box::new(event)))
    }

    /// Unix milliseconds, cheaply: the time an in-process host's events are stamped with.
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Switches [`now_ms`](Self::now_ms) to the CPU's cycle counter once it is calibrated (in
    /// the background): for in-process hosts, whose `hook` reads the clock on every event.
    pub fn use_fast_clock(&self) {
        self.clock.calibrate_in_background();
    }

    /// As [`try_send`](Self::try_send), for an in-process host's shared event.
    pub fn try_send_shared(&self, event: SharedEvent) -> bool {
        self.try_input(Input::Shared(event))
    }

    fn try_input(&self, input: Input) -> bool {
        match self.events.try_send(input) {
            Ok(()) => true,
            Err(e) => {
                Stats::add(&self.stats.dropped_events, 1);
                if !self.warned_full.swap(true, Ordering::Relaxed) {
                    let why = match e {
                        TrySendError::Full(_) => "its queue is full",
                        TrySendError::Disconnected(_) => "it is closed",
                    };
                    tracing::warn!("the exporter is dropping events because {why}; drops are counted and reported at shutdown");
                }
                false
            }
        }
    }

    /// Waits until everything handed over so far has been exported (or given up on); with a
    /// spool, what the collector has not answered a little before `timeout` goes to the spool,
    /// so that with one the answer is yes unless the pipeline itself is stuck.
    pub fn flush(&self, timeout: Duration) -> bool {
        let (tx, rx) = bounded(1);
        let margin = (timeout / 5).min(Duration::from_millis(500));
        // A timeout too long to add is one that never comes.
        let by = Instant::now()
            .checked_add(timeout - margin)
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(365 * 24 * 3600));
        if self.control.send(Control::Flush(tx, by)).is_err() {
            return false;
        }
        rx.recv_timeout(timeout).is_ok()
    }

    pub fn stats(&self) -> Summary {
        self.stats.summary()
    }
}

/// Stops the pipeline when closed or dropped, delivering what it holds within the flush
/// deadline.
#[must_use = "dropping the guard closes the exporter: keep it for as long as events flow"]
pub struct PipelineGuard {
    control: Sender<Control>,
    deadline: Deadline,
    done: Receiver<()>,
    stats: Arc<Stats>,
    flush_timeout: Duration,
    threads: Vec<JoinHandle<()>>,
    closed: bool,
    target: String,
}

impl PipelineGuard {
    /// Where spans go, for people: an endpoint, a file, the console.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Closes the pipeline and returns the final counts. Waits at most the flush timeout.
    pub fn close(mut self) -> Summary {
        self.shutdown(self.flush_timeout)
    }

    /// Like [`close`](Self::close), with another deadline.
    pub fn close_within(mut self, timeout: Duration) -> Summary {
        self.shutdown(timeout)
    }

    fn shutdown(&mut self, timeout: Duration) -> Summary {
        if self.closed {
            return self.stats.summary();
        }
        self.closed = true;
        let deadline = Instant::now() + timeout;
        self.deadline.set(deadline);
        let _ = self.control.send(Control::Shutdown);
        let finished = self.done.recv_deadline(deadline).is_ok();
        if finished {
            for t in self.threads.drain(..) {
                let _ = t.join();
            }
        }
        let summary = self.stats.summary();
        if !finished {
            // The export thread settles everything it holds before the deadline (delivered,
            // spooled, or counted as failed), so this is rare: the input was still being
            // assembled, or the disk stalled. What is unsettled stays counted as in flight,
            // not as failed, since the thread may still spool it.
            tracing::error!(
                "the flush deadline of {} passed with {} spans neither delivered nor spooled to {}",
                humantime::format_duration(timeout),
                summary.in_flight(),
                self.target
            );
        }
        summary
    }
}

impl Drop for PipelineGuard {
    fn drop(&mut self) {
        if !self.closed {
            let summary = self.shutdown(self.flush_timeout);
            tracing::info!("exporter closed: {summary}");
        }
    }
}

/// Splits the model price table (once per process) on a thread of its own, beside the export
/// thread's start: a few milliseconds (tens in a debug build) that the first model call would
/// otherwise wait. If the thread cannot start, the first model call splits it.
fn decode_prices() -> Option<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("albedo-otel-prices".into())
        .spawn(crate::assemble::pricing::warm)
        .ok()
}

/// Starts the threads, sending to the exporter `make_exporter` makes: one of this crate's
/// (`export::otlp::OtlpExporter`, `export::file::FileExporter`,
/// `export::console::ConsoleExporter`) or a host's own [`SpanExporter`]. It is called inside the
/// export thread's tokio runtime (the gRPC client needs one).
pub fn start<F>(
    config: PipelineConfig,
    make_exporter: F,
) -> Result<(PipelineHandle, PipelineGuard), ExportError>
where
    F: FnOnce() -> Result<Box<dyn SpanExporter>, ExportError> + Send + 'static,
{
    let prices = decode_prices();
    let stats = Arc::new(Stats::default());
    let clock = Arc::new(WallClock::new());
    let (lines_tx, lines_rx) = bounded(LINE_QUEUE);
    let (events_tx, events_rx) = bounded(config.queue_size.max(1));
    let (control_tx, control_rx) = unbounded();
    let (batch_tx, batch_rx) = tokio::sync::mpsc::channel(BATCH_QUEUE);
    let (done_tx, done_rx) = bounded(1);
    let (ready_tx, ready_rx) = bounded(1);
    let deadline = Deadline::new();

    let export_thread = {
        let stats = stats.clone();
        let deadline = deadline.clone();
        let start = delivery::Start {
            make_exporter,
            spool: config.spool.clone(),
            ready: ready_tx,
            batches: batch_rx,
            done: done_tx,
            stats,
            deadline,
            retry: config.retry,
            max_in_flight: config.max_concurrent_exports,
            metrics: config.metrics.clone(),
        };
        std::thread::Builder::new()
            .name("albedo-otel-export".into())
            .spawn(move || delivery::run(start))
            .map_err(|e| ExportError::Setup(format!("cannot start the export thread: {e}")))?
    };
    let target = match ready_rx.recv() {
        Ok(Ok(ready)) => ready,
        Ok(Err(e)) => {
            let _ = export_thread.join();
            return Err(e);
        }
        Err(_) => {
            return Err(ExportError::Setup(
                "the export thread died while starting".into(),
            ))
        }
    };
    if let Some(p) = prices {
        let _ = p.join();
    }
    let assemble_thread = {
        let stats = stats.clone();
        let config = config.clone();
        let clock = clock.clone();
        std::thread::Builder::new()
            .name("albedo-otel-assemble".into())
            .spawn(move || {
                let inputs = worker::Inputs {
                    lines: lines_rx,
                    events: events_rx,
                    control: control_rx,
                    clock,
                };
                worker::run(config, inputs, batch_tx, stats)
            })
            .map_err(|e| ExportError::Setup(format!("cannot start the assemble thread: {e}")))?
    };
    let handle = PipelineHandle {
        lines: lines_tx,
        events: events_tx,
        control: control_tx.clone(),
        stats: stats.clone(),
        warned_full: Arc::new(AtomicBool::new(false)),
        clock,
    };
    let guard = PipelineGuard {
        control: control_tx,
        deadline,
        done: done_rx,
        stats,
        flush_timeout: config.flush_timeout,
        threads: vec![assemble_thread, export_thread],
        closed: false,
        target,
    };
    Ok((handle, guard))
}
