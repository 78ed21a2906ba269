//! The route of an agent that runs an executable per event from a hooks folder (Cline): not
//! an entry in a hooks file but a script of albedo-otel's own under each event's name, whose
//! text comes from the agent's folder ([`Scripts`]). A file of such a name that is not ours
//! is never overwritten or removed: `install` refuses before writing anything, and says which.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::command::{is_our_program, shell_quote, words};
use super::writer::{installed, Writer};
use super::Target;
use albedo_otel::sources::command_hooks::agent::Scripts;

/// Each event's script in `dir`.
fn paths<'a>(dir: &'a Path, scripts: &'a Scripts) -> impl Iterator<Item = PathBuf> + 'a {
    scripts.events.iter().map(move |e| dir.join(e))
}

/// Whether `text` is our script, running our own command.
fn is_ours(scripts: &Scripts, text: &str) -> bool {
    (scripts.command_in)(text)
        .and_then(|c| c.split_first().map(|(p, args)| is_our_program(p, args)))
        .unwrap_or(false)
}

/// What is at `path`: nothing, our script (its text), or someone else's file.
enum There {
    Nothing,
    Ours(String),
    Theirs,
}

fn there(scripts: &Scripts, path: &Path) -> Result<There> {
    match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) if is_ours(scripts, &text) => Ok(There::Ours(text)),
            _ => Ok(There::Theirs),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(There::Nothing),
        // A folder, or a file we cannot read: not ours to replace.
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => Ok(There::Theirs),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// The writer of hook scripts, one per event, in a folder.
pub(super) struct HookScripts<'a>(pub &'a Scripts);

impl Writer for HookScripts<'_> {
    fn install(&self, dir: &Path, command: &str, events: &str, _: &Target) -> Result<Vec<String>> {
        let changed = install(dir, self.0, command)? > 0;
        Ok(vec![format!(
            "{}: a script per event ({events}) that runs `{command}`",
            installed(changed, dir)
        )])
    }

    fn uninstall(&self, dir: &Path, _: &Target) -> Result<Vec<String>> {
        let (removed, kept) = uninstall(dir, self.0)?;
        let mut said = vec![if removed > 0 {
            format!(
                "removed {removed} albedo-otel hook scripts from {}",
                dir.display()
            )
        } else {
            format!("nothing to remove in {}", dir.display())
        }];
        said.extend(
            kept.iter()
                .map(|k| format!("left {}: not albedo-otel's", k.display())),
        );
        Ok(said)
    }

    fn commands(&self, dir: &Path) -> Vec<String> {
        commands(dir, self.0)
    }
}

/// Writes our script, running `command`, under each event's name in `dir`; returns how
/// many changed. Refuses, writing nothing, if a file of one of those names is not ours.
fn install(dir: &Path, scripts: &Scripts, command: &str) -> Result<usize> {
    let text = (scripts.text)(&words(command));
    let mut theirs = Vec::new();
    let mut todo = Vec::new();
    for path in paths(dir, scripts) {
        match there(scripts, &path)? {
            There::Theirs => theirs.push(path.display().to_string()),
            There::Ours(old) if old == text && executable(&path) => {}
            _ => todo.push(path),
        }
    }
    if !theirs.is_empty() {
        bail!(
            "{} not albedo-otel's hook script; not touching it (Cline runs every file named after an event: rename yours with an extension Cline reads, such as `.sh`, and run this again)",
            theirs.join(", ") + if theirs.len() == 1 { " is" } else { " are" }
        );
    }
    if !todo.is_empty() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    for path in &todo {
        // Executable by its owner and readable by all, as hook scripts are: it holds no
        // secret, only where the configuration file and the journals are.
        albedo_otel::fs::write_durably(path, text.as_bytes(), 0o755)
            .with_context(|| format!("writing {}", path.display()))?;
        set_mode(path)?;
    }
    Ok(todo.len())
}

/// Removes our scripts from `dir`; returns how many, and the files of our names left there
/// because they are not ours.
fn uninstall(dir: &Path, scripts: &Scripts) -> Result<(usize, Vec<PathBuf>)> {
    let (mut removed, mut kept) = (0, Vec::new());
    for path in paths(dir, scripts) {
        match there(scripts, &path)? {
            There::Ours(_) => {
                std::fs::remove_file(&path)
                    .with_context(|| format!("removing {}", path.display()))?;
                removed += 1;
            }
            There::Theirs => kept.push(path),
            There::Nothing => {}
        }
    }
    Ok((removed, kept))
}

/// The commands our scripts in `dir` run, as a shell would write them, for `doctor`.
fn commands(dir: &Path, scripts: &Scripts) -> Vec<String> {
    let mut out: Vec<String> = paths(dir, scripts)
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .filter_map(|text| (scripts.command_in)(&text))
        .map(|c| {
            c.iter()
                .map(|w| shell_quote(w))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(unix)]
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o777 == 0o755)
}

#[cfg(not(unix))]
fn executable(_: &Path) -> bool {
    true
}

/// 0755 whatever the umask.
fn set_mode(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("making {} executable", path.display()))?;
    }
    let _ = path;
    Ok(())
}
