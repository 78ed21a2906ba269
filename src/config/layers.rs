//! Where each setting's text comes from, in order: the environment, then the configuration
//! file. (Flags and values set in code come before both; they are typed, and each setting
//! takes them first.)

use super::file::ConfigFile;
use super::ConfigError;

/// Where a setting's value came from, for `albedo-otel config show`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Flag,
    /// The variable that held it.
    Env(&'static str),
    /// The file and line that held it.
    File(String),
    Default,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Flag => f.write_str("flag"),
            Source::Env(var) => write!(f, "env {var}"),
            Source::File(at) => write!(f, "file {at}"),
            Source::Default => f.write_str("default"),
        }
    }
}

/// A value found for one of a setting's variables.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// Which variable it stands for.
    pub var: &'static str,
    /// How to name it in an error: the variable, or the file, line and key.
    pub name: String,
    pub value: String,
    pub source: Source,
}

/// The environment, then the file. A blank variable counts as unset, as the SDKs do.
pub(crate) struct Layers<'a> {
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub file: Option<&'a ConfigFile>,
    /// Our own settings whose values could not be read, each said once: they took their
    /// default instead (`doctor` repeats them).
    pub unread: std::cell::RefCell<Vec<String>>,
}

/// Logs `message` once per process: settings are resolved again for every turn in the
/// daemon, and a warning per turn would bury the log.
pub(crate) fn warn_once(message: String) {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
    if !said.contains(&message) {
        tracing::warn!("{message}");
        said.push(message);
    }
}

impl<'a> Layers<'a> {
    pub fn new(env: &'a dyn Fn(&str) -> Option<String>, file: Option<&'a ConfigFile>) -> Self {
        Layers {
            env,
            file,
            unread: Default::default(),
        }
    }

    /// A variable of the environment alone.
    pub fn env(&self, var: &'static str) -> Option<Found> {
        (self.env)(var)
            .filter(|v| !v.trim().is_empty())
            .map(|value| Found {
                var,
                name: var.to_string(),
                value,
                source: Source::Env(var),
            })
    }

    /// The first of `vars` the environment sets, else the first the file sets: the
    /// environment wins over the file whichever of a setting's variables each uses.
    pub fn first(&self, vars: &[&'static str]) -> Option<Found> {
        vars.iter().find_map(|v| self.env(v)).or_else(|| {
            let file = self.file?;
            vars.iter().find_map(|var| {
                file.get(var).map(|(name, value)| Found {
                    var,
                    source: Source::File(name.clone()),
                    name,
                    value: value.to_string(),
                })
            })
        })
    }

    /// Where the endpoint comes from when it is neither the file's nor the default, and names
    /// another endpoint than the file does (`flag`: `--endpoint`). The file's headers, its API
    /// keys, are not sent there.
    pub fn endpoint_elsewhere(&self, flag: Option<&str>) -> Option<Source> {
        use super::env::{OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT};
        let file_says = |var: &str| {
            self.file
                .and_then(|f| f.get(var))
                .map(|(_, v)| v.trim().to_string())
        };
        if let Some(flag) = flag {
            return (file_says(OTEL_EXPORTER_OTLP_ENDPOINT).as_deref() != Some(flag.trim()))
                .then_some(Source::Flag);
        }
        let found = [
            OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
            OTEL_EXPORTER_OTLP_ENDPOINT,
        ]
        .iter()
        .find_map(|v| self.env(v))?;
        (file_says(found.var).as_deref() != Some(found.value.trim())).then_some(found.source)
    }

    /// As [`endpoint_elsewhere`](Self::endpoint_elsewhere), for metrics: their own endpoint
    /// is the file's when the file names it and the environment does not name another; with
    /// none of their own, they go where the traces go, and the traces' answer holds.
    pub fn metrics_endpoint_elsewhere(&self, flag: Option<&str>) -> Option<Source> {
        use super::env::OTEL_EXPORTER_OTLP_METRICS_ENDPOINT as VAR;
        let Some(found) = self.first(&[VAR]) else {
            return self.endpoint_elsewhere(flag);
        };
        if !matches!(found.source, Source::Env(_)) {
            return None;
        }
        let file_says = self
            .file
            .and_then(|f| f.get(VAR))
            .map(|(_, v)| v.trim().to_string());
        (file_says.as_deref() != Some(found.value.trim())).then_some(found.source)
    }

    /// `flag`, else the first of `vars` parsed by `parse`, else `default`. A value of our own
    /// (`ALBEDO_OTEL_*`, or its file key) that cannot be read costs that setting only: it
    /// takes its default, with a warning, so that one bad value where an agent runs does not
    /// stop the whole route. A standard `OTEL_*` value that cannot be read is an error.
    pub fn pick<T>(
        &self,
        flag: Option<T>,
        vars: &[&'static str],
        parse: impl Fn(&str, &str) -> Result<T, ConfigError>,
        default: T,
    ) -> Result<T, ConfigError> {
        if let Some(v) = flag {
            return Ok(v);
        }
        let Some(found) = self.first(vars) else {
            return Ok(default);
        };
        match parse(&found.name, &found.value) {
            Err(e) if found.var.starts_with("ALBEDO_OTEL_") => {
                let message = format!("{e}; the setting takes its default instead");
                warn_once(message.clone());
                self.unread.borrow_mut().push(message);
                Ok(default)
            }
            parsed => parsed,
        }
    }
}
