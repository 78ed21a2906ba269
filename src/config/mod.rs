//! Configuration: every setting, resolved once, by the binary and by a Rust host alike.
//!
//! A setting's value comes from the first of: a value given in code or on the command line
//! ([`Overrides`]), the environment (standard `OTEL_*` variables with the SDKs' meaning, and our
//! own `ALBEDO_OTEL_*`), then the default ([`defaults`]). Every variable name is in [`env`].
//! Resolution takes the environment as a function, so it is tested without touching the
//! process environment; [`Settings::from_env`] is the same with the real one.

pub mod defaults;
pub mod env;
mod otlp;
pub mod parse;
mod paths;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;

pub use otlp::{parse_headers, Compression, OtlpOverrides, OtlpSettings, Protocol, TlsFiles};
pub use paths::{default_hook_dir, default_spool_root, state_dir};

use crate::assemble::redact::{RedactError, Scrubber};
use crate::assemble::{AssembleConfig, ContentPolicy};
use crate::export::ResourceInfo;
use crate::pipeline::{PipelineConfig, SpoolConfig};

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ConfigError {
    /// `name` is the variable, flag or key that held `value`.
    #[error("{name}={value:?}: {reason}")]
    Invalid {
        name: String,
        value: String,
        reason: String,
    },
    /// Header values are secrets (API keys); the error names the key only.
    #[error("{name}: header `{key}` is not a valid HTTP header ({reason})")]
    Header {
        name: String,
        key: String,
        reason: &'static str,
    },
    /// A redaction rule that does not compile; `name` says where it was given.
    #[error("{name}: {message}")]
    Redact { name: String, message: String },
}

/// Where spans go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExporterKind {
    /// OTLP to a collector (gRPC or HTTP).
    Otlp,
    /// OTLP/JSON lines to this file (`-` is standard output).
    File(String),
    /// A readable tree of each trace on stderr.
    Console,
}

/// Values given in code or on the command line; each wins over the environment.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub exporter: Option<ExporterKind>,
    pub otlp: OtlpOverrides,
    /// `service.name`, over `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`.
    pub service_name: Option<String>,
    /// Export prompts, stop replies and model messages.
    pub capture_messages: Option<bool>,
    /// Export tool arguments and outputs.
    pub capture_tool_content: Option<bool>,
    pub max_attribute_length: Option<usize>,
    /// Extra redaction rules, `(kind, regex)`.
    pub redact: Vec<(String, String)>,
    pub batch_size: Option<usize>,
    pub batch_delay: Option<Duration>,
    pub flush_timeout: Option<Duration>,
    pub spool: Option<bool>,
    pub spool_dir: Option<PathBuf>,
    pub spool_max_bytes: Option<u64>,
    pub max_sessions: Option<usize>,
    pub max_calls_per_turn: Option<usize>,
    pub max_line_bytes: Option<usize>,
    pub hook_dir: Option<PathBuf>,
    pub idle_exit: Option<Duration>,
    pub stop_grace: Option<Duration>,
}

/// Command hooks' settings: where journals go and how the daemon paces itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSettings {
    /// `None` when neither a flag, `ALBEDO_OTEL_HOOK_DIR`, `XDG_STATE_HOME` nor `HOME` says.
    pub dir: Option<PathBuf>,
    pub idle_exit: Duration,
    pub stop_grace: Duration,
}

/// Everything resolved.
#[derive(Debug, Clone)]
pub struct Settings {
    pub exporter: ExporterKind,
    /// Resolved when spans go over OTLP.
    pub otlp: Option<OtlpSettings>,
    pub pipeline: PipelineConfig,
    /// Longest accepted input line.
    pub max_line_bytes: usize,
    pub hooks: HookSettings,
}

/// The environment as a lookup that treats a blank value as unset, as the SDKs do.
struct Env<'a>(&'a dyn Fn(&str) -> Option<String>);

