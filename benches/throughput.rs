//! Pipeline throughput: NDJSON on the binary's stdin to spans acknowledged by a local OTLP
//! receiver, over gRPC and HTTP/protobuf. Prints a table; `cargo bench --bench throughput`.

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Instant;

use albedo_otel::generate::{generate, GenConfig};

fn main() {
    let sessions: usize = std::env::var("BENCH_SESSIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(400);
    let (lines, expected) = generate(&GenConfig {
        sessions,
        turns_per_session: 5,
        ..GenConfig::default()
    });
    let input = lines.join("\n") + "\n";
    println!(
        "stream: {} sessions, {} events, {} spans, {:.1} MiB",
        expected.sessions,
        expected.events,
        expected.spans(),
        input.len() as f64 / (1 << 20) as f64
    );
    println!("| protocol | wall s | events/s | spans/s |");
    println!("| --- | --- | --- | --- |");
    for protocol in ["grpc", "http/protobuf"] {
        let rx = support::Receiver::start();
        let url = if protocol == "grpc" {
            rx.grpc_url()
        } else {
            rx.http_url()
        };
        let start = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
            .args(["run", "--protocol", protocol, "--endpoint", &url])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let data = input.clone();
        let writer = std::thread::spawn(move || stdin.write_all(data.as_bytes()));
        let out = child.wait_with_output().unwrap();
        let elapsed = start.elapsed().as_secs_f64();
        writer.join().unwrap().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got = rx.spans().len() as u64;
        assert_eq!(
            got,
            expected.spans(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        println!(
            "| {protocol} | {elapsed:.2} | {:.0} | {:.0} |",
            expected.events as f64 / elapsed,
            expected.spans() as f64 / elapsed
        );
    }
}
