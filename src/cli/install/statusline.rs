//! Claude Code's `statusLine` (`install claude-code --statusline`): ours is set, never over
//! one of the user's own without `--force` (a backup is kept first, as for hooks), and
//! `uninstall` takes ours out, and only ours.

use std::path::Path;

use anyhow::{bail, Result};
use serde_json::{json, Value};

use super::settings::{load, save, Backup};

/// Whether a `statusLine` is one `install` wrote.
fn ours(v: &Value) -> bool {
    v.get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| c.contains("albedo-otel") && c.contains(" statusline"))
}

/// Refuses, before anything is written, to replace a status line of the user's own unless
/// `force`.
pub(super) fn check(file: &Path, force: bool) -> Result<()> {
    let (_, settings) = load(file)?;
    match settings.get("statusLine").filter(|v| !ours(v)) {
        Some(theirs) if !force => bail!(
            "{} has a status line of your own ({}); --force replaces it (a backup is kept)",
            file.display(),
            theirs.get("command").and_then(Value::as_str).unwrap_or("?")
        ),
        _ => Ok(()),
    }
}

/// Sets our status line, `command`, in `file` (see [`check`]).
pub(super) fn set(file: &Path, command: &str, force: bool, backup: &Backup) -> Result<String> {
    check(file, force)?;
    let (before, mut settings) = load(file)?;
    settings.insert(
        "statusLine".into(),
        json!({"type": "command", "command": command, "padding": 0}),
    );
    let changed = save(file, before.as_deref(), &settings, backup)?;
    Ok(if changed {
        format!("status line set in {}: `{command}`", file.display())
    } else {
        format!("status line already set in {}", file.display())
    })
}

/// Takes our status line out of `file`, if it is there.
pub(super) fn remove(file: &Path, backup: &Backup) -> Result<Option<String>> {
    let (before, mut settings) = load(file)?;
    if !settings.get("statusLine").is_some_and(ours) {
        return Ok(None);
    }
    settings.remove("statusLine");
    save(file, before.as_deref(), &settings, backup)?;
    Ok(Some(format!(
        "removed albedo-otel's status line from {}",
        file.display()
    )))
}
