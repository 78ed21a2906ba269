//! Where metrics go and what they carry: the file's headers (its API keys) only to the file's
//! own metrics endpoint, metrics' own variables honoured, the traces' own never.

use std::collections::HashMap;

use super::tests::{file, resolve_with};
use super::*;

fn metrics(s: &Settings) -> &OtlpSettings {
    &s.pipeline.metrics.as_ref().expect("metrics are on").otlp
}

fn names(h: &[(String, String)]) -> Vec<(&str, &str)> {
    h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

const KEYED: &str =
    "[otlp]\nendpoint = \"http://file-collector:4318\"\n[otlp.headers]\nx-api-key = \"file-key\"\n";

#[test]
fn the_file_s_key_goes_with_metrics_to_the_file_s_collector_only() {
    let f = file(KEYED);
    let none = Overrides::default();
    // Derived from the file's endpoint: the file's collector, the file's key.
    let s = resolve_with(&none, &[], Some(&f)).unwrap();
    assert_eq!(
        metrics(&s).endpoint,
        "http://file-collector:4318/v1/metrics"
    );
    assert_eq!(names(&metrics(&s).headers), [("x-api-key", "file-key")]);

    // Another host, named by the environment: the key stays behind.
    let elsewhere = [(
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        "http://elsewhere:4318/v1/metrics",
    )];
    let s = resolve_with(&none, &elsewhere, Some(&f)).unwrap();
    assert_eq!(metrics(&s).endpoint, "http://elsewhere:4318/v1/metrics");
    assert!(
        metrics(&s).headers.is_empty(),
        "the file's key went to a metrics host the environment named: {:?}",
        names(&metrics(&s).headers)
    );
    assert_eq!(
        names(&s.otlp.as_ref().unwrap().headers),
        [("x-api-key", "file-key")],
        "traces still go to the file's collector with its key"
    );

    // The same host the file names for metrics: the file's own, so its key goes.
    let f2 = file(&KEYED.replace(
        "endpoint = \"http://file-collector:4318\"\n",
        "endpoint = \"http://file-collector:4318\"\nmetrics_endpoint = \"http://elsewhere:4318/v1/metrics\"\n",
    ));
    let s = resolve_with(&none, &elsewhere, Some(&f2)).unwrap();
    assert_eq!(names(&metrics(&s).headers), [("x-api-key", "file-key")]);
    let s = resolve_with(&none, &[], Some(&f2)).unwrap();
    assert_eq!(metrics(&s).endpoint, "http://elsewhere:4318/v1/metrics");
    assert_eq!(names(&metrics(&s).headers), [("x-api-key", "file-key")]);

    // Traces sent elsewhere by a flag: metrics follow them there, without the file's key.
    let flag = Overrides {
        otlp: OtlpOverrides {
            endpoint: Some("http://flag-host:4318".into()),
            ..OtlpOverrides::default()
        },
        ..Overrides::default()
    };
    let s = resolve_with(&flag, &[], Some(&f)).unwrap();
    assert_eq!(metrics(&s).endpoint, "http://flag-host:4318/v1/metrics");
    assert!(metrics(&s).headers.is_empty());
}

#[test]
fn metrics_take_their_own_variables_and_never_the_traces_own() {
    let vars = [
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-shared=all"),
        ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-traces-key=t"),
        ("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "x-metrics-key=m"),
        ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "30000"),
        ("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "2000"),
        ("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip"),
    ];
    let s = resolve_with(&Overrides::default(), &vars, None).unwrap();
    let traces = s.otlp.as_ref().unwrap();
    assert_eq!(
        names(&traces.headers),
        [("x-shared", "all"), ("x-traces-key", "t")]
    );
    assert_eq!(traces.timeout, Duration::from_secs(30));
    assert_eq!(traces.compression, Compression::Gzip);
    let m = metrics(&s);
    assert_eq!(
        names(&m.headers),
        [("x-shared", "all"), ("x-metrics-key", "m")],
        "the traces' own headers never reach metrics"
    );
    assert_eq!(m.timeout, Duration::from_secs(2));
    assert_eq!(m.compression, Compression::None);
}

#[test]
fn config_show_says_the_file_s_key_is_not_sent_with_metrics() {
    let f = file(KEYED);
    let map: HashMap<&str, &str> = [(
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        "http://elsewhere:4318/v1/metrics",
    )]
    .into_iter()
    .collect();
    let shown = explain(
        &Overrides::default(),
        &|k| map.get(k).map(|v| v.to_string()),
        Some(&f),
    );
    let line = shown
        .iter()
        .find(|s| s.value.contains("NOT SENT with metrics"))
        .expect("a line says the key stays behind");
    assert_eq!(line.key, "otlp.headers.x-api-key");
    assert!(line
        .value
        .contains("env OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"));
    assert!(!line.value.contains("file-key"), "masked: {}", line.value);
}

#[test]
fn config_show_masks_a_password_in_an_endpoint() {
    let map: HashMap<&str, &str> = [(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "https://tenant:glc_SECRET@otlp.example",
    )]
    .into_iter()
    .collect();
    let shown = explain(
        &Overrides::default(),
        &|k| map.get(k).map(|v| v.to_string()),
        None,
    );
    let endpoint = shown.iter().find(|s| s.key == "otlp.endpoint").unwrap();
    assert_eq!(endpoint.value, "https://tenant:******@otlp.example");
    assert!(shown.iter().all(|s| !s.value.contains("glc_SECRET")));
}
