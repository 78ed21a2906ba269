//! The configuration file: the one place a user's exporter settings live outside the
//! environment, for hosts that strip it or never pass it (Claude Code removes every `OTEL_*`
//! variable from a hook's environment; albedo runs command hooks with a clean one).
//!
//! It is `$ALBEDO_OTEL_CONFIG`, else `$XDG_CONFIG_HOME/albedo-otel/config.toml`, else
//! `~/.config/albedo-otel/config.toml`; its folder is 0700 and the file 0600, since it holds API
//! keys. Every key stands for one variable ([`KEYS`]), so whatever the environment can say,
//! the file can say; the environment wins over it, and flags win over both.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml_edit::{Document, Item, TableLike};

use super::env::*;
use super::ConfigError;

/// A key of the file and the variable it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// As written in the file: `section.name`, or `name` at the top.
    pub key: &'static str,
    pub var: &'static str,
}

const fn key(key: &'static str, var: &'static str) -> Key {
    Key { key, var }
}

/// Every plain key, with its variable. The tables are `[otlp.headers]`
/// (`OTEL_EXPORTER_OTLP_HEADERS`), `[resource_attributes]` (`OTEL_RESOURCE_ATTRIBUTES`) and
/// `[content.redact]` (`--redact KIND=REGEX`).
pub const KEYS: &[Key] = &[
    key("exporter", OTEL_TRACES_EXPORTER),
    key("service_name", OTEL_SERVICE_NAME),
    key("user_id", ALBEDO_OTEL_USER_ID),
    key("flush_timeout", ALBEDO_OTEL_FLUSH_TIMEOUT),
    key("otlp.endpoint", OTEL_EXPORTER_OTLP_ENDPOINT),
    key("otlp.traces_endpoint", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
    key("otlp.metrics_endpoint", OTEL_EXPORTER_OTLP_METRICS_ENDPOINT),
    key("otlp.protocol", OTEL_EXPORTER_OTLP_PROTOCOL),
    key("otlp.timeout", OTEL_EXPORTER_OTLP_TIMEOUT),
    key("otlp.compression", OTEL_EXPORTER_OTLP_COMPRESSION),
    key("otlp.certificate", OTEL_EXPORTER_OTLP_CERTIFICATE),
    key(
        "otlp.client_certificate",
        OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE,
    ),
    key("otlp.client_key", OTEL_EXPORTER_OTLP_CLIENT_KEY),
    key("metrics.exporter", OTEL_METRICS_EXPORTER),
    key("metrics.export_interval", OTEL_METRIC_EXPORT_INTERVAL),
    key("bsp.schedule_delay", OTEL_BSP_SCHEDULE_DELAY),
    key("bsp.max_export_batch_size", OTEL_BSP_MAX_EXPORT_BATCH_SIZE),
    key("bsp.max_queue_size", OTEL_BSP_MAX_QUEUE_SIZE),
    key(
        "bsp.max_concurrent_exports",
        OTEL_BSP_MAX_CONCURRENT_EXPORTS,
    ),
    key(
        "content.capture_message_content",
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
    ),
    key(
        "content.capture_tool_content",
        ALBEDO_OTEL_CAPTURE_TOOL_CONTENT,
    ),
    key(
        "content.attribute_value_length_limit",
        OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT,
    ),
    key("spool.enabled", ALBEDO_OTEL_SPOOL),
    key("spool.dir", ALBEDO_OTEL_SPOOL_DIR),
    key("spool.max_bytes", ALBEDO_OTEL_SPOOL_MAX_BYTES),
    key("store.enabled", ALBEDO_OTEL_STORE),
    key("store.path", ALBEDO_OTEL_STORE_PATH),
    key("store.keep", ALBEDO_OTEL_STORE_KEEP),
    key("store.max_bytes", ALBEDO_OTEL_STORE_MAX_BYTES),
    key("hooks.dir", ALBEDO_OTEL_HOOK_DIR),
    key("hooks.idle_exit", ALBEDO_OTEL_IDLE_EXIT),
    key("hooks.stop_grace", ALBEDO_OTEL_STOP_GRACE),
];

/// The table keys.
pub const HEADERS: &str = "otlp.headers";
pub const RESOURCE_ATTRIBUTES: &str = "resource_attributes";
pub const REDACT: &str = "content.redact";

/// The file key of variable `var`, if the file has one.
pub fn key_of(var: &str) -> Option<&'static str> {
    KEYS.iter().find(|k| k.var == var).map(|k| k.key)
}

/// One value, as text in the variable's own format, and where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileValue {
    pub text: String,
    pub line: usize,
    pub key: &'static str,
}

/// A loaded configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigFile {
    pub path: PathBuf,
    /// By variable name.
    values: BTreeMap<&'static str, FileValue>,
    /// `[otlp.headers]`, in file order.
    pub headers: Vec<(String, String)>,
    /// `[resource_attributes]`.
    pub resource_attributes: Vec<(String, String)>,
    /// `[content.redact]`: `kind = "regex"`.
    pub redact: Vec<(String, String)>,
    /// Keys the file has that mean nothing here, and a mode readable by others: each is one
    /// line to warn with.
    pub warnings: Vec<String>,
}

