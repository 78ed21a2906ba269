//! Resolution of the settings the library and the binary share.

use std::collections::HashMap;

use super::*;
use crate::export::ResourceInfo;

fn resolve(o: &Overrides, vars: &[(&str, &str)]) -> Result<Settings, ConfigError> {
    resolve_with(o, vars, None)
}

pub(super) fn resolve_with(
    o: &Overrides,
    vars: &[(&str, &str)],
    file: Option<&ConfigFile>,
) -> Result<Settings, ConfigError> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Settings::resolve(o, &|k| map.get(k).cloned(), file)
}

pub(super) fn file(text: &str) -> ConfigFile {
    ConfigFile::parse(std::path::Path::new("/cfg/config.toml"), text).unwrap()
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
    assert_eq!(s.pipeline.max_concurrent_exports, 8);
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
        ("OTEL_BSP_MAX_CONCURRENT_EXPORTS", "3"),
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
    assert_eq!(p.max_concurrent_exports, 3);
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
        max_concurrent_exports: Some(2),
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
    assert_eq!(p.max_concurrent_exports, 2);
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
}

/// One bad value of our own costs that setting only (issue 37.13): with
/// `ALBEDO_OTEL_STOP_GRACE=1` (no unit) where an agent runs, the route still exports, the stop
/// grace takes its default, and the settings say which value was not read, for `doctor`.
#[test]
fn a_bad_value_of_our_own_costs_that_setting_only() {
    let s = resolve(
        &Overrides::default(),
        &[
            ("ALBEDO_OTEL_STOP_GRACE", "1"),
            ("ALBEDO_OTEL_IDLE_EXIT", "soon"),
            ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "7"),
        ],
    )
    .unwrap();
    assert_eq!(s.hooks.stop_grace, defaults::STOP_GRACE);
    assert_eq!(s.hooks.idle_exit, defaults::IDLE_EXIT);
    assert_eq!(s.pipeline.batch_size, 7, "the other settings are read");
    assert_eq!(s.unread.len(), 2, "{:?}", s.unread);
    assert!(
        s.unread[0].starts_with("ALBEDO_OTEL_IDLE_EXIT=\"soon\": expected a duration such as 15s")
            && s.unread[0].ends_with("the setting takes its default instead"),
        "{:?}",
        s.unread
    );
    assert!(
        s.unread[1].starts_with("ALBEDO_OTEL_STOP_GRACE=\"1\""),
        "{:?}",
        s.unread
    );
    // The file's key is named as the file says it.
    let f = ConfigFile::parse(
        std::path::Path::new("/cfg/config.toml"),
        "[hooks]\nstop_grace = \"1\"\n",
    )
    .unwrap();
    let s = resolve_with(&Overrides::default(), &[], Some(&f)).unwrap();
    assert_eq!(s.hooks.stop_grace, defaults::STOP_GRACE);
    assert!(s.unread[0].contains("stop_grace"), "{:?}", s.unread);
}

const FILE: &str = r#"
exporter = "otlp"
service_name = "from-file"
flush_timeout = 2500

[otlp]
endpoint = "http://file-collector:4318"
protocol = "http/json"
timeout = 1234
certificate = "/file/ca.pem"

[otlp.headers]
x-api-key = "file-key"
x-team = "file-team"

[bsp]
max_export_batch_size = 99

[content]
capture_tool_content = false

[content.redact]
ticket = "TICKET-[0-9]+"

[resource_attributes]
"deployment.environment" = "prod"

[hooks]
stop_grace = "3s"
"#;

