//! OTLP over gRPC, with tonic, sending bytes that are already encoded.
//!
//! The generated client takes a message struct; we hand tonic the encoded request instead
//! (a pass-through codec), so the same bytes can be retried, or written to disk, without
//! encoding them again.

use std::time::Duration;

use bytes::{BufMut, Bytes};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse;
use prost::Message;
use tonic::codec::{Codec, CompressionEncoding, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::metadata::{MetadataKey, MetadataMap, MetadataValue};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use tonic::{Code, Status};

use super::{error_chain, tls};
use super::{Compression, OtlpSettings, Signal};
use crate::export::{Batch, ExportError, Exported};

const EXPORT_PATH: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";
const METRICS_EXPORT_PATH: &str = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export";

/// A handle to one gRPC channel; clones share it (and its connection).
#[derive(Clone)]
pub struct GrpcTransport {
    client: tonic::client::Grpc<Channel>,
    metadata: MetadataMap,
    endpoint: String,
    timeout: Duration,
    path: &'static str,
}

impl GrpcTransport {
    /// Sets up the channel for `signal`'s service; it connects on first use and reconnects
    /// by itself.
    pub fn new(settings: &OtlpSettings, signal: Signal) -> Result<Self, ExportError> {
        let setup = |e: String| ExportError::Setup(format!("{}: {e}", settings.shown_endpoint()));
        let connect_timeout = settings.timeout.min(Duration::from_secs(5));
        let mut endpoint = Endpoint::from_shared(settings.endpoint.clone())
            .map_err(|e| setup(e.to_string()))?
            .connect_timeout(connect_timeout)
            .timeout(settings.timeout);
        if settings.endpoint.starts_with("https://") {
            let files = tls::load(&settings.tls)?;
            let mut config = ClientTlsConfig::new();
            match &files.ca {
                Some(pem) => config = config.ca_certificate(Certificate::from_pem(pem)),
                None => config = config.with_native_roots(),
            }
            if let Some((cert, key)) = &files.identity {
                config = config.identity(Identity::from_pem(cert, key));
            }
            endpoint = endpoint
                .tls_config(config)
                .map_err(|e| setup(e.to_string()))?;
        }
        let channel = endpoint
            .connect_with_connector_lazy(super::connect::QuickAckConnector::new(connect_timeout));
        let mut client = tonic::client::Grpc::new(channel);
        if settings.compression == Compression::Gzip {
            client = client
                .send_compressed(CompressionEncoding::Gzip)
                .accept_compressed(CompressionEncoding::Gzip);
        }
        let mut metadata = MetadataMap::new();
        for (k, v) in &settings.headers {
            let key = MetadataKey::from_bytes(k.to_ascii_lowercase().as_bytes())
                .map_err(|_| setup(format!("header `{k}` is not valid gRPC metadata")))?;
            let value = MetadataValue::try_from(v.as_str())
                .map_err(|_| setup(format!("header `{k}` has a value gRPC cannot carry")))?;
            metadata.insert(key, value);
        }
        Ok(GrpcTransport {
            client,
            metadata,
            endpoint: settings.shown_endpoint(),
            timeout: settings.timeout,
            path: match signal {
                Signal::Traces => EXPORT_PATH,
                Signal::Metrics => METRICS_EXPORT_PATH,
            },
        })
    }

    /// One export; the future owns its handle, so several can be in flight on one channel.
    pub async fn send(
        mut self,
        batch: Batch,
        timeout: Option<Duration>,
    ) -> Result<Exported, ExportError> {
        let Batch { body, spans } = batch;
        let unreachable = |reason: String| ExportError::Unreachable {
            endpoint: self.endpoint.clone(),
            reason,
        };
        self.client
            .ready()
            .await
            .map_err(|e| unreachable(error_chain(&e)))?;
        // (Readiness fails only once the channel is broken for good; connect errors surface
        // from the call itself, below.)
        let mut request = tonic::Request::new(body);
        *request.metadata_mut() = self.metadata.clone();
        request.set_timeout(timeout.unwrap_or(self.timeout).min(self.timeout));
        let path = http::uri::PathAndQuery::from_static(self.path);
        match self.client.unary(request, path, PassThrough).await {
            Ok(response) => {
                let rejected = response
                    .get_ref()
                    .partial_success
                    .as_ref()
                    .map_or(0, |p| p.rejected_spans.max(0) as u64);
                if rejected > 0 {
                    let message = response
                        .get_ref()
                        .partial_success
                        .as_ref()
                        .map(|p| p.error_message.clone())
                        .unwrap_or_default();
                    tracing::warn!(rejected, %message, "the collector rejected part of a batch");
                }
                Ok(Exported {
                    accepted: spans.saturating_sub(rejected),
                    rejected,
                })
            }
            Err(status) => Err(self.status_error(status)),
        }
    }

    fn status_error(&self, status: Status) -> ExportError {
        let code = status.code();
        // A transport failure surfaces as `Unavailable`/`Unknown` with a source error.
        if let Some(source) = std::error::Error::source(&status) {
            if matches!(code, Code::Unavailable | Code::Unknown | Code::Cancelled) {
                // The status's own text repeats its code and debug-prints its source; the
                // message and the chain of causes say it better.
                let mut reason = status.message().to_string();
                let causes = error_chain(source);
                for cause in causes.split(": ") {
                    if !reason.contains(cause) {
                        if !reason.is_empty() {
                            reason.push_str(": ");
                        }
                        reason.push_str(cause);
                    }
                }
                return ExportError::Unreachable {
                    endpoint: self.endpoint.clone(),
                    reason,
                };
            }
        }
        // The codes the OTLP spec calls retryable.
        let retryable = matches!(
            code,
            Code::Cancelled
                | Code::DeadlineExceeded
                | Code::ResourceExhausted
                | Code::Aborted
                | Code::OutOfRange
                | Code::Unavailable
                | Code::DataLoss
        );
        ExportError::Rejected {
            endpoint: self.endpoint.clone(),
            status: format!("gRPC {code:?}"),
            message: status.message().chars().take(300).collect(),
            retryable,
            retry_after: None,
        }
    }
}

/// Passes encoded request bytes through; decodes the response message. A metrics response
/// is read as a trace response: both are `{ partial_success = 1: { int64 rejected = 1;
/// string error_message = 2 } }` on the wire, so the counts come out the same.
#[derive(Clone, Copy, Default)]
struct PassThrough;

impl Codec for PassThrough {
    type Encode = Bytes;
    type Decode = ExportTraceServiceResponse;
    type Encoder = PassThrough;
    type Decoder = ResponseDecoder;

    fn encoder(&mut self) -> Self::Encoder {
        PassThrough
    }

    fn decoder(&mut self) -> Self::Decoder {
        ResponseDecoder
    }
}

impl Encoder for PassThrough {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put(item);
        Ok(())
    }
}

struct ResponseDecoder;

impl Decoder for ResponseDecoder {
    type Item = ExportTraceServiceResponse;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Self::Item>, Status> {
        ExportTraceServiceResponse::decode(src)
            .map(Some)
            .map_err(|e| Status::internal(format!("bad response from the collector: {e}")))
    }
}
