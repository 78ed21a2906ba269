//! The assemble thread: decodes lines, runs the assembly, and batches spans for export.
//!
//! It is the only owner of the assembly state, so the assembly needs no locks; it blocks only
//! on its inputs (with a timeout that sends a partial batch on time) and, when the export
//! thread is behind, on handing over a full batch, which is how back-pressure reaches a stream.
//!
//! Events from an in-process hook are *polled*, not waited on. A thread blocked on a channel
//! has to be woken by the sender, and that futex call costs the sender microseconds: far more
//! than the rest of `hook`. Polling every few milliseconds keeps `hook` to a queue push, and
//! costs nothing a user can see, since spans wait for the batch delay (1 s) anyway.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{never, select, Receiver};
use tokio::sync::mpsc::Sender;

use super::attribution::{Attributor, UserEnv};
use super::delivery::ToDelivery;
use super::metrics::{self, Recorder};
use super::stats::Stats;
use super::{Control, Input, PipelineConfig};
use crate::assemble::{Assembler, Output, Span};
use crate::clock::WallClock;
use crate::export::otlp::Encoder;
use crate::protocol::LineChunk;
use crate::protocol::{decode_line, validate, DecodeError, Invalid, Record};
use crate::text::truncate;

/// Messages of one kind logged one by one before they are only counted.
const LOG_LIMIT: u64 = 100;
/// A log line quoting input is cut to this length.
const LOG_LINE_MAX: usize = 1024;
/// How often the hook queue is polled: this often while events arrive, backing off to
/// `POLL_MAX` (or the batch delay, if shorter) while none do.
const POLL_MIN: Duration = Duration::from_millis(1);
const POLL_MAX: Duration = Duration::from_millis(20);
/// Open sessions ended per step at close.
const FINISH_STEP: usize = 64;
/// At most this many hook events are taken per poll before the other inputs get a look.
const POLL_BURST: usize = 4096;

struct Worker {
    config: PipelineConfig,
    /// Encodes batches here, where their spans were made: they are freed by the thread that
    /// allocated them, and only bytes cross to the export thread. The one place that encodes.
    encoder: Encoder,
    assembler: Assembler,
    /// Who and where, for the records that start a session or a turn.
    attributor: Attributor,
    out: Output,
    batch: Vec<Span>,
    batch_started: Option<Instant>,
    batch_tx: Sender<ToDelivery>,
    stats: Arc<Stats>,
    logged_bad: u64,
    logged_notes: u64,
    warned_encoder: bool,
    /// Metrics counted from the spans as they leave for export, and when they go next.
    metrics: Option<(Recorder, Instant)>,
    /// The local store, handed every span that leaves for export.
    #[cfg(feature = "store")]
    store: Option<crate::export::store::StoreWriter>,
}

/// What the assemble thread reads from.
pub(super) struct Inputs {
    pub lines: Receiver<LineChunk>,
    /// Polled, never waited on (see the top of this file).
    pub events: Receiver<Input>,
    pub control: Receiver<Control>,
    /// The hook's clock, kept in step with the system clock at every poll.
    pub clock: Arc<WallClock>,
}

