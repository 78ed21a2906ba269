//! Codex runs a hook only once the user has trusted it, and skips an untrusted one without a
//! word. `install codex --trust` records that trust for albedo-otel's own hooks, as Codex's own
//! review would (`[hooks.state]` in its `config.toml`), so that they run without
//! `--dangerously-bypass-hook-trust`; the user's other hooks are left to the user.
//!
//! What Codex 0.171.0 checks (docs/agents/codex.md, "Trust"): an entry keyed
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

/// Whether `hook` is a handler whose hash this module can compute as Codex does: ours, and
/// with no field beyond the three we write (a user who edited one gets Codex's own review).
fn hashable(hook: &Value) -> bool {
    is_ours(hook)
        && hook.as_object().is_some_and(|o| {
            o.keys()
                .all(|k| matches!(k.as_str(), "type" | "command" | "timeout"))
        })
}

/// Every handler of `settings` by event, in file order, with its key (`file` as Codex names
/// the hooks file) and, for one of ours, its trust entry.
fn handlers(
    file: &Path,
    settings: &Map<String, Value>,
) -> Vec<(String, String, bool, Option<Entry>)> {
    let Some(events) = settings.get("hooks").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (event, groups) in events {
        let snake = snake(event);
        for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
            let matcher = group.get("matcher").and_then(Value::as_str);
            let list = group.get("hooks").and_then(Value::as_array);
            for (h, hook) in list.into_iter().flatten().enumerate() {
                let key = format!("{}:{snake}:{g}:{h}", file.display());
                let entry = hook
                    .get("command")
                    .and_then(Value::as_str)
                    .filter(|_| hashable(hook))
                    .map(|command| Entry {
                        key: key.clone(),
                        hash: hash(&snake, matcher, command, hook.get("timeout")),
                    });
                out.push((event.clone(), key, is_ours(hook), entry));
            }
        }
    }
    out
}

