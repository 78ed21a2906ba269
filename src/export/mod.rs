//! Export: finished batches out of the process, to a collector, a file or the console.
//!
//! A batch of spans reaches an exporter as a [`Batch`]: the OTLP protobuf bytes of one
//! `ExportTraceServiceRequest`, encoded once, on the assemble thread, by [`otlp::Encoder`]
//! (the one place spans are encoded). The same bytes are what a retry sends again and what the
//! spool keeps on disk, so a span sent twice keeps its ids and a backend shows it once.
//!
//! An exporter is anything that implements [`SpanExporter`], the small shape of the SDK's:
//! `export` one batch (one attempt; retrying is the pipeline's business), `force_flush`,
//! `shutdown_with_timeout`. Unlike the SDK, every export says how it went: the SDK's provider
//! reports `Ok` from `shutdown` even when the last export failed, and an exporter that must not
//! lose data needs to know. A Rust host can plug in its own exporter
//! ([`crate::pipeline::start`]).

pub mod console;
pub mod file;
pub mod otlp;
pub mod resource;
#[cfg(feature = "store")]
pub mod store;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use thiserror::Error;

pub use resource::ResourceInfo;

use otlp::OtlpSettings;

/// Where spans go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExporterKind {
    /// OTLP to a collector (gRPC or HTTP).
    Otlp,
    /// OTLP/JSON lines to this file (`-` is standard output).
    File(String),
    /// A readable tree of each trace on stderr.
    Console,
}

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
    /// A batch that is not an OTLP request (a damaged spool file, say).
    #[error("a batch is not valid OTLP protobuf: {0}")]
    BadBatch(String),
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
            ExportError::Io { .. } | ExportError::BadBatch(_) | ExportError::Setup(_) => false,
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

/// One batch, ready to send: an OTLP `ExportTraceServiceRequest` as protobuf bytes, and how
/// many spans it holds. Cloning shares the bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub body: Bytes,
    pub spans: u64,
}

impl Batch {
    /// The request as messages, for exporters that do not send the bytes as they are.
    pub fn decode(&self) -> Result<ExportTraceServiceRequest, ExportError> {
        ExportTraceServiceRequest::decode(self.body.clone())
            .map_err(|e| ExportError::BadBatch(e.to_string()))
    }
}

/// What an export returns: a future that owns everything it needs, so that the pipeline can
/// keep several exports in flight.
pub type ExportFuture = Pin<Box<dyn Future<Output = Result<Exported, ExportError>> + Send>>;

/// Where batches go. Exports run on the pipeline's export thread, inside its tokio runtime.
pub trait SpanExporter: Send + Sync {
    /// One attempt to deliver `batch`, within `timeout` when one is given (never longer
    /// than the exporter's own timeout).
    fn export(&self, batch: Batch, timeout: Option<Duration>) -> ExportFuture;

    /// Makes sure everything exported so far has left the process.
    fn force_flush(&self) -> Result<(), ExportError> {
        Ok(())
    }

    /// The last call: writes out what the exporter still holds, within `timeout`.
    fn shutdown_with_timeout(&self, _timeout: Duration) -> Result<(), ExportError> {
        Ok(())
    }

    /// Where spans go, for people: an endpoint, a file, the console.
    fn describe(&self) -> String;

    /// A name for the destination, when a failed export may succeed later: undeliverable
    /// batches are then kept in the spool under this name, and only ever sent to it. `None`
    /// (a file, the console): failures are final.
    fn spool_key(&self) -> Option<String> {
        None
    }

    /// The name an earlier version gave the same destination's spool, where it differs
    /// (earlier versions put an endpoint's password in it): its folder is taken over, so
    /// what it holds is still sent.
    fn former_spool_key(&self) -> Option<String> {
        None
    }
}

/// An export that is already done: for exporters that do their work when called.
pub(crate) fn ready(result: Result<Exported, ExportError>) -> ExportFuture {
    Box::pin(std::future::ready(result))
}

/// The exporter the configuration chooses; call it inside a tokio runtime (the pipeline's
/// export thread does).
pub fn from_settings(
    kind: &ExporterKind,
    otlp: Option<OtlpSettings>,
) -> Result<Box<dyn SpanExporter>, ExportError> {
    Ok(match (kind, otlp) {
        (ExporterKind::Otlp, Some(settings)) => Box::new(otlp::OtlpExporter::new(settings)?),
        (ExporterKind::Otlp, None) => {
            return Err(ExportError::Setup("OTLP chosen, but not configured".into()))
        }
        (ExporterKind::File(path), _) => Box::new(file::FileExporter::create(path)?),
        (ExporterKind::Console, _) => Box::new(console::ConsoleExporter::stderr()),
    })
}
