//! Test support: a real OTLP receiver (gRPC and HTTP) on ephemeral loopback ports, and helpers
//! that turn what it received into span trees a test can compare.
#![allow(dead_code)]

pub mod anthropic;
pub mod hooks;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::net::SocketAddr;
use std::process::{Command, Output, Stdio};
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
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use tonic::codec::CompressionEncoding;

/// One request as the receiver got it.
#[derive(Clone, Debug)]
pub struct Received {
    pub via: &'static str,
    pub gzip: bool,
    pub headers: Vec<(String, String)>,
    pub request: ExportTraceServiceRequest,
}

#[derive(Default)]
struct State {
    requests: Mutex<Vec<Received>>,
    changed: Condvar,
    /// Answer this many requests with 503 / UNAVAILABLE before accepting.
    refuse_next: AtomicU64,
    refused: AtomicU64,
    /// Refuse (401 / UNAUTHENTICATED) any request without this header and value.
    required: Mutex<Option<(String, String)>>,
    unauthorized: AtomicU64,
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

    fn should_refuse(&self) -> bool {
        let refuse = self
            .refuse_next
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
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
        if self.0.should_refuse() {
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
    if state.should_refuse() {
        return (StatusCode::SERVICE_UNAVAILABLE, "refusing on purpose").into_response();
    }
    let pairs: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
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
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
            .collect(),
        request,
    });
    (
        [("content-type", "application/x-protobuf")],
        ExportTraceServiceResponse::default().encode_to_vec(),
    )
        .into_response()
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
                    .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(g)),
            );
            let app = axum::Router::new()
                .route("/v1/traces", axum::routing::post(http_export))
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

    /// The next `n` requests are answered 503 / UNAVAILABLE.
    pub fn refuse_next(&self, n: u64) {
        self.state.refuse_next.store(n, Ordering::SeqCst);
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

pub fn span_count(r: &ExportTraceServiceRequest) -> usize {
    r.resource_spans
        .iter()
        .flat_map(|rs| &rs.scope_spans)
        .map(|ss| ss.spans.len())
        .sum()
}

/// A received span with its resource and scope.
#[derive(Clone, Debug)]
pub struct FlatSpan {
    pub resource: BTreeMap<String, String>,
    pub scope: String,
    pub span: Span,
}

pub fn any_to_string(v: &Option<AnyValue>) -> String {
    match v.as_ref().and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        Some(any_value::Value::ArrayValue(a)) => format!(
            "[{}]",
            a.values
                .iter()
                .map(|v| any_to_string(&Some(v.clone())))
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => format!("{other:?}"),
    }
}

fn kv_map(kvs: &[KeyValue]) -> BTreeMap<String, String> {
    kvs.iter()
        .map(|kv| (kv.key.clone(), any_to_string(&kv.value)))
        .collect()
}

pub fn flatten(requests: &[Received]) -> Vec<FlatSpan> {
    let mut out = Vec::new();
    for r in requests {
        for rs in &r.request.resource_spans {
            let resource = rs
                .resource
                .as_ref()
                .map(|r| kv_map(&r.attributes))
                .unwrap_or_default();
            for ss in &rs.scope_spans {
                let scope = ss
                    .scope
                    .as_ref()
                    .map(|s| s.name.clone())
                    .unwrap_or_default();
                for s in &ss.spans {
                    out.push(FlatSpan {
                        resource: resource.clone(),
                        scope: scope.clone(),
                        span: s.clone(),
                    });
                }
            }
        }
    }
    out
}

impl FlatSpan {
    pub fn attr(&self, key: &str) -> Option<String> {
        self.span
            .attributes
            .iter()
            .find(|kv| kv.key == key)
            .map(|kv| any_to_string(&kv.value))
    }

    pub fn attrs(&self) -> BTreeMap<String, String> {
        kv_map(&self.span.attributes)
    }
}

/// Checks what must hold for every trace: unique ids, parents that exist in the same trace,
/// the session id on every span. Returns how many roots (spans without a parent) there are.
pub fn check_invariants(spans: &[FlatSpan]) -> usize {
    let ids: HashSet<(Vec<u8>, Vec<u8>)> = spans
        .iter()
        .map(|s| (s.span.trace_id.clone(), s.span.span_id.clone()))
        .collect();
    assert_eq!(ids.len(), spans.len(), "every span arrives exactly once");
    let mut roots = 0;
    for s in spans {
        assert_eq!(s.span.trace_id.len(), 16, "{}", s.span.name);
        assert_eq!(s.span.span_id.len(), 8, "{}", s.span.name);
        assert!(
            s.span.end_time_unix_nano >= s.span.start_time_unix_nano,
            "{}",
            s.span.name
        );
        if s.span.parent_span_id.is_empty() {
            roots += 1;
        } else {
            assert!(
                ids.contains(&(s.span.trace_id.clone(), s.span.parent_span_id.clone())),
                "{} has a dangling parent",
                s.span.name
            );
        }
        let sid = s
            .attr("session.id")
            .unwrap_or_else(|| panic!("{} has no session.id", s.span.name));
        assert_eq!(
            s.attr("gen_ai.conversation.id").as_deref(),
            Some(sid.as_str())
        );
    }
    roots
}

/// The spans as indented trees, one per root, children by start time: name, exact start and
/// end in ns, and the attributes listed in `show`.
pub fn render_trees(spans: &[FlatSpan], show: &[&str]) -> String {
    let by_id: HashMap<(Vec<u8>, Vec<u8>), &FlatSpan> = spans
        .iter()
        .map(|s| ((s.span.trace_id.clone(), s.span.span_id.clone()), s))
        .collect();
    let mut children: HashMap<(Vec<u8>, Vec<u8>), Vec<&FlatSpan>> = HashMap::new();
    let mut roots = Vec::new();
    for s in spans {
        let parent = (s.span.trace_id.clone(), s.span.parent_span_id.clone());
        if !s.span.parent_span_id.is_empty() && by_id.contains_key(&parent) {
            children.entry(parent).or_default().push(s);
        } else {
            roots.push(s);
        }
    }
    let key = |s: &&FlatSpan| {
        (
            s.span.start_time_unix_nano,
            s.span.name.clone(),
            s.span.span_id.clone(),
        )
    };
    roots.sort_by_key(key);
    for v in children.values_mut() {
        v.sort_by_key(key);
    }
    let mut out = String::new();
    fn walk(
        out: &mut String,
        s: &FlatSpan,
        depth: usize,
        children: &HashMap<(Vec<u8>, Vec<u8>), Vec<&FlatSpan>>,
        show: &[&str],
    ) {
        let mut line = format!(
            "{}{} {}..{}",
            "  ".repeat(depth),
            s.span.name,
            s.span.start_time_unix_nano,
            s.span.end_time_unix_nano
        );
        for k in show {
            if let Some(v) = s.attr(k) {
                line.push_str(&format!(" {k}={v}"));
            }
        }
        if let Some(st) = &s.span.status {
            if st.code == 2 {
                line.push_str(&format!(" ERROR({})", st.message));
            }
        }
        out.push_str(&line);
        out.push('\n');
        if let Some(kids) = children.get(&(s.span.trace_id.clone(), s.span.span_id.clone())) {
            for k in kids {
                walk(out, k, depth + 1, children, show);
            }
        }
    }
    for r in roots {
        walk(&mut out, r, 0, &children, show);
    }
    out
}

/// Runs the built binary with `args`, `stdin` on its standard input and `env` set (and the
/// OTEL variables of the test process cleared).
pub fn run_binary(args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, _) in std::env::vars() {
        if k.starts_with("OTEL_") || k.starts_with("ALBEDO_OTEL") {
            cmd.env_remove(k);
        }
    }
    cmd.env("ALBEDO_OTEL_LOG", "info");
    // Each run gets a spool of its own, unless the test shares one on purpose, and no
    // configuration file but the one a test writes.
    cmd.env("ALBEDO_OTEL_SPOOL_DIR", temp_dir("spool"));
    cmd.env("XDG_CONFIG_HOME", temp_dir("config"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("the binary starts");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// A new, empty folder under the system's temporary folder.
pub fn temp_dir(what: &str) -> std::path::PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "albedo-otel-test-{what}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn repo_file(path: &str) -> String {
    format!("{}/{}", env!("CARGO_MANIFEST_DIR"), path)
}

/// The bundled example session the README replays: 21 spans in two traces.
pub fn demo_session() -> Vec<u8> {
    std::fs::read(repo_file("examples/demo-session.ndjson")).unwrap()
}

/// Replays the example session to `endpoint` once, with no spool and a 1-s flush deadline:
/// what could not be delivered is reported, not kept.
pub fn replay_once(protocol: &str, endpoint: &str, env: &[(&str, &str)]) -> Output {
    run_binary(
        &[
            "replay",
            "-",
            "--no-spool",
            "--flush-timeout",
            "1s",
            "--protocol",
            protocol,
            "--endpoint",
            endpoint,
        ],
        env,
        &demo_session(),
    )
}

/// Finds an external program a test needs. Without it the test is skipped with a message,
/// unless `ALBEDO_OTEL_REQUIRE_TOOLS=1` (set by `.ci/run`), which makes a missing tool a failure.
pub fn require_tool(
    name: &str,
    found: Option<std::path::PathBuf>,
    install: &str,
) -> Option<std::path::PathBuf> {
    if let Some(p) = found {
        return Some(p);
    }
    if std::env::var("ALBEDO_OTEL_REQUIRE_TOOLS").as_deref() == Ok("1") {
        panic!("{name} is required (ALBEDO_OTEL_REQUIRE_TOOLS=1) but was not found; {install}");
    }
    eprintln!("SKIPPED: {name} not found; {install}");
    None
}

/// `name` on PATH.
pub fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// A port that was free a moment ago, for programs that cannot report the one they bound.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something accepts connections on `port`, or panics after `timeout`.
pub fn wait_for_port(port: u16, timeout: Duration, what: &str) {
    let deadline = Instant::now() + timeout;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{what} did not listen on port {port} within {timeout:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Compares two sets of received spans field by field, matched by (trace id, span id).
pub fn assert_same_spans(expected: &[FlatSpan], got: &[FlatSpan]) {
    assert_eq!(got.len(), expected.len(), "span count");
    let index: HashMap<(Vec<u8>, Vec<u8>), &FlatSpan> = got
        .iter()
        .map(|s| ((s.span.trace_id.clone(), s.span.span_id.clone()), s))
        .collect();
    for e in expected {
        let g = index
            .get(&(e.span.trace_id.clone(), e.span.span_id.clone()))
            .unwrap_or_else(|| panic!("{} missing", e.span.name));
        let (es, gs) = (&e.span, &g.span);
        assert_eq!(gs.name, es.name);
        assert_eq!(gs.parent_span_id, es.parent_span_id, "{}", es.name);
        assert_eq!(gs.kind, es.kind, "{}", es.name);
        assert_eq!(
            (gs.start_time_unix_nano, gs.end_time_unix_nano),
            (es.start_time_unix_nano, es.end_time_unix_nano),
            "{}",
            es.name
        );
        assert_eq!(g.attrs(), e.attrs(), "{}", es.name);
        assert_eq!(gs.events, es.events, "{}", es.name);
        assert_eq!(gs.links.len(), es.links.len(), "{}", es.name);
        for (gl, el) in gs.links.iter().zip(&es.links) {
            assert_eq!(
                (&gl.trace_id, &gl.span_id),
                (&el.trace_id, &el.span_id),
                "{}",
                es.name
            );
        }
        assert_eq!(gs.status, es.status, "{}", es.name);
        for (k, v) in &e.resource {
            assert_eq!(g.resource.get(k), Some(v), "resource attribute {k}");
        }
        assert_eq!(g.scope, e.scope);
    }
}

/// Every file below `dir` (not following links) whose bytes contain `needle`.
pub fn files_containing(dir: &std::path::Path, needle: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => {
                    let bytes = std::fs::read(&p).unwrap_or_default();
                    if bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                        found.push(p);
                    }
                }
                _ => {}
            }
        }
    }
    found
}

/// The permission bits of `path` (Unix).
#[cfg(unix)]
pub fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Polls `condition` until it holds, or panics after `timeout` naming `what`. For state another
/// thread or process changes and no event announces.
pub fn wait_until(timeout: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !condition() {
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}
