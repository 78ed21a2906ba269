//! What `albedo-otel config show` prints (every setting, its value and where it came from, secrets
//! masked) and what `albedo-otel install` writes (the settings in force that did not come from
//! the file or a default).

use super::env::{self, same_as, OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TRACES_HEADERS};
use super::file::{ConfigFile, HEADERS, KEYS, REDACT, RESOURCE_ATTRIBUTES};
use super::layers::{Layers, Source};
use super::{defaults, ExporterKind, Overrides};

/// One setting as `config show` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// The file key (`otlp.endpoint`, `otlp.headers.x-api-key`).
    pub key: String,
    /// The variable it stands for, if one.
    pub var: Option<&'static str>,
    /// The value; a header's is masked.
    pub value: String,
    pub source: Source,
}

fn ms(d: std::time::Duration) -> String {
    d.as_millis().to_string()
}

/// A flag's value as the text its variable would hold.
fn flag_text(o: &Overrides, var: &str) -> Option<String> {
    use env::*;
    match var {
        OTEL_TRACES_EXPORTER => o.exporter.as_ref().map(|k| match k {
            ExporterKind::Otlp => "otlp".into(),
            ExporterKind::Console => "console".into(),
            ExporterKind::File(_) => "file".into(),
        }),
        OTEL_SERVICE_NAME => o.service_name.clone(),
        ALBEDO_OTEL_FLUSH_TIMEOUT => o.flush_timeout.map(ms),
        OTEL_EXPORTER_OTLP_ENDPOINT => o.otlp.endpoint.clone(),
        OTEL_EXPORTER_OTLP_PROTOCOL => o.otlp.protocol.map(|p| p.as_str().into()),
        OTEL_EXPORTER_OTLP_TIMEOUT => o.otlp.timeout.map(ms),
        OTEL_EXPORTER_OTLP_COMPRESSION => o.otlp.compression.map(|c| c.as_str().into()),
        OTEL_BSP_SCHEDULE_DELAY => o.batch_delay.map(ms),
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE => o.batch_size.map(|n| n.to_string()),
        OTEL_BSP_MAX_CONCURRENT_EXPORTS => o.max_concurrent_exports.map(|n| n.to_string()),
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT => {
            o.capture_messages.map(|b| b.to_string())
        }
        ALBEDO_OTEL_CAPTURE_TOOL_CONTENT => o.capture_tool_content.map(|b| b.to_string()),
        OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT => o.max_attribute_length.map(|n| n.to_string()),
        ALBEDO_OTEL_SPOOL => o.spool.map(|b| b.to_string()),
        ALBEDO_OTEL_SPOOL_DIR => o.spool_dir.as_ref().map(|p| p.display().to_string()),
        ALBEDO_OTEL_SPOOL_MAX_BYTES => o.spool_max_bytes.map(|n| n.to_string()),
        ALBEDO_OTEL_HOOK_DIR => o.hook_dir.as_ref().map(|p| p.display().to_string()),
        ALBEDO_OTEL_IDLE_EXIT => o
            .idle_exit
            .map(|d| humantime::format_duration(d).to_string()),
        ALBEDO_OTEL_STOP_GRACE => o
            .stop_grace
            .map(|d| humantime::format_duration(d).to_string()),
        _ => None,
    }
}

