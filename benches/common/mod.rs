//! What the benchmarks share: an OTLP receiver that counts spans, run as a separate process
//! pinned to its own core so that it never competes with the exporter being measured, and
//! the kernel's CPU accounting.
#![allow(dead_code)] // each bench uses a different part

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------- the sink

mod sink_impl {
    use super::*;
    use axum::body::Bytes;
    use axum::http::HeaderMap;
    use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
        TraceService, TraceServiceServer,
    };
    use opentelemetry_proto::tonic::collector::trace::v1::{
        ExportTraceServiceRequest, ExportTraceServiceResponse,
    };
    use prost::Message;
    use std::io::Read;

    pub struct Counter(pub Arc<AtomicU64>);

    /// How long the sink holds every response (`BENCH_SINK_DELAY_MS`): a collector that far away.
    pub fn delay() -> Duration {
        Duration::from_millis(
            std::env::var("BENCH_SINK_DELAY_MS")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0),
        )
    }

    pub fn count(r: &ExportTraceServiceRequest) -> u64 {
        r.resource_spans
            .iter()
            .flat_map(|rs| &rs.scope_spans)
            .map(|ss| ss.spans.len() as u64)
            .sum()
    }

    #[tonic::async_trait]
    impl TraceService for Counter {
        async fn export(
            &self,
            request: tonic::Request<ExportTraceServiceRequest>,
        ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
            tokio::time::sleep(delay()).await;
            self.0.fetch_add(count(request.get_ref()), Ordering::SeqCst);
            Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
        }
    }

    pub async fn http(
        axum::extract::State(n): axum::extract::State<Arc<AtomicU64>>,
        headers: HeaderMap,
        body: Bytes,
    ) -> Vec<u8> {
        let body = if headers.get("content-encoding").is_some_and(|v| v == "gzip") {
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(&body[..])
                .read_to_end(&mut out)
                .unwrap();
            out
        } else {
            body.to_vec()
        };
        let r = ExportTraceServiceRequest::decode(&body[..]).unwrap();
        tokio::time::sleep(delay()).await;
        n.fetch_add(count(&r), Ordering::SeqCst);
        ExportTraceServiceResponse::default().encode_to_vec()
    }

    pub async fn get_count(
        axum::extract::State(n): axum::extract::State<Arc<AtomicU64>>,
    ) -> String {
        n.load(Ordering::SeqCst).to_string()
    }

    pub fn service(n: Arc<AtomicU64>) -> TraceServiceServer<Counter> {
        TraceServiceServer::new(Counter(n))
            .accept_compressed(tonic::codec::CompressionEncoding::Gzip)
            .max_decoding_message_size(256 << 20)
    }
}

/// Serves OTLP on ephemeral ports, prints them, and counts spans (GET /count) until stdin closes.
pub fn sink() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let n = Arc::new(AtomicU64::new(0));
    rt.block_on(async {
        // A fixed gRPC port when asked: the collector coming back where the exporter expects it.
        let grpc_port = std::env::var("BENCH_SINK_GRPC_PORT").unwrap_or_else(|_| "0".into());
        let g = tokio::net::TcpListener::bind(format!("127.0.0.1:{grpc_port}"))
            .await
            .unwrap();
        let h = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!(
            "{} {}",
            g.local_addr().unwrap().port(),
            h.local_addr().unwrap().port()
        );
        std::io::stdout().flush().unwrap();
        tokio::spawn(
            // Large HTTP/2 windows, as a collector tuned for throughput would have: with the
            // 64 KiB default, a big export request waits on window updates, not on CPU.
            tonic::transport::Server::builder()
                .initial_stream_window_size(Some(16 << 20))
                .initial_connection_window_size(Some(32 << 20))
                .add_service(sink_impl::service(n.clone()))
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(g)),
        );
        let app = axum::Router::new()
            .route("/v1/traces", axum::routing::post(sink_impl::http))
            .route("/count", axum::routing::get(sink_impl::get_count))
            .layer(axum::extract::DefaultBodyLimit::max(256 << 20))
            .with_state(n.clone());
        tokio::spawn(async move { axum::serve(h, app).await });
        tokio::task::spawn_blocking(|| {
            let mut s = String::new();
            let _ = std::io::stdin().read_line(&mut s);
        })
        .await
        .unwrap();
    });
}

pub struct Sink {
    pub child: Child,
    pub grpc: u16,
    pub http: u16,
}

pub fn taskset(core: &str, program: &Path) -> Command {
    if Path::new("/usr/bin/taskset").exists() {
        let mut c = Command::new("/usr/bin/taskset");
        c.arg("-c").arg(core).arg(program);
        c
    } else {
        Command::new(program)
    }
}

impl Sink {
    pub fn start() -> Sink {
        Sink::start_on(0)
    }

    /// A sink whose gRPC port is `grpc` (0: any free port).
    pub fn start_on(grpc: u16) -> Sink {
        Sink::start_with(grpc, Duration::ZERO)
    }

    /// A sink that answers every request `delay` late, as a collector that far away would.
    pub fn start_far(delay: Duration) -> Sink {
        Sink::start_with(0, delay)
    }

    /// As [`start_far`](Self::start_far), on gRPC port `grpc`.
    pub fn start_far_on(grpc: u16, delay: Duration) -> Sink {
        Sink::start_with(grpc, delay)
    }

