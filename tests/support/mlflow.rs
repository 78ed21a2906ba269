//! A local MLflow tracking server for tests/viewers/mlflow.rs, run as a user runs it (`mlflow server`,
//! a sqlite store in a folder of its own), and the REST calls its trace view makes.
//!
//! Needs MLflow 3.17.2: `MLFLOW_BIN`, or the virtualenv `.ci/run` makes in
//! `${XDG_CACHE_HOME:-~/.cache}/albedo-otel-ci/mlflow-3.17.2`.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value as J};

use crate::support::{free_port, require_tool, scratch, Scratch};

pub const VERSION: &str = "3.17.2";

fn mlflow_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MLFLOW_BIN") {
        return Some(p.into());
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let bin = cache.join(format!("albedo-otel-ci/mlflow-{VERSION}/bin/mlflow"));
    bin.is_file().then_some(bin)
}

/// An MLflow server of its own, or `None` (the test is skipped, saying how to install it).
pub fn mlflow() -> Option<Mlflow> {
    require_tool(
        "MLflow",
        mlflow_bin(),
        &format!("python3 -m venv ~/.cache/albedo-otel-ci/mlflow-{VERSION} && ~/.cache/albedo-otel-ci/mlflow-{VERSION}/bin/pip install mlflow=={VERSION}"),
    )
    .map(Mlflow::start)
}

/// `mlflow server` on a port picked here, its store in a scratch folder, its telemetry and
/// its background job runners (eight more Python processes, 2 GB) off.
pub struct Mlflow {
    child: Child,
    port: u16,
    log: PathBuf,
    client: reqwest::blocking::Client,
    // Dropped last: the server is gone before its folder is.
    _dir: Scratch,
}

impl Mlflow {
    fn start(bin: PathBuf) -> Mlflow {
        let dir = scratch("mlflow");
        let port = free_port();
        let log = dir.join("mlflow.log");
        let store = format!("sqlite:///{}", dir.join("mlflow.db").display());
        let mut cmd = Command::new(bin);
        cmd.args([
            "server",
            "--backend-store-uri",
            &store,
            "--host",
            "127.0.0.1",
        ])
        .args(["--port", &port.to_string(), "--workers", "1"])
        .arg("--default-artifact-root")
        .arg(dir.join("artifacts"))
        .current_dir(&dir)
        .env("MLFLOW_DISABLE_TELEMETRY", "true")
        .env("DO_NOT_TRACK", "true")
        .env("MLFLOW_SERVER_ENABLE_JOB_EXECUTION", "false")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
        // `mlflow server` runs uvicorn as a child: a group of its own is stopped as one.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().expect("mlflow starts");
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        let mut m = Mlflow {
            child,
            port,
            log,
            client,
            _dir: dir,
        };
        // A fresh store is migrated before the server listens: most of a minute on a busy
        // two-core machine.
        let deadline = Instant::now() + Duration::from_secs(240);
        loop {
            let up = m
                .client
                .get(m.url("/health"))
                .send()
                .is_ok_and(|r| r.status().is_success());
            if up {
                break;
            }
            if let Ok(Some(status)) = m.child.try_wait() {
                panic!("mlflow exited ({status}): {}", m.log_text());
            }
            assert!(
                Instant::now() < deadline,
                "mlflow not ready: {}",
                m.log_text()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        m
    }

    /// Where OTLP/HTTP goes (`/v1/traces` under it).
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.endpoint())
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn call(&self, req: reqwest::blocking::RequestBuilder) -> J {
        req.send()
            .and_then(|r| r.error_for_status())
            .and_then(|r| r.text())
            .map(|t| serde_json::from_str(&t).unwrap())
            .unwrap_or_else(|e| panic!("mlflow: {e}\n{}", self.log_text()))
    }

    /// A new experiment; its id is what `x-mlflow-experiment-id` names.
    pub fn create_experiment(&self, name: &str) -> String {
        let out = self.call(
            self.client
                .post(self.url("/api/2.0/mlflow/experiments/create"))
                .json(&json!({ "name": name })),
        );
        out["experiment_id"].as_str().unwrap().to_string()
    }

    /// The experiment's traces as its trace list shows them (ids, metadata, tags), once
    /// there are `n` (or the deadline passed).
    pub fn traces(&self, experiment: &str, n: usize) -> Vec<J> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let out = self.call(
                self.client
                    .post(self.url("/api/3.0/mlflow/traces/search"))
                    .json(&json!({
                        "locations": [{"type": "MLFLOW_EXPERIMENT",
                                       "mlflow_experiment": {"experiment_id": experiment}}],
                        "max_results": 100,
                    })),
            );
            let got = out["traces"].as_array().cloned().unwrap_or_default();
            if got.len() >= n || Instant::now() > deadline {
                return got;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// One trace with its spans, as its trace view loads it.
    pub fn trace(&self, trace_id: &str) -> J {
        let out = self.call(
            self.client
                .get(self.url("/api/3.0/mlflow/traces/get"))
                .query(&[("trace_id", trace_id)]),
        );
        out["trace"].clone()
    }
}

impl Drop for Mlflow {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            use rustix::process::{kill_process_group, Pid, Signal};
            let _ = kill_process_group(Pid::from_child(&self.child), Signal::KILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An OTLP span's attributes (`{"key", "value": {"string_value" | "int_value" | ...}}`) as a
/// map from key to the plain value.
pub fn attributes(span: &J) -> serde_json::Map<String, J> {
    span["attributes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| (a["key"].as_str().unwrap().to_string(), plain(&a["value"])))
        .collect()
}

fn plain(v: &J) -> J {
    if let Some(kv) = v.get("kvlist_value") {
        let map = kv["values"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| (a["key"].as_str().unwrap().to_string(), plain(&a["value"])))
            .collect();
        return J::Object(map);
    }
    match v.as_object().and_then(|o| o.iter().next()) {
        // Protobuf's JSON spells 64-bit integers as strings.
        Some((k, J::String(s))) if k == "int_value" => s.parse::<i64>().map_or(J::Null, J::from),
        Some((_, x)) => x.clone(),
        None => J::Null,
    }
}

/// An id as MLflow's trace API spells it: protobuf's JSON, standard base64.
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
