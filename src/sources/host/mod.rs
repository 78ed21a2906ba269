//! The in-process source: the API for a Rust host, in the shape of albedo's extension, a
//! watch-only `hook` and `observe`.
//!
//! ```no_run
//! use albedo_otel::host::{HookEvent, TraceExporter, Verdict};
//!
//! // Every setting as the `albedo-otel` command resolves it: OTEL_* and ALBEDO_OTEL_*.
//! let (exporter, guard) = TraceExporter::from_env().unwrap();
//! let session = exporter.session("s-1", Default::default());
//! assert_eq!(session.hook(&HookEvent::Prompted { text: "hi".into() }), Verdict::Proceed);
//! session.close();
//! let summary = guard.close(); // delivers what is left, within the flush deadline
//! ```
//!
//! `hook` and `observe` never block and never fail: each puts the event on a bounded queue
//! and returns. If the queue is full the event is dropped and counted (see
//! [`Summary::dropped_events`](crate::pipeline::Summary)). The events are checked on the
//! exporter's thread, like every other source's.

pub use crate::protocol::shared as events;

use std::borrow::Cow;
use std::sync::Arc;

use thiserror::Error;

use crate::clock::unix_ms;
use crate::config::{ConfigError, OtlpSettings, Settings};
use crate::export::{self, otlp::OtlpExporter, ExportError, SpanExporter};
use crate::pipeline::{self, PipelineConfig, PipelineGuard, PipelineHandle, Summary};
use crate::protocol::{Event, ParentRef, Record, SessionInfo};
pub use events::{HookEvent, Observed};
use events::{Shared, SharedEvent};

/// Why an exporter could not start.
#[derive(Debug, Error)]
pub enum StartError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Export(#[from] ExportError),
}

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

impl TraceExporter {
    /// Starts with every setting resolved from the environment, exactly as the `albedo-otel`
    /// command resolves it ([`Settings::from_env`]).
    pub fn from_env() -> Result<(Self, PipelineGuard), StartError> {
        let settings = Settings::from_env()?;
        let (kind, otlp) = (settings.exporter, settings.otlp);
        Ok(Self::start_with(settings.pipeline, move || {
            export::from_settings(&kind, otlp)
        })?)
    }

    /// Starts an OTLP exporter configured from `settings` (see
    /// [`resolve_otlp`](crate::config::resolve_otlp)).
    pub fn start(
        config: PipelineConfig,
        settings: OtlpSettings,
    ) -> Result<(Self, PipelineGuard), ExportError> {
        Self::start_with(config, move || {
            Ok(Box::new(OtlpExporter::new(settings)?) as Box<dyn SpanExporter>)
        })
    }

    /// Starts with any exporter: a file, the console, OTLP set up by hand, or the host's own
    /// [`SpanExporter`].
    pub fn start_with<F>(
        config: PipelineConfig,
        make_exporter: F,
    ) -> Result<(Self, PipelineGuard), ExportError>
    where
        F: FnOnce() -> Result<Box<dyn SpanExporter>, ExportError> + Send + 'static,
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
                at_ms: unix_ms(),
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
