//! OTLP to a collector, over gRPC or HTTP.
//!
//! A batch is encoded once into the bytes of an `ExportTraceServiceRequest`; the same bytes are
//! what a retry sends again, so a retried span keeps its ids and the backend sees it once.
//! Whether and when to retry is the pipeline's call, not the transport's: a transport makes
//! exactly one attempt and says how it went.

pub mod encode;
mod grpc;
mod http;
mod tls;
pub mod wire;

use std::time::Duration;

use bytes::Bytes;
use prost::Message;

use crate::assemble::Span;
use crate::config::{OtlpSettings, Protocol};
use crate::export::{ExportError, Exported, ResourceInfo};

enum Transport {
    Grpc(grpc::GrpcTransport),
    Http(http::HttpTransport),
}

pub struct OtlpExporter {
    transport: Transport,
    encoder: Encoder,
    settings: OtlpSettings,
}

/// Turns spans into request bytes; cheap to clone, so the thread that assembles spans can
/// encode them too (and free them where they were made).
#[derive(Clone, Debug)]
pub struct Encoder {
    /// The `Resource` and `InstrumentationScope` messages, encoded once.
    resource: std::sync::Arc<[u8]>,
    scope: std::sync::Arc<[u8]>,
}

impl Encoder {
    pub fn new(resource: &ResourceInfo) -> Self {
        Encoder {
            resource: resource.resource.encode_to_vec().into(),
            scope: resource.scope.encode_to_vec().into(),
        }
    }

    /// The request for `spans` as protobuf: what is sent, retried and spooled.
    pub fn encode(&self, spans: &[Span]) -> Bytes {
        wire::request(&self.resource, &self.scope, spans).into()
    }
}

impl OtlpExporter {
    /// Sets up the client. Nothing is sent yet; a collector that is down is found out at the
    /// first export, not here.
    pub fn new(settings: OtlpSettings, resource: ResourceInfo) -> Result<Self, ExportError> {
        install_crypto_provider();
        let transport = match settings.protocol {
            Protocol::Grpc => Transport::Grpc(grpc::GrpcTransport::new(&settings)?),
            Protocol::HttpProtobuf | Protocol::HttpJson => {
                Transport::Http(http::HttpTransport::new(&settings)?)
            }
        };
        Ok(OtlpExporter {
            transport,
            encoder: Encoder::new(&resource),
            settings,
        })
    }

    /// The request for `spans` as protobuf: what is sent, retried and spooled.
    pub fn encode(&self, spans: &[Span]) -> Bytes {
        self.encoder.encode(spans)
    }

    pub fn encoder(&self) -> Encoder {
        self.encoder.clone()
    }

    /// One attempt to deliver a protobuf-encoded batch of `spans` spans, within `timeout` if
    /// given (and never longer than the configured timeout).
    pub async fn send(
        &mut self,
        body: Bytes,
        spans: u64,
        timeout: Option<Duration>,
    ) -> Result<Exported, ExportError> {
        match &mut self.transport {
            Transport::Grpc(g) => g.send(body, spans, timeout).await,
            Transport::Http(h) => h.send(body, spans, timeout).await,
        }
    }

    /// Where batches for this destination are spooled, below `root`.
    pub fn spool_key(&self) -> String {
        format!(
            "{} {}",
            self.settings.protocol.as_str(),
            self.settings.endpoint
        )
    }

    pub fn settings(&self) -> &OtlpSettings {
        &self.settings
    }

    pub fn describe(&self) -> String {
        format!(
            "{} ({})",
            self.settings.endpoint,
            self.settings.protocol.as_str()
        )
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
