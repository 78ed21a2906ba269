//! OTLP over HTTP (protobuf or JSON), with reqwest on rustls.

use std::io::Write;
use std::time::Duration;

use bytes::Bytes;
use flate2::write::GzEncoder;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use prost::Message;
use reqwest::header::{
    HeaderMap, HeaderName, HeaderValue, CONTENT_ENCODING, CONTENT_TYPE, RETRY_AFTER,
};

use super::{error_chain, tls};
use super::{Compression, OtlpSettings, Protocol, Signal};
use crate::export::{Batch, ExportError, Exported};

/// A handle to one HTTP client (its connection pool); clones share it.
#[derive(Clone)]
pub struct HttpTransport {
    client: reqwest::Client,
    endpoint: String,
    /// The endpoint as errors show it (a password in it masked).
    shown: String,
    headers: HeaderMap,
    json: bool,
    gzip: bool,
    signal: Signal,
}

impl HttpTransport {
    pub fn new(settings: &OtlpSettings, signal: Signal) -> Result<Self, ExportError> {
        let setup = |e: String| ExportError::Setup(format!("{}: {e}", settings.shown_endpoint()));
        let mut builder = reqwest::Client::builder()
            .timeout(settings.timeout)
            .connect_timeout(settings.timeout.min(Duration::from_secs(5)))
            .user_agent(concat!("albedo-otel/", env!("CARGO_PKG_VERSION")));
        if settings.endpoint.starts_with("https://") {
            let files = tls::load(&settings.tls)?;
            if let Some(pem) = &files.ca {
                let certs = reqwest::Certificate::from_pem_bundle(pem)
                    .map_err(|e| setup(format!("bad CA certificate: {e}")))?;
                builder = builder.tls_certs_only(certs);
            }
            if let Some((cert, key)) = &files.identity {
                let mut pem = cert.clone();
                pem.push(b'\n');
                pem.extend_from_slice(key);
                let identity = reqwest::Identity::from_pem(&pem)
                    .map_err(|e| setup(format!("bad client certificate or key: {e}")))?;
                builder = builder.identity(identity);
            }
        }
        let client = builder.build().map_err(|e| setup(error_chain(&e)))?;
        let mut headers = HeaderMap::new();
        for (k, v) in &settings.headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| setup(format!("header `{k}` has a bad name")))?;
            let mut value = HeaderValue::from_str(v)
                .map_err(|_| setup(format!("header `{k}` has a bad value")))?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let json = settings.protocol == Protocol::HttpJson;
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static(if json {
                "application/json"
            } else {
                "application/x-protobuf"
            }),
        );
        let gzip = settings.compression == Compression::Gzip;
        if gzip {
            headers.insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        }
        Ok(HttpTransport {
            client,
            endpoint: settings.endpoint.clone(),
            shown: settings.shown_endpoint(),
            headers,
            json,
            gzip,
            signal,
        })
    }

    /// Sends a batch given as protobuf (the one encoding batches are kept in); for
    /// `http/json` it is transcoded here.
    pub async fn send(
        self,
        batch: Batch,
        timeout: Option<Duration>,
    ) -> Result<Exported, ExportError> {
        let Batch { body, spans } = batch;
        let body = if self.json {
            to_json(&body, self.signal)?
        } else {
            body
        };
        let body = if self.gzip { gzip(&body) } else { body };
        let mut request = self
            .client
            .post(&self.endpoint)
            .headers(self.headers.clone())
            .body(body);
        if let Some(t) = timeout {
            request = request.timeout(t);
        }
        // reqwest's error names the URL, password and all: it is left out.
        let response = request.send().await.map_err(|e| ExportError::Unreachable {
            endpoint: self.shown.clone(),
            reason: error_chain(&e.without_url()),
        })?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let is_protobuf = response
            .headers()
            .get(CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"application/x-protobuf"));
        let bytes = response.bytes().await.unwrap_or_default();
        if status.is_success() {
            // A metrics response has the trace response's shape on the wire (see grpc.rs).
            let rejected = if is_protobuf {
                ExportTraceServiceResponse::decode(bytes)
                    .ok()
                    .and_then(|r| r.partial_success)
                    .map_or(0, |p| {
                        if p.rejected_spans > 0 {
                            tracing::warn!(rejected = p.rejected_spans, message = %p.error_message, "the collector rejected part of a batch");
                        }
                        p.rejected_spans.max(0) as u64
                    })
            } else {
                0
            };
            return Ok(Exported {
                accepted: spans.saturating_sub(rejected),
                rejected,
            });
        }
        // The statuses the OTLP spec calls retryable.
        let retryable = matches!(status.as_u16(), 429 | 502 | 503 | 504);
        let message = if is_protobuf {
            String::new()
        } else {
            String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
                .trim()
                .to_string()
        };
        Err(ExportError::Rejected {
            endpoint: self.shown.clone(),
            status: format!("HTTP {status}"),
            message,
            retryable,
            retry_after,
        })
    }
}

fn to_json(protobuf: &[u8], signal: Signal) -> Result<Bytes, ExportError> {
    let bad = |e: prost::DecodeError| ExportError::BadBatch(e.to_string());
    match signal {
        Signal::Traces => {
            let request = ExportTraceServiceRequest::decode(protobuf).map_err(bad)?;
            super::encode::json_bytes(&request).map(Bytes::from)
        }
        Signal::Metrics => {
            let request = ExportMetricsServiceRequest::decode(protobuf).map_err(bad)?;
            serde_json::to_vec(&request)
                .map(Bytes::from)
                .map_err(|e| ExportError::BadBatch(e.to_string()))
        }
    }
}

fn gzip(body: &[u8]) -> Bytes {
    let mut enc = GzEncoder::new(
        Vec::with_capacity(body.len() / 4),
        flate2::Compression::fast(),
    );
    enc.write_all(body).expect("writing to memory cannot fail");
    Bytes::from(enc.finish().expect("writing to memory cannot fail"))
}