/// Flags, then the environment, then the file, then defaults: each level over the next.
#[test]
fn each_level_overrides_the_next() {
    let f = file(FILE);
    let none = Overrides::default();
    // The file over the defaults.
    let s = resolve_with(&none, &[], Some(&f)).unwrap();
    let otlp = s.otlp.as_ref().unwrap();
    assert_eq!(otlp.endpoint, "http://file-collector:4318/v1/traces");
    assert_eq!(otlp.protocol, Protocol::HttpJson);
    assert_eq!(otlp.timeout, Duration::from_millis(1234));
    assert_eq!(otlp.tls.ca.as_deref(), Some("/file/ca.pem"));
    assert_eq!(
        otlp.headers,
        vec![
            ("x-api-key".into(), "file-key".into()),
            ("x-team".into(), "file-team".into())
        ]
    );
    assert_eq!(s.pipeline.batch_size, 99);
    assert_eq!(s.pipeline.flush_timeout, Duration::from_millis(2500));
    assert!(!s.pipeline.assemble.policy.capture_tool_content);
    assert_eq!(s.pipeline.resource.service_name(), "from-file");
    assert_eq!(
        resource_attr(&s.pipeline.resource, "deployment.environment").as_deref(),
        Some("prod")
    );
    assert_eq!(s.hooks.stop_grace, Duration::from_secs(3));
    assert_eq!(
        s.pipeline.assemble.policy.scrubber.scrub("see TICKET-42"),
        "see [REDACTED:ticket]"
    );
    // The environment over the file, whichever of a setting's variables it uses.
    let env = [
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://env:9/traces"),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=env-key"),
        ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "7"),
        ("OTEL_SERVICE_NAME", "from-env"),
        ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=dev"),
    ];
    let s = resolve_with(&none, &env, Some(&f)).unwrap();
    let otlp = s.otlp.as_ref().unwrap();
    assert_eq!(otlp.endpoint, "http://env:9/traces");
    assert_eq!(otlp.protocol, Protocol::Grpc);
    assert_eq!(
        otlp.timeout,
        Duration::from_millis(1234),
        "still the file's"
    );
    assert_eq!(
        otlp.headers,
        vec![("x-api-key".into(), "env-key".into())],
        "the endpoint is the environment's, so the file's headers (its keys) stay behind"
    );
    // With the file's endpoint, headers merge by name, the environment's winning.
    let env_headers_only = [("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=env-key")];
    let s2 = resolve_with(&none, &env_headers_only, Some(&f)).unwrap();
    assert_eq!(
        s2.otlp.as_ref().unwrap().headers,
        vec![
            ("x-team".into(), "file-team".into()),
            ("x-api-key".into(), "env-key".into())
        ],
        "headers merge by name, the environment's win"
    );
    assert_eq!(s.pipeline.batch_size, 7);
    assert_eq!(s.pipeline.resource.service_name(), "from-env");
    assert_eq!(
        resource_attr(&s.pipeline.resource, "deployment.environment").as_deref(),
        Some("dev")
    );
    // Flags over both.
    let flags = Overrides {
        otlp: OtlpOverrides {
            endpoint: Some("http://flag:1".into()),
            headers: vec![("x-api-key".into(), "flag-key".into())],
            ..OtlpOverrides::default()
        },
        batch_size: Some(3),
        ..Overrides::default()
    };
    let s = resolve_with(&flags, &env, Some(&f)).unwrap();
    let otlp = s.otlp.as_ref().unwrap();
    assert_eq!(otlp.endpoint, "http://flag:1");
    assert_eq!(otlp.headers.last().unwrap().1, "flag-key");
    assert_eq!(s.pipeline.batch_size, 3);

    // `config show` tells the same story.
    let map: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let shown = explain(&flags, &|k| map.get(k).cloned(), Some(&f));
    let source = |key: &str| {
        shown
            .iter()
            .find(|r| r.key == key)
            .map(|r| (r.value.clone(), r.source.clone()))
            .unwrap()
    };
    assert_eq!(
        source("bsp.max_export_batch_size"),
        ("3".into(), Source::Flag)
    );
    assert_eq!(
        source("otlp.protocol"),
        (
            "grpc".into(),
            Source::Env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        )
    );
    assert_eq!(
        source("otlp.timeout"),
        (
            "1234".into(),
            Source::File("/cfg/config.toml:9 `otlp.timeout`".into())
        )
    );
    assert_eq!(
        source("bsp.max_queue_size"),
        ("65536".into(), Source::Default)
    );
    let key = source("otlp.headers.x-api-key");
    assert!(
        !key.0.contains("flag-key") && key.0.starts_with("****"),
        "{key:?}"
    );
    assert!(
        shown
            .iter()
            .all(|r| !r.value.contains("file-key") && !r.value.contains("env-key")),
        "no header value is shown"
    );
}

