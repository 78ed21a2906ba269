//! The route of an agent with plugins and no command hooks (opencode): not an entry in a
//! hooks file but a plugin file of albedo-otel's own in the agent's plugin folder, which the
//! agent loads with every file there. The plugin starts the hook command and hands it each
//! event; its text comes from the agent's folder ([`Plugin`]). A file of that name that is not ours is never
//! overwritten or removed, and neither is one with our text around someone else's command
//! (a checkout's can name anything).

use std::path::Path;

use anyhow::{bail, Context, Result};

use super::command::{is_our_program, shell_quote, words};
use super::writer::Writer;
use super::Target;
use albedo_otel::sources::command_hooks::agent::Plugin;

/// The writer of a plugin file.
pub(super) struct PluginFile<'a>(pub &'a Plugin);

impl Writer for PluginFile<'_> {
    fn install(&self, file: &Path, command: &str, events: &str, _: &Target) -> Result<Vec<String>> {
        let changed = install(file, self.0, command)?;
        let already = if changed { "" } else { "already " };
        Ok(vec![format!(
            "{already}installed {}: a plugin that starts `{command}` and hands it {events}",
            file.display()
        )])
    }

    fn uninstall(&self, file: &Path, _: &Target) -> Result<Vec<String>> {
        Ok(vec![if uninstall(file, self.0)? {
            format!("removed albedo-otel's plugin {}", file.display())
        } else {
            format!("nothing to remove at {}", file.display())
        }])
    }

    fn commands(&self, file: &Path) -> Vec<String> {
        commands(file, self.0)
    }
}

/// Writes our plugin, starting `command`, to `file`; returns whether that changed it.
fn install(file: &Path, plugin: &Plugin, command: &str) -> Result<bool> {
    let text = (plugin.text)(&words(command));
    match std::fs::read_to_string(file) {
        Ok(old) if old == text => return Ok(false),
        Ok(old) if !is_ours(plugin, &old) => bail!(
            "{} is not albedo-otel's plugin (or starts a command that is not albedo-otel's); not touching it (move it away, or name another file with --settings)",
            file.display()
        ),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
    }
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    albedo_otel::fs::replace_durably(file, text.as_bytes())
        .with_context(|| format!("writing {}", file.display()))?;
    Ok(true)
}

/// Removes our plugin from `file`; returns whether there was one.
fn uninstall(file: &Path, plugin: &Plugin) -> Result<bool> {
    match std::fs::read_to_string(file) {
        Ok(text) if is_ours(plugin, &text) => {
            std::fs::remove_file(file).with_context(|| format!("removing {}", file.display()))?;
            Ok(true)
        }
        Ok(_) => bail!(
            "{} is not albedo-otel's plugin (or starts a command that is not albedo-otel's); not touching it",
            file.display()
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e).with_context(|| format!("reading {}", file.display())),
    }
}

/// Whether `text` is our plugin, starting our own command.
fn is_ours(plugin: &Plugin, text: &str) -> bool {
    (plugin.command_in)(text)
        .and_then(|c| c.split_first().map(|(p, args)| is_our_program(p, args)))
        .unwrap_or(false)
}

/// The command a plugin in `file` with our text starts, as a shell would write it, for
/// `doctor`: whatever it is, since `doctor` says so of a command that is not ours (and does
/// not run it).
fn commands(file: &Path, plugin: &Plugin) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    (plugin.command_in)(&text)
        .filter(|c| !c.is_empty())
        .map(|c| {
            c.iter()
                .map(|w| shell_quote(w))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .into_iter()
        .collect()
}
