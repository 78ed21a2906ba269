//! The API for a Rust host: the shape of albedo's extension, a watch-only `hook` and `observe`.
//!
//! ```no_run
//! use albedo_otel::config::OtlpSettings;
//! use albedo_otel::host::{HookEvent, TraceExporter, Verdict};
//! use albedo_otel::pipeline::PipelineConfig;
//!
//! // OTEL_EXPORTER_OTLP_* from the environment, nothing overridden in code.
//! let settings = OtlpSettings::resolve(&Default::default(), &|k| std::env::var(k).ok()).unwrap();
//! let (exporter, guard) = TraceExporter::start(PipelineConfig::default(), settings).unwrap();
//! let session = exporter.session("s-1", Default::default());
//! assert_eq!(session.hook(&HookEvent::Prompted { text: "hi".into() }), Verdict::Proceed);
//! session.close();
//! let summary = guard.close(); // delivers what is left, within the flush deadline
//! ```
//!
//! `hook` and `observe` never block and never fail: each copies the event onto a bounded queue
//! and returns. If the queue is full the event is dropped and counted (see
//! [`Summary::dropped_events`](crate::pipeline::Summary)).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::config::OtlpSettings;
use crate::export::{otlp::OtlpExporter, ExportError, Exporter, ResourceInfo};
use crate::ingest::protocol::{Call, CallSent, Called, Event, ParentRef, Record, SessionInfo};
use crate::pipeline::{self, PipelineConfig, PipelineGuard, PipelineHandle, Summary};

/// What a watch-only hook answers: always proceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Proceed,
}

/// albedo's `hook.Event`.
#[derive(Debug, Clone)]
pub enum HookEvent {
    Prompted { text: String },
    Calling { call: Call<'static> },
    Called(Called<'static>),
    Stopping { reply: String, held: u32 },
}

/// albedo's `observe` events that matter for traces.
#[derive(Debug, Clone)]
pub enum Observed {
    CallSent(CallSent<'static>),
    TurnEnded { reason: Option<String> },
}

/// Session metadata, sent when the session handle is made.
#[derive(Debug, Clone, Default)]
pub struct SessionMeta {
    pub agent: Option<String>,
    pub model: Option<String>,
    pub workspace: Option<String>,
    /// `(parent session, agents.spawn call id)` for a child session.
    pub parent: Option<(String, String)>,
}

/// A running exporter. Clone it freely; every clone feeds the same pipeline.
#[derive(Clone)]
pub struct TraceExporter {
    pipeline: PipelineHandle,
}

/// One session's hook and observe.
pub struct SessionHandle {
    id: Arc<str>,
    pipeline: PipelineHandle,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl TraceExporter {
    /// Starts an OTLP exporter configured from `settings` (see
    /// [`OtlpSettings::resolve`](crate::config::OtlpSettings::resolve)).
    pub fn start(
        config: PipelineConfig,
        settings: OtlpSettings,
    ) -> Result<(Self, PipelineGuard), ExportError> {
        let resource = ResourceInfo::detect(None);
        Self::start_with(config, move || {
            Ok(Exporter::Otlp(OtlpExporter::new(settings, resource)?))
        })
    }

    /// Starts with any exporter (a file, the console, or OTLP set up by hand).
    pub fn start_with<F>(
        config: PipelineConfig,
        make_exporter: F,
    ) -> Result<(Self, PipelineGuard), ExportError>
    where
        F: FnOnce() -> Result<Exporter, ExportError> + Send + 'static,
    {
        let (pipeline, guard) = pipeline::start(config, make_exporter)?;
        Ok((TraceExporter { pipeline }, guard))
    }

    /// Opens a session and announces its metadata.
    pub fn session(&self, id: &str, meta: SessionMeta) -> SessionHandle {
        let handle = SessionHandle {
            id: id.into(),
            pipeline: self.pipeline.clone(),
        };
        handle.send(Event::Session(SessionInfo {
            at_ms: now_ms(),
            agent: meta.agent.map(Cow::Owned),
            model: meta.model.map(Cow::Owned),
            workspace: meta.workspace.map(Cow::Owned),
            parent: meta.parent.map(|(session, call)| ParentRef {
                session: Cow::Owned(session),
                call: Cow::Owned(call),
            }),
        }));
        handle
    }

    pub fn stats(&self) -> Summary {
        self.pipeline.stats()
    }
}

impl SessionHandle {
    fn send(&self, event: Event<'static>) {
        self.pipeline.try_send(Record {
            session: Cow::Owned(self.id.to_string()),
            event,
        });
    }

    /// albedo's hook: hands the event on and answers [`Verdict::Proceed`] at once.
    pub fn hook(&self, event: &HookEvent) -> Verdict {
        let at_ms = now_ms();
        self.send(match event {
            HookEvent::Prompted { text } => Event::Prompted {
                at_ms,
                text: Cow::Owned(text.clone()),
            },
            HookEvent::Calling { call } => Event::Calling {
                at_ms,
                call: call.clone(),
            },
            HookEvent::Called(called) => Event::Called(called.clone()),
            HookEvent::Stopping { reply, held } => Event::Stopping {
                at_ms,
                reply: Cow::Owned(reply.clone()),
                held: *held,
            },
        });
        Verdict::Proceed
    }

    /// albedo's observe.
    pub fn observe(&self, event: &Observed) {
        self.send(match event {
            Observed::CallSent(sent) => Event::CallSent(sent.clone()),
            Observed::TurnEnded { reason } => Event::TurnEnded {
                at_ms: now_ms(),
                reason: reason.clone().map(Cow::Owned),
            },
        });
    }

    /// The extension's `close()`: the session is over; its open turn is exported.
    pub fn close(&self) {
        self.send(Event::Closed { at_ms: now_ms() });
    }
}
