//! Opt-in (`ALBEDO_OTEL_COMPOSE=1`, needs a Docker engine): the collector image pinned in
//! deploy/.env validates the stack's collector config, then receives the fixtures and writes
//! what it would forward with a file exporter; the trees must match what albedo-otel sent.
//!
//!     ALBEDO_OTEL_COMPOSE=1 cargo test deploy::compose -- --nocapture

use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::*;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;

fn compose(args: &[&str], env: &[(&str, String)]) -> std::process::Output {
    let mut c = Command::new("docker");
    c.args([
        "compose",
        "--env-file",
        &repo_file("deploy/.env"),
        "-f",
        &repo_file("deploy/test/docker-compose.yml"),
    ]);
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("docker runs")
}

#[test]
fn the_stack_collector_forwards_trees_intact() {
    if std::env::var("ALBEDO_OTEL_COMPOSE").as_deref() != Ok("1") {
        eprintln!("SKIPPED: set ALBEDO_OTEL_COMPOSE=1 (with a Docker engine) to run the compose collector test");
        return;
    }
    let out_dir = std::env::temp_dir().join(format!("albedo-otel-compose-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).unwrap();
    let (grpc, http) = (free_port(), free_port());
    let env = [
        ("TEST_OUT_DIR", out_dir.display().to_string()),
        ("TEST_GRPC_PORT", grpc.to_string()),
        ("TEST_HTTP_PORT", http.to_string()),
    ];
    // The real stack config must load in the pinned collector.
    let validate = compose(
        &[
            "run",
            "--rm",
            "--no-deps",
            "otel-collector",
            "validate",
            "--config=/etc/otelcol-contrib/stack.yaml",
        ],
        &env,
    );
    assert!(
        validate.status.success(),
        "deploy/otel-collector.yaml: {}",
        String::from_utf8_lossy(&validate.stderr)
    );
    let up = compose(&["up", "-d", "otel-collector"], &env);
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    wait_for_port(grpc, Duration::from_secs(60), "the collector");

    let mut expected = Vec::new();
    for fixture in [
        "examples/demo-session.ndjson",
        "tests/fixtures/out_of_order.ndjson",
    ] {
        let input = std::fs::read(repo_file(fixture)).unwrap();
        let rx = Receiver::start();
        assert!(run_binary(
            &["run", "--protocol", "grpc", "--endpoint", &rx.grpc_url()],
            &[],
            &input
        )
        .status
        .success());
        expected.extend(rx.spans());
        let out = run_binary(
            &[
                "run",
                "--protocol",
                "grpc",
                "--endpoint",
                &format!("http://127.0.0.1:{grpc}"),
            ],
            &[],
            &input,
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let file = out_dir.join("traces.jsonl");
    let deadline = Instant::now() + Duration::from_secs(30);
    let got = loop {
        let requests: Vec<Received> = std::fs::read_to_string(&file)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<ExportTraceServiceRequest>(l).ok())
            .map(|request| Received {
                via: "file",
                gzip: false,
                headers: Vec::new(),
                request,
            })
            .collect();
        let spans = flatten(&requests);
        if spans.len() >= expected.len() || Instant::now() > deadline {
            break spans;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let down = compose(&["down", "--volumes"], &env);
    assert!(down.status.success());
    assert_same_spans(&expected, &got);
    assert_eq!(
        render_trees(&got, &["session.id"]),
        render_trees(&expected, &["session.id"])
    );
}
