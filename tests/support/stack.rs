//! The deploy/ stack's own programs, the OpenTelemetry Collector, Jaeger v2 and Prometheus, run
//! as local processes on deploy/'s own config files, with ports the test picks and passes in
//! through the files' `${env:NAME:-default}`.
//!
//! `scripts/stack build` builds them; the tests find them through ALBEDO_OTEL_OTELCOL,
//! ALBEDO_OTEL_JAEGER and ALBEDO_OTEL_PROMETHEUS (`eval "$(scripts/stack env)"` sets all three;
//! .ci/run does).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::{repo_file, require_tool, wait_for_port};

const INSTALL: &str =
    "build them with Go: eval \"$(scripts/stack env)\" (a few minutes the first time)";

/// A port for a stack program to listen on. These programs open many client connections of
/// their own, and a client's port comes from the ephemeral range, where `free_port` picks: a
/// port picked there can be taken before the program binds it. So these come from below that
/// range (Linux's starts at 32768, macOS's at 49152), each handed out once per test process.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    // Spread by process id, so that two test runs at once seldom start on the same port.
    let seed = u64::from(std::process::id()) * 7919 % 12_000;
    loop {
        let n = u64::from(NEXT.fetch_add(1, Ordering::Relaxed));
        let port = 20_000 + ((seed + n * 13) % 12_000) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// Where the three programs are.
pub struct Tools {
    pub otelcol: PathBuf,
    pub jaeger: PathBuf,
    pub prometheus: PathBuf,
}

impl Tools {
    /// The three programs, or `None` (the test skips) when they were not built.
    pub fn find() -> Option<Tools> {
        let one = |name: &str, var: &str| {
            let found = std::env::var_os(var)
                .map(PathBuf::from)
                .filter(|p| p.is_file());
            require_tool(name, found, &format!("{var} is not set; {INSTALL}"))
        };
        Some(Tools {
            otelcol: one("the OpenTelemetry Collector", "ALBEDO_OTEL_OTELCOL")?,
            jaeger: one("Jaeger", "ALBEDO_OTEL_JAEGER")?,
            prometheus: one("Prometheus", "ALBEDO_OTEL_PROMETHEUS")?,
        })
    }
}

/// A program of the stack, its output in a log file, killed when dropped.
pub struct Proc {
    child: Child,
    pub name: String,
    log: PathBuf,
}

impl Proc {
    pub fn spawn(
        name: &str,
        program: &Path,
        args: &[String],
        env: &[(&str, String)],
        dir: &Path,
    ) -> Proc {
        let log = dir.join(format!("{name}.log"));
        let file = std::fs::File::create(&log).unwrap();
        let child = Command::new(program)
            .args(args)
            .envs(env.iter().map(|(k, v)| (*k, v)))
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: {}: {e}", program.display()));
        Proc {
            child,
            name: name.to_string(),
            log,
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits for `port`, failing with the end of the log if the program exits first.
    pub fn wait_for(&mut self, port: u16) {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "{} exited ({status}) before listening on {port}:\n{}",
                    self.name,
                    tail(&self.log(), 20)
                );
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{} did not listen on {port} in 60 s:\n{}",
                self.name,
                tail(&self.log(), 20)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL: what a crash or an OOM kill does.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// An HTTP client for the programs' APIs (reqwest here is built without a TLS provider of
/// its own).
pub fn client() -> reqwest::blocking::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// A config of the repository's (`deploy/…`), or a test's own copy (an absolute path).
fn config_arg(config: &str) -> String {
    if Path::new(config).is_absolute() {
        format!("--config={config}")
    } else {
        format!("--config={}", repo_file(config))
    }
}

/// `otelcol validate --config FILE`: the collector's own words when it refuses.
pub fn validate(program: &Path, config: &Path) -> Result<(), String> {
    let out = Command::new(program)
        .arg("validate")
        .arg(format!("--config={}", config.display()))
        .output()
        .unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// Jaeger v2 on deploy/jaeger.yaml, its ports picked here.
pub struct Jaeger {
    pub proc: Proc,
    pub otlp_grpc: u16,
    pub query: u16,
    telemetry: u16,
    http: reqwest::blocking::Client,
}

impl Jaeger {
    pub fn start(tools: &Tools, dir: &Path, name: &str) -> Jaeger {
        let (otlp_grpc, query, telemetry) = (free_port(), free_port(), free_port());
        let local = |p: u16| format!("127.0.0.1:{p}");
        let env = [
            ("JAEGER_OTLP_GRPC_ENDPOINT", local(otlp_grpc)),
            ("JAEGER_OTLP_HTTP_ENDPOINT", local(free_port())),
            ("JAEGER_QUERY_HTTP_ENDPOINT", local(query)),
            ("JAEGER_QUERY_GRPC_ENDPOINT", local(free_port())),
            ("JAEGER_HEALTH_ENDPOINT", local(free_port())),
            ("JAEGER_TELEMETRY_HOST", "127.0.0.1".to_string()),
            ("JAEGER_TELEMETRY_PORT", telemetry.to_string()),
        ];
        let mut proc = Proc::spawn(
            name,
            &tools.jaeger,
            &[config_arg("deploy/jaeger.yaml")],
            &env,
            dir,
        );
        proc.wait_for(otlp_grpc);
        proc.wait_for(query);
        Jaeger {
            proc,
            otlp_grpc,
            query,
            telemetry,
            http: client(),
        }
    }

    /// Spans Jaeger has written to its storage, by its own counter.
    pub fn stored_spans(&self) -> u64 {
        let text = self
            .http
            .get(format!("http://127.0.0.1:{}/metrics", self.telemetry))
            .send()
            .and_then(|r| r.text())
            .unwrap_or_default();
        metric_sum(
            &text,
            "otelcol_exporter_sent_spans_total",
            &[r#"exporter="jaeger_storage_exporter""#],
        ) as u64
    }

    pub fn otlp_endpoint(&self) -> String {
        format!("127.0.0.1:{}", self.otlp_grpc)
    }

    /// A trace as OTLP JSON through the v3 API, or `None` while Jaeger has none of it.
    pub fn trace(&self, trace_id: &str) -> Option<Value> {
        let url = format!("http://127.0.0.1:{}/api/v3/traces/{trace_id}", self.query);
        let resp = self.http.get(&url).send().unwrap();
        if resp.status() == reqwest::StatusCode::NOT_FOUND {
            return None;
        }
        assert!(resp.status().is_success(), "{url}: {}", resp.status());
        Some(resp.json().unwrap())
    }

    /// Every trace of service `albedo` Jaeger holds, each with its spans' ids.
    pub fn all_traces(&self) -> BTreeMap<String, BTreeSet<String>> {
        let query = [
            ("service", "albedo".to_string()),
            ("start", "0".to_string()),
            ("end", (u64::MAX / 2000).to_string()),
            ("limit", "100000".to_string()),
        ];
        self.search(&query)
            .into_iter()
            .map(|(t, spans)| (t, spans.into_iter().collect()))
            .collect()
    }

    /// The legacy search API the UI uses: the traces it returns, by id, with their spans' ids.
    pub fn search(&self, query: &[(&str, String)]) -> BTreeMap<String, Vec<String>> {
        let url = format!("http://127.0.0.1:{}/api/traces", self.query);
        let resp = self.http.get(&url).query(query).send().unwrap();
        assert!(
            resp.status().is_success(),
            "{url} {query:?}: {}",
            resp.status()
        );
        let body: Value = resp.json().unwrap();
        let mut out = BTreeMap::new();
        for t in body["data"].as_array().into_iter().flatten() {
            let spans = t["spans"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|s| s["spanID"].as_str().unwrap_or("").to_string())
                .collect();
            out.insert(t["traceID"].as_str().unwrap_or("").to_string(), spans);
        }
        out
    }
}

/// A collector on one of deploy/'s configs.
pub struct Collector {
    pub proc: Proc,
    pub grpc: u16,
    pub http: u16,
    pub telemetry: u16,
}

impl Collector {
    /// `env` carries the config's addresses; the receivers' and telemetry's ports are picked
    /// here.
    pub fn start(
        tools: &Tools,
        config: &str,
        env: &[(&str, String)],
        dir: &Path,
        name: &str,
    ) -> Collector {
        Collector::start_on(tools, config, env, dir, name, free_port())
    }

    /// deploy/otel-collector.yaml, sending to `jaeger`, its Tempo leg to `tempo` (an OTLP/gRPC
    /// URL), its span metrics on `span_metrics`, flushed every second.
    pub fn main(
        tools: &Tools,
        jaeger: &Jaeger,
        tempo: &str,
        span_metrics: u16,
        dir: &Path,
    ) -> Collector {
        let env = [
            ("OTELCOL_JAEGER_ENDPOINT", jaeger.otlp_endpoint()),
            ("OTELCOL_TEMPO_ENDPOINT", tempo.replace("http://", "")),
            (
                "OTELCOL_SPAN_METRICS_ENDPOINT",
                format!("127.0.0.1:{span_metrics}"),
            ),
            ("OTELCOL_SPAN_METRICS_FLUSH_INTERVAL", "1s".to_string()),
        ];
        let collector = Collector::start(tools, "deploy/otel-collector.yaml", &env, dir, "otelcol");
        wait_for_port(
            span_metrics,
            Duration::from_secs(30),
            "the collector's span metrics",
        );
        collector
    }

    /// On a given gRPC port: a collector started again where the gateway expects it.
    pub fn start_on(
        tools: &Tools,
        config: &str,
        env: &[(&str, String)],
        dir: &Path,
        name: &str,
        grpc: u16,
    ) -> Collector {
        let (http, telemetry) = (free_port(), free_port());
        let mut all = vec![
            ("OTELCOL_OTLP_GRPC_ENDPOINT", format!("127.0.0.1:{grpc}")),
            ("OTELCOL_OTLP_HTTP_ENDPOINT", format!("127.0.0.1:{http}")),
            ("OTELCOL_TELEMETRY_HOST", "127.0.0.1".to_string()),
            ("OTELCOL_TELEMETRY_PORT", telemetry.to_string()),
        ];
        all.extend(env.iter().cloned());
        let mut proc = Proc::spawn(name, &tools.otelcol, &[config_arg(config)], &all, dir);
        proc.wait_for(grpc);
        proc.wait_for(telemetry);
        Collector {
            proc,
            grpc,
            http,
            telemetry,
        }
    }

    /// The collector's own metrics (Prometheus text), for counters no event announces.
    pub fn telemetry(&self) -> String {
        client()
            .get(format!("http://127.0.0.1:{}/metrics", self.telemetry))
            .send()
            .and_then(|r| r.text())
            .unwrap_or_default()
    }
}

/// Sums the samples of the counter `metric` whose labels include every `label="value"` in
/// `with`. Collectors of different releases name a counter with and without `_total` (Jaeger
/// v2.12's does, the collector v0.161's does not); both are taken.
pub fn metric_sum(text: &str, metric: &str, with: &[&str]) -> f64 {
    let metric = metric.trim_end_matches("_total");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let name = series.split('{').next()?;
            (name.trim_end_matches("_total") == metric && with.iter().all(|w| series.contains(w)))
                .then(|| value.parse::<f64>().ok())
                .flatten()
        })
        .sum()
}
