//! albedo-otel → the OpenTelemetry Collector running deploy/otel-collector.yaml → Jaeger v2
//! running deploy/jaeger.yaml, over gRPC and over HTTP. Every span read back through Jaeger's
//! API is compared with the span the exporter assembled: ids, parent, name, kind, start and
//! end to the nanosecond, status and message, attributes with their types, resource and scope.
//! The README's Jaeger searches are run as written. The collector's Tempo leg goes to a test
//! receiver, which must get every span too.
//!
//! Needs `scripts/stack build` (Go); see tests/support/stack.rs.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::support::otlp_json::{by_key, differences, JsonSpan};
use crate::support::stack::{free_port, Collector, Jaeger, Tools};
use crate::support::traces::{assembled, read_back, send, traces_of, write_input};
use crate::support::*;
use albedo_otel::testing::{generate, GenConfig};

/// 120 generated sessions, a day after the example session, so that the README's search
/// window holds the example alone.
fn generated(seed: u64) -> Vec<String> {
    generate(&GenConfig {
        sessions: 120,
        turns_per_session: 2,
        seed,
        start_ms: 1_796_086_400_000,
        ..GenConfig::default()
    })
    .0
}

fn report(problems: &[String]) -> String {
    let shown: Vec<&String> = problems.iter().take(40).collect();
    format!(
        "{} differences, the first {}:\n{}",
        problems.len(),
        shown.len(),
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    )
}

