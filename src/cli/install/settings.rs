//! Our entries in a hooks file (`settings.json`, `hooks.json`): finding, adding and removing
//! them while every other hook and setting stays as it was, and writing the file safely.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::{json, Map, Value};

use super::command::is_our_command;
use albedo_otel::sources::command_hooks::agent::{Flat, Hooks};

pub(super) fn is_ours(hook: &Value) -> bool {
    hook.get("command")
        .and_then(Value::as_str)
        .is_some_and(is_our_command)
}

/// Removes our hooks from `settings`; returns how many. Groups and events we leave empty go
/// too; anything the user left empty stays.
pub(super) fn remove_ours(settings: &mut Map<String, Value>) -> usize {
    let mut removed = 0;
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else {
        return 0;
    };
    hooks.retain(|_, groups| {
        let Some(groups) = groups.as_array_mut() else {
            return true;
        };
        let mut emptied = false;
        groups.retain_mut(|group| {
            // A flat file's entry is a hook itself (Cursor's), not a group of them.
            if group.get("command").is_some() {
                let ours = is_ours(group);
                removed += usize::from(ours);
                emptied |= ours;
                return !ours;
            }
            let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let before = list.len();
            list.retain(|h| !is_ours(h));
            let ours = before - list.len();
            removed += ours;
            let keep = ours == 0 || !list.is_empty();
            emptied |= !keep;
            keep
        });
        !(emptied && groups.is_empty())
    });
    if removed > 0 && hooks.is_empty() {
        settings.remove("hooks");
    }
    removed
}

pub(super) fn add_ours(
    settings: &mut Map<String, Value>,
    host: &Hooks,
    command: &str,
) -> Result<()> {
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .context("`hooks` is not an object")?;
    for event in host.events {
        let groups = hooks
            .entry(*event)
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .with_context(|| format!("`hooks.{event}` is not a list"))?;
        // Gemini CLI shows a hook by its name.
        let mut hook = json!({"type": "command", "command": command, "timeout": if host.short.contains(event) { 3 } else { host.timeout }});
        if host.named {
            hook["name"] = json!("albedo-otel");
        }
        let group = if host.tool_events.contains(event) {
            json!({"matcher": "*", "hooks": [hook]})
        } else {
            json!({"hooks": [hook]})
        };
        groups.push(group);
    }
    Ok(())
}

/// Our entries in a flat hooks file (Cursor's): `{"command"}` listed under each event, and
/// the file's `version`, set when it has none (a file without one is not read).
pub(super) fn add_flat(
    settings: &mut Map<String, Value>,
    flat: &Flat,
    command: &str,
) -> Result<()> {
    if !settings.contains_key("version") {
        settings.insert("version".into(), json!(flat.version));
    }
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .context("`hooks` is not an object")?;
    for event in flat.events {
        hooks
            .entry(*event)
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .with_context(|| format!("`hooks.{event}` is not a list"))?
            .push(json!({ "command": command }));
    }
    Ok(())
}