#[test]
fn a_malformed_file_names_its_file_line_and_key() {
    let path = std::path::Path::new("/cfg/config.toml");
    let e =
        ConfigFile::parse(path, "[otlp]\nendpoint = \"http://x\"\ntimeout = [1]\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "/cfg/config.toml:3: key `otlp.timeout`: expected a string, a whole number or true/false, not array"
    );
    let e = ConfigFile::parse(path, "[otlp\nendpoint = 1\n").unwrap_err();
    assert!(e.to_string().starts_with("/cfg/config.toml:1: "), "{e}");
    // A value of the right type but the wrong meaning is refused when resolved, named too.
    let f = file("\n[otlp]\nprotocol = \"udp\"\n");
    let e = resolve_with(&Overrides::default(), &[], Some(&f)).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/cfg/config.toml:3 `otlp.protocol`=\"udp\": expected grpc"),
        "{e}"
    );
    // A header's value never shows in its error.
    let f = file("[otlp.headers]\n\"bad name\" = \"sekrit\"\n");
    let e = resolve_with(&Overrides::default(), &[], Some(&f))
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad name") && !e.contains("sekrit"), "{e}");
}

#[test]
fn unknown_keys_are_warned_about_by_name() {
    let f = file("endpoint = \"http://x\"\n[otlp]\nendpiont = \"http://y\"\n");
    assert_eq!(f.warnings.len(), 2, "{:?}", f.warnings);
    assert!(
        f.warnings[0].contains(":1: unknown key `endpoint`"),
        "{:?}",
        f.warnings
    );
    assert!(
        f.warnings[1].contains(":3: unknown key `otlp.endpiont`"),
        "{:?}",
        f.warnings
    );
}

/// `config set`, `unset` and `install` keep the user's comments, write 0600, and read back.
#[cfg(unix)]
#[test]
fn edits_keep_comments_and_make_the_file_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("albedo-otel-cfg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("albedo-otel/config.toml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let folder_mode = std::fs::metadata(path.parent().unwrap())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    std::fs::write(&path, "# mine\n[otlp]\nendpoint = \"http://a\" # the lab\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(ConfigFile::load(&path).unwrap().unwrap().warnings[0]
        .contains("can be read by other users"));
    edit::set(&path, "otlp.headers.x-api-key", "k1").unwrap();
    edit::set(&path, "bsp.max_export_batch_size", "64").unwrap();
    edit::set(&path, "otlp.endpoint", "http://b").unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("# mine"), "{text}");
    assert!(
        text.contains("max_export_batch_size = 64"),
        "a number stays a number: {text}"
    );
    let f = ConfigFile::load(&path).unwrap().unwrap();
    assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    assert_eq!(f.headers, vec![("x-api-key".into(), "k1".into())]);
    assert_eq!(
        f.get(env::OTEL_EXPORTER_OTLP_ENDPOINT).unwrap().1,
        "http://b"
    );
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(
        mode(path.parent().unwrap()),
        folder_mode,
        "a folder the user made keeps its mode; the file is what is private"
    );
    assert!(edit::unset(&path, "otlp.headers.x-api-key").unwrap());
    assert!(!edit::unset(&path, "otlp.headers.x-api-key").unwrap());
    assert!(ConfigFile::load(&path).unwrap().unwrap().headers.is_empty());
    assert!(edit::set(&path, "otlp.nonsense", "1")
        .unwrap_err()
        .to_string()
        .contains("unknown key"));
    std::fs::remove_dir_all(&dir).unwrap();
}
