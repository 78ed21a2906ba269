//! The whole process into real collectors, as `cargo bench --bench collectors` (or
//! `scripts/bench`) prints it:
//!
//! 1. into rotel (PyPI `rotel`, its blackhole exporter), over gRPC and HTTP/protobuf: events/s
//!    from spawning `albedo-otel run` to its exit with every span acknowledged, CPU seconds per
//!    million events, and gRPC's rate as a share of HTTP's in the same run;
//! 2. into a receiver 50 ms away (every response held 50 ms), with the default number of
//!    exports in flight, and with one.
//!
//! Env: `BENCH_SESSIONS` (2500), `BENCH_ROUNDS` (3), `ROTEL_AGENT` (else found through Python).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{cpu_seconds, exe, free_port, taskset, Sink};

use albedo_otel::testing::{generate, GenConfig};

fn main() {
    match std::env::var("BENCH_ROLE").as_deref() {
        Ok("sink") => common::sink(),
        _ => drive(),
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn rotel_agent() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ROTEL_AGENT") {
        return Some(p.into());
    }
    let out = Command::new("python3")
        .args([
            "-c",
            "import os, rotel; print(os.path.join(os.path.dirname(rotel.__file__), 'rotel-agent'))",
        ])
        .output()
        .ok()?;
    let p = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    p.is_file().then_some(p)
}

/// One run of the whole process: wall seconds from spawn to exit, CPU seconds.
struct Run {
    seconds: f64,
    cpu: f64,
}

/// `albedo-otel run` on core 0, the stream on stdin, until it exits; it must say that every
/// span was delivered (acknowledged by the collector).
fn run(stream: &Path, protocol: &str, endpoint: &str, spans: u64, extra: &[&str]) -> Run {
    let c0 = cpu_seconds("self", true);
    let start = Instant::now();
    let out = taskset("0", &exe())
        .args([
            "run",
            "--no-spool",
            "--protocol",
            protocol,
            "--endpoint",
            endpoint,
        ])
        .args(extra)
        .env("ALBEDO_OTEL_LOG", "info")
        .env(
            "XDG_CONFIG_HOME",
            std::env::temp_dir().join("albedo-otel-bench-no-config"),
        )
        .stdin(std::fs::File::open(stream).unwrap())
        .stdout(Stdio::null())
        .output()
        .unwrap();
    let seconds = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.contains(&format!("{spans} spans, {spans} delivered")),
        "{stderr}"
    );
    Run {
        seconds,
        cpu: cpu_seconds("self", true) - c0,
    }
}

fn best(rounds: usize, f: impl Fn() -> Run) -> Run {
    (0..rounds)
        .map(|_| f())
        .min_by(|a, b| a.seconds.total_cmp(&b.seconds))
        .unwrap()
}

fn drive() {
    let sessions = env_usize("BENCH_SESSIONS", 2500);
    let rounds = env_usize("BENCH_ROUNDS", 3);
    let (lines, expected) = generate(&GenConfig {
        sessions,
        turns_per_session: 5,
        ..GenConfig::default()
    });
    let stream = std::env::temp_dir().join(format!(
        "albedo-otel-bench-coll-{}.ndjson",
        std::process::id()
    ));
    std::fs::write(&stream, lines.join("\n") + "\n").unwrap();
    let (events, spans) = (expected.events, expected.spans());
    println!(
        "stream: {} sessions, {events} events, {spans} spans; exporter on core 0, collector on core 1; best of {rounds}"
    , expected.sessions);

    match rotel_agent() {
        None => println!("rotel: SKIPPED (pip install rotel==0.0.1a15, or set ROTEL_AGENT)"),
        Some(agent) => {
            let (grpc, http) = (free_port(), free_port());
            let dir = std::env::temp_dir().join(format!("albedo-otel-bench-rotel-{grpc}"));
            std::fs::create_dir_all(&dir).unwrap();
            let mut rotel = taskset("1", &agent)
                .args(["start", "--exporter", "blackhole"])
                .args(["--otlp-grpc-endpoint", &format!("127.0.0.1:{grpc}")])
                .args(["--otlp-http-endpoint", &format!("127.0.0.1:{http}")])
                .arg("--pid-file")
                .arg(dir.join("pid"))
                .arg("--log-file")
                .arg(dir.join("log"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            for port in [grpc, http] {
                let deadline = Instant::now() + Duration::from_secs(15);
                while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
                    assert!(Instant::now() < deadline, "rotel did not start");
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            let version = Command::new(&agent)
                .arg("version")
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_default();
            let package = Command::new("python3")
                .args([
                    "-c",
                    "import importlib.metadata as m; print(m.version('rotel'))",
                ])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_default();
            println!("into rotel-agent {version} (PyPI rotel {package}, --exporter blackhole):");
            println!("| protocol | wall s | events/s | spans/s | CPU s | CPU s per million events | rate ÷ HTTP's |");
            println!("| --- | --- | --- | --- | --- | --- | --- |");
            let g = best(rounds, || {
                run(
                    &stream,
                    "grpc",
                    &format!("http://127.0.0.1:{grpc}"),
                    spans,
                    &[],
                )
            });
            let h = best(rounds, || {
                run(
                    &stream,
                    "http/protobuf",
                    &format!("http://127.0.0.1:{http}"),
                    spans,
                    &[],
                )
            });
            for (name, r) in [("grpc", &g), ("http/protobuf", &h)] {
                println!(
                    "| {name} | {:.3} | {:.0} | {:.0} | {:.2} | {:.2} | {:.2} |",
                    r.seconds,
                    events as f64 / r.seconds,
                    spans as f64 / r.seconds,
                    r.cpu,
                    r.cpu / (events as f64 / 1e6),
                    h.seconds / r.seconds
                );
            }
            let _ = rotel.kill();
            let _ = rotel.wait();
        }
    }

    let far = Sink::start_far(Duration::from_millis(50));
    println!("into a receiver 50 ms away (every response held 50 ms), gRPC:");
    println!("| exports in flight | wall s | spans/s |");
    println!("| --- | --- | --- |");
    let endpoint = format!("http://127.0.0.1:{}", far.grpc);
    let base = far.count();
    let d = best(1, || run(&stream, "grpc", &endpoint, spans, &[]));
    println!(
        "| {} (the default) | {:.3} | {:.0} |",
        albedo_otel::config::defaults::MAX_CONCURRENT_EXPORTS,
        d.seconds,
        spans as f64 / d.seconds
    );
    let one = best(1, || {
        run(
            &stream,
            "grpc",
            &endpoint,
            spans,
            &["--max-concurrent-exports", "1"],
        )
    });
    println!(
        "| 1 | {:.3} | {:.0} |",
        one.seconds,
        spans as f64 / one.seconds
    );
    assert_eq!(far.count() - base, 2 * spans, "every span arrived, once");
    let _ = std::fs::remove_file(&stream);
}
