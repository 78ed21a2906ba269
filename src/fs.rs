//! Files that only their owner reads, written so that a crash, or a power loss, never leaves
//! half of one: the spool, the hook journals and the configuration file hold what agents did
//! and the user's keys.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Makes `dir` and whichever of its parents are missing, each private (0700). Folders that
/// were already there keep their mode: a configuration file named `$HOME/albedo.toml` must
/// not make `$HOME` private.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        // A relative path's last ancestor is "", which never exists and is no folder.
        let missing: Vec<&Path> = dir
            .ancestors()
            .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
            .collect();
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        // The umask may have taken bits from 0700; it never adds any.
        for d in missing {
            fs::set_permissions(d, fs::Permissions::from_mode(0o700))?;
        }
        Ok(())
    }
    #[cfg(not(unix))]
    fs::create_dir_all(dir)
}

/// Options that create a file private to its owner (0600); the caller says how to open it.
pub fn private_file_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
}

/// Flushes a folder's entries (a rename into it) to disk. Where folders cannot be opened as
/// files (Windows), the rename is as durable as the OS makes it.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Writes `bytes` to `path` as one step: to a temporary file beside it first, flushed to
/// disk, then renamed over it, and the folder flushed, so that after a crash or a power loss
/// `path` holds either the old contents or the new ones, never a part.
///
/// A `path` that is a symbolic link (dotfiles kept in a repository) is written through: its
/// target gets the new contents and the link stays. The file keeps its mode, with no more
/// than the owner's read and write bits (0600 at most); a new file is 0600.
pub fn replace_durably(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = through_links(path)?;
    let mode = private_mode_of(&target);
    write_durably(&target, bytes, mode)
}

/// As [`replace_durably`], with the file's mode given (`path` itself is replaced, link or not).
pub fn write_durably(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    let tmp = path.with_file_name(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    remove_dead_writers_temps(path, &name.to_string_lossy());
    let written = (|| {
        // A leftover of this pid's earlier crash is ours to replace; `create_new` keeps the
        // write from following a link planted at that name.
        let _ = fs::remove_file(&tmp);
        let mut f = file_options_with_mode(mode)
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        set_mode(&tmp, mode)?;
        // Without this, a power loss after the rename can leave the new name on an empty file.
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => sync_dir(dir),
        None => sync_dir(Path::new(".")),
    }
}

/// Removes the temporary files of `path` that writers which died before their rename left
/// (`.{name}.{pid}.tmp` with that pid gone): they hold a whole copy of the file, keys and all.
fn remove_dead_writers_temps(path: &Path, name: &str) {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.");
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(pid) = file
            .to_str()
            .and_then(|f| f.strip_prefix(prefix.as_str()))
            .and_then(|rest| rest.strip_suffix(".tmp"))
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !crate::process::alive(pid) {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// The file a chain of symbolic links at `path` ends at (`path` itself if it is none). The
/// end need not exist yet.
pub fn through_links(path: &Path) -> io::Result<PathBuf> {
    let mut at = path.to_path_buf();
    // As many hops as the kernel follows before ELOOP.
    for _ in 0..40 {
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&at)?;
                at = match at.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(at),
        }
    }
    Err(io::Error::other(format!(
        "{}: too many levels of symbolic links",
        path.display()
    )))
}

/// The mode a rewrite of `path` gets: its own, without group and world bits and without
/// execute (0600 at most); 0600 for a file that is not there.
pub fn private_mode_of(path: &Path) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        match fs::metadata(path) {
            Ok(m) if m.permissions().mode() & 0o600 != 0 => m.permissions().mode() & 0o600,
            _ => 0o600,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        0o600
    }
}

fn file_options_with_mode(mode: u32) -> OpenOptions {
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    options
}

fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (path, mode);
        Ok(())
    }
}

/// Whether the file at `path` can be read by other users (group or world bits set).
#[cfg(unix)]
pub fn readable_by_others(path: &Path) -> io::Result<bool> {
    use std::os::unix::fs::PermissionsExt;
    Ok(fs::metadata(path)?.permissions().mode() & 0o077 != 0)
}

/// Whether the file at `path` can be read by other users; unknown (false) off Unix.
#[cfg(not(unix))]
pub fn readable_by_others(_path: &Path) -> io::Result<bool> {
    Ok(false)
}

/// Makes an existing file private (0600).
pub fn make_private(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o600))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_durable_replace_is_private_and_whole() {
        let dir = std::env::temp_dir().join(format!("albedo-otel-fs-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        create_private_dir(&dir).unwrap();
        let path = dir.join("f");
        replace_durably(&path, b"one").unwrap();
        replace_durably(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary file left"
        );
        // A writer that died before its rename left its copy; the next write removes it.
        let mut dead = std::process::Command::new("true").spawn().unwrap();
        let pid = dead.id();
        dead.wait().unwrap();
        fs::write(dir.join(format!(".f.{pid}.tmp")), "keys").unwrap();
        replace_durably(&path, b"two").unwrap();
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            1,
            "the dead writer's copy is gone"
        );
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert!(!readable_by_others(&path).unwrap());
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        assert!(readable_by_others(&path).unwrap());
        make_private(&path).unwrap();
        assert!(!readable_by_others(&path).unwrap());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_rewrite_keeps_the_mode_at_most_0600_and_writes_through_links() {
        let dir = std::env::temp_dir().join(format!("albedo-otel-fs-link-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("dotfiles")).unwrap();
        let target = dir.join("dotfiles/settings.json");
        fs::write(&target, "old").unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        for (before, after) in [(0o600, 0o600), (0o644, 0o600), (0o400, 0o400)] {
            fs::set_permissions(&target, fs::Permissions::from_mode(before)).unwrap();
            replace_durably(&target, b"new").unwrap();
            assert_eq!(mode(&target), after, "{before:o}");
        }
        let link = dir.join("settings.json");
        std::os::unix::fs::symlink("dotfiles/settings.json", &link).unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o600)).unwrap();
        replace_durably(&link, b"through").unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&target).unwrap(), b"through");
        assert_eq!(mode(&target), 0o600);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn only_the_folders_it_creates_are_made_private() {
        let dir = std::env::temp_dir().join(format!("albedo-otel-fs-dirs-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        create_private_dir(&dir.join("a/b")).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o755, "a folder that was there keeps its mode");
        assert_eq!(mode(&dir.join("a")), 0o700);
        assert_eq!(mode(&dir.join("a/b")), 0o700);
        fs::remove_dir_all(&dir).unwrap();
    }
}