pub(super) fn load(file: &Path) -> Result<(Option<String>, Map<String, Value>)> {
    match std::fs::read_to_string(file) {
        Ok(text) if text.trim().is_empty() => Ok((Some(text), Map::new())),
        Ok(text) => {
            let v: Value = serde_json::from_str(&text).with_context(|| {
                format!("{} is not valid JSON; not touching it", file.display())
            })?;
            match v {
                Value::Object(m) => Ok((Some(text), m)),
                _ => bail!("{} is not a JSON object; not touching it", file.display()),
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((None, Map::new())),
        Err(e) => Err(e).with_context(|| format!("reading {}", file.display())),
    }
}

/// Where `save` keeps a file's old contents.
pub(super) enum Backup {
    /// `settings.json.albedo-otel-backup` beside the file, as private as it: the user's own
    /// folder (not beside a link's target, which may be a repository).
    Beside,
    /// This file, 0600 in a 0700 folder of albedo-otel's state: a project's file is in a
    /// checkout, where a backup could be committed.
    State(PathBuf),
}

/// Writes `settings` to `file` if that changes it. The file is replaced in one step, keeps
/// its mode (0600 at most: people keep API keys in `env`), and a symbolic link is written
/// through to its target. The old contents go to one backup (`backup`); backups of older
/// versions beside the file, one per run, were readable by anyone the umask let in, and are
/// made private.
pub(super) fn save(
    file: &Path,
    before: Option<&str>,
    settings: &Map<String, Value>,
    backup: &Backup,
) -> Result<bool> {
    let mut text = serde_json::to_string_pretty(settings)?;
    text.push('\n');
    save_text(file, before, &text, backup)
}

/// Writes `text` to `file` unless it is what the file holds (`before`), a backup of `before`
/// first; returns whether it wrote.
pub(super) fn save_text(
    file: &Path,
    before: Option<&str>,
    text: &str,
    backup: &Backup,
) -> Result<bool> {
    if before == Some(text) {
        return Ok(false);
    }
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let name = file
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    if let Some(old) = before {
        let (path, mode) = match backup {
            Backup::Beside => {
                let target = albedo_otel::fs::through_links(file)?;
                (
                    file.with_file_name(format!("{name}.{BACKUP}")),
                    albedo_otel::fs::private_mode_of(&target),
                )
            }
            Backup::State(path) => {
                if let Some(dir) = path.parent() {
                    private_dir(dir)?;
                }
                (path.clone(), 0o600)
            }
        };
        albedo_otel::fs::write_durably(&path, old.as_bytes(), mode)
            .with_context(|| format!("writing the backup {}", path.display()))?;
        match backup {
            Backup::Beside => println!("backup: {}", path.display()),
            Backup::State(_) => println!(
                "backup: {} (in albedo-otel's state folder, not in the project)",
                path.display()
            ),
        }
    }
    albedo_otel::fs::replace_durably(file, text.as_bytes())
        .with_context(|| format!("writing {}", file.display()))?;
    make_old_backups_private(file, &name);
    Ok(true)
}

/// Makes the backups' folder, private (0700) even if it was there already: it is
/// albedo-otel's own, and holds the old contents of settings files, keys included.
fn private_dir(dir: &Path) -> Result<()> {
    albedo_otel::fs::create_private_dir(dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("making {} private", dir.display()))?;
    }
    Ok(())
}

/// The backup's suffix: `settings.json.albedo-otel-backup`.
pub(super) const BACKUP: &str = "albedo-otel-backup";

fn make_old_backups_private(file: &Path, name: &str) {
    let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return;
    };
    let prefix = format!("{name}.{BACKUP}-");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let old = e
            .file_name()
            .to_str()
            .and_then(|n| n.strip_prefix(prefix.as_str()))
            .is_some_and(|secs| !secs.is_empty() && secs.bytes().all(|b| b.is_ascii_digit()));
        if old && albedo_otel::fs::readable_by_others(&path).unwrap_or(false) {
            match albedo_otel::fs::make_private(&path) {
                Ok(()) => println!(
                    "made private: {} (a backup an older version left)",
                    path.display()
                ),
                Err(e) => eprintln!("warning: cannot make {} private: {e}", path.display()),
            }
        }
    }
}

/// Our hook commands in a JSON hooks file.
pub(super) fn commands_in(file: &Path) -> Vec<String> {
    let Ok((_, settings)) = load(file) else {
        return Vec::new();
    };
    let mut out: Vec<String> = settings
        .get("hooks")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|h| h.values())
        .flat_map(|g| g.as_array().into_iter().flatten())
        .flat_map(|g| match g.get("hooks").and_then(Value::as_array) {
            Some(list) => list.iter().collect(),
            // A flat file's entry is the hook (Cursor's).
            None => vec![g],
        })
        .filter(|h| is_ours(h))
        .filter_map(|h| h.get("command").and_then(Value::as_str).map(str::to_string))
        .collect();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use albedo_otel::sources::command_hooks::agent::{Agent, Form};

    fn claude_code() -> Hooks {
        match Agent::ClaudeCode.spec().install.form {
            Form::Hooks(h) => h,
            _ => unreachable!(),
        }
    }

    #[test]
    fn others_hooks_survive_and_install_is_idempotent() {
        let mut s: Map<String, Value> = serde_json::from_str(
            r#"{"model":"x","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"my-guard"}]}],"Stop":[{"hooks":[{"type":"command","command":"/opt/albedo-otel hook"},{"type":"command","command":"notify"}]}]}}"#,
        )
        .unwrap();
        remove_ours(&mut s);
        add_ours(&mut s, &claude_code(), "/bin/albedo-otel hook").unwrap();
        let once = serde_json::to_string(&s).unwrap();
        remove_ours(&mut s);
        add_ours(&mut s, &claude_code(), "/bin/albedo-otel hook").unwrap();
        assert_eq!(serde_json::to_string(&s).unwrap(), once, "idempotent");
        assert!(once.contains("my-guard") && once.contains("notify"));
        assert_eq!(
            once.matches("albedo-otel hook").count(),
            claude_code().events.len()
        );
        assert!(
            once.starts_with(r#"{"model":"x","hooks""#),
            "key order kept"
        );
        assert_eq!(remove_ours(&mut s), claude_code().events.len());
        let after = serde_json::to_string(&s).unwrap();
        assert_eq!(
            after,
            r#"{"model":"x","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"my-guard"}]}],"Stop":[{"hooks":[{"type":"command","command":"notify"}]}]}}"#
        );
    }
}