/// What a setting is when nothing sets it, as text.
fn default_text(var: &str) -> String {
    use env::*;
    match var {
        OTEL_TRACES_EXPORTER => "otlp".into(),
        OTEL_SERVICE_NAME => defaults::SERVICE_NAME.into(),
        ALBEDO_OTEL_FLUSH_TIMEOUT => ms(defaults::FLUSH_TIMEOUT),
        OTEL_EXPORTER_OTLP_ENDPOINT => format!(
            "{} ({} for grpc)",
            defaults::HTTP_ENDPOINT,
            defaults::GRPC_ENDPOINT
        ),
        OTEL_EXPORTER_OTLP_PROTOCOL => "http/protobuf".into(),
        OTEL_METRICS_EXPORTER => "otlp".into(),
        OTEL_METRIC_EXPORT_INTERVAL => ms(defaults::METRIC_EXPORT_INTERVAL),
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT => {
            "(the traces' endpoint, /v1/metrics over HTTP)".into()
        }
        OTEL_EXPORTER_OTLP_TIMEOUT => ms(defaults::TIMEOUT),
        OTEL_EXPORTER_OTLP_COMPRESSION => "none".into(),
        OTEL_EXPORTER_OTLP_CERTIFICATE => "(the system's roots)".into(),
        OTEL_BSP_SCHEDULE_DELAY => ms(defaults::BATCH_DELAY),
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE => defaults::BATCH_SIZE.to_string(),
        OTEL_BSP_MAX_QUEUE_SIZE => defaults::QUEUE_SIZE.to_string(),
        OTEL_BSP_MAX_CONCURRENT_EXPORTS => defaults::MAX_CONCURRENT_EXPORTS.to_string(),
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT => "false".into(),
        ALBEDO_OTEL_CAPTURE_TOOL_CONTENT => "true".into(),
        OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT => defaults::MAX_VALUE_LEN.to_string(),
        ALBEDO_OTEL_SPOOL => "true".into(),
        ALBEDO_OTEL_SPOOL_DIR => "$XDG_STATE_HOME/albedo-otel/spool".into(),
        ALBEDO_OTEL_SPOOL_MAX_BYTES => defaults::SPOOL_MAX_BYTES.to_string(),
        ALBEDO_OTEL_STORE => "true".into(),
        ALBEDO_OTEL_STORE_PATH => "$XDG_DATA_HOME/albedo-otel/store.sqlite".into(),
        ALBEDO_OTEL_STORE_KEEP => "(for good)".into(),
        ALBEDO_OTEL_HOOK_DIR => "$XDG_STATE_HOME/albedo-otel/hooks".into(),
        ALBEDO_OTEL_IDLE_EXIT => humantime::format_duration(defaults::IDLE_EXIT).to_string(),
        ALBEDO_OTEL_STOP_GRACE => humantime::format_duration(defaults::STOP_GRACE).to_string(),
        ALBEDO_OTEL_USER_ID => "(git user.email, else the login name)".into(),
        _ => "(none)".into(),
    }
}

/// Masks a secret: its length shows it is set, nothing of it shows what it is.
pub fn mask(secret: &str) -> String {
    format!("****** ({} characters)", secret.chars().count())
}

/// Every setting, its value, and where it came from: flag, environment, file or default.
pub fn explain(
    overrides: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    file: Option<&ConfigFile>,
) -> Vec<Shown> {
    let layers = Layers::new(env, file);
    let mut out = Vec::new();
    for k in KEYS {
        let (value, source) = match flag_text(overrides, k.var) {
            Some(v) => (v, Source::Flag),
            None => {
                let vars = same_as(k.var);
                let vars = if vars.is_empty() { &[k.var][..] } else { vars };
                match layers.first(vars) {
                    Some(f) => (f.value, f.source),
                    None => (default_text(k.var), Source::Default),
                }
            }
        };
        // A password in a URL is sent as Basic auth: masked as a header is.
        let value = match k.var {
            env::OTEL_EXPORTER_OTLP_ENDPOINT
            | env::OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
            | env::OTEL_EXPORTER_OTLP_METRICS_ENDPOINT => {
                crate::export::otlp::shown_endpoint(&value)
            }
            _ => value,
        };
        out.push(Shown {
            key: k.key.to_string(),
            var: Some(k.var),
            value,
            source,
        });
    }
    for (name, value, source) in headers(overrides, &layers) {
        out.push(Shown {
            key: format!("{HEADERS}.{name}"),
            var: None,
            value: mask(&value),
            source,
        });
    }
    if let (Some(f), Some(from)) = (
        file,
        layers.endpoint_elsewhere(overrides.otlp.endpoint.as_deref()),
    ) {
        for (k, v) in &f.headers {
            out.push(Shown {
                key: format!("{HEADERS}.{k}"),
                var: None,
                value: format!("{}  NOT SENT: the endpoint comes from {from}", mask(v)),
                source: Source::File(format!("{} [{HEADERS}]", f.path.display())),
            });
        }
    }
    for (name, value, source) in metrics_headers(&layers) {
        out.push(Shown {
            key: format!("{HEADERS}.{name}"),
            var: None,
            value: format!("{}  (metrics only)", mask(&value)),
            source,
        });
    }
    let traces_withheld = layers.endpoint_elsewhere(overrides.otlp.endpoint.as_deref());
    if let (Some(f), None, Some(from)) = (
        file,
        traces_withheld,
        layers.metrics_endpoint_elsewhere(overrides.otlp.endpoint.as_deref()),
    ) {
        for (k, v) in &f.headers {
            out.push(Shown {
                key: format!("{HEADERS}.{k}"),
                var: None,
                value: format!(
                    "{}  NOT SENT with metrics: the metrics endpoint comes from {from}",
                    mask(v)
                ),
                source: Source::File(format!("{} [{HEADERS}]", f.path.display())),
            });
        }
    }
    if let Some(f) = file {
        let at = |t: &str| Source::File(format!("{} [{t}]", f.path.display()));
        for (k, v) in &f.resource_attributes {
            out.push(Shown {
                key: format!("{RESOURCE_ATTRIBUTES}.{k}"),
                var: None,
                value: v.clone(),
                source: at(RESOURCE_ATTRIBUTES),
            });
        }
        for (k, v) in &f.redact {
            out.push(Shown {
                key: format!("{REDACT}.{k}"),
                var: None,
                value: v.clone(),
                source: at(REDACT),
            });
        }
    }
    if let Some(f) = layers.env(env::OTEL_RESOURCE_ATTRIBUTES) {
        out.push(Shown {
            key: RESOURCE_ATTRIBUTES.into(),
            var: Some(env::OTEL_RESOURCE_ATTRIBUTES),
            value: f.value,
            source: f.source,
        });
    }
    for (k, v) in &overrides.redact {
        out.push(Shown {
            key: format!("{REDACT}.{k}"),
            var: None,
            value: v.clone(),
            source: Source::Flag,
        });
    }
    out
}

