//! Resolving where and how to send OTLP (endpoint, protocol, headers, timeout, compression,
//! TLS files) into the exporter's own [`OtlpSettings`].
//!
//! For every setting: a value given in code or on the command line wins, then the
//! signal-specific `OTEL_EXPORTER_OTLP_TRACES_*` variable, then the generic `OTEL_EXPORTER_OTLP_*`
//! one, then the default, as the OpenTelemetry SDKs do. Resolution takes the environment as a
//! function, so it is tested without touching the process environment.

use std::time::Duration;

use super::layers::{warn_once, Layers};
use super::parse::{invalid, millis, pairs, PairError};
use super::{defaults, ConfigError};
pub use crate::export::otlp::{Compression, OtlpSettings, Protocol, TlsFiles};

/// `grpc`, `http/protobuf` or `http/json`, as the variable or key `name` says it.
pub fn parse_protocol(name: &str, s: &str) -> Result<Protocol, ConfigError> {
    match s.trim() {
        "grpc" => Ok(Protocol::Grpc),
        "http/protobuf" => Ok(Protocol::HttpProtobuf),
        "http/json" => Ok(Protocol::HttpJson),
        _ => Err(invalid(
            name,
            s,
            "expected grpc, http/protobuf or http/json",
        )),
    }
}

/// `gzip` or `none`, as the variable or key `name` says it.
pub fn parse_compression(name: &str, s: &str) -> Result<Compression, ConfigError> {
    match s.trim() {
        "gzip" => Ok(Compression::Gzip),
        "none" | "" => Ok(Compression::None),
        _ => Err(invalid(name, s, "expected gzip or none")),
    }
}

/// Values given in code or on the command line; each wins over the environment.
#[derive(Debug, Clone, Default)]
pub struct OtlpOverrides {
    /// Like `OTEL_EXPORTER_OTLP_ENDPOINT`: over HTTP, `/v1/traces` is added unless present.
    pub endpoint: Option<String>,
    pub protocol: Option<Protocol>,
    pub headers: Vec<(String, String)>,
    pub timeout: Option<Duration>,
    pub compression: Option<Compression>,
}

pub(crate) fn check_url(var: &str, url: &str) -> Result<(), ConfigError> {
    let uri: http::Uri = url
        .parse()
        .map_err(|e: http::uri::InvalidUri| invalid(var, url, e.to_string()))?;
    match uri.scheme_str() {
        Some("http") | Some("https") => {}
        Some(other) => {
            return Err(invalid(
                var,
                url,
                format!("scheme `{other}` is not http or https"),
            ))
        }
        None => {
            return Err(invalid(
                var,
                url,
                format!("no scheme; write it as http://{url}"),
            ))
        }
    }
    if uri.host().is_none() {
        return Err(invalid(var, url, "no host"));
    }
    Ok(())
}

/// `base` with `/v1/traces` appended to its path, as the spec says for the generic variable.
fn with_traces_path(base: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with(defaults::HTTP_TRACES_PATH) {
        base.to_string()
    } else {
        format!("{base}{}", defaults::HTTP_TRACES_PATH)
    }
}

/// Parses `key=value,key2=value2` (values percent-encoded), as the spec writes headers.
pub fn parse_headers(var: &str, s: &str) -> Result<Vec<(String, String)>, ConfigError> {
    let parsed = pairs(s).map_err(|e| match e {
        // Never echo the pair: it may be a bare secret.
        PairError::NoEquals => ConfigError::Header {
            name: var.to_string(),
            key: "(unnamed)".into(),
            reason: "expected key=value",
        },
        PairError::NotUtf8(key) => ConfigError::Header {
            name: var.to_string(),
            key,
            reason: "value is not UTF-8 once percent-decoded",
        },
    })?;
    for (key, value) in &parsed {
        check_header(var, key, value)?;
    }
    Ok(parsed)
}

pub(crate) fn check_header(var: &str, key: &str, value: &str) -> Result<(), ConfigError> {
    http::HeaderName::from_bytes(key.as_bytes()).map_err(|_| ConfigError::Header {
        name: var.to_string(),
        key: key.to_string(),
        reason: "bad name",
    })?;
    http::HeaderValue::from_str(value).map_err(|_| ConfigError::Header {
        name: var.to_string(),
        key: key.to_string(),
        reason: "bad value",
    })?;
    Ok(())
}

/// Later lists win for the same key (compared without case, as HTTP does).
fn merge_headers(layers: Vec<Vec<(String, String)>>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for layer in layers {
        for (k, v) in layer {
            out.retain(|(old, _)| !old.eq_ignore_ascii_case(&k));
            out.push((k, v));
        }
    }
    out
}

