//! The test receiver's metrics side: OTLP metrics over gRPC (`MetricsService`) and HTTP
//! (`/v1/metrics`), recorded beside the traces, or refused as a traces-only collector does.

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::MetricsService;
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use prost::Message;

/// One metrics request as the receiver got it.
#[derive(Clone, Debug)]
pub struct ReceivedMetrics {
    pub via: &'static str,
    pub headers: Vec<(String, String)>,
    pub request: ExportMetricsServiceRequest,
}

#[derive(Default)]
pub(super) struct MetricsState {
    pub requests: Mutex<Vec<ReceivedMetrics>>,
    /// Answer 404 / UNIMPLEMENTED, as a collector with no metrics pipeline does.
    pub refuse: AtomicBool,
    pub refused: AtomicU64,
    /// Never answer, nor keep what was sent: a collector whose metrics pipeline hangs.
    pub blackhole: AtomicBool,
    pub swallowed: AtomicU64,
}

impl MetricsState {
    /// In a black hole: counted, never answered (the client gives up, or goes away).
    async fn swallow_if_told(&self) {
        if self.blackhole.load(Ordering::SeqCst) {
            self.swallowed.fetch_add(1, Ordering::SeqCst);
            std::future::pending::<()>().await;
        }
    }
}

pub(super) struct GrpcMetrics(pub std::sync::Arc<super::receiver::State>);

#[tonic::async_trait]
impl MetricsService for GrpcMetrics {
    async fn export(
        &self,
        request: tonic::Request<ExportMetricsServiceRequest>,
    ) -> Result<tonic::Response<ExportMetricsServiceResponse>, tonic::Status> {
        let m = &self.0.metrics;
        m.swallow_if_told().await;
        if m.refuse.load(Ordering::SeqCst) {
            m.refused.fetch_add(1, Ordering::SeqCst);
            return Err(tonic::Status::unimplemented("no metrics here"));
        }
        let headers = request
            .metadata()
            .iter()
            .filter_map(|kv| match kv {
                tonic::metadata::KeyAndValueRef::Ascii(k, v) => {
                    Some((k.to_string(), v.to_str().unwrap_or("").to_string()))
                }
                _ => None,
            })
            .collect();
        m.requests.lock().unwrap().push(ReceivedMetrics {
            via: "grpc",
            headers,
            request: request.into_inner(),
        });
        Ok(tonic::Response::new(ExportMetricsServiceResponse::default()))
    }
}

pub(super) async fn http_metrics(
    axum::extract::State(state): axum::extract::State<std::sync::Arc<super::receiver::State>>,
    headers: HeaderMap,
    body: Bytes,
) -> axum::response::Response {
    let m = &state.metrics;
    m.swallow_if_told().await;
    if m.refuse.load(Ordering::SeqCst) {
        m.refused.fetch_add(1, Ordering::SeqCst);
        return (StatusCode::NOT_FOUND, "404 page not found").into_response();
    }
    let mut bytes = body.to_vec();
    if headers
        .get("content-encoding")
        .is_some_and(|v| v.as_bytes() == b"gzip")
    {
        let mut out = Vec::new();
        if flate2::read::GzDecoder::new(&body[..])
            .read_to_end(&mut out)
            .is_err()
        {
            return (StatusCode::BAD_REQUEST, "bad gzip").into_response();
        }
        bytes = out;
    }
    let json = headers
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    let request = if json {
        serde_json::from_slice::<ExportMetricsServiceRequest>(&bytes).map_err(|e| e.to_string())
    } else {
        ExportMetricsServiceRequest::decode(&bytes[..]).map_err(|e| e.to_string())
    };
    let request = match request {
        Ok(r) => r,
        Err(e) => return (StatusCode::BAD_REQUEST, e).into_response(),
    };
    m.requests.lock().unwrap().push(ReceivedMetrics {
        via: if json { "http/json" } else { "http/protobuf" },
        headers: super::receiver::header_pairs(&headers),
        request,
    });
    (
        [("content-type", "application/x-protobuf")],
        ExportMetricsServiceResponse::default().encode_to_vec(),
    )
        .into_response()
}
