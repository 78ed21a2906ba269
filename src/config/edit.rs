//! Changing the configuration file: `albedo-otel config set` / `unset`, and `install`, which
//! writes the settings in force into it. Comments and the order of what the user wrote are
//! kept; the file is replaced in one step, 0600 in a 0700 folder, whatever its mode was.

use std::path::Path;

use toml_edit::{value, DocumentMut, Item};

use super::file::{ConfigFile, HEADERS, KEYS, REDACT, RESOURCE_ATTRIBUTES};
use super::show::Snapshot;
use super::ConfigError;

const HEADER: &str = "\
# albedo-otel configuration: the settings the OTEL_* and ALBEDO_OTEL_* variables can say, for
# hosts that do not pass them to hooks. Each key stands for one variable; `albedo-otel config
# show` lists them all. The environment wins over this file, and flags win over both.
# This file holds API keys: it is readable by its owner only (0600).
";

fn io_error(path: &Path, what: &str, e: std::io::Error) -> ConfigError {
    ConfigError::File {
        path: path.display().to_string(),
        line: 0,
        key: None,
        reason: format!("cannot {what}: {e}"),
    }
}

fn bad_key(path: &Path, key: &str, reason: &str) -> ConfigError {
    ConfigError::File {
        path: path.display().to_string(),
        line: 0,
        key: Some(key.to_string()),
        reason: reason.to_string(),
    }
}

/// The file's document, or a new, empty one.
fn open(path: &Path) -> Result<DocumentMut, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io_error(path, "be read", e)),
    };
    // Parse it as the reader does first, so an edit never hides a broken file.
    ConfigFile::parse(path, &text)?;
    text.parse::<DocumentMut>().map_err(|e| ConfigError::File {
        path: path.display().to_string(),
        line: 0,
        key: None,
        reason: e.message().trim().to_string(),
    })
}

fn save(path: &Path, doc: &DocumentMut) -> Result<(), ConfigError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::fs::create_private_dir(dir).map_err(|e| io_error(path, "create its folder", e))?;
    }
    let mut text = doc.to_string();
    if !path.exists() {
        // A new file says what it is.
        text.insert_str(0, HEADER);
    }
    crate::fs::replace_durably(path, text.as_bytes()).map_err(|e| io_error(path, "be written", e))
}

/// A value as TOML: whole numbers and true/false as themselves, the rest as strings.
fn typed(text: &str) -> Item {
    if let Ok(n) = text.parse::<i64>() {
        return value(n);
    }
    match text {
        "true" => value(true),
        "false" => value(false),
        _ => value(text),
    }
}

/// Where `key` lives: a plain key's section and name, or a table entry's table and name.
fn place(path: &Path, key: &str) -> Result<(String, String), ConfigError> {
    if KEYS.iter().any(|k| k.key == key) {
        return Ok(match key.rsplit_once('.') {
            Some((section, name)) => (section.to_string(), name.to_string()),
            None => (String::new(), key.to_string()),
        });
    }
    for t in [HEADERS, RESOURCE_ATTRIBUTES, REDACT] {
        if let Some(name) = key.strip_prefix(t).and_then(|r| r.strip_prefix('.')) {
            if !name.is_empty() {
                return Ok((t.to_string(), name.to_string()));
            }
        }
    }
    Err(bad_key(
        path,
        key,
        "unknown key (`albedo-otel config show` lists them)",
    ))
}

/// Puts `item` at `section.name`, making the tables on the way (implicit, so the file shows
/// only `[otlp.headers]`, not an empty `[otlp]` too).
fn set_in(
    path: &Path,
    doc: &mut DocumentMut,
    section: &str,
    name: &str,
    item: Item,
) -> Result<(), ConfigError> {
    let mut at: &mut dyn toml_edit::TableLike = doc.as_table_mut();
    for part in section.split('.').filter(|p| !p.is_empty()) {
        if at.get(part).is_none() {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            at.insert(part, Item::Table(t));
        }
        at = match at.get_mut(part).and_then(Item::as_table_like_mut) {
            Some(t) => t,
            None => {
                return Err(bad_key(
                    path,
                    section,
                    "is a value in the file, not a table",
                ))
            }
        };
    }
    at.insert(name, item);
    Ok(())
}

/// Sets `key` to `text` in the file at `path`, creating it if need be.
pub fn set(path: &Path, key: &str, text: &str) -> Result<(), ConfigError> {
    let (section, name) = place(path, key)?;
    let mut doc = open(path)?;
    let item = if section == HEADERS || section == RESOURCE_ATTRIBUTES || section == REDACT {
        value(text)
    } else {
        typed(text)
    };
    set_in(path, &mut doc, &section, &name, item)?;
    save(path, &doc)?;
    // What was written must read back.
    ConfigFile::load(path).map(|_| ())
}

/// Removes `key` from the file at `path`; says whether it was there.
pub fn unset(path: &Path, key: &str) -> Result<bool, ConfigError> {
    let (section, name) = place(path, key)?;
    if !path.exists() {
        return Ok(false);
    }
    let mut doc = open(path)?;
    let mut t: Option<&mut dyn toml_edit::TableLike> = Some(doc.as_table_mut());
    for part in section.split('.').filter(|p| !p.is_empty()) {
        t = t
            .and_then(|t| t.get_mut(part))
            .and_then(Item::as_table_like_mut);
    }
    let removed = t.is_some_and(|t| t.remove(&name).is_some());
    if removed {
        save(path, &doc)?;
    }
    Ok(removed)
}

/// Writes every value of `snapshot` into the file at `path` (the rest of the file is kept),
/// and makes the file private.
pub fn write_snapshot(path: &Path, snapshot: &Snapshot) -> Result<(), ConfigError> {
    let mut doc = open(path)?;
    for (key, text) in &snapshot.values {
        let (section, name) = place(path, key)?;
        set_in(path, &mut doc, &section, &name, typed(text))?;
    }
    for (section, pairs) in [
        (HEADERS, &snapshot.headers),
        (RESOURCE_ATTRIBUTES, &snapshot.resource_attributes),
        (REDACT, &snapshot.redact),
    ] {
        for (k, v) in pairs.iter() {
            set_in(path, &mut doc, section, k, value(v.as_str()))?;
        }
    }
    save(path, &doc)?;
    ConfigFile::load(path).map(|_| ())
}
