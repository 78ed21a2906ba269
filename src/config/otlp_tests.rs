//! OTLP settings: the SDKs' precedence, and errors that never show a header value.

use crate::config::*;
use std::collections::HashMap;

fn resolve(o: &OtlpOverrides, vars: &[(&str, &str)]) -> Result<OtlpSettings, ConfigError> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    resolve_otlp(o, &|k| map.get(k).cloned())
}

#[test]
fn defaults_follow_the_spec() {
    let s = resolve(&OtlpOverrides::default(), &[]).unwrap();
    assert_eq!(s.protocol, Protocol::HttpProtobuf);
    assert_eq!(s.endpoint, "http://localhost:4318/v1/traces");
    assert_eq!(s.timeout, Duration::from_secs(10));
    let s = resolve(
        &OtlpOverrides::default(),
        &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
    )
    .unwrap();
    assert_eq!(s.endpoint, "http://localhost:4317");
}

#[test]
fn code_then_traces_then_generic_then_default() {
    let vars = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://generic:4318/base/"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "100"),
        ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "200"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "a=1,b=x%20y"),
        ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "B=2"),
        ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
    ];
    let s = resolve(&OtlpOverrides::default(), &vars).unwrap();
    assert_eq!(s.endpoint, "http://generic:4318/base/v1/traces");
    assert_eq!(s.timeout, Duration::from_millis(200));
    assert_eq!(
        s.headers,
        vec![("a".into(), "1".into()), ("B".into(), "2".into())]
    );
    assert_eq!(s.compression, Compression::Gzip);

    let mut vars2 = vars.to_vec();
    vars2.push((
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "http://traces:9999/custom",
    ));
    let s = resolve(&OtlpOverrides::default(), &vars2).unwrap();
    assert_eq!(s.endpoint, "http://traces:9999/custom", "used as is");

    let o = OtlpOverrides {
        endpoint: Some("http://cli:1234".into()),
        timeout: Some(Duration::from_millis(5)),
        headers: vec![("a".into(), "cli".into())],
        ..OtlpOverrides::default()
    };
    let s = resolve(&o, &vars2).unwrap();
    assert_eq!(s.endpoint, "http://cli:1234/v1/traces");
    assert_eq!(s.timeout, Duration::from_millis(5));
    assert_eq!(s.headers[1], ("a".into(), "cli".into()));
}

#[test]
fn errors_name_the_variable_and_never_a_header_value() {
    let e = resolve(
        &OtlpOverrides::default(),
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4317")],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("OTEL_EXPORTER_OTLP_ENDPOINT=\"localhost:4317\""),
        "{e}"
    );
    let e = resolve(
        &OtlpOverrides::default(),
        &[("OTEL_EXPORTER_OTLP_PROTOCOL", "udp")],
    )
    .unwrap_err();
    assert!(e
        .to_string()
        .contains("expected grpc, http/protobuf or http/json"));
    let e = resolve(
        &OtlpOverrides::default(),
        &[("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=sekrit\nvalue")],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("x-api-key") && !e.contains("sekrit"), "{e}");
    let settings = resolve(
        &OtlpOverrides::default(),
        &[(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "authorization=Bearer%20sekrit",
        )],
    )
    .unwrap();
    assert!(!format!("{settings:?}").contains("sekrit"));
}

#[test]
fn warns_about_the_other_protocols_port() {
    let s = resolve(
        &OtlpOverrides::default(),
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4317")],
    )
    .unwrap();
    assert!(s
        .port_hint()
        .unwrap()
        .contains("OTEL_EXPORTER_OTLP_PROTOCOL=grpc"));
}
