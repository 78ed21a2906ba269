//! Resolution of the settings the library and the binary share.

use std::collections::HashMap;

use super::*;

fn resolve(o: &Overrides, vars: &[(&str, &str)]) -> Result<Settings, ConfigError> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Settings::resolve(o, &|k| map.get(k).cloned())
}

fn resource_attr(r: &ResourceInfo, key: &str) -> Option<String> {
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    r.resource
        .attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
            Value::StringValue(s) => Some(s.clone()),
            _ => None,
        })
}

#[test]
fn defaults_without_anything_set() {
    let s = resolve(&Overrides::default(), &[]).unwrap();
    assert_eq!(s.exporter, ExporterKind::Otlp);
    assert_eq!(s.pipeline.batch_size, defaults::BATCH_SIZE);
    assert_eq!(s.pipeline.batch_delay, defaults::BATCH_DELAY);
    assert!(s.pipeline.assemble.policy.capture_tool_content);
    assert!(!s.pipeline.assemble.policy.capture_messages);
    assert!(s.pipeline.spool.is_none(), "no HOME, no spool");
    assert_eq!(s.hooks.dir, None);
    assert_eq!(s.pipeline.resource.service_name(), "albedo");
}

/// What `PipelineConfig::default()` never reads, the library now resolves as the CLI does.
#[test]
fn the_environment_reaches_every_setting_and_flags_win_over_it() {
    let vars = [
        ("HOME", "/home/u"),
        ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "64"),
        ("OTEL_BSP_SCHEDULE_DELAY", "250"),
        ("OTEL_BSP_MAX_QUEUE_SIZE", "99"),
        ("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "100"),
        ("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "200"),
        ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true"),
        ("ALBEDO_OTEL_CAPTURE_TOOL_CONTENT", "false"),
        ("ALBEDO_OTEL_SPOOL_MAX_BYTES", "1000"),
        ("ALBEDO_OTEL_FLUSH_TIMEOUT", "1500"),
        ("ALBEDO_OTEL_STOP_GRACE", "2s"),
        ("OTEL_SERVICE_NAME", "svc"),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            "service.name=ignored,team=a%20b",
        ),
        ("OTEL_TRACES_EXPORTER", "console"),
    ];
    let s = resolve(&Overrides::default(), &vars).unwrap();
    assert_eq!(s.exporter, ExporterKind::Console);
    assert!(s.otlp.is_none());
    let p = &s.pipeline;
    assert_eq!(p.batch_size, 64);
    assert_eq!(p.batch_delay, Duration::from_millis(250));
    assert_eq!(p.queue_size, 99);
    assert_eq!(p.flush_timeout, Duration::from_millis(1500));
    assert_eq!(
        p.assemble.policy.max_value_len, 200,
        "the span-specific limit first"
    );
    assert!(p.assemble.policy.capture_messages);
    assert!(!p.assemble.policy.capture_tool_content);
    let spool = p.spool.as_ref().unwrap();
    assert_eq!(
        spool.root,
        PathBuf::from("/home/u/.local/state/albedo-otel/spool")
    );
    assert_eq!(spool.max_bytes, 1000);
    assert_eq!(
        s.hooks.dir,
        Some(PathBuf::from("/home/u/.local/state/albedo-otel/hooks"))
    );
    assert_eq!(s.hooks.stop_grace, Duration::from_secs(2));
    assert_eq!(p.resource.service_name(), "svc");
    assert_eq!(resource_attr(&p.resource, "team").as_deref(), Some("a b"));

    let flags = Overrides {
        exporter: Some(ExporterKind::Otlp),
        batch_size: Some(7),
        batch_delay: Some(Duration::from_millis(5)),
        capture_messages: Some(false),
        capture_tool_content: Some(true),
        max_attribute_length: Some(33),
        spool: Some(false),
        service_name: Some("flag".into()),
        stop_grace: Some(Duration::from_millis(1)),
        ..Overrides::default()
    };
    let s = resolve(&flags, &vars).unwrap();
    assert_eq!(s.exporter, ExporterKind::Otlp);
    assert!(s.otlp.is_some());
    let p = &s.pipeline;
    assert_eq!((p.batch_size, p.batch_delay), (7, Duration::from_millis(5)));
    assert!(!p.assemble.policy.capture_messages);
    assert!(p.assemble.policy.capture_tool_content);
    assert_eq!(p.assemble.policy.max_value_len, 33);
    assert!(p.spool.is_none());
    assert_eq!(p.resource.service_name(), "flag");
    assert_eq!(s.hooks.stop_grace, Duration::from_millis(1));
}

#[test]
fn a_bad_value_names_its_variable() {
    let e = resolve(
        &Overrides::default(),
        &[("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "lots")],
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "OTEL_BSP_MAX_EXPORT_BATCH_SIZE=\"lots\": expected a whole number above 0"
    );
    let e = resolve(&Overrides::default(), &[("OTEL_TRACES_EXPORTER", "zipkin")]).unwrap_err();
    assert!(
        e.to_string().starts_with("OTEL_TRACES_EXPORTER=\"zipkin\""),
        "{e}"
    );
    let e = resolve(&Overrides::default(), &[("ALBEDO_OTEL_IDLE_EXIT", "soon")]).unwrap_err();
    assert!(
        e.to_string().starts_with("ALBEDO_OTEL_IDLE_EXIT=\"soon\""),
        "{e}"
    );
}