impl Env<'_> {
    fn get(&self, name: &'static str) -> Option<(&'static str, String)> {
        (self.0)(name)
            .filter(|v| !v.trim().is_empty())
            .map(|v| (name, v))
    }

    /// The first of `names` that is set.
    fn first(&self, names: &[&'static str]) -> Option<(&'static str, String)> {
        names.iter().find_map(|n| self.get(n))
    }

    /// `flag`, else the first of `names` parsed by `parse`, else `default`.
    fn pick<T>(
        &self,
        flag: Option<T>,
        names: &[&'static str],
        parse: impl Fn(&str, &str) -> Result<T, ConfigError>,
        default: T,
    ) -> Result<T, ConfigError> {
        if let Some(v) = flag {
            return Ok(v);
        }
        match self.first(names) {
            Some((name, v)) => parse(name, &v),
            None => Ok(default),
        }
    }
}

impl Settings {
    /// Resolves every setting from `overrides`, then `env`, then the defaults.
    pub fn resolve(
        overrides: &Overrides,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Settings, ConfigError> {
        use self::env::*;
        let e = Env(env);
        let exporter = match &overrides.exporter {
            Some(k) => k.clone(),
            None => match e.get(OTEL_TRACES_EXPORTER) {
                None => ExporterKind::Otlp,
                Some((name, v)) => match v.trim() {
                    "otlp" => ExporterKind::Otlp,
                    "console" => ExporterKind::Console,
                    _ => {
                        return Err(parse::invalid(
                            name,
                            &v,
                            "not supported here; use otlp or console (or --exporter file)",
                        ))
                    }
                },
            },
        };
        let otlp = match exporter {
            ExporterKind::Otlp => Some(OtlpSettings::resolve(&overrides.otlp, env)?),
            _ => None,
        };
        let capture_messages = e.pick(
            overrides.capture_messages,
            &[OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT],
            parse::flag,
            false,
        )?;
        let capture_tool_content = e.pick(
            overrides.capture_tool_content,
            &[ALBEDO_OTEL_CAPTURE_TOOL_CONTENT],
            parse::flag,
            true,
        )?;
        let max_value_len = e.pick(
            overrides.max_attribute_length,
            &[
                OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT,
                OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT,
            ],
            parse::count,
            defaults::MAX_VALUE_LEN,
        )?;
        let scrubber = Scrubber::with_patterns(overrides.redact.iter().cloned()).map_err(
            |e: RedactError| ConfigError::Redact {
                name: "--redact".into(),
                message: e.to_string(),
            },
        )?;
        let assemble = AssembleConfig {
            policy: ContentPolicy::new(
                capture_tool_content,
                capture_messages,
                max_value_len,
                Arc::new(scrubber),
            ),
            max_sessions: overrides.max_sessions.unwrap_or(defaults::MAX_SESSIONS),
            max_calls_per_turn: overrides
                .max_calls_per_turn
                .unwrap_or(defaults::MAX_CALLS_PER_TURN),
            ..AssembleConfig::default()
        };
        let service_name = e
            .pick(
                overrides.service_name.clone().map(Some),
                &[OTEL_SERVICE_NAME],
                |_, v| Ok(Some(v.trim().to_string())),
                None,
            )?
            .filter(|n| !n.is_empty());
        let attributes = match e.get(OTEL_RESOURCE_ATTRIBUTES) {
            Some((name, v)) => parse::pairs(&v).map_err(|_| {
                parse::invalid(name, &v, "expected key=value pairs, comma-separated")
            })?,
            None => Vec::new(),
        };
        let spool = spool_config(&e, overrides)?;
        let pipeline = PipelineConfig {
            assemble,
            resource: ResourceInfo::build(service_name.as_deref(), &attributes),
            batch_size: e.pick(
                overrides.batch_size,
                &[OTEL_BSP_MAX_EXPORT_BATCH_SIZE],
                parse::count,
                defaults::BATCH_SIZE,
            )?,
            batch_delay: e.pick(
                overrides.batch_delay,
                &[OTEL_BSP_SCHEDULE_DELAY],
                parse::millis,
                defaults::BATCH_DELAY,
            )?,
            queue_size: e.pick(
                None,
                &[OTEL_BSP_MAX_QUEUE_SIZE],
                parse::count,
                defaults::QUEUE_SIZE,
            )?,
            flush_timeout: e.pick(
                overrides.flush_timeout,
                &[ALBEDO_OTEL_FLUSH_TIMEOUT],
                parse::millis,
                defaults::FLUSH_TIMEOUT,
            )?,
            spool,
            ..PipelineConfig::default()
        };
        if pipeline.batch_size == 0 {
            return Err(parse::invalid("--batch-size", "0", "must be above 0"));
        }
        let hooks = HookSettings {
            dir: overrides
                .hook_dir
                .clone()
                .or_else(|| e.get(ALBEDO_OTEL_HOOK_DIR).map(|(_, v)| v.into()))
                .or_else(|| default_hook_dir(env)),
            idle_exit: e.pick(
                overrides.idle_exit,
                &[ALBEDO_OTEL_IDLE_EXIT],
                parse::duration,
                defaults::IDLE_EXIT,
            )?,
            stop_grace: e.pick(
                overrides.stop_grace,
                &[ALBEDO_OTEL_STOP_GRACE],
                parse::duration,
                defaults::STOP_GRACE,
            )?,
        };
        Ok(Settings {
            exporter,
            otlp,
            pipeline,
            max_line_bytes: overrides.max_line_bytes.unwrap_or(defaults::MAX_LINE_BYTES),
            hooks,
        })
    }

    /// [`Settings::resolve`] with nothing overridden and the process environment.
    pub fn from_env() -> Result<Settings, ConfigError> {
        Self::resolve(&Overrides::default(), &|k| std::env::var(k).ok())
    }
}

/// The spool: off with `--no-spool` or `ALBEDO_OTEL_SPOOL=false`, and without a folder to
/// put it in (then with a warning).
fn spool_config(e: &Env<'_>, overrides: &Overrides) -> Result<Option<SpoolConfig>, ConfigError> {
    use self::env::*;
    if !e.pick(overrides.spool, &[ALBEDO_OTEL_SPOOL], parse::flag, true)? {
        return Ok(None);
    }
    let root = overrides
        .spool_dir
        .clone()
        .or_else(|| e.get(ALBEDO_OTEL_SPOOL_DIR).map(|(_, v)| v.into()))
        .or_else(|| default_spool_root(e.0));
    let Some(root) = root else {
        tracing::warn!("no spool: neither XDG_STATE_HOME nor HOME is set (use --spool-dir)");
        return Ok(None);
    };
    let max_bytes = e.pick(
        overrides.spool_max_bytes,
        &[ALBEDO_OTEL_SPOOL_MAX_BYTES],
        |name, v| parse::count(name, v).map(|n| n as u64),
        defaults::SPOOL_MAX_BYTES,
    )?;
    Ok(Some(SpoolConfig { root, max_bytes }))
}

#[cfg(test)]
mod tests;
