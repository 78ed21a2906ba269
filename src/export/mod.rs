//! Export: finished spans out of the process, to a collector, a file or the console.
//!
//! Every exporter has the small shape of the SDK's `SpanExporter`: `prepare` a batch (encode it,
//! once), `send` it (one attempt), `force_flush`, `shutdown`. Unlike the SDK, each send says how
//! it went: the SDK's provider reports `Ok` from `shutdown` even when the last export failed,
//! and an exporter that must not lose data needs to know. Retrying is the pipeline's business.

pub mod console;
pub mod file;
pub mod otlp;
pub mod resource;

use std::time::Duration;

use thiserror::Error;

use crate::assemble::Span;

pub use resource::ResourceInfo;

#[derive(Debug, Error)]
pub enum ExportError {
    /// The collector could not be reached (refused, reset, DNS, TLS handshake, timeout).
    #[error("could not reach the collector at {endpoint}: {reason}")]
    Unreachable { endpoint: String, reason: String },
    /// The collector answered with an error.
    #[error("the collector at {endpoint} answered {status}{}", message_suffix(.message))]
    Rejected {
        endpoint: String,
        status: String,
        message: String,
        retryable: bool,
        /// How long the collector asked us to wait (`Retry-After`, gRPC `RetryInfo`).
        retry_after: Option<Duration>,
    },
    #[error("could not write {target}: {source}")]
    Io {
        target: String,
        #[source]
        source: std::io::Error,
    },
    #[error("could not set up the exporter: {0}")]
    Setup(String),
}

fn message_suffix(m: &str) -> String {
    if m.is_empty() {
        String::new()
    } else {
        format!(": {m}")
    }
}

impl ExportError {
    /// Whether sending the same data again later may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            ExportError::Unreachable { .. } => true,
            ExportError::Rejected { retryable, .. } => *retryable,
            ExportError::Io { .. } | ExportError::Setup(_) => false,
        }
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ExportError::Rejected { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// What an export achieved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exported {
    /// Spans the receiver accepted.
    pub accepted: u64,
    /// Spans the receiver said it rejected (OTLP partial success); not worth sending again.
    pub rejected: u64,
}

/// A batch made ready to send: encoded once, so a retry resends the very same bytes.
pub enum Payload {
    Encoded { body: bytes::Bytes, spans: u64 },
    Spans(Vec<Span>),
}

impl Payload {
    pub fn span_count(&self) -> u64 {
        match self {
            Payload::Encoded { spans, .. } => *spans,
            Payload::Spans(s) => s.len() as u64,
        }
    }
}

/// The exporter chosen at start-up.
// One per process: the size of the OTLP variant does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Exporter {
    Otlp(otlp::OtlpExporter),
    File(file::FileExporter),
    Console(console::ConsoleExporter),
}

impl Exporter {
    /// Prepares a batch for sending (for OTLP: encodes it).
    pub fn prepare(&self, batch: Vec<Span>) -> Payload {
        match self {
            Exporter::Otlp(e) => Payload::Encoded {
                body: e.encode(&batch),
                spans: batch.len() as u64,
            },
            _ => Payload::Spans(batch),
        }
    }

    /// One attempt to deliver a prepared batch, within `timeout` if given.
    pub async fn send(
        &mut self,
        payload: &Payload,
        timeout: Option<Duration>,
    ) -> Result<Exported, ExportError> {
        match (self, payload) {
            (Exporter::Otlp(e), Payload::Encoded { body, spans }) => {
                e.send(body.clone(), *spans, timeout).await
            }
            (Exporter::Otlp(e), Payload::Spans(spans)) => {
                let body = e.encode(spans);
                e.send(body, spans.len() as u64, timeout).await
            }
            (Exporter::File(e), Payload::Spans(spans)) => e.export(spans),
            (Exporter::Console(e), Payload::Spans(spans)) => e.export(spans),
            (_, Payload::Encoded { .. }) => Err(ExportError::Setup(
                "an encoded batch can only go to an OTLP exporter".into(),
            )),
        }
    }

    /// The encoder, for exporters that send encoded batches.
    pub fn encoder(&self) -> Option<otlp::Encoder> {
        match self {
            Exporter::Otlp(e) => Some(e.encoder()),
            _ => None,
        }
    }

    /// Whether failed sends are worth retrying (a network exporter) or final (a file).
    pub fn retries(&self) -> bool {
        matches!(self, Exporter::Otlp(_))
    }

    /// Makes sure everything exported so far has left the process.
    pub fn force_flush(&mut self) -> Result<(), ExportError> {
        match self {
            Exporter::Otlp(_) => Ok(()),
            Exporter::File(e) => e.flush(),
            Exporter::Console(e) => e.flush(),
        }
    }

    /// Last call: writes out what the exporter still holds (the console's unfinished trees).
    pub fn shutdown(&mut self) -> Result<(), ExportError> {
        match self {
            Exporter::Otlp(_) => Ok(()),
            Exporter::File(e) => e.flush(),
            Exporter::Console(e) => e.finish(),
        }
    }

    /// Where spans go, for messages.
    pub fn describe(&self) -> String {
        match self {
            Exporter::Otlp(e) => e.describe(),
            Exporter::File(e) => e.describe(),
            Exporter::Console(_) => "the console (stderr)".into(),
        }
    }
}
