//! Files that only their owner reads, written so that a crash, or a power loss, never leaves
//! half of one: the spool, the hook journals and the configuration file hold what agents did
//! and the user's keys.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// Makes `dir` (and its parents), and makes it private (0700) even if it was already there.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
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

/// Writes `bytes` to `path` (0600) as one step: to `tmp` first, flushed to disk, then renamed
/// over `path`, and the folder flushed, so that after a crash or a power loss `path` holds
/// either the old contents or the new ones, never a part. `tmp` must be in `path`'s folder.
pub fn replace_durably(path: &Path, tmp: &Path, bytes: &[u8]) -> io::Result<()> {
    let written = (|| {
        let mut f = private_file_options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(tmp)?;
        f.write_all(bytes)?;
        // Without this, a power loss after the rename can leave the new name on an empty file.
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(tmp);
        return Err(e);
    }
    fs::rename(tmp, path)?;
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => sync_dir(dir),
        None => sync_dir(Path::new(".")),
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
        replace_durably(&path, &dir.join("f.tmp"), b"one").unwrap();
        replace_durably(&path, &dir.join("f.tmp"), b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert!(!dir.join("f.tmp").exists());
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
}
