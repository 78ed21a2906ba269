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
use crate::ingest::protocol::{Event, ParentRef, Record, SessionInfo};
pub use crate::ingest::shared::{HookEvent, Observed};
use crate::ingest::shared::{Shared, SharedEvent};
use crate::pipeline::{self, PipelineConfig, PipelineGuard, PipelineHandle, Summary};

/// What a watch-only hook answers: always proceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Proceed,
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
        pipeline.use_fast_clock();
        Ok((TraceExporter { pipeline }, guard))
    }

    /// Opens a session and announces its metadata.
    pub fn session(&self, id: &str, meta: SessionMeta) -> SessionHandle {
        let handle = SessionHandle {
            id: id.into(),
            pipeline: self.pipeline.clone(),
        };
        handle.pipeline.try_send(Record {
            session: Cow::Owned(id.to_string()),
            event: Event::Session(SessionInfo {
                at_ms: now_ms(),
                agent: meta.agent.map(Cow::Owned),
                model: meta.model.map(Cow::Owned),
                workspace: meta.workspace.map(Cow::Owned),
                parent: meta.parent.map(|(session, call)| ParentRef {
                    session: Cow::Owned(session),
                    call: Cow::Owned(call),
                }),
            }),
        });
        handle
    }

    pub fn stats(&self) -> Summary {
        self.pipeline.stats()
    }
}

impl SessionHandle {
    fn share(&self, what: Shared) {
        self.pipeline.try_send_shared(SharedEvent {
            session: self.id.clone(),
            at_ms: self.pipeline.now_ms(),
            what,
        });
    }

    /// albedo's hook: hands the event on and answers [`Verdict::Proceed`] at once. The event is
    /// shared, not copied (its payloads are `Arc`s).
    pub fn hook(&self, event: &HookEvent) -> Verdict {
        self.share(Shared::Hook(event.clone()));
        Verdict::Proceed
    }

    /// albedo's observe.
    pub fn observe(&self, event: &Observed) {
        self.share(Shared::Observed(event.clone()));
    }

    /// The extension's `close()`: the session is over; its open turn is exported.
    pub fn close(&self) {
        self.share(Shared::Closed);
    }
}
