//! The writer of a hooks file of JSON settings (Claude Code's, Gemini's, Codex's, Copilot's,
//! Qwen's, Cursor's flat one, albedo's): our entries go in beside everyone else's, every
//! other key kept as it was, a backup first; Codex's trust of each hook moves with it.

use std::path::Path;

use anyhow::Result;

use super::codex_trust;
use super::settings::{add_flat, add_ours, commands_in, load, remove_ours, save};
use super::writer::{installed, Writer};
use super::Target;
use albedo_otel::sources::command_hooks::agent::Form;

/// A hooks file of `form`, which is [`Form::Hooks`] or [`Form::Flat`].
pub(super) struct HooksFile<'a>(pub &'a Form);

impl Writer for HooksFile<'_> {
    fn check(&self, file: &Path) -> Result<()> {
        load(file).map(drop)
    }

    fn install(
        &self,
        file: &Path,
        command: &str,
        events: &str,
        target: &Target,
    ) -> Result<Vec<String>> {
        let (before, mut settings) = load(file)?;
        let edited_from = settings.clone();
        remove_ours(&mut settings);
        match self.0 {
            Form::Hooks(hooks) => add_ours(&mut settings, hooks, command)?,
            Form::Flat(flat) => add_flat(&mut settings, flat, command)?,
            Form::Plugin(_) | Form::Scripts(_) | Form::TomlTables(_) => {
                unreachable!("their writers are their own (writer_of)")
            }
        }
        let changed = save(file, before.as_deref(), &settings, &target.backup_of(file)?)?;
        let mut said = vec![format!(
            "{}: `{command}` on {events}",
            installed(changed, file)
        )];
        let Some(key_file) = target.codex_key_file() else {
            return Ok(said);
        };
        // Codex keys trust by a hook's place in the file: the trust of every handler the edit
        // moved goes with it, and ours is added only when asked for.
        let moves = codex_trust::moves(&key_file, &edited_from, &settings);
        let trusted = if target.trust() {
            codex_trust::ours(&key_file, &settings)
        } else {
            Vec::new()
        };
        let config = codex_trust::config_file()?;
        if let Err(e) = codex_trust::update(&config, &moves, &[], &trusted) {
            if target.trust() {
                return Err(e);
            }
            said.push(format!(
                "warning: the trust of the hooks moved in the file was not carried over: {e:#}"
            ));
        }
        said.push(if target.trust() {
            format!(
                "trusted in {}: albedo-otel's {} hooks, which Codex now runs without asking (a project's hooks also need the project trusted in Codex)",
                config.display(),
                trusted.len()
            )
        } else {
            "Codex runs a hook only once it is trusted, and skips the others without a word: trust these in Codex, or run this again with --trust (it keeps each under [hooks.state] in its config.toml)".to_string()
        });
        Ok(said)
    }

    fn uninstall(&self, file: &Path, target: &Target) -> Result<Vec<String>> {
        let (before, mut settings) = load(file)?;
        let edited_from = settings.clone();
        let removed = remove_ours(&mut settings);
        if removed == 0 {
            return Ok(vec![format!("nothing to remove in {}", file.display())]);
        }
        save(file, before.as_deref(), &settings, &target.backup_of(file)?)?;
        let mut said = vec![format!(
            "removed {removed} albedo-otel hooks from {}",
            file.display()
        )];
        if let Some(key_file) = target.codex_key_file() {
            // Ours go, with their trust; the handlers after them move up, with theirs.
            let stale = codex_trust::ours(&key_file, &edited_from);
            let moves = codex_trust::moves(&key_file, &edited_from, &settings);
            let config = codex_trust::config_file()?;
            match codex_trust::update(&config, &moves, &stale, &[]) {
                Ok(true) => said.push(format!("and updated their trust in {}", config.display())),
                Ok(false) => {}
                Err(e) => said.push(format!(
                    "warning: the hooks' trust in Codex was not updated: {e:#}"
                )),
            }
        }
        Ok(said)
    }

    fn commands(&self, file: &Path) -> Vec<String> {
        commands_in(file)
    }
}
