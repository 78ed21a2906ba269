//! Configuration: every setting, resolved once, by the binary and by a Rust host alike.
//!
//! A setting's value comes from the first of: a value given in code or on the command line
//! ([`Overrides`]), the environment (standard `OTEL_*` variables with the SDKs' meaning, and our
//! own `ALBEDO_OTEL_*`), the configuration file ([`file`]), then the default ([`defaults`]).
//! Every variable name is in [`env`], and every file key in [`file::KEYS`]. Resolution takes
//! the environment as a function, so it is tested without touching the process environment;
//! [`Settings::from_env`] is the same with the real one.

pub mod defaults;
pub mod edit;
pub mod env;
pub mod file;
mod layers;
mod otlp;
pub mod parse;
mod paths;
mod show;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;

pub use file::ConfigFile;
pub use layers::Source;
pub use otlp::{parse_headers, Compression, OtlpOverrides, OtlpSettings, Protocol, TlsFiles};
pub use paths::{default_hook_dir, default_spool_root, state_dir};
pub use show::{explain, mask, snapshot, Shown, Snapshot};

use layers::Layers;

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
    /// The configuration file is not valid: where, and why.
    #[error("{path}:{line}: {}{reason}", key.as_ref().map(|k| format!("key `{k}`: ")).unwrap_or_default())]
    File {
        path: String,
        line: usize,
        key: Option<String>,
        reason: String,
    },
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
    /// The configuration file, over `ALBEDO_OTEL_CONFIG` and the default place.
    pub config: Option<PathBuf>,
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
    pub max_concurrent_exports: Option<usize>,
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
    /// The configuration file the settings were read from, if there was one.
    pub file: Option<ConfigFile>,
}

/// The configuration file's path: the flag, `ALBEDO_OTEL_CONFIG`, or the default place
/// (which need not exist).
pub fn config_path(overrides: &Overrides, env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    overrides.config.clone().or_else(|| file::default_path(env))
}

/// Reads the configuration file the overrides or the environment name, if there is one. A
/// file named explicitly (flag or `ALBEDO_OTEL_CONFIG`) must exist.
pub fn load_file(
    overrides: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<ConfigFile>, ConfigError> {
    let explicit = overrides.config.is_some()
        || env(env::ALBEDO_OTEL_CONFIG).is_some_and(|v| !v.trim().is_empty());
    let Some(path) = config_path(overrides, env) else {
        return Ok(None);
    };
    match ConfigFile::load(&path)? {
        None if explicit => Err(ConfigError::File {
            path: path.display().to_string(),
            line: 0,
            key: None,
            reason: "no such file (named by --config or ALBEDO_OTEL_CONFIG)".into(),
        }),
        found => Ok(found),
    }
}

impl Settings {
    /// Reads the configuration file, then resolves every setting from `overrides`, `env`,
    /// the file and the defaults. The file's warnings (unknown keys, a mode others can read)
    /// are logged.
    pub fn load(
        overrides: &Overrides,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Settings, ConfigError> {
        let file = load_file(overrides, env)?;
        if let Some(f) = &file {
            for w in &f.warnings {
                tracing::warn!("{w}");
            }
        }
        let mut settings = Self::resolve(overrides, env, file.as_ref())?;
        settings.file = file;
        Ok(settings)
    }

    /// Resolves every setting from `overrides`, then `env`, then `file`, then the defaults.
    pub fn resolve(
        overrides: &Overrides,
        env: &dyn Fn(&str) -> Option<String>,
        file: Option<&ConfigFile>,
    ) -> Result<Settings, ConfigError> {
        use self::env::*;
        let e = Layers { env, file };
        let exporter = match &overrides.exporter {
            Some(k) => k.clone(),
            None => match e.first(&[OTEL_TRACES_EXPORTER]) {
                None => ExporterKind::Otlp,
                Some(f) => match f.value.trim() {
                    "otlp" => ExporterKind::Otlp,
                    "console" => ExporterKind::Console,
                    _ => {
                        return Err(parse::invalid(
                            &f.name,
                            &f.value,
                            "not supported here; use otlp or console (or --exporter file)",
                        ))
                    }
                },
            },
        };
        let otlp = match exporter {
            ExporterKind::Otlp => Some(OtlpSettings::resolve_in(&overrides.otlp, &e)?),
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
        // The file's rules, then the flags': both apply.
        let rules = file
            .map(|f| f.redact.clone())
            .unwrap_or_default()
            .into_iter()
            .chain(overrides.redact.iter().cloned());
        let scrubber =
            Scrubber::with_patterns(rules).map_err(|err: RedactError| ConfigError::Redact {
                name: match file {
                    Some(f) if !f.redact.is_empty() => {
                        format!("--redact or {} [content.redact]", f.path.display())
                    }
                    _ => "--redact".into(),
                },
                message: err.to_string(),
            })?;
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
        // The file's attributes, then the variable's: the variable wins for a key.
        let mut attributes = file
            .map(|f| f.resource_attributes.clone())
            .unwrap_or_default();
        if let Some(f) = e.env(OTEL_RESOURCE_ATTRIBUTES) {
            let pairs = parse::pairs(&f.value).map_err(|_| {
                parse::invalid(
                    &f.name,
                    &f.value,
                    "expected key=value pairs, comma-separated",
                )
            })?;
            attributes.retain(|(k, _)| !pairs.iter().any(|(p, _)| p == k));
            attributes.extend(pairs);
        }
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
            max_concurrent_exports: e.pick(
                overrides.max_concurrent_exports,
                &[OTEL_BSP_MAX_CONCURRENT_EXPORTS],
                parse::count,
                defaults::MAX_CONCURRENT_EXPORTS,
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
                .or_else(|| e.first(&[ALBEDO_OTEL_HOOK_DIR]).map(|f| f.value.into()))
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
            file: None,
        })
    }

    /// [`Settings::load`] with nothing overridden and the process environment.
    pub fn from_env() -> Result<Settings, ConfigError> {
        Self::load(&Overrides::default(), &|k| std::env::var(k).ok())
    }
}

/// The spool: off with `--no-spool` or `ALBEDO_OTEL_SPOOL=false`, and without a folder to
/// put it in (then with a warning).
fn spool_config(e: &Layers<'_>, overrides: &Overrides) -> Result<Option<SpoolConfig>, ConfigError> {
    use self::env::*;
    if !e.pick(overrides.spool, &[ALBEDO_OTEL_SPOOL], parse::flag, true)? {
        return Ok(None);
    }
    let root = overrides
        .spool_dir
        .clone()
        .or_else(|| e.first(&[ALBEDO_OTEL_SPOOL_DIR]).map(|f| f.value.into()))
        .or_else(|| default_spool_root(e.env));
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
