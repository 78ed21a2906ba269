//! The real OTLP receiver the tests export to: gRPC and HTTP on ephemeral loopback ports,
//! recording every request, and able to act as a difficult collector (refusing, demanding an
//! API key, answering slowly and out of order).

use std::collections::BTreeSet;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use prost::Message;
use tonic::codec::CompressionEncoding;

use super::{flatten, span_count, FlatSpan};

/// One request as the receiver got it.
#[derive(Clone, Debug)]
pub struct Received {
    pub via: &'static str,
    pub gzip: bool,
    pub headers: Vec<(String, String)>,
    pub request: ExportTraceServiceRequest,
}

#[derive(Default)]
pub(super) struct State {
    /// OTLP metrics, kept apart from the traces (`receiver_metrics`).
    pub(super) metrics: super::receiver_metrics::MetricsState,
    requests: Mutex<Vec<Received>>,
    changed: Condvar,
    /// Answer this many requests with 503 / UNAVAILABLE before accepting.
    refuse_next: AtomicU64,
    refused: AtomicU64,
    /// Refuse (401 / UNAUTHENTICATED) any request without this header and value.
    required: Mutex<Option<(String, String)>>,
    unauthorized: AtomicU64,
    /// Refuse one request in this many (0: off), up to `refuse_spread_left` refusals.
    refuse_spread: AtomicU64,
    refuse_spread_left: AtomicU64,
    pacing: Pacing,
}

/// Slow, uneven answers, and what they did to the order: the `n`th request to arrive is
/// answered after `step_ms × (n × 7 mod 5)` ms, so with several requests open, later ones
/// are answered before earlier ones.
#[derive(Default)]
struct Pacing {
    step_ms: AtomicU64,
    arrived: AtomicU64,
    /// Requests being answered, by arrival number.
    open: Mutex<BTreeSet<u64>>,
    most_open: AtomicU64,
    /// Answers sent while a request that arrived earlier was still open.
    overtaken: AtomicU64,
}

impl Pacing {
    /// Holds the request as long as its place in the arrival order says, counting.
    /// Returns the request's arrival number.
    async fn pace(&self) -> u64 {
        let n = self.arrived.fetch_add(1, Ordering::SeqCst);
        let step = self.step_ms.load(Ordering::SeqCst);
        if step == 0 {
            return n;
        }
        {
            let mut open = self.open.lock().unwrap();
            open.insert(n);
            self.most_open
                .fetch_max(open.len() as u64, Ordering::SeqCst);
        }
        tokio::time::sleep(Duration::from_millis(step * (n * 7 % 5))).await;
        let mut open = self.open.lock().unwrap();
        open.remove(&n);
        if open.range(..n).next().is_some() {
            self.overtaken.fetch_add(1, Ordering::SeqCst);
        }
        n
    }
}

impl State {
    fn record(&self, r: Received) {
        self.requests.lock().unwrap().push(r);
        self.changed.notify_all();
    }

    /// Whether `headers` lack the required API key (counted).
    fn unauthorized(&self, headers: &[(String, String)]) -> bool {
        let required = self.required.lock().unwrap().clone();
        let Some((name, value)) = required else {
            return false;
        };
        let ok = headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case(&name) && *v == value);
        if !ok {
            self.unauthorized.fetch_add(1, Ordering::SeqCst);
        }
        !ok
    }

    /// Whether to refuse the `nth` request to arrive (counted).
    fn should_refuse(&self, nth: u64) -> bool {
        let spread = self.refuse_spread.load(Ordering::SeqCst);
        let refuse = self
            .refuse_next
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
            || (spread > 0
                && nth % spread == spread - 1
                && self
                    .refuse_spread_left
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok());
        if refuse {
            self.refused.fetch_add(1, Ordering::SeqCst);
        }
        refuse
    }
}