    fn start_with(grpc: u16, delay: Duration) -> Sink {
        let me = std::env::current_exe().unwrap();
        let mut child = taskset("1", &me)
            .env("BENCH_ROLE", "sink")
            .env("BENCH_SINK_GRPC_PORT", grpc.to_string())
            .env("BENCH_SINK_DELAY_MS", delay.as_millis().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let mut ports = line.split_whitespace().map(|p| p.parse().unwrap());
        Sink {
            grpc: ports.next().unwrap(),
            http: ports.next().unwrap(),
            child,
        }
    }

    pub fn count(&self) -> u64 {
        use std::io::Read;
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.http)).unwrap();
        write!(s, "GET /count HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
        let mut r = String::new();
        s.read_to_string(&mut r).unwrap();
        r.rsplit("\r\n\r\n").next().unwrap().trim().parse().unwrap()
    }

    /// Waits until `n` spans have arrived; returns when the last did.
    pub fn wait_for(&self, n: u64, deadline: Duration) -> Instant {
        let end = Instant::now() + deadline;
        loop {
            if self.count() >= n {
                return Instant::now();
            }
            assert!(
                Instant::now() < end,
                "the sink got {} of {n} spans",
                self.count()
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// CPU seconds (user + system) of `pid`, or of this process's waited-for children when
/// `children` is set: fields 14-17 of `/proc/<pid>/stat`.
pub fn cpu_seconds(pid: &str, children: bool) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The command name may hold spaces; fields are counted after its closing parenthesis.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    let (a, b) = if children { (13, 14) } else { (11, 12) };
    let ticks = f.get(a).copied().unwrap_or(0.0) + f.get(b).copied().unwrap_or(0.0);
    ticks / 100.0
}

/// Runs `f` and returns its result with (exporter CPU, receiver CPU) seconds it cost.
pub fn metered<T>(sink: &Sink, f: impl FnOnce() -> T) -> (T, f64, f64) {
    let sink_pid = sink.child.id().to_string();
    let (c0, s0) = (cpu_seconds("self", true), cpu_seconds(&sink_pid, false));
    let out = f();
    let (c1, s1) = (cpu_seconds("self", true), cpu_seconds(&sink_pid, false));
    (out, c1 - c0, s1 - s0)
}

/// Resident and peak resident memory of `pid`, in KiB, from `/proc/<pid>/status`.
pub fn rss_kib(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = |field: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    };
    Some((kib("VmRSS:")?, kib("VmHWM:")?))
}

/// A port nothing listens on (bound, then released).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A number from the environment variable `k`, else `d`.
pub fn env_num(k: &str, d: u64) -> u64 {
    std::env::var(k)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(d)
}

/// The `albedo-otel` binary this bench was built with, or `BENCH_EXE`: another build (an
/// older commit's) measured by the same driver, against the same receiver, for a before and
/// after in one sitting.
pub fn exe() -> std::path::PathBuf {
    match std::env::var_os("BENCH_EXE") {
        Some(p) if !p.is_empty() => std::path::PathBuf::from(p),
        _ => std::path::PathBuf::from(env!("CARGO_BIN_EXE_albedo-otel")),
    }
}

/// An `albedo-otel run` child with its stdin open, whose log lines (stderr) are read by a
/// thread, so the bench can ask for a status (`SIGUSR1`) and read the answer.
pub struct Running {
    pub child: Child,
    pub stdin: Option<std::process::ChildStdin>,
    log: crossbeam_channel::Receiver<(Instant, String)>,
}

impl Running {
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> Running {
        let mut cmd = taskset("0", &exe());
        cmd.arg("run")
            .args(args)
            .env("ALBEDO_OTEL_LOG", "info")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, log) = crossbeam_channel::unbounded();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
        Running {
            stdin: child.stdin.take(),
            child,
            log,
        }
    }

    /// Waits for a log line containing `needle`; returns when it was read, and the line.
    pub fn wait_log(&self, needle: &str, timeout: Duration) -> (Instant, String) {
        let end = Instant::now() + timeout;
        loop {
            match self.log.recv_deadline(end) {
                Ok((t, line)) if line.contains(needle) => return (t, line),
                Ok(_) => {}
                Err(_) => panic!("no log line with {needle:?} within {timeout:?}"),
            }
        }
    }

    /// The exporter's status line (after `ready`, so the signal is handled).
    pub fn status(&self) -> String {
        let ok = Command::new("kill")
            .args(["-USR1", &self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -USR1 failed");
        self.wait_log("status:", Duration::from_secs(30)).1
    }

    /// Asks for the status until `events` events have been taken in.
    pub fn wait_events(&self, events: u64, timeout: Duration) -> String {
        self.wait_status(" events", events, timeout)
    }

    /// Asks for the status until `spans` spans came from the spool.
    pub fn wait_from_spool(&self, spans: u64, timeout: Duration) -> String {
        self.wait_status(" delivered from the spool", spans, timeout)
    }

    /// Asks for the status until the number before `label` is at least `n`.
    fn wait_status(&self, label: &str, n: u64, timeout: Duration) -> String {
        let end = Instant::now() + timeout;
        loop {
            let s = self.status();
            if number_before(&s, label) >= n {
                return s;
            }
            assert!(Instant::now() < end, "still {s}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn write(&mut self, text: &str) {
        self.stdin
            .as_mut()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }

    /// Closes stdin and waits for the exit; returns the `done:` line.
    pub fn close(mut self) -> String {
        drop(self.stdin.take());
        let (_, done) = self.wait_log("done:", Duration::from_secs(120));
        let status = self.child.wait().unwrap();
        assert!(status.success(), "exit {status}: {done}");
        done
    }
}

/// The number just before `label` in a log line: `number_before("3 spans, 2 delivered", " delivered")` is 2.
pub fn number_before(line: &str, label: &str) -> u64 {
    line.find(label)
        .and_then(|i| line[..i].rsplit(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The MiB figure after `label` in a log line: `mib_after("peak 20.1 MiB", "peak ")` is 20.1.
pub fn mib_after(line: &str, label: &str) -> f64 {
    line.find(label)
        .and_then(|i| line[i + label.len()..].split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(f64::NAN)
}
