//! A project's settings file is in a checkout, and whoever wrote the checkout chose what it
//! is: `install --project` and `uninstall --project` write through no symbolic link that
//! leads out of the project (a `.claude/settings.json` linked to the user's own would be
//! edited, and its keys copied into the checkout as the backup), and a project file's backup
//! goes to albedo-otel's state folder, never into the checkout.

use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::process_env;
use super::settings::{Backup, BACKUP};
use super::{Target, Whose};

impl Target {
    /// Whether the install writes a project's file (the working folder's), not the user's
    /// or one named with `--settings`.
    fn in_project(&self) -> bool {
        matches!(self.whose, Whose::Agent(_)) && self.project && self.settings.is_none()
    }

    /// For a project's `file`: refuses a link out of the project, and warns of a backup an
    /// older version left beside the file. Nothing for the user's own files.
    pub(super) fn check_project_file(&self, file: &Path) -> Result<()> {
        if !self.in_project() {
            return Ok(());
        }
        let root = project_root()?;
        refuse_links_out(&root, file)?;
        old_backups_beside(file);
        Ok(())
    }

    /// Where the backup of `file` goes: beside it in the user's own folders; for a project's,
    /// in the state folder, under a name of the project and of the file's whole path, so that
    /// two projects' backups, or two agents' `settings.json` in one project, never meet.
    pub(super) fn backup_of(&self, file: &Path) -> Result<Backup> {
        if !self.in_project() {
            return Ok(Backup::Beside);
        }
        let state = albedo_otel::config::state_dir(&process_env).context(
            "no state folder for the settings file's backup: set XDG_STATE_HOME or HOME",
        )?;
        let root = project_root()?;
        let name = file
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        Ok(Backup::State(state.join("backups").join(format!(
            "{}-{name}.{BACKUP}",
            label(&root, &root.join(file))
        ))))
    }
}

/// The working folder, links resolved: the project.
fn project_root() -> Result<PathBuf> {
    let here = std::env::current_dir().context("cannot read the working folder")?;
    Ok(here.canonicalize().unwrap_or(here))
}

/// `{name}-{hash}`: the project folder's name, for people, and a hash of `hashed`, so that
/// two projects of one name never share it.
pub(super) fn label(project: &Path, hashed: &Path) -> String {
    let name: String = project
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(40)
        .collect();
    let hash = xxhash_rust::xxh3::xxh3_64(hashed.to_string_lossy().as_bytes());
    format!("{name}-{hash:08x}", hash = hash as u32)
}

/// Fails when `file` (under `root`), or a folder on its way there, is a symbolic link whose
/// target is outside `root`. A link that stays inside is fine: it is the project's own.
fn refuse_links_out(root: &Path, file: &Path) -> Result<()> {
    let mut at = root.to_path_buf();
    for part in file.components() {
        match part {
            Component::CurDir => continue,
            Component::Normal(n) => at.push(n),
            other => at.push(other.as_os_str()),
        }
        match std::fs::symlink_metadata(&at) {
            // What is not there yet is made as a plain file or folder, inside.
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e).with_context(|| format!("reading {}", at.display())),
            Ok(m) if m.file_type().is_symlink() => {
                let named = std::fs::read_link(&at)
                    .with_context(|| format!("reading the link {}", at.display()))?;
                match resolve(&at) {
                    Some(target) if target.starts_with(root) => {}
                    target => bail!(
                        "{} is a symbolic link to {}, outside this project ({}): not writing through it, since whoever wrote the checkout chose where it leads. Replace the link with a file, or name the file you mean with --settings",
                        at.display(),
                        target.as_deref().unwrap_or(&named).display(),
                        root.display()
                    ),
                }
            }
            Ok(_) => {}
        }
    }
    Ok(())
}

/// Where the link at `at` leads, every link on the way resolved; for a link to a file not
/// there yet, its folder's. `None` when not even that folder is there.
fn resolve(at: &Path) -> Option<PathBuf> {
    if let Ok(real) = at.canonicalize() {
        return Some(real);
    }
    let end = albedo_otel::fs::through_links(at).ok()?;
    let dir = end.parent()?.canonicalize().ok()?;
    Some(dir.join(end.file_name()?))
}

/// Older versions left the backup beside a project's file, in the checkout, where it can be
/// committed; it is the user's to remove (it may be the only copy of something).
fn old_backups_beside(file: &Path) {
    let Some(name) = file.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let prefix = format!("{name}.{BACKUP}");
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().starts_with(&prefix) {
            println!(
                "warning: {} is a backup an older albedo-otel left in this project; it holds the file's old contents, perhaps keys: remove it, and keep it out of commits",
                e.path().display()
            );
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn only_links_that_leave_the_project_are_refused() {
        let dir = std::env::temp_dir().join(format!("albedo-otel-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (root, outside) = (dir.join("checkout"), dir.join("outside"));
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        std::fs::create_dir_all(root.join("shared")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let root = root.canonicalize().unwrap();
        let file = Path::new(".claude/settings.json");
        assert!(refuse_links_out(&root, file).is_ok(), "nothing there yet");
        std::os::unix::fs::symlink("../shared/s.json", root.join(file)).unwrap();
        assert!(refuse_links_out(&root, file).is_ok(), "a link inside");
        std::fs::remove_file(root.join(file)).unwrap();
        std::os::unix::fs::symlink(outside.join("s.json"), root.join(file)).unwrap();
        let e = refuse_links_out(&root, file).unwrap_err().to_string();
        assert!(
            e.contains("outside this project") && e.contains("s.json"),
            "{e}"
        );
        std::fs::remove_file(root.join(file)).unwrap();
        std::fs::remove_dir(root.join(".claude")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join(".claude")).unwrap();
        assert!(
            refuse_links_out(&root, file).is_err(),
            "a folder linked out"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