/// A receiver listening on 127.0.0.1 for OTLP/gRPC and OTLP/HTTP.
pub struct Receiver {
    pub grpc: SocketAddr,
    pub http: SocketAddr,
    state: Arc<State>,
    runtime: Option<tokio::runtime::Runtime>,
}

struct Grpc(Arc<State>);

#[tonic::async_trait]
impl TraceService for Grpc {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let nth = self.0.pacing.pace().await;
        if self.0.should_refuse(nth) {
            return Err(tonic::Status::unavailable(
                "test receiver: refusing on purpose",
            ));
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
            .collect::<Vec<_>>();
        if self.0.unauthorized(&headers) {
            return Err(tonic::Status::unauthenticated(
                "test receiver: no valid API key",
            ));
        }
        let gzip = headers
            .iter()
            .any(|(k, v)| k == "grpc-encoding" && v == "gzip");
        self.0.record(Received {
            via: "grpc",
            gzip,
            headers,
            request: request.into_inner(),
        });
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

async fn http_export(
    axum::extract::State(state): axum::extract::State<Arc<State>>,
    headers: HeaderMap,
    body: Bytes,
) -> axum::response::Response {
    let nth = state.pacing.pace().await;
    if state.should_refuse(nth) {
        return (StatusCode::SERVICE_UNAVAILABLE, "refusing on purpose").into_response();
    }
    let pairs = header_pairs(&headers);
    if state.unauthorized(&pairs) {
        return (StatusCode::UNAUTHORIZED, "no valid API key").into_response();
    }
    let gzip = headers
        .get("content-encoding")
        .is_some_and(|v| v.as_bytes() == b"gzip");
    let body = if gzip {
        let mut out = Vec::new();
        if flate2::read::GzDecoder::new(&body[..])
            .read_to_end(&mut out)
            .is_err()
        {
            return (StatusCode::BAD_REQUEST, "bad gzip").into_response();
        }
        out
    } else {
        body.to_vec()
    };
    let json = headers
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    let request = if json {
        match serde_json::from_slice::<ExportTraceServiceRequest>(&body) {
            Ok(r) => r,
            Err(e) => return (StatusCode::BAD_REQUEST, e.to_string()).into_response(),
        }
    } else {
        match ExportTraceServiceRequest::decode(&body[..]) {
            Ok(r) => r,
            Err(e) => return (StatusCode::BAD_REQUEST, e.to_string()).into_response(),
        }
    };
    state.record(Received {
        via: if json { "http/json" } else { "http/protobuf" },
        gzip,
        headers: pairs,
        request,
    });
    (
        [("content-type", "application/x-protobuf")],
        ExportTraceServiceResponse::default().encode_to_vec(),
    )
        .into_response()
}

/// A request's headers as name and text pairs (a value that is not text is empty).
pub fn header_pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
        .collect()
}

/// A server certificate (and, for mutual TLS, the CA its clients must be signed by), PEM.
#[derive(Clone)]
pub struct TlsServer {
    pub cert_pem: String,
    pub key_pem: String,
    pub client_ca_pem: Option<String>,
}

fn rustls_server_config(tls: &TlsServer) -> Arc<tokio_rustls::rustls::ServerConfig> {
    use tokio_rustls::rustls;
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(tls.cert_pem.as_bytes())
            .map(|c| c.unwrap())
            .collect();
    let key = PrivateKeyDer::from_pem_slice(tls.key_pem.as_bytes()).unwrap();
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap();
    let builder = match &tls.client_ca_pem {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for c in CertificateDer::pem_slice_iter(ca.as_bytes()) {
                roots.add(c.unwrap()).unwrap();
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .unwrap();
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(certs, key).unwrap();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Arc::new(config)
}

impl Receiver {
    /// Starts both servers on ports the OS picks.
    pub fn start() -> Receiver {
        Self::start_on(None, None)
    }

    /// Starts both servers with TLS (`https://127.0.0.1:port`).
    pub fn start_tls(tls: &TlsServer) -> Receiver {
        Self::start_with(None, None, Some(tls))
    }

    /// Starts on given ports (to restart a receiver where it was), or ephemeral ones.
    pub fn start_on(grpc: Option<SocketAddr>, http: Option<SocketAddr>) -> Receiver {
        Self::start_with(grpc, http, None)
    }

    fn start_with(
        grpc: Option<SocketAddr>,
        http: Option<SocketAddr>,
        tls: Option<&TlsServer>,
    ) -> Receiver {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let state = Arc::new(State::default());
        let any = "127.0.0.1:0".parse().unwrap();
        let (grpc_addr, http_addr) = runtime.block_on(async {
            let g = tokio::net::TcpListener::bind(grpc.unwrap_or(any))
                .await
                .unwrap();
            let h = tokio::net::TcpListener::bind(http.unwrap_or(any))
                .await
                .unwrap();
            let (ga, ha) = (g.local_addr().unwrap(), h.local_addr().unwrap());
            let service = TraceServiceServer::new(Grpc(state.clone()))
                .accept_compressed(CompressionEncoding::Gzip)
                .max_decoding_message_size(64 << 20);
            let metrics = opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::MetricsServiceServer::new(
                super::receiver_metrics::GrpcMetrics(state.clone()),
            )
            .accept_compressed(CompressionEncoding::Gzip);
            let mut server = tonic::transport::Server::builder();
            if let Some(tls) = tls {
                let mut config = tonic::transport::ServerTlsConfig::new().identity(
                    tonic::transport::Identity::from_pem(&tls.cert_pem, &tls.key_pem),
                );
                if let Some(ca) = &tls.client_ca_pem {
                    config = config.client_ca_root(tonic::transport::Certificate::from_pem(ca));
                }
                server = server.tls_config(config).unwrap();
            }
            tokio::spawn(
                server
                    .add_service(service)
                    .add_service(metrics)
                    .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(g)),
            );
            let app = axum::Router::new()
                .route("/v1/traces", axum::routing::post(http_export))
                .route(
                    "/v1/metrics",
                    axum::routing::post(super::receiver_metrics::http_metrics),
                )
                .layer(axum::extract::DefaultBodyLimit::max(64 << 20))
                .with_state(state.clone());
            match tls {
                None => {
                    tokio::spawn(async move { axum::serve(h, app).await });
                }
                Some(tls) => {
                    let acceptor = tokio_rustls::TlsAcceptor::from(rustls_server_config(tls));
                    tokio::spawn(async move {
                        loop {
                            let Ok((tcp, _)) = h.accept().await else {
                                return;
                            };
                            let (acceptor, app) = (acceptor.clone(), app.clone());
                            tokio::spawn(async move {
                                // A client that fails the handshake is simply not served.
                                let Ok(stream) = acceptor.accept(tcp).await else {
                                    return;
                                };
                                let service = hyper_util::service::TowerToHyperService::new(app);
                                let _ = hyper_util::server::conn::auto::Builder::new(
                                    hyper_util::rt::TokioExecutor::new(),
                                )
                                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                                .await;
                            });
                        }
                    });
                }
            }
            (ga, ha)
        });
        Receiver {
            grpc: grpc_addr,
            http: http_addr,
            state,
            runtime: Some(runtime),
        }
    }

    pub fn grpc_url(&self) -> String {
        format!("http://{}", self.grpc)
    }

    pub fn http_url(&self) -> String {
        format!("http://{}", self.http)
    }

    /// The URL to send `protocol` (`grpc`, else HTTP) to.
    pub fn url(&self, protocol: &str) -> String {
        if protocol == "grpc" {
            self.grpc_url()
        } else {
            self.http_url()
        }
    }

    /// The next `n` requests are answered 503 / UNAVAILABLE.
    pub fn refuse_next(&self, n: u64) {
        self.state.refuse_next.store(n, Ordering::SeqCst);
    }

    /// Refuses (503 / UNAVAILABLE) the last of every `every` requests, `times` times in all, so that
    /// refusals come between requests that get through.
    pub fn refuse_spread(&self, every: u64, times: u64) {
        self.state.refuse_spread_left.store(times, Ordering::SeqCst);
        self.state.refuse_spread.store(every, Ordering::SeqCst);
    }

    /// From now on, answers each request after 0 to 4 × `step` (see [`Pacing`]), so that
    /// several requests open at once are answered out of order.
    pub fn answer_unevenly(&self, step: Duration) {
        let ms = u64::try_from(step.as_millis()).unwrap_or(u64::MAX);
        self.state.pacing.step_ms.store(ms, Ordering::SeqCst);
    }

    /// The most requests open at once since pacing began.
    pub fn most_open(&self) -> u64 {
        self.state.pacing.most_open.load(Ordering::SeqCst)
    }

    /// Answers sent before that of a request which arrived earlier.
    pub fn overtaken(&self) -> u64 {
        self.state.pacing.overtaken.load(Ordering::SeqCst)
    }

    pub fn refused(&self) -> u64 {
        self.state.refused.load(Ordering::SeqCst)
    }

    /// From now on, refuse every request without header `name: value`, as a hosted backend
    /// does without its API key.
    pub fn require_header(&self, name: &str, value: &str) {
        *self.state.required.lock().unwrap() = Some((name.to_string(), value.to_string()));
    }

    /// Requests refused for a missing or wrong key.
    pub fn unauthorized(&self) -> u64 {
        self.state.unauthorized.load(Ordering::SeqCst)
    }

    /// The metrics requests received so far.
    pub fn metrics(&self) -> Vec<super::receiver_metrics::ReceivedMetrics> {
        self.state.metrics.requests.lock().unwrap().clone()
    }

    /// From now on, answer metrics with 404 / UNIMPLEMENTED, as a traces-only collector does.
    pub fn refuse_metrics(&self) {
        self.state.metrics.refuse.store(true, Ordering::SeqCst);
    }

    /// From now on, take metrics requests and never answer them.
    pub fn blackhole_metrics(&self) {
        self.state.metrics.blackhole.store(true, Ordering::SeqCst);
    }

    /// Metrics requests taken into the black hole.
    pub fn metrics_swallowed(&self) -> u64 {
        self.state.metrics.swallowed.load(Ordering::SeqCst)
    }

    /// From now on, take metrics again (after [`refuse_metrics`](Self::refuse_metrics) or
    /// [`blackhole_metrics`](Self::blackhole_metrics)).
    pub fn accept_metrics(&self) {
        self.state.metrics.refuse.store(false, Ordering::SeqCst);
        self.state.metrics.blackhole.store(false, Ordering::SeqCst);
    }

    /// Metrics requests refused so.
    pub fn metrics_refused(&self) -> u64 {
        self.state.metrics.refused.load(Ordering::SeqCst)
    }

    pub fn requests(&self) -> Vec<Received> {
        self.state.requests.lock().unwrap().clone()
    }

    pub fn spans(&self) -> Vec<FlatSpan> {
        flatten(&self.requests())
    }

    /// Waits (on a condition variable, not a sleep) until at least `n` spans have arrived.
    pub fn wait_for_spans(&self, n: usize, timeout: Duration) -> Vec<FlatSpan> {
        let deadline = Instant::now() + timeout;
        let mut guard = self.state.requests.lock().unwrap();
        loop {
            let count: usize = guard.iter().map(|r| span_count(&r.request)).sum();
            if count >= n {
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            guard = self.state.changed.wait_timeout(guard, left).unwrap().0;
        }
        let requests = guard.clone();
        drop(guard);
        flatten(&requests)
    }

    /// Stops both servers and closes their ports.
    pub fn stop(mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(Duration::from_secs(2));
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}
