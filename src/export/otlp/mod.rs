//! OTLP to a collector, over gRPC or HTTP, and the encoder every batch comes from.
//!
//! A batch is encoded once into the bytes of an `ExportTraceServiceRequest` ([`Encoder`]); the
//! same bytes are what a retry sends again, so a retried span keeps its ids and the backend sees
//! it once. Whether and when to retry is the pipeline's call, not the transport's: a transport
//! makes exactly one attempt and says how it went.

mod connect;
pub mod encode;
mod grpc;
mod http;
mod metrics;
mod settings;
mod tls;
mod wire;

pub use settings::{
    shown_endpoint, Compression, OtlpSettings, Protocol, TlsFiles, GRPC_ENDPOINT, HTTP_ENDPOINT,
    HTTP_METRICS_PATH, HTTP_TRACES_PATH, TIMEOUT,
};

use std::sync::Arc;
use std::time::Duration;

use prost::Message;
use thiserror::Error;

use crate::assemble::Span;
use crate::export::{Batch, ExportError, ExportFuture, ResourceInfo, SpanExporter};

pub use metrics::{no_metrics_service, MetricsExporter};

/// What a request carries: spans, or metrics (the same transports, another service or path).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Traces,
    Metrics,
}

/// The hand-written encoder's sizes disagreed with what it wrote: a bug. The batch was encoded
/// again by prost instead, so what is sent is still a valid request.
#[derive(Debug, Error)]
#[error("the OTLP encoder miscounted a batch of {} spans; it was encoded again the slow way", .fallback.spans)]
pub struct EncodeMismatch {
    /// The same batch, encoded by prost.
    pub fallback: Batch,
}

/// Turns spans into request bytes; cheap to clone, so the thread that assembles spans can
/// encode them too (and free them where they were made).
#[derive(Clone, Debug)]
pub struct Encoder {
    resource: ResourceInfo,
    /// The `Resource` and `InstrumentationScope` messages, encoded once.
    resource_bytes: Arc<[u8]>,
    scope_bytes: Arc<[u8]>,
}

impl Encoder {
    pub fn new(resource: &ResourceInfo) -> Self {
        Encoder {
            resource: resource.clone(),
            resource_bytes: resource.resource.encode_to_vec().into(),
            scope_bytes: resource.scope.encode_to_vec().into(),
        }
    }

    /// The request for `spans` as protobuf: what is sent, retried and spooled.
    pub fn encode(&self, spans: &[Span]) -> Result<Batch, EncodeMismatch> {
        let count = spans.len() as u64;
        match wire::request(&self.resource_bytes, &self.scope_bytes, spans) {
            Ok(body) => Ok(Batch {
                body: body.into(),
                spans: count,
            }),
            Err(wire::Mismatch) => Err(EncodeMismatch {
                fallback: Batch {
                    body: encode::request(&self.resource, spans)
                        .encode_to_vec()
                        .into(),
                    spans: count,
                },
            }),
        }
    }
}

#[derive(Clone)]
enum Transport {
    Grpc(grpc::GrpcTransport),
    Http(http::HttpTransport),
}

impl Transport {
    fn new(settings: &OtlpSettings, signal: Signal) -> Result<Self, ExportError> {
        install_crypto_provider();
        Ok(match settings.protocol {
            Protocol::Grpc => Transport::Grpc(grpc::GrpcTransport::new(settings, signal)?),
            Protocol::HttpProtobuf | Protocol::HttpJson => {
                Transport::Http(http::HttpTransport::new(settings, signal)?)
            }
        })
    }

    fn send(&self, batch: Batch, timeout: Option<Duration>) -> ExportFuture {
        // The transports are handles to shared clients: a clone per export lets several run
        // at once.
        match self.clone() {
            Transport::Grpc(g) => Box::pin(g.send(batch, timeout)),
            Transport::Http(h) => Box::pin(h.send(batch, timeout)),
        }
    }
}

/// OTLP over gRPC or HTTP (protobuf or JSON), as [`OtlpSettings`] say.
pub struct OtlpExporter {
    transport: Transport,
    settings: OtlpSettings,
}

impl OtlpExporter {
    /// Sets up the client. Nothing is sent yet; a collector that is down is found out at the
    /// first export, not here. Call it inside a tokio runtime (the gRPC channel needs one).
    pub fn new(settings: OtlpSettings) -> Result<Self, ExportError> {
        let transport = Transport::new(&settings, Signal::Traces)?;
        Ok(OtlpExporter {
            transport,
            settings,
        })
    }

    pub fn settings(&self) -> &OtlpSettings {
        &self.settings
    }
}

impl SpanExporter for OtlpExporter {
    fn export(&self, batch: Batch, timeout: Option<Duration>) -> ExportFuture {
        self.transport.send(batch, timeout)
    }

    fn describe(&self) -> String {
        format!(
            "{} ({})",
            self.settings.shown_endpoint(),
            self.settings.protocol.as_str()
        )
    }

    /// Masked as shown: the folder name carries no credentials, and a changed password
    /// still drains what the old one spooled.
    fn spool_key(&self) -> Option<String> {
        Some(format!(
            "{} {}",
            self.settings.protocol.as_str(),
            self.settings.shown_endpoint()
        ))
    }

    fn former_spool_key(&self) -> Option<String> {
        (self.settings.shown_endpoint() != self.settings.endpoint).then(|| {
            format!(
                "{} {}",
                self.settings.protocol.as_str(),
                self.settings.endpoint
            )
        })
    }
}

/// rustls needs one process-wide crypto provider; ring is the one both clients are built with.
fn install_crypto_provider() {
    // Err means one is installed already, which is just as good.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// An error with its causes, `: `-joined: "transport error: connection refused".
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}