#[test]
fn every_span_reaches_jaeger_as_the_exporter_assembled_it_over_grpc_and_http() {
    let Some(tools) = Tools::find() else { return };
    let dir = scratch("stack-traces");
    let jaeger = Jaeger::start(&tools, &dir, "jaeger");
    let tempo = Receiver::start();
    let collector = Collector::main(&tools, &jaeger, &tempo.grpc_url(), free_port(), &dir);

    let demo = dir.join("demo.ndjson");
    std::fs::write(&demo, demo_session()).unwrap();
    let over_grpc = write_input(&dir, "generated-grpc", &generated(21));
    let over_http = write_input(&dir, "generated-http", &generated(22));
    let inputs = [
        (
            &demo,
            "grpc",
            format!("http://127.0.0.1:{}", collector.grpc),
        ),
        (
            &over_grpc,
            "grpc",
            format!("http://127.0.0.1:{}", collector.grpc),
        ),
        (
            &over_http,
            "http/protobuf",
            format!("http://127.0.0.1:{}", collector.http),
        ),
    ];
    let mut expected: BTreeMap<String, JsonSpan> = BTreeMap::new();
    for (input, _, _) in &inputs {
        let spans = assembled(input);
        let n = spans.len();
        expected.extend(by_key(spans));
        assert!(n > 0, "{} assembled nothing", input.display());
    }
    let traces = traces_of(&expected);
    assert!(
        expected.len() >= 3000,
        "only {} spans: the test wants several thousand",
        expected.len()
    );
    for (input, protocol, endpoint) in &inputs {
        send(input, protocol, endpoint);
    }

    let got = read_back(
        &jaeger,
        &traces,
        expected.len() as u64,
        Duration::from_secs(90),
    );
    let problems = differences(&expected, &got);
    assert!(
        problems.is_empty(),
        "Jaeger does not show what albedo-otel sent: {}\n\nthe collector's log ends:\n{}",
        report(&problems),
        crate::support::stack::tail(&collector.proc.log(), 10)
    );

    // The comparison can fail: a span dropped, and an int attribute turned into a string, are
    // each reported, naming the span and the field.
    let mut tampered = got.clone();
    let dropped = tampered.keys().next().unwrap().clone();
    tampered.remove(&dropped);
    let (changed, span) = tampered
        .iter_mut()
        .map(|(k, s)| (k.clone(), s))
        .find(|(_, s)| s.attributes.contains_key("gen_ai.usage.input_tokens"))
        .unwrap();
    let tokens = span.attributes["gen_ai.usage.input_tokens"]["int"].to_string();
    span.attributes.insert(
        "gen_ai.usage.input_tokens".into(),
        serde_json::json!({"string": tokens}),
    );
    let found = differences(&expected, &tampered);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0..]
            .iter()
            .any(|d| d.starts_with(&dropped) && d.ends_with("missing")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|d| d.starts_with(&changed) && d.contains("attribute gen_ai.usage.input_tokens")),
        "{found:?}"
    );

    // The same spans went to Tempo's exporter.
    let at_tempo: Vec<String> = tempo
        .wait_for_spans(expected.len(), Duration::from_secs(30))
        .iter()
        .map(|s| format!("{}/{}", hex(&s.span.trace_id), hex(&s.span.span_id)))
        .collect();
    let mut at_tempo = at_tempo;
    at_tempo.sort();
    let sent: Vec<String> = expected.keys().cloned().collect();
    assert_eq!(
        at_tempo, sent,
        "the collector's Tempo leg did not get every span once"
    );

    readme_searches_find_what_the_readme_says(&jaeger, &expected);
    eprintln!(
        "{} spans in {} traces, over gRPC and HTTP, read back from Jaeger unchanged",
        expected.len(),
        traces.len()
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// README, "View traces": service `albedo`; the tag `session.id=demo-7f3a` shows the whole
/// demo session, sub-agent included; `gen_ai.conversation.id=demo-7f3a-helper` the sub-agent.
fn readme_searches_find_what_the_readme_says(
    jaeger: &Jaeger,
    expected: &BTreeMap<String, JsonSpan>,
) {
    let readme = std::fs::read_to_string(repo_file("README.md")).unwrap();
    for said in [
        "service=albedo",
        "session.id=demo-7f3a",
        "gen_ai.conversation.id=demo-7f3a-helper",
    ] {
        assert!(
            readme.contains(said),
            "the README no longer says {said}: change this test with it"
        );
    }
    // The search the README links to, its window and limit as written.
    let url = readme
        .split("<http://localhost:16686/search?")
        .nth(1)
        .and_then(|rest| rest.split('>').next())
        .expect("the README links to a Jaeger search");
    let linked: Vec<(&str, String)> = url
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .filter(|(k, _)| ["service", "start", "end", "limit"].contains(k))
        .map(|(k, v)| (k, v.to_string()))
        .collect();
    let param = |k: &str| linked.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
    let (start_us, end_us): (u64, u64) = (
        param("start").expect("the link's start").parse().unwrap(),
        param("end").expect("the link's end").parse().unwrap(),
    );
    assert_eq!(param("service").as_deref(), Some("albedo"));
    let window = |extra: Vec<(&'static str, String)>| {
        let mut q: Vec<(&str, String)> = linked.clone();
        q.extend(extra);
        q
    };
    let demo: Vec<&JsonSpan> = expected
        .values()
        .filter(|s| s.attr_str("session.id") == Some("demo-7f3a"))
        .collect();
    assert!(
        demo.iter()
            .all(|s| s.start_ns / 1000 >= start_us && s.end_ns / 1000 <= end_us),
        "the README's link does not cover the example session's time"
    );
    let whole_traces_with = |key: &str, value: &str| -> BTreeMap<String, Vec<String>> {
        let traces: BTreeSet<&String> = expected
            .values()
            .filter(|s| s.attr_str(key) == Some(value))
            .map(|s| &s.trace)
            .collect();
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for s in expected.values().filter(|s| traces.contains(&s.trace)) {
            out.entry(s.trace.clone()).or_default().push(s.span.clone());
        }
        out.values_mut().for_each(|v| v.sort());
        out
    };
    let sorted = |mut m: BTreeMap<String, Vec<String>>| {
        m.values_mut().for_each(|v| v.sort());
        m
    };

    // The generated sessions are dated a day later: in the link's window is the example alone.
    let by_service = sorted(jaeger.search(&window(vec![])));
    assert_eq!(
        by_service,
        whole_traces_with("session.id", "demo-7f3a"),
        "the README's link does not show the example's traces, whole, and only them"
    );
    for (key, value) in [
        ("session.id", "demo-7f3a"),
        ("gen_ai.conversation.id", "demo-7f3a-helper"),
    ] {
        let found = sorted(jaeger.search(&window(vec![(
            "tags",
            format!("{{\"{key}\":\"{value}\"}}"),
        )])));
        let want = whole_traces_with(key, value);
        assert!(!want.is_empty(), "the demo has no span with {key}={value}");
        assert_eq!(
            found, want,
            "the README's search {key}={value} shows other traces or spans"
        );
    }
}