/// The exporter's [`OtlpSettings`], every setting resolved: `overrides`, then
/// `OTEL_EXPORTER_OTLP_TRACES_*`, then `OTEL_EXPORTER_OTLP_*`, then the defaults.
pub fn resolve_otlp(
    overrides: &OtlpOverrides,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<OtlpSettings, ConfigError> {
    resolve_otlp_in(overrides, &Layers::new(env, None))
}

/// As [`resolve_otlp`], with the configuration file below the environment.
pub(crate) fn resolve_otlp_in(
    overrides: &OtlpOverrides,
    layers: &Layers<'_>,
) -> Result<OtlpSettings, ConfigError> {
    use super::env::*;
    let protocol = match overrides.protocol {
        Some(p) => p,
        None => match layers.first(&[
            OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
            OTEL_EXPORTER_OTLP_PROTOCOL,
        ]) {
            Some(f) => parse_protocol(&f.name, &f.value)?,
            None => Protocol::HttpProtobuf,
        },
    };
    let http = protocol != Protocol::Grpc;
    let endpoint = if let Some(e) = &overrides.endpoint {
        check_url("--endpoint", e)?;
        if http {
            with_traces_path(e)
        } else {
            e.clone()
        }
    } else if let Some(f) = layers.first(&[
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
        OTEL_EXPORTER_OTLP_ENDPOINT,
    ]) {
        let e = f.value.trim();
        check_url(&f.name, e)?;
        // The signal's own variable is the whole URL; the generic one is a base.
        if http && f.var == OTEL_EXPORTER_OTLP_ENDPOINT {
            with_traces_path(e)
        } else {
            e.to_string()
        }
    } else if http {
        with_traces_path(defaults::HTTP_ENDPOINT)
    } else {
        defaults::GRPC_ENDPOINT.to_string()
    };
    let file_headers = match layers.endpoint_elsewhere(overrides.endpoint.as_deref()) {
        Some(from) => FileHeaders::Withheld { from },
        None => FileHeaders::Sent,
    };
    let rest = Rest::resolve(&TRACES, overrides, layers, &endpoint, file_headers)?;
    Ok(OtlpSettings {
        endpoint,
        protocol,
        headers: rest.headers,
        timeout: rest.timeout,
        compression: rest.compression,
        tls: rest.tls,
    })
}

/// The variables one signal reads besides its endpoint and protocol: its own, then the
/// generic one. A signal's own variables never reach another signal.
pub(crate) struct Signal {
    /// For people: `traces`, `metrics`.
    name: &'static str,
    headers: &'static str,
    timeout: &'static str,
    compression: &'static str,
    certificate: &'static str,
    client_certificate: &'static str,
    client_key: &'static str,
}

pub(crate) const TRACES: Signal = Signal {
    name: "traces",
    headers: super::env::OTEL_EXPORTER_OTLP_TRACES_HEADERS,
    timeout: super::env::OTEL_EXPORTER_OTLP_TRACES_TIMEOUT,
    compression: super::env::OTEL_EXPORTER_OTLP_TRACES_COMPRESSION,
    certificate: super::env::OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE,
    client_certificate: super::env::OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE,
    client_key: super::env::OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY,
};

pub(crate) const METRICS: Signal = Signal {
    name: "metrics",
    headers: super::env::OTEL_EXPORTER_OTLP_METRICS_HEADERS,
    timeout: super::env::OTEL_EXPORTER_OTLP_METRICS_TIMEOUT,
    compression: super::env::OTEL_EXPORTER_OTLP_METRICS_COMPRESSION,
    certificate: super::env::OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE,
    client_certificate: super::env::OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE,
    client_key: super::env::OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY,
};

impl Signal {
    /// The header variables in force for this signal, lowest first: the generic one, then
    /// the signal's own.
    pub(crate) fn header_vars(&self) -> [&'static str; 2] {
        [super::env::OTEL_EXPORTER_OTLP_HEADERS, self.headers]
    }
}

/// Whether the file's headers (its API keys) go to a signal's endpoint: only when that
/// endpoint is the file's own, or derived from it.
pub(crate) enum FileHeaders {
    Sent,
    /// The endpoint comes from elsewhere (a variable or a flag naming another collector).
    Withheld {
        from: super::layers::Source,
    },
}

/// A signal's headers, timeout, compression and TLS files.
struct Rest {
    headers: Vec<(String, String)>,
    timeout: Duration,
    compression: Compression,
    tls: TlsFiles,
}

impl Rest {
    fn resolve(
        signal: &Signal,
        overrides: &OtlpOverrides,
        layers: &Layers<'_>,
        endpoint: &str,
        file_headers: FileHeaders,
    ) -> Result<Rest, ConfigError> {
        use super::env::*;
        // Lowest first: the file, the generic variable, the signal's own, the flags. The
        // file's headers hold its API keys, and go only where the file sends: with an
        // endpoint from a variable or a flag (another collector), they stay behind.
        let mut layered = Vec::new();
        if let Some(file) = layers.file.filter(|f| !f.headers.is_empty()) {
            let name = format!("{} [otlp.headers]", file.path.display());
            for (k, v) in &file.headers {
                check_header(&name, k, v)?;
            }
            match file_headers {
                FileHeaders::Withheld { from } => warn_once(format!(
                    "{name} is not sent{with}: the {signal} endpoint {shown} comes from {from}, not from the file, and the file's headers (API keys) go only to the file's endpoint; set the endpoint in the file, or the headers with OTEL_EXPORTER_OTLP_HEADERS or {own}",
                    signal = signal.name,
                    with = if signal.name == TRACES.name { String::new() } else { format!(" with {}", signal.name) },
                    shown = crate::export::otlp::shown_endpoint(endpoint),
                    own = signal.headers,
                )),
                FileHeaders::Sent => layered.push(file.headers.clone()),
            }
        }
        for var in signal.header_vars() {
            if let Some(f) = layers.env(var) {
                layered.push(parse_headers(var, &f.value)?);
            }
        }
        for (k, v) in &overrides.headers {
            check_header("--header", k, v)?;
        }
        layered.push(overrides.headers.clone());
        let headers = merge_headers(layered);
        let timeout = layers.pick(
            overrides.timeout,
            &[signal.timeout, OTEL_EXPORTER_OTLP_TIMEOUT],
            millis,
            defaults::TIMEOUT,
        )?;
        let compression = layers.pick(
            overrides.compression,
            &[signal.compression, OTEL_EXPORTER_OTLP_COMPRESSION],
            parse_compression,
            Compression::None,
        )?;
        let path = |vars: &[&'static str]| layers.first(vars).map(|f| f.value.trim().to_string());
        let tls = TlsFiles {
            ca: path(&[signal.certificate, OTEL_EXPORTER_OTLP_CERTIFICATE]),
            client_cert: path(&[
                signal.client_certificate,
                OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE,
            ]),
            client_key: path(&[signal.client_key, OTEL_EXPORTER_OTLP_CLIENT_KEY]),
        };
        Ok(Rest {
            headers,
            timeout,
            compression,
            tls,
        })
    }
}

/// Metrics' own [`OtlpSettings`]: the traces' protocol, metrics' endpoint ([`metrics_endpoint`]),
/// and metrics' own variables before the generic ones (`OTEL_EXPORTER_OTLP_METRICS_*`, never
/// the traces'). The file's headers go with them only when the metrics endpoint is the file's
/// own: the file names it, or it is derived from the traces' endpoint the file names.
pub(crate) fn resolve_metrics_in(
    traces: &OtlpSettings,
    overrides: &OtlpOverrides,
    layers: &Layers<'_>,
) -> Result<OtlpSettings, ConfigError> {
    let endpoint = metrics_endpoint(traces, layers)?;
    let file_headers = match layers.metrics_endpoint_elsewhere(overrides.endpoint.as_deref()) {
        Some(from) => FileHeaders::Withheld { from },
        None => FileHeaders::Sent,
    };
    let rest = Rest::resolve(&METRICS, overrides, layers, &endpoint, file_headers)?;
    Ok(OtlpSettings {
        endpoint,
        protocol: traces.protocol,
        headers: rest.headers,
        timeout: rest.timeout,
        compression: rest.compression,
        tls: rest.tls,
    })
}

/// Where metrics go: `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` (the file's `otlp.metrics_endpoint`)
/// if set, else the traces' own collector: over gRPC the same endpoint (another service on
/// it), over HTTP the same URL with `/v1/metrics` for `/v1/traces` (or, for a traces URL with
/// a path of its own, `/v1/metrics` at the same host).
pub(crate) fn metrics_endpoint(
    traces: &OtlpSettings,
    layers: &Layers<'_>,
) -> Result<String, ConfigError> {
    if let Some(f) = layers.first(&[super::env::OTEL_EXPORTER_OTLP_METRICS_ENDPOINT]) {
        let e = f.value.trim();
        check_url(&f.name, e)?;
        return Ok(e.to_string());
    }
    if traces.protocol == Protocol::Grpc {
        return Ok(traces.endpoint.clone());
    }
    let endpoint = traces.endpoint.trim_end_matches('/');
    if let Some(base) = endpoint.strip_suffix(defaults::HTTP_TRACES_PATH) {
        return Ok(format!("{base}{}", defaults::HTTP_METRICS_PATH));
    }
    let uri: http::Uri = endpoint
        .parse()
        .map_err(|e: http::uri::InvalidUri| invalid("endpoint", endpoint, e.to_string()))?;
    let scheme = uri.scheme_str().unwrap_or("http");
    let authority = uri.authority().map_or("", |a| a.as_str());
    Ok(format!(
        "{scheme}://{authority}{}",
        defaults::HTTP_METRICS_PATH
    ))
}

#[cfg(test)]
#[path = "otlp_tests.rs"]
mod tests;
