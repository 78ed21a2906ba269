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

use std::time::Duration;

use bytes::Bytes;

use crate::assemble::Span;
use crate::config::{OtlpSettings, Protocol};
use crate::export::{ExportError, Exported, ResourceInfo};

enum Transport {
    Grpc(grpc::GrpcTransport),
    Http(http::HttpTransport),
}

pub struct OtlpExporter {
    transport: Transport,
    resource: ResourceInfo,
    settings: OtlpSettings,
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
            resource,
            settings,
        })
    }

    /// The request for `spans` as protobuf: what is sent, retried and spooled.
    pub fn encode(&self, spans: &[Span]) -> Bytes {
        encode::protobuf(&self.resource, spans).into()
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