pub(super) fn run(
    config: PipelineConfig,
    inputs: Inputs,
    batch_tx: Sender<ToDelivery>,
    stats: Arc<Stats>,
) {
    let Inputs {
        lines,
        events,
        control,
        clock,
    } = inputs;
    // The secret scrubber's regexes are built here, while the reader starts taking input,
    // rather than before the exporter says it is ready.
    config.assemble.policy.scrubber.warm();
    let mut w = Worker {
        encoder: Encoder::new(&config.resource),
        assembler: Assembler::new(config.assemble.clone()),
        attributor: Attributor::new(config.user_id.clone(), UserEnv::from_process()),
        batch: Vec::with_capacity(config.batch_size),
        config,
        out: Output::default(),
        batch_started: None,
        batch_tx,
        stats,
        logged_bad: 0,
        logged_notes: 0,
        warned_encoder: false,
        metrics: None,
        #[cfg(feature = "store")]
        store: None,
    };
    #[cfg(feature = "store")]
    if let Some(store) = &w.config.store {
        match crate::export::store::StoreWriter::start(store) {
            Ok(writer) => w.store = Some(writer),
            Err(e) => tracing::warn!("the local store is off: cannot start its writer: {e}"),
        }
    }
    if let Some(m) = &w.config.metrics {
        w.metrics = Some((
            Recorder::new(metrics::now_ns()),
            Instant::now() + m.interval,
        ));
    }
    let mut lines = lines;
    let poll_max = POLL_MAX.min(w.config.batch_delay).max(POLL_MIN);
    let mut poll = POLL_MIN;
    let mut next_poll = Instant::now();
    loop {
        let now = Instant::now();
        if now >= next_poll {
            clock.resync();
            let mut taken = 0;
            while taken < POLL_BURST {
                let Ok(input) = events.try_recv() else { break };
                w.input(&input);
                taken += 1;
            }
            // A full burst means a flood: poll again at once, after a look at the other
            // inputs, so that a flush or a stream is never starved by the hook queue.
            (poll, next_poll) = match taken {
                POLL_BURST => (POLL_MIN, now),
                0 => ((poll * 2).min(poll_max), now + poll),
                _ => (POLL_MIN, now + POLL_MIN),
            };
        }
        let wait = w
            .time_to_send()
            .min(w.time_to_metrics())
            .min(next_poll.saturating_duration_since(now));
        select! {
            recv(lines) -> m => match m {
                Ok(chunk) => w.lines(&chunk),
                Err(_) => lines = never(),
            },
            recv(control) -> m => match m {
                Ok(Control::Flush(ack, by)) => {
                    w.drain(&lines, &events);
                    w.send_batch();
                    w.send_metrics();
                    w.flush_store(by);
                    let _ = w.batch_tx.blocking_send(ToDelivery::Flush(ack, by));
                }
                Ok(Control::Seed(session, answer)) => {
                    w.drain(&lines, &events);
                    let _ = answer.send(w.assembler.seed(&session));
                }
                Ok(Control::Shutdown) | Err(_) => break,
            },
            default(wait) => {}
        }
        if w.batch_due() {
            w.send_batch();
        }
        if w.time_to_metrics().is_zero() {
            w.send_metrics();
        }
    }
    // Inputs first: everything already handed over is assembled, then every open turn ends.
    w.drain(&lines, &events);
    // A few sessions at a time, so that ending thousands of open turns sends their spans on
    // as they are made instead of holding them all.
    while w.assembler.finish_some(&mut w.out, FINISH_STEP) {
        w.take_output(None);
        if w.batch.len() >= w.config.batch_size {
            w.send_batch();
        }
    }
    w.take_output(None);
    w.send_batch();
    w.send_metrics();
    // The export thread finishes as soon as its queue closes; the store's writer meanwhile.
    #[cfg(feature = "store")]
    let (store, stats, by) = (
        w.store.take(),
        w.stats.clone(),
        Instant::now() + w.config.flush_timeout,
    );
    drop(w);
    #[cfg(feature = "store")]
    if let Some(store) = store {
        let lost = store.close(by);
        if lost > 0 {
            Stats::add(&stats.store_lost, lost);
            tracing::warn!("{lost} rows never reached the local store");
        }
    }
}

impl Worker {
    fn time_to_send(&self) -> Duration {
        match self.batch_started {
            Some(t) => (t + self.config.batch_delay).saturating_duration_since(Instant::now()),
            None => Duration::from_secs(3600),
        }
    }

    fn time_to_metrics(&self) -> Duration {
        match &self.metrics {
            Some((_, due)) => due.saturating_duration_since(Instant::now()),
            None => Duration::from_secs(3600),
        }
    }

    /// Sends what the metrics recorded since they were last sent (nothing, if nothing was).
    fn send_metrics(&mut self) {
        let Some(interval) = self.config.metrics.as_ref().map(|m| m.interval) else {
            return;
        };
        let Some((recorder, due)) = &mut self.metrics else {
            return;
        };
        *due = Instant::now() + interval;
        if let Some(points) = recorder.take(metrics::now_ns(), &self.config.resource) {
            // Metrics wait behind spans like a batch; their sending never holds one up.
            let _ = self.batch_tx.blocking_send(ToDelivery::Metrics(points));
        }
    }

    /// Waits, until `by` at most, for the store to have what left for export so far.
    fn flush_store(&self, by: Instant) {
        #[cfg(feature = "store")]
        if let Some(store) = &self.store {
            if !store.flush(by) {
                tracing::warn!("the local store did not finish writing by the flush's deadline");
            }
        }
        let _ = by;
    }

    fn batch_due(&self) -> bool {
        self.batch.len() >= self.config.batch_size
            || self
                .batch_started
                .is_some_and(|t| t.elapsed() >= self.config.batch_delay)
    }

    /// Takes whatever is already queued, without waiting.
    fn drain(&mut self, lines: &Receiver<LineChunk>, events: &Receiver<Input>) {
        while let Ok(chunk) = lines.try_recv() {
            self.lines(&chunk);
        }
        while let Ok(input) = events.try_recv() {
            self.input(&input);
        }
    }

    fn lines(&mut self, chunk: &LineChunk) {
        for (number, line) in chunk.lines() {
            match line.and_then(decode_line) {
                Ok(record) => {
                    Stats::add(&self.stats.events, 1);
                    self.push(&record);
                    self.take_output(Some((&chunk.source, number)));
                }
                Err(e) => self.bad_line(&chunk.source, number, &e),
            }
            // After, not before: a line the assembly never finished shows as unassembled.
            Stats::add(&self.stats.lines, 1);
            if self.batch.len() >= self.config.batch_size {
                self.send_batch();
            }
        }
    }