/// Codex's hash of one command handler: its timeout as Codex runs it (600 s unless set, at
/// least 1, and `SessionEnd`'s and `Interrupt`'s cut to 3).
fn hash(snake: &str, matcher: Option<&str>, command: &str, timeout: Option<&Value>) -> String {
    let mut timeout = timeout.and_then(Value::as_u64).unwrap_or(600).max(1);
    if matches!(snake, "session_end" | "interrupt") {
        timeout = timeout.min(3);
    }
    let hashed = Hashed {
        event_name: snake.to_string(),
        hooks: [Handler {
            is_async: false,
            command,
            timeout,
            kind: "command",
        }],
        matcher,
    };
    let json = serde_json::to_vec(&hashed).unwrap_or_default();
    let digest = ring::digest::digest(&ring::digest::SHA256, &json);
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The trust entries of our handlers in `settings`, the hooks file Codex knows as `file`.
pub(super) fn ours(file: &Path, settings: &Map<String, Value>) -> Vec<Entry> {
    handlers(file, settings)
        .into_iter()
        .filter_map(|(_, _, _, entry)| entry)
        .collect()
}

/// Where each handler's trust goes when `before` becomes `after`: an edit takes our handlers
/// out and puts them back at the end, and every handler after ours moves up. Codex keys trust
/// by place, so a moved handler would lose it without a word; the n-th of the user's
/// handlers of an event (or of ours) before is the n-th after. Only changed keys are listed.
pub(super) fn moves(
    file: &Path,
    before: &Map<String, Value>,
    after: &Map<String, Value>,
) -> Vec<(String, String)> {
    let (old, new) = (handlers(file, before), handlers(file, after));
    let mut out = Vec::new();
    let events: Vec<&String> = old.iter().map(|(e, ..)| e).collect();
    let mut seen = std::collections::HashSet::new();
    for event in events {
        if !seen.insert(event.clone()) {
            continue;
        }
        for mine in [false, true] {
            let pick = |list: &[(String, String, bool, Option<Entry>)]| -> Vec<String> {
                list.iter()
                    .filter(|(e, _, ours, _)| e == event && *ours == mine)
                    .map(|(_, k, ..)| k.clone())
                    .collect()
            };
            for (from, to) in pick(&old).into_iter().zip(pick(&new)) {
                if from != to {
                    out.push((from, to));
                }
            }
        }
    }
    out
}

/// `CODEX_HOME`, when set to something (an empty one is unset, as Codex reads it).
pub(super) fn codex_home_var() -> Option<PathBuf> {
    std::env::var_os("CODEX_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// Codex's folder: `CODEX_HOME`, or `~/.codex`.
pub fn codex_home() -> Result<PathBuf> {
    match codex_home_var() {
        Some(home) => Ok(home),
        None => {
            let home = std::env::var_os("HOME").context("HOME is not set")?;
            Ok(Path::new(&home).join(".codex"))
        }
    }
}

/// Codex's own configuration file, `config.toml` in its folder.
pub(super) fn config_file() -> Result<PathBuf> {
    Ok(codex_home()?.join("config.toml"))
}

/// Applies an edit of the hooks file to the trust in `config`: moved handlers take their
/// entries along; `stale` entries (our handlers gone) are taken out where their hash is still
/// ours; `add` sets the trusted hash of ours, leaving the rest of an entry (`enabled`) alone.
/// Returns whether the file changed. With nothing to do, the file is not read at all; the rest
/// of it, comments included, is kept as it was, and a link is written through.
pub(super) fn update(
    config: &Path,
    moves: &[(String, String)],
    stale: &[Entry],
    add: &[Entry],
) -> Result<bool> {
    if moves.is_empty() && stale.is_empty() && add.is_empty() {
        return Ok(false);
    }
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
        let moved: Vec<(String, toml_edit::Item)> = moves
            .iter()
            .filter_map(|(from, to)| Some((to.clone(), state.remove(from)?)))
            .collect();
        for e in stale {
            let held = state
                .get(&e.key)
                .and_then(|t| t.get("trusted_hash"))
                .and_then(toml_edit::Item::as_str);
            if held == Some(e.hash.as_str()) && !moved.iter().any(|(to, _)| *to == e.key) {
                state.remove(&e.key);
            }
        }
        for (to, item) in moved {
            state.insert(&to, item);
        }
    }
    if !add.is_empty() {
        let hooks = doc
            .entry("hooks")
            .or_insert_with(implicit_table)
            .as_table_like_mut()
            .context("`hooks` in Codex's config.toml is not a table")?;
        let state = hooks
            .entry("state")
            .or_insert(implicit_table())
            .as_table_like_mut()
            .context("`hooks.state` in Codex's config.toml is not a table")?;
        for e in add {
            let entry = state
                .entry(&e.key)
                .or_insert(toml_edit::Item::Table(toml_edit::Table::new()))
                .as_table_like_mut()
                .with_context(|| format!("`hooks.state.\"{}\"` is not a table", e.key))?;
            entry.insert("trusted_hash", toml_edit::value(e.hash.clone()));
        }
    }
    let after = doc.to_string();
    if after == before {
        return Ok(false);
    }
    // Written through a link (a dotfiles repository), keeping its mode, 0600 at most:
    // Codex's config can hold provider keys.
    albedo_otel::fs::replace_durably(config, after.as_bytes())
        .with_context(|| format!("writing {}", config.display()))?;
    Ok(true)
}

fn implicit_table() -> toml_edit::Item {
    let mut t = toml_edit::Table::new();
    t.set_implicit(true);
    toml_edit::Item::Table(t)
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

    #[test]
    fn a_reinstall_carries_the_trust_of_the_handlers_it_moves() {
        let ours = serde_json::json!({"matcher": "*", "hooks": [
            {"type": "command", "command": "/x/albedo-otel-hook --agent codex", "timeout": 10}]});
        let mine = serde_json::json!({"matcher": "Bash", "hooks": [
            {"type": "command", "command": "my-guard", "timeout": 3}]});
        let settings = |groups: serde_json::Value| -> Map<String, Value> {
            serde_json::from_value(serde_json::json!({"hooks": {"PreToolUse": groups}})).unwrap()
        };
        // Ours first, the user's after; the edit takes ours out and puts it back at the end.
        let before = settings(serde_json::json!([ours, mine]));
        let after = settings(serde_json::json!([mine, ours]));
        let file = Path::new("/h/hooks.json");
        let moves = moves(file, &before, &after);
        assert_eq!(
            moves,
            [
                (
                    "/h/hooks.json:pre_tool_use:1:0".to_string(),
                    "/h/hooks.json:pre_tool_use:0:0".to_string()
                ),
                (
                    "/h/hooks.json:pre_tool_use:0:0".to_string(),
                    "/h/hooks.json:pre_tool_use:1:0".to_string()
                ),
            ]
        );
        let dir = std::env::temp_dir().join(format!("albedo-otel-trust-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("config.toml");
        std::fs::write(
            &config,
            "# mine\nmodel = \"m\"\n\n[hooks.state.\"/h/hooks.json:pre_tool_use:1:0\"]\ntrusted_hash = \"sha256:mine\"\nenabled = true\n",
        )
        .unwrap();
        let add = super::ours(file, &after);
        assert!(update(&config, &moves, &[], &add).unwrap());
        let doc: toml_edit::DocumentMut =
            std::fs::read_to_string(&config).unwrap().parse().unwrap();
        let state = &doc["hooks"]["state"];
        assert_eq!(
            state["/h/hooks.json:pre_tool_use:0:0"]["trusted_hash"].as_str(),
            Some("sha256:mine"),
            "{doc}"
        );
        assert_eq!(
            state["/h/hooks.json:pre_tool_use:0:0"]["enabled"].as_bool(),
            Some(true)
        );
        assert_eq!(
            state["/h/hooks.json:pre_tool_use:1:0"]["trusted_hash"].as_str(),
            Some(add[0].hash.as_str())
        );
        assert!(
            doc.to_string().starts_with("# mine\nmodel = \"m\""),
            "{doc}"
        );
        // Nothing to do: the file is not even read.
        assert!(!update(&dir.join("missing/config.toml"), &[], &[], &[]).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
