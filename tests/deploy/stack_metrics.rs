//! The dashboards' PromQL run for real: albedo-otel → the collector on
//! deploy/otel-collector.yaml (its `span_metrics` connector, and albedo-otel's own GenAI
//! metrics through `delta_to_cumulative`) ← Prometheus scraping it with deploy/prometheus.yml,
//! only the target address and the scrape interval (1 s, not 15) moved. Every PromQL query in
//! dashboards/, with Grafana's variables substituted as tests/deploy/query_grammars.rs does (each
//! variable set to all, one and two of the values the data has), must return at least one
//! series carrying the labels its panel groups by; a panel without data fails, named.
//!
//! Needs `scripts/stack build` (Go); see tests/support/stack.rs.

// The grammar runner is query_grammars.rs's; only its query expansion is used here.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::grammars::lezer::{Grammar, Parse};
use super::grammars::queries::deploy_queries;
use crate::support::exporter::stream_seeded;
use crate::support::prometheus::Prometheus;
use crate::support::stack::{free_port, Collector, Jaeger, Tools};
use crate::support::team::{checkout, session, AGENTS, ALICE, BOB, MODELS};
use crate::support::traces::{send, write_input};
use crate::support::*;
use regex::Regex;

/// The labels a query's panel splits its series by: every `by (…)` but `le`, which
/// `histogram_quantile` consumes.
fn grouped_by(query: &str) -> BTreeSet<String> {
    let re = Regex::new(r"\bby\s*\(([^)]*)\)").unwrap();
    re.captures_iter(query)
        .flat_map(|c| {
            c[1].split(',')
                .map(|l| l.trim().to_string())
                .collect::<Vec<_>>()
        })
        .filter(|l| !l.is_empty() && l != "le")
        .collect()
}

/// Why `p` shows no data in Prometheus now, or `None` when it has a series with its labels.
fn no_data(prometheus: &Prometheus, p: &Parse) -> Option<String> {
    if p.selector {
        return match prometheus.series(&p.text) {
            Ok(series) if !series.is_empty() => None,
            Ok(_) => Some(format!(
                "{}: the variable lists nothing: match[]={}",
                p.origin, p.text
            )),
            Err(e) => Some(format!(
                "{}: Prometheus refused it: {e}\n    match[]={}",
                p.origin, p.text
            )),
        };
    }
    let result = match prometheus.query(&p.text) {
        Ok(r) => r,
        Err(e) => {
            return Some(format!(
                "{}: Prometheus refused it: {e}\n    {}",
                p.origin, p.text
            ))
        }
    };
    let labels = grouped_by(&p.text);
    let with_labels = result.iter().any(|s| {
        labels
            .iter()
            .all(|l| s["metric"][l].as_str().is_some_and(|v| !v.is_empty()))
    });
    if result.is_empty() {
        Some(format!("{}: no data\n    {}", p.origin, p.text))
    } else if !with_labels {
        Some(format!(
            "{}: no series has the labels {labels:?} it groups by: {result:?}\n    {}",
            p.origin, p.text
        ))
    } else {
        None
    }
}

/// Runs every query until each has data, or `timeout` passes; what still has none.
fn panels_without_data(
    prometheus: &Prometheus,
    parses: &[Parse],
    timeout: Duration,
) -> Vec<String> {
    let deadline = Instant::now() + timeout;
    loop {
        let failing: Vec<String> = parses
            .iter()
            .filter_map(|p| no_data(prometheus, p))
            .collect();
        // Rates need two scrapes (1 s apart here, 15 s in deploy/prometheus.yml) of series
        // that exist.
        if failing.is_empty() || Instant::now() >= deadline {
            return failing;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn every_dashboard_panel_has_data_from_the_collectors_span_metrics() {
    let Some(tools) = Tools::find() else { return };
    let dir = scratch("stack-metrics");
    let jaeger = Jaeger::start(&tools, &dir, "jaeger");
    let tempo = Receiver::start();
    let span_metrics = free_port();
    let collector = Collector::main(&tools, &jaeger, &tempo.grpc_url(), span_metrics, &dir);
    let prometheus = Prometheus::start(
        &tools,
        "deploy/prometheus.yml",
        &[
            ("otel-collector:8889", format!("127.0.0.1:{span_metrics}")),
            ("scrape_interval: 15s", "scrape_interval: 1s".to_string()),
        ],
        &dir,
    );

    // The example session, worked by two people in two repositories (the team dashboard's
    // users and repositories), and generated sessions outside any checkout.
    let (alice_repo, bob_repo) = (checkout(&ALICE), checkout(&BOB));
    let demo = session(&dir, &alice_repo, "7f3a");
    let bobs = session(&dir, &bob_repo, "b0b0");
    let (lines, _) = stream_seeded(20, 31);
    let generated = write_input(&dir, "generated", &lines);
    let endpoint = format!("http://127.0.0.1:{}", collector.grpc);
    send(&demo, "grpc", &endpoint);
    send(
        &bobs,
        "http/protobuf",
        &format!("http://127.0.0.1:{}", collector.http),
    );
    send(&generated, "grpc", &endpoint);
    let other_session: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    let other_session = other_session["session"].as_str().unwrap().to_string();

    // The values the data has, in an order where the first of each go together (Alice works
    // with both agents and both models in her repository).
    let (parses, problems) = deploy_queries(&[
        ("session", &["demo-7f3a", &other_session]),
        ("user", &[ALICE.user, BOB.user]),
        ("repository", &[ALICE.repository, BOB.repository]),
        ("agent", &AGENTS),
        ("model", &MODELS),
    ]);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let promql: Vec<Parse> = parses
        .into_iter()
        .filter(|p| p.grammar == Grammar::PromQL)
        .collect();
    let panels: BTreeSet<&str> = promql.iter().map(|p| p.origin.as_str()).collect();
    assert!(
        panels.len() >= 30,
        "only {} PromQL queries were found: {panels:?}",
        panels.len()
    );

    let started = Instant::now();
    let failing = panels_without_data(&prometheus, &promql, Duration::from_secs(60));
    assert!(
        failing.is_empty(),
        "{} of {} queries have no data in Prometheus:\n{}\n\nPrometheus' log ends:\n{}",
        failing.len(),
        promql.len(),
        failing.join("\n"),
        crate::support::stack::tail(&prometheus.proc.log(), 10)
    );
    eprintln!(
        "{} PromQL texts from {} panels and variables: each has data, {:.1} s after the last run",
        promql.len(),
        panels.len(),
        started.elapsed().as_secs_f64()
    );

    // The check can fail: a metric that does not exist and a label that does not, in copies of
    // a real panel's query, are each reported, naming the panel.
    let real = promql
        .iter()
        .find(|p| p.text.contains("sum by (gen_ai_tool_name)"))
        .unwrap();
    let broken = [
        (
            "a metric that does not exist",
            real.text.replace(
                "traces_span_metrics_calls_total",
                "traces_span_metrics_call_total",
            ),
        ),
        (
            "a label that does not exist",
            real.text
                .replace("sum by (gen_ai_tool_name)", "sum by (gen_ai_tool)"),
        ),
    ];
    for (what, text) in broken {
        let p = Parse {
            origin: format!("{} [{what}]", real.origin),
            text,
            ..real.clone()
        };
        let why = no_data(&prometheus, &p)
            .unwrap_or_else(|| panic!("{what} was not reported: {}", p.text));
        assert!(
            why.starts_with(&p.origin),
            "the report does not name the panel: {why}"
        );
        eprintln!("reported as it should be: {why}");
    }
}
