//! albedo-otel's GenAI metrics, totalled by Prometheus, against the spans they were counted
//! from: tokens exactly, cost to the cent, person by person. The exporter is short-lived and
//! sends deltas, so runs one after another must add up; each route is taken with two runs of
//! the same person in the same repository (one series, two processes), and one of another:
//! - albedo-otel → the collector on deploy/otel-collector.yaml (`delta_to_cumulative`, then
//!   its prometheus exporter) ← Prometheus scraping it with deploy/prometheus.yml, over gRPC
//!   and over HTTP;
//! - albedo-otel → Prometheus's own OTLP receiver, no collector, with the flags
//!   deploy/docker-compose.yml gives it (traces then go elsewhere, here to a test receiver).
//!
//! Through the collector, the team dashboard's own "Cost by user" and "Tokens by user" queries
//! (`increase` over the range) must give the same totals: each series' first value counts,
//! which takes the zero sample Prometheus adds at a counter's start
//! (`created-timestamp-zero-ingestion`, from the exporter's OpenMetrics `_created`).
//!
//! Needs `scripts/stack build` (Go); see tests/support/stack.rs.

use std::collections::BTreeMap;

use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::prometheus::Prometheus;
use crate::support::stack::{free_port, Collector, Jaeger, Tools};
use crate::support::team::{checkout, session, span_totals, wait_for_totals, Totals, ALICE, BOB};
use crate::support::*;

/// Every run's metrics are flushed when it exits; this is for a scrape (every second here) and
/// Prometheus's query to see them.
const SEEN_WITHIN: Duration = Duration::from_secs(30);

/// Replays `input` over `protocol` to `endpoint`, metrics to `metrics` if given; every span
/// and metric must be delivered (a metrics export that fails is a warning, so that too).
fn replay(input: &Path, protocol: &str, endpoint: &str, metrics: Option<&str>) {
    let input_s = input.display().to_string();
    let args = [
        "replay",
        &input_s,
        "--metrics",
        "--no-spool",
        "--protocol",
        protocol,
        "--endpoint",
        endpoint,
    ];
    let env: Vec<(&str, &str)> = metrics
        .map(|m| ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", m))
        .into_iter()
        .collect();
    let run = run_binary(&args, &env, b"");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "replay to {endpoint} over {protocol}:\n{stderr}"
    );
    assert!(
        !stderr.contains("WARN"),
        "replay to {endpoint} over {protocol} warned:\n{stderr}"
    );
}

/// Prometheus on deploy/prometheus.yml, scraping `metrics` (the collector's exporter, if any)
/// every second instead of every 15.
fn prometheus(tools: &Tools, metrics: u16, dir: &Path) -> Prometheus {
    Prometheus::start(
        tools,
        "deploy/prometheus.yml",
        &[
            ("otel-collector:8889", format!("127.0.0.1:{metrics}")),
            ("scrape_interval: 15s", "scrape_interval: 1s".to_string()),
        ],
        dir,
    )
}

/// Runs `runs` one after another, each `(input, protocol)` sent by `send`, and after each
/// waits until Prometheus's totals are those of the runs so far: the second run of a series
/// must add to the first's total, not replace it.
fn run_and_check(
    prometheus: &Prometheus,
    runs: &[(&Path, &str)],
    send: impl Fn(&Path, &str),
    route: &str,
) -> BTreeMap<String, Totals> {
    let mut inputs = Vec::new();
    let mut expected = BTreeMap::new();
    for (i, (input, protocol)) in runs.iter().enumerate() {
        send(input, protocol);
        inputs.push(*input);
        expected = span_totals(&inputs);
        if let Err(e) = wait_for_totals(prometheus, &expected, SEEN_WITHIN) {
            panic!(
                "{route}, after run {} of {} ({protocol}): {e}\n\nPrometheus' log ends:\n{}",
                i + 1,
                runs.len(),
                crate::support::stack::tail(&prometheus.proc.log(), 10)
            );
        }
    }
    expected
}

/// Two people, two repositories: Alice's two runs (one series each, two processes), Bob's one.
fn team_runs(dir: &Path, alice_repo: &Path, bob_repo: &Path) -> [std::path::PathBuf; 3] {
    [
        session(dir, alice_repo, "a1"),
        session(dir, alice_repo, "a2"),
        session(dir, bob_repo, "b1"),
    ]
}

fn assert_adds_up(totals: &BTreeMap<String, Totals>) {
    // The check means something: two runs of the same session cost twice what one does.
    let (alice, bob) = (&totals[ALICE.user], &totals[BOB.user]);
    assert!(bob.input > 0.0 && bob.cost > 0.0, "{totals:?}");
    assert_eq!(alice.input, 2.0 * bob.input, "{totals:?}");
    assert!((alice.cost - 2.0 * bob.cost).abs() < 1e-9, "{totals:?}");
}

