//! Codex runs a hook only once the user has trusted it, and skips an untrusted one without a
//! word. `install codex --trust` records that trust for albedo-otel's own hooks, as Codex's own
//! review would (`[hooks.state]` in its `config.toml`), so that they run without
//! `--dangerously-bypass-hook-trust`; the user's other hooks are left to the user.
//!
//! What Codex 0.171.0 checks (docs/agents/codex-cli.md, "Trust"): an entry keyed
//! `<hooks file>:<event in snake case>:<group index>:<handler index>` whose `trusted_hash` is
//! `sha256:` and the hex SHA-256 of the handler's compact JSON, keys sorted.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::{Map, Value};

use super::settings::is_ours;

/// One trust entry: its key under `[hooks.state]`, and its hash.
#[derive(Debug, PartialEq)]
pub(super) struct Entry {
    pub key: String,
    pub hash: String,
}

// The fields in sorted order: Codex hashes the JSON with its keys sorted.
#[derive(Serialize)]
struct Hashed<'a> {
    event_name: String,
    hooks: [Handler<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    matcher: Option<&'a str>,
}

#[derive(Serialize)]
struct Handler<'a> {
    #[serde(rename = "async")]
    is_async: bool,
    command: &'a str,
    timeout: u64,
    #[serde(rename = "type")]
    kind: &'a str,
}

/// `PreToolUse` → `pre_tool_use`.
fn snake(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The trust entries of our handlers in `settings`, the hooks file at `file`.
pub(super) fn ours(file: &Path, settings: &Map<String, Value>) -> Vec<Entry> {
    let file = file
        .canonicalize()
        .or_else(|_| std::path::absolute(file))
        .unwrap_or_else(|_| file.to_path_buf());
    let Some(events) = settings.get("hooks").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (event, groups) in events {
        for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
            let matcher = group.get("matcher").and_then(Value::as_str);
            let handlers = group.get("hooks").and_then(Value::as_array);
            for (h, hook) in handlers.into_iter().flatten().enumerate() {
                let Some(command) = hook.get("command").and_then(Value::as_str) else {
                    continue;
                };
                if !is_ours(hook) {
                    continue;
                }
                let hashed = Hashed {
                    event_name: snake(event),
                    hooks: [Handler {
                        is_async: false,
                        command,
                        timeout: hook.get("timeout").and_then(Value::as_u64).unwrap_or(600),
                        kind: "command",
                    }],
                    matcher,
                };
                let json = serde_json::to_vec(&hashed).unwrap_or_default();
                let digest = ring::digest::digest(&ring::digest::SHA256, &json);
                let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
                out.push(Entry {
                    key: format!("{}:{}:{g}:{h}", file.display(), snake(event)),
                    hash: format!("sha256:{hex}"),
                });
            }
        }
    }
    out
}

/// Codex's own configuration file: `$CODEX_HOME/config.toml`, or `~/.codex/config.toml`.
pub(super) fn config_file() -> Result<PathBuf> {
    match std::env::var_os("CODEX_HOME") {
        Some(home) => Ok(PathBuf::from(home).join("config.toml")),
        None => {
            let home = std::env::var_os("HOME").context("HOME is not set")?;
            Ok(Path::new(&home).join(".codex/config.toml"))
        }
    }
}

/// Takes the entries `remove` out of `config` (only where the hash still matches: an entry
/// the user re-trusted for another hook stays), and puts `add` in. Returns whether the file
/// changed. The rest of the file, comments included, is kept as it was.
pub(super) fn update(config: &Path, remove: &[Entry], add: &[Entry]) -> Result<bool> {
    let before = match std::fs::read_to_string(config) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", config.display())),
    };
    let mut doc: toml_edit::DocumentMut = before
        .parse()
        .with_context(|| format!("{} is not valid TOML; not touching it", config.display()))?;
    if let Some(state) = doc
        .get_mut("hooks")
        .and_then(|h| h.get_mut("state"))
        .and_then(toml_edit::Item::as_table_like_mut)
    {
        for e in remove {
            let held = state
                .get(&e.key)
                .and_then(|t| t.get("trusted_hash"))
                .and_then(toml_edit::Item::as_str);
            if held == Some(e.hash.as_str()) {
                state.remove(&e.key);
            }
        }
    }
    if !add.is_empty() {
        let hooks = doc
            .entry("hooks")
            .or_insert_with(implicit_table)
            .as_table_mut()
            .context("`hooks` in Codex's config.toml is not a table")?;
        let state = hooks
            .entry("state")
            .or_insert_with(implicit_table)
            .as_table_mut()
            .context("`hooks.state` in Codex's config.toml is not a table")?;
        for e in add {
            let mut entry = toml_edit::Table::new();
            entry.insert("trusted_hash", toml_edit::value(e.hash.clone()));
            state.insert(&e.key, toml_edit::Item::Table(entry));
        }
    }
    let after = doc.to_string();
    if after == before {
        return Ok(false);
    }
    if let Some(dir) = config.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    // Codex's config can hold provider keys: its mode is kept, and a new one is private.
    let mode = file_mode(config).unwrap_or(0o600);
    albedo_otel::fs::write_durably(config, after.as_bytes(), mode)
        .with_context(|| format!("writing {}", config.display()))?;
    Ok(true)
}

fn implicit_table() -> toml_edit::Item {
    let mut t = toml_edit::Table::new();
    t.set_implicit(true);
    toml_edit::Item::Table(t)
}

#[cfg(unix)]
fn file_mode(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::metadata(path).ok()?.permissions().mode() & 0o777)
}

#[cfg(not(unix))]
fn file_mode(_: &Path) -> Option<u32> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_name_is_snake_cased_as_codex_keys_it() {
        assert_eq!(snake("PreToolUse"), "pre_tool_use");
        assert_eq!(snake("PostModelRequest"), "post_model_request");
        assert_eq!(snake("Stop"), "stop");
    }

    #[test]
    fn only_our_handlers_get_entries_by_their_place_in_the_file() {
        let settings: Map<String, Value> = serde_json::from_value(serde_json::json!({"hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "my-guard", "timeout": 3}]},
                {"matcher": "*", "hooks": [{"type": "command", "command": "/x/albedo-otel-hook --agent codex", "timeout": 10}]}
            ]}}))
        .unwrap();
        let entries = ours(Path::new("/nowhere/hooks.json"), &settings);
        assert_eq!(entries.len(), 1);
        assert!(
            entries[0].key.ends_with("hooks.json:pre_tool_use:1:0"),
            "{entries:?}"
        );
        assert!(entries[0].hash.starts_with("sha256:") && entries[0].hash.len() == 71);
    }
}