/// The file's path: `$ALBEDO_OTEL_CONFIG`, else under `$XDG_CONFIG_HOME`, else under
/// `~/.config`. `None` when none of them is set.
pub fn default_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    if let Some(p) = set(ALBEDO_OTEL_CONFIG) {
        return Some(PathBuf::from(p));
    }
    let base = set(XDG_CONFIG_HOME)
        .map(PathBuf::from)
        .or_else(|| set(HOME).map(|h| Path::new(&h).join(".config")))?;
    Some(base.join("albedo-otel").join("config.toml"))
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

impl ConfigFile {
    /// Reads the file at `path`; `Ok(None)` if there is none.
    pub fn load(path: &Path) -> Result<Option<ConfigFile>, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(ConfigError::File {
                    path: path.display().to_string(),
                    line: 0,
                    key: None,
                    reason: format!("cannot be read: {e}"),
                })
            }
        };
        let mut file = Self::parse(path, &text)?;
        if crate::fs::readable_by_others(path).unwrap_or(false) {
            file.warnings.push(format!(
                "{} can be read by other users, and it may hold API keys; run `chmod 600 {}` (`albedo-otel config set` fixes it too)",
                path.display(),
                path.display()
            ));
        }
        Ok(Some(file))
    }

    /// Parses `text`, the contents of `path`.
    pub fn parse(path: &Path, text: &str) -> Result<ConfigFile, ConfigError> {
        let shown = path.display().to_string();
        let error =
            |offset: Option<usize>, key: Option<String>, reason: String| ConfigError::File {
                path: shown.clone(),
                line: offset.map_or(0, |o| line_of(text, o)),
                key,
                reason,
            };
        let doc = Document::parse(text).map_err(|e| {
            let reason = e.message().trim().to_string();
            error(e.span().map(|s| s.start), None, reason)
        })?;
        let mut file = ConfigFile {
            path: path.to_path_buf(),
            ..ConfigFile::default()
        };
        let mut unknown = Vec::new();
        walk(doc.as_table(), "", &mut |name, item| {
            let offset = item.span().map(|s| s.start);
            match name {
                HEADERS | RESOURCE_ATTRIBUTES | REDACT => {
                    let Some(table) = item.as_table_like() else {
                        return Err(error(offset, Some(name.into()), "expected a table".into()));
                    };
                    let mut pairs = Vec::new();
                    for (k, v) in table.iter() {
                        let at = v.span().map(|s| s.start).or(offset);
                        let Some(s) = v.as_str() else {
                            return Err(error(
                                at,
                                Some(format!("{name}.{k}")),
                                "expected a string".into(),
                            ));
                        };
                        pairs.push((k.to_string(), s.to_string()));
                    }
                    match name {
                        HEADERS => file.headers = pairs,
                        RESOURCE_ATTRIBUTES => file.resource_attributes = pairs,
                        _ => file.redact = pairs,
                    }
                    Ok(true)
                }
                _ => match KEYS.iter().find(|k| k.key == name) {
                    Some(k) => {
                        let value = match item {
                            Item::Value(v) => match (v.as_str(), v.as_integer(), v.as_bool()) {
                                (Some(s), _, _) => s.to_string(),
                                (_, Some(i), _) => i.to_string(),
                                (_, _, Some(b)) => b.to_string(),
                                _ => {
                                    return Err(error(
                                        offset,
                                        Some(name.into()),
                                        format!(
                                        "expected a string, a whole number or true/false, not {}",
                                        v.type_name()
                                    ),
                                    ))
                                }
                            },
                            _ => {
                                return Err(error(
                                    offset,
                                    Some(name.into()),
                                    "expected a value, not a table".into(),
                                ))
                            }
                        };
                        file.values.insert(
                            k.var,
                            FileValue {
                                text: value,
                                line: offset.map_or(0, |o| line_of(text, o)),
                                key: k.key,
                            },
                        );
                        Ok(true)
                    }
                    None if item.is_table_like() => Ok(false),
                    None => {
                        unknown.push((name.to_string(), offset));
                        Ok(true)
                    }
                },
            }
        })?;
        for (name, offset) in unknown {
            file.warnings.push(format!(
                "{}:{}: unknown key `{name}`, ignored (the keys are listed by `albedo-otel config show`)",
                shown,
                offset.map_or(0, |o| line_of(text, o))
            ));
        }
        Ok(file)
    }

    /// The value of variable `var` in the file, and how to name it in an error: the file, its
    /// line and its key.
    pub fn get(&self, var: &str) -> Option<(String, &str)> {
        self.values.get(var).map(|v| {
            (
                format!("{}:{} `{}`", self.path.display(), v.line, v.key),
                v.text.as_str(),
            )
        })
    }

    /// Every plain value, by variable name.
    pub fn values(&self) -> impl Iterator<Item = (&'static str, &FileValue)> {
        self.values.iter().map(|(k, v)| (*k, v))
    }
}

/// Calls `f` with every item below `table` by its dotted name; `f` says whether it took the
/// item whole (`true`), or whether a table should be walked into (`false`).
fn walk(
    table: &dyn TableLike,
    prefix: &str,
    f: &mut dyn FnMut(&str, &Item) -> Result<bool, ConfigError>,
) -> Result<(), ConfigError> {
    for (k, item) in table.iter() {
        let name = if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        };
        if !f(&name, item)? {
            if let Some(t) = item.as_table_like() {
                walk(t, &name, f)?;
            }
        }
    }
    Ok(())
}