/// A panel's query of dashboards/albedo-team.json (target A), as Grafana sends it with every
/// variable at "All" and a range of an hour.
fn team_panel_query(title: &str) -> String {
    let text = std::fs::read_to_string(repo_file("dashboards/albedo-team.json")).unwrap();
    let d: Value = serde_json::from_str(&text).unwrap();
    let panel = d["panels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["title"] == title)
        .unwrap_or_else(|| panic!("dashboards/albedo-team.json has no panel {title:?}"));
    let mut q = panel["targets"][0]["expr"].as_str().unwrap().to_string();
    for var in ["$user", "$repository", "$agent", "$model"] {
        q = q.replace(var, ".*");
    }
    q.replace("$__range", "1h")
}

/// The team dashboard's per-user cost and tokens, evaluated at the last scrape (so that
/// `increase` has nothing to extrapolate past it), as totals per user.
fn dashboard_totals(prometheus: &Prometheus) -> BTreeMap<String, Totals> {
    let last = prometheus
        .query("max(timestamp(albedo_usage_cost_USD_total))")
        .unwrap();
    let at = last[0]["value"][1].as_str().unwrap().to_string();
    let number = |s: &Value| s["value"][1].as_str().unwrap().parse::<f64>().unwrap();
    let user = |s: &Value| s["metric"]["user_id"].as_str().unwrap_or("").to_string();
    let mut out: BTreeMap<String, Totals> = BTreeMap::new();
    for s in prometheus
        .query_at(&team_panel_query("Cost by user"), &at)
        .unwrap()
    {
        out.entry(user(&s)).or_default().cost = number(&s);
    }
    for s in prometheus
        .query_at(&team_panel_query("Tokens by user"), &at)
        .unwrap()
    {
        let t = out.entry(user(&s)).or_default();
        match s["metric"]["gen_ai_token_type"].as_str() {
            Some("input") => t.input = number(&s),
            Some("output") => t.output = number(&s),
            other => panic!("a token type {other:?}: {s}"),
        }
    }
    out
}

#[test]
fn genai_totals_through_the_collector_add_up_over_grpc_and_http() {
    let Some(tools) = Tools::find() else { return };
    let started = Instant::now();
    let dir = scratch("stack-genai");
    let jaeger = Jaeger::start(&tools, &dir, "jaeger");
    let tempo = Receiver::start();
    let metrics = free_port();
    let collector = Collector::main(&tools, &jaeger, &tempo.grpc_url(), metrics, &dir);
    let prometheus = prometheus(&tools, metrics, &dir);

    let (alice_repo, bob_repo) = (checkout(&ALICE), checkout(&BOB));
    let [a1, a2, b1] = team_runs(&dir, &alice_repo, &bob_repo);
    let grpc = format!("http://127.0.0.1:{}", collector.grpc);
    let http = format!("http://127.0.0.1:{}", collector.http);
    let totals = run_and_check(
        &prometheus,
        &[(&a1, "grpc"), (&a2, "http/protobuf"), (&b1, "grpc")],
        |input, protocol| {
            let endpoint = if protocol == "grpc" { &grpc } else { &http };
            replay(input, protocol, endpoint, None)
        },
        "through the collector",
    );
    assert_adds_up(&totals);
    let shown = dashboard_totals(&prometheus);
    let agree = shown.len() == totals.len()
        && totals
            .iter()
            .all(|(user, t)| shown.get(user).is_some_and(|s| s.agrees(t)));
    assert!(
        agree,
        "the team dashboard shows\n  {shown:?}\nand the spans say\n  {totals:?}"
    );
    eprintln!(
        "through the collector: {totals:?}, in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn genai_totals_through_prometheus_own_otlp_receiver_add_up() {
    let Some(tools) = Tools::find() else { return };
    let started = Instant::now();
    let dir = scratch("stack-genai-otlp");
    // Nothing to scrape: the collector's target is a port nothing listens on.
    let prometheus = prometheus(&tools, free_port(), &dir);
    // Prometheus takes OTLP over HTTP only, and the metrics go by the traces' protocol.
    let traces = Receiver::start();

    let (alice_repo, bob_repo) = (checkout(&ALICE), checkout(&BOB));
    let [a1, a2, b1] = team_runs(&dir, &alice_repo, &bob_repo);
    let otlp = prometheus.otlp_metrics_url();
    let totals = run_and_check(
        &prometheus,
        &[
            (&a1, "http/protobuf"),
            (&a2, "http/protobuf"),
            (&b1, "http/protobuf"),
        ],
        |input, protocol| replay(input, protocol, &traces.http_url(), Some(&otlp)),
        "through Prometheus's OTLP receiver",
    );
    assert_adds_up(&totals);
    assert!(
        traces.spans().len() >= 3 * 21,
        "every span went to the traces' receiver"
    );
    eprintln!(
        "through Prometheus's OTLP receiver: {totals:?}, in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
