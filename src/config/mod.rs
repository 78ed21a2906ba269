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
mod stages;

use std::path::PathBuf;
use std::time::Duration;

use thiserror::Error;

pub use file::ConfigFile;
pub use layers::Source;
pub use otlp::{
    parse_compression, parse_headers, parse_protocol, resolve_otlp, Compression, OtlpOverrides,
    OtlpSettings, Protocol, TlsFiles,
};
pub use paths::{default_hook_dir, default_spool_root, state_dir};
pub use show::{explain, mask, snapshot, Shown, Snapshot};

use layers::Layers;

pub use crate::export::ExporterKind;
use crate::pipeline::PipelineConfig;

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
    /// Settings of our own whose values could not be read, and took their defaults: one
    /// line each, naming the variable or the file's key, for `doctor`.
    pub unread: Vec<String>,
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

    /// Resolves every setting from `overrides`, then `env`, then `file`, then the defaults:
    /// each stage's own settings in turn (`stages`).
    pub fn resolve(
        overrides: &Overrides,
        env: &dyn Fn(&str) -> Option<String>,
        file: Option<&ConfigFile>,
    ) -> Result<Settings, ConfigError> {
        let layers = Layers::new(env, file);
        let exporter = stages::exporter(&layers, overrides)?;
        let otlp = match exporter {
            ExporterKind::Otlp => Some(otlp::resolve_otlp_in(&overrides.otlp, &layers)?),
            _ => None,
        };
        let mut pipeline = stages::pipeline(&layers, overrides)?;
        pipeline.metrics = stages::metrics(&layers, &overrides.otlp, otlp.as_ref())?;
        let hooks = stages::hooks(&layers, overrides)?;
        Ok(Settings {
            exporter,
            otlp,
            pipeline,
            max_line_bytes: overrides.max_line_bytes.unwrap_or(defaults::MAX_LINE_BYTES),
            hooks,
            file: None,
            unread: layers.unread.into_inner(),
        })
    }

    /// [`Settings::load`] with nothing overridden and the process environment.
    pub fn from_env() -> Result<Settings, ConfigError> {
        Self::load(&Overrides::default(), &|k| std::env::var(k).ok())
    }
}

#[cfg(test)]
mod metrics_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod user_tests;
