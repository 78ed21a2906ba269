//! Where an install's settings file is, in the agent's user scope or a project's, and the
//! warning when both scopes have our hook: the agents run the hooks of every scope, so two of
//! ours would record each event twice.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::codex_trust;
use super::{
    installed_commands, Agent, Hooks, Host, Target, ALBEDO, CLAUDE_CODE, CODEX, COPILOT, GEMINI,
    OPENCODE,
};

impl Target {
    pub(super) fn file_and_hooks(&self) -> Result<(PathBuf, &'static Hooks)> {
        self.file_in(None)
    }

    /// The settings file and hooks of the install, in the project's scope or the user's
    /// (`project`; the install's own when `None`).
    fn file_in(&self, project: Option<bool>) -> Result<(PathBuf, &'static Hooks)> {
        let settings_file = |a: &Agent, folder: &str| {
            Ok::<_, anyhow::Error>(match (&a.settings, project.unwrap_or(a.project)) {
                (Some(f), _) => f.clone(),
                (None, true) => Path::new(folder).join("settings.json"),
                (None, false) => {
                    let home = std::env::var_os("HOME").context("HOME is not set")?;
                    Path::new(&home).join(folder).join("settings.json")
                }
            })
        };
        Ok(match &self.host {
            Host::ClaudeCode(a) => (settings_file(a, ".claude")?, &CLAUDE_CODE),
            Host::Gemini(a) => (settings_file(a, ".gemini")?, &GEMINI),
            Host::Codex(a) => {
                let file = match (&a.settings, project.unwrap_or(a.project)) {
                    (Some(f), _) => f.clone(),
                    (None, true) => PathBuf::from(".codex/hooks.json"),
                    (None, false) => codex_trust::codex_home()?.join("hooks.json"),
                };
                (file, &CODEX)
            }
            Host::Copilot(a) => {
                let file = match (&a.settings, project.unwrap_or(a.project)) {
                    (Some(f), _) => f.clone(),
                    (None, true) => PathBuf::from(".github/hooks/albedo-otel.json"),
                    (None, false) => match std::env::var_os("COPILOT_HOME") {
                        Some(home) => PathBuf::from(home).join("hooks/albedo-otel.json"),
                        None => {
                            let home = std::env::var_os("HOME").context("HOME is not set")?;
                            Path::new(&home).join(".copilot/hooks/albedo-otel.json")
                        }
                    },
                };
                (file, &COPILOT)
            }
            Host::Opencode(a) => {
                let file = match (&a.settings, project.unwrap_or(a.project)) {
                    (Some(f), _) => f.clone(),
                    (None, true) => PathBuf::from(".opencode/plugin/albedo-otel.js"),
                    (None, false) => opencode_config()?.join("plugin/albedo-otel.js"),
                };
                (file, &OPENCODE)
            }
            Host::Albedo { albedo_home, .. } => {
                let home = albedo_home
                    .clone()
                    .or_else(|| std::env::var_os("ALBEDO_HOME").map(PathBuf::from))
                    .context("set ALBEDO_HOME or --albedo-home")?;
                (home.join("hooks.json"), &ALBEDO)
            }
        })
    }

    /// Codex's hooks file as Codex names it in its trust keys, when the install is Codex's in
    /// one of its scopes: `CODEX_HOME` resolved, or `~/.codex` as written, for the user's; the
    /// working folder's `.codex` for a project's. `None` for a settings file of the user's
    /// choosing, which Codex does not read.
    pub(super) fn codex_key_file(&self) -> Option<PathBuf> {
        let Host::Codex(a) = &self.host else {
            return None;
        };
        if a.settings.is_some() {
            return None;
        }
        if a.project {
            return std::path::absolute(".codex/hooks.json").ok();
        }
        // Codex resolves a `CODEX_HOME` it is given, and takes `~/.codex` as written.
        let home = match codex_trust::codex_home_var() {
            Some(home) => home.canonicalize().unwrap_or(home),
            None => std::path::absolute(codex_trust::codex_home().ok()?).ok()?,
        };
        Some(home.join("hooks.json"))
    }

    /// What to tell the user when the agent's other scope (the user's for a project install,
    /// this project's for a user's) has a hook of ours that is not `command` in `file`; `None`
    /// when the install names its settings file, or the two scopes are one file (a project
    /// at HOME), or the other scope has no hook of ours.
    pub(super) fn both_scopes(&self, file: &Path, command: &str) -> Option<String> {
        let (Host::ClaudeCode(a)
        | Host::Gemini(a)
        | Host::Codex(a)
        | Host::Copilot(a)
        | Host::Opencode(a)) = &self.host
        else {
            return None;
        };
        if a.settings.is_some() {
            return None;
        }
        let (other, _) = self.file_in(Some(!a.project)).ok()?;
        let same = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        if same(&other) == same(file) {
            return None;
        }
        let theirs = installed_commands(&other);
        // Claude Code runs a command that two scopes share once; the others are not known to.
        let shared =
            matches!(self.host, Host::ClaudeCode(_)) && theirs.iter().all(|c| c == command);
        if theirs.is_empty() || shared {
            return None;
        }
        let name = match &self.host {
            Host::ClaudeCode(_) => "claude-code",
            Host::Gemini(_) => "gemini",
            Host::Codex(_) => "codex",
            Host::Opencode(_) => "opencode",
            _ => "copilot",
        };
        let scope = if a.project { "" } else { " --project" };
        Some(format!(
            "{} has albedo-otel's hook too, and the agent runs the hooks of both scopes (Copilot, in a folder it trusts; opencode loads both plugins), so every event would be recorded twice: keep one (`albedo-otel uninstall {name}{scope}` removes that one)",
            other.display()
        ))
    }
}

/// opencode's own folder: `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode` (on macOS
/// too: opencode takes the XDG layout everywhere).
pub fn opencode_config() -> Result<PathBuf> {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => Ok(PathBuf::from(dir).join("opencode")),
        None => {
            let home = std::env::var_os("HOME").context("HOME is not set")?;
            Ok(Path::new(&home).join(".config/opencode"))
        }
    }
}