    fn input(&mut self, input: &Input) {
        match input {
            Input::Record(record) => self.event(record),
            Input::Records(records) => records.iter().for_each(|r| self.event(r)),
            Input::Shared(shared) => self.event(&shared.record()),
            Input::Resume(seed) => self.assembler.resume(&seed.0, &seed.1, &mut self.out),
        }
    }

    /// A record from a source other than a line (the hook daemon, an in-process host): it
    /// meets the same checks a decoded line did.
    fn event(&mut self, record: &Record<'_>) {
        if let Err(e) = validate(record) {
            return self.bad_event(record, &e);
        }
        Stats::add(&self.stats.events, 1);
        self.push(record);
        self.take_output(None);
        if self.batch.len() >= self.config.batch_size {
            self.send_batch();
        }
    }

    fn push(&mut self, record: &Record<'_>) {
        let who = self.attributor.for_record(record, &self.assembler);
        self.assembler.push_attributed(record, who, &mut self.out);
    }

    /// Log lines quote input (ids, values serde could not read): they are scrubbed and cut
    /// like everything exported, so a secret in a bad line does not land in the log.
    fn safe(&self, text: String) -> String {
        let policy = &self.config.assemble.policy;
        truncate(&policy.scrubber.scrub(&text), LOG_LINE_MAX)
    }

    fn bad_line(&mut self, source: &str, number: u64, e: &DecodeError) {
        Stats::add(&self.stats.bad_lines, 1);
        self.logged_bad += 1;
        if self.logged_bad <= LOG_LIMIT {
            let message = self.safe(format!("{source}:{number}: line skipped: {e}"));
            tracing::warn!("{message}");
        }
        if self.logged_bad == LOG_LIMIT {
            tracing::warn!("{LOG_LIMIT} bad lines so far; further ones are counted, not logged");
        }
    }

    fn bad_event(&mut self, record: &Record<'_>, e: &Invalid) {
        Stats::add(&self.stats.bad_lines, 1);
        self.logged_bad += 1;
        if self.logged_bad <= LOG_LIMIT {
            let message = self.safe(format!(
                "session {}: `{}` event skipped: {e}",
                record.session,
                record.event.kind()
            ));
            tracing::warn!("{message}");
        }
    }

    /// Moves spans into the batch and logs the assembly's repairs.
    fn take_output(&mut self, at: Option<(&str, u64)>) {
        let notes = std::mem::take(&mut self.out.notes);
        for note in notes {
            Stats::add(&self.stats.repairs, 1);
            let place = match at {
                Some((source, line)) => format!("{source}:{line}: "),
                None => String::new(),
            };
            if note.is_warning() {
                self.logged_notes += 1;
                if self.logged_notes <= LOG_LIMIT {
                    let message = self.safe(format!("{place}{note}"));
                    tracing::warn!("{message}");
                }
            } else if tracing::enabled!(tracing::Level::DEBUG) {
                let message = self.safe(format!("{place}{note}"));
                tracing::debug!("{message}");
            }
        }
        if let Some(only) = &self.config.only {
            self.out.spans.retain(|s| only.keeps(s));
        }
        if !self.out.spans.is_empty() {
            Stats::add(&self.stats.spans, self.out.spans.len() as u64);
            if self.batch_started.is_none() {
                self.batch_started = Some(Instant::now());
            }
            self.batch.append(&mut self.out.spans);
        }
    }

    fn send_batch(&mut self) {
        self.batch_started = None;
        if self.batch.is_empty() {
            return;
        }
        let size = self.config.batch_size;
        while !self.batch.is_empty() {
            let rest = if self.batch.len() > size {
                self.batch.split_off(size)
            } else {
                Vec::with_capacity(size)
            };
            let batch = std::mem::replace(&mut self.batch, rest);
            let n = batch.len() as u64;
            if let Some((recorder, _)) = &mut self.metrics {
                for span in &batch {
                    recorder.record(span);
                }
            }
            #[cfg(feature = "store")]
            if let Some(store) = &mut self.store {
                store.take(&batch);
            }
            let encoded = match self.encoder.encode(&batch) {
                Ok(p) => p,
                Err(mismatch) => {
                    Stats::add(&self.stats.encode_errors, 1);
                    if !std::mem::replace(&mut self.warned_encoder, true) {
                        tracing::error!("{mismatch}; this is a bug, please report it");
                    }
                    mismatch.fallback
                }
            };
            if self
                .batch_tx
                .blocking_send(ToDelivery::Batch(encoded))
                .is_err()
            {
                // The export thread is gone (it failed to start or panicked).
                Stats::add(&self.stats.failed, n);
            }
        }
    }
}