/// Headers in force, later layers winning per name: file, variables, flags.
fn headers(overrides: &Overrides, layers: &Layers<'_>) -> Vec<(String, String, Source)> {
    let mut out: Vec<(String, String, Source)> = Vec::new();
    let mut add = |k: &str, v: &str, s: Source| {
        out.retain(|(old, _, _)| !old.eq_ignore_ascii_case(k));
        out.push((k.to_string(), v.to_string(), s));
    };
    if let Some(f) = layers.file.filter(|_| {
        layers
            .endpoint_elsewhere(overrides.otlp.endpoint.as_deref())
            .is_none()
    }) {
        for (k, v) in &f.headers {
            add(
                k,
                v,
                Source::File(format!("{} [{HEADERS}]", f.path.display())),
            );
        }
    }
    for var in [
        OTEL_EXPORTER_OTLP_HEADERS,
        OTEL_EXPORTER_OTLP_TRACES_HEADERS,
    ] {
        if let Some(found) = layers.env(var) {
            // A malformed variable is resolution's to report; here it is shown as unreadable.
            for (k, v) in super::parse::pairs(&found.value).unwrap_or_default() {
                add(&k, &v, Source::Env(var));
            }
        }
    }
    for (k, v) in &overrides.otlp.headers {
        add(k, v, Source::Flag);
    }
    out
}

/// Headers only metrics get: `OTEL_EXPORTER_OTLP_METRICS_HEADERS`.
fn metrics_headers(layers: &Layers<'_>) -> Vec<(String, String, Source)> {
    let var = env::OTEL_EXPORTER_OTLP_METRICS_HEADERS;
    let Some(found) = layers.env(var) else {
        return Vec::new();
    };
    super::parse::pairs(&found.value)
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v, Source::Env(var)))
        .collect()
}

/// The settings in force that came from flags or the environment, by file key, as `install`
/// writes them into the file: headers, resource attributes and redaction rules included.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub values: Vec<(&'static str, String)>,
    pub headers: Vec<(String, String)>,
    pub resource_attributes: Vec<(String, String)>,
    pub redact: Vec<(String, String)>,
}

/// What [`Snapshot`] holds, from `overrides` and `env` (the file and the defaults left out).
pub fn snapshot(overrides: &Overrides, env: &dyn Fn(&str) -> Option<String>) -> Snapshot {
    let layers = Layers::new(env, None);
    let mut s = Snapshot::default();
    for k in KEYS {
        // `file` cannot be said by a variable, so it is not written.
        if k.var == env::OTEL_TRACES_EXPORTER
            && matches!(overrides.exporter, Some(ExporterKind::File(_)))
        {
            continue;
        }
        let vars = same_as(k.var);
        let vars = if vars.is_empty() { &[k.var][..] } else { vars };
        if let Some(v) = flag_text(overrides, k.var).or_else(|| layers.first(vars).map(|f| f.value))
        {
            s.values.push((k.key, v));
        }
    }
    s.headers = headers(overrides, &layers)
        .into_iter()
        .map(|(k, v, _)| (k, v))
        .collect();
    if let Some(f) = layers.env(env::OTEL_RESOURCE_ATTRIBUTES) {
        s.resource_attributes = super::parse::pairs(&f.value).unwrap_or_default();
    }
    s.redact = overrides.redact.clone();
    s
}
