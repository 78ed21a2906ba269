//! Where an install's settings file is, in the agent's user scope or a project's, and the
//! warning when both scopes have our hook: the agents run the hooks of every scope, so two of
//! ours would record each event twice.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::codex_trust;
use super::{albedo_hooks, installed_commands, Form, Target, Whose};

impl Target {
    pub(super) fn file_and_form(&self) -> Result<(PathBuf, Form)> {
        self.file_in(None)
    }

    /// The settings file and what goes in it, in the project's scope or the user's
    /// (`project`; the install's own when `None`), as the agent's spec says.
    fn file_in(&self, project: Option<bool>) -> Result<(PathBuf, Form)> {
        let Whose::Agent(agent) = self.whose else {
            let home = self
                .albedo_home
                .clone()
                .or_else(|| std::env::var_os("ALBEDO_HOME").map(PathBuf::from))
                .context("set ALBEDO_HOME or --albedo-home")?;
            return Ok((home.join("hooks.json"), Form::Hooks(albedo_hooks())));
        };
        let install = &agent.spec().install;
        let file = match (&self.settings, project.unwrap_or(self.project)) {
            (Some(f), _) => f.clone(),
            (None, true) if install.project_file.is_empty() => anyhow::bail!(
                "{} has no project scope: it reads hooks from the user's file alone ({}); run `albedo-otel install {}` without --project",
                agent.title(),
                install.about,
                agent.name()
            ),
            (None, true) => PathBuf::from(install.project_file),
            (None, false) => (install.user_file)(&|k| std::env::var(k).ok())
                .with_context(|| format!("{} is not set", install.user_needs))?,
        };
        Ok((file, install.form))
    }

    /// Codex's hooks file as Codex names it in its trust keys, when the install is Codex's in
    /// one of its scopes: `CODEX_HOME` resolved, or `~/.codex` as written, for the user's; the
    /// working folder's `.codex` for a project's. `None` for a settings file of the user's
    /// choosing, which Codex does not read.
    pub(super) fn codex_key_file(&self) -> Option<PathBuf> {
        let Whose::Agent(agent) = self.whose else {
            return None;
        };
        if !agent.spec().install.asks_trust || self.settings.is_some() {
            return None;
        }
        if self.project {
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
        let Whose::Agent(agent) = self.whose else {
            return None;
        };
        if self.settings.is_some() {
            return None;
        }
        let (other, form) = self.file_in(Some(!self.project)).ok()?;
        let same = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        if same(&other) == same(file) {
            return None;
        }
        let theirs = installed_commands(&other, &form);
        // Claude Code runs a command that two scopes share once; the others are not known to.
        let shared =
            agent.spec().install.one_run_per_command && theirs.iter().all(|c| c == command);
        if theirs.is_empty() || shared {
            return None;
        }
        let name = agent.name();
        let scope = if self.project { "" } else { " --project" };
        Some(format!(
            "{} has albedo-otel's hook too, and the agent runs the hooks of both scopes (Copilot, in a folder it trusts; opencode loads both plugins), so every event would be recorded twice: keep one (`albedo-otel uninstall {name}{scope}` removes that one)",
            other.display()
        ))
    }
}
