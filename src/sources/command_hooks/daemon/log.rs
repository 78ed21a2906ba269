//! The daemon's log stays private and bounded: it names sessions, paths and collectors, and a
//! daemon that never idles (an agent always at work) must not fill the disk with it.
//!
//! The daemon's stderr is `daemon.log`; past [`MAX_LOG`] it is renamed `daemon.log.1` (one
//! old file kept) and a fresh log takes its place, at the daemon's start and, on Unix, while
//! it runs, by pointing stderr at the new file.

use std::io;
use std::path::{Path, PathBuf};

use super::super::journal::DAEMON_LOG;
use crate::fs::private_file_options;

/// How large the log may grow before it is rotated: two files of this size at the most.
pub const MAX_LOG: u64 = 4 << 20;

/// The log's path in the journal folder `dir`.
pub fn path(dir: &Path) -> PathBuf {
    dir.join(DAEMON_LOG)
}

/// The log opened for appending, 0600, rotated first if it has grown past `max`. A log left
/// readable by others (an older albedo-otel made it 0644) is made private.
pub fn open(dir: &Path, max: u64) -> io::Result<std::fs::File> {
    let path = path(dir);
    rotate_if_over(&path, max)?;
    let f = private_file_options()
        .create(true)
        .append(true)
        .open(&path)?;
    make_private(&f);
    Ok(f)
}

fn rotate_if_over(path: &Path, max: u64) -> io::Result<bool> {
    match std::fs::metadata(path) {
        Ok(m) if m.len() > max => {
            let mut old = path.as_os_str().to_os_string();
            old.push(".1");
            std::fs::rename(path, &old)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

#[cfg(unix)]
pub(crate) fn make_private(f: &std::fs::File) {
    use std::os::unix::fs::PermissionsExt;
    if f.metadata()
        .is_ok_and(|m| m.permissions().mode() & 0o077 != 0)
    {
        let _ = f.set_permissions(std::fs::Permissions::from_mode(0o600));
    }
}

#[cfg(not(unix))]
pub(crate) fn make_private(_: &std::fs::File) {}

/// Rotates a running daemon's log once it is past `max`: its stderr goes to the new file.
/// Where stderr cannot be pointed elsewhere (not Unix), the log is rotated at the next start.
pub fn keep_bounded(dir: &Path, max: u64) {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let path = path(dir);
        // Only a daemon whose stderr is this log moves it: a daemon run by hand logs where
        // its user said.
        if !stderr_is(&path) {
            return;
        }
        if !matches!(rotate_if_over(&path, max), Ok(true)) {
            return;
        }
        match open(dir, max) {
            // SAFETY: dup2 onto fd 2 replaces stderr atomically; both descriptors are open.
            Ok(f) => unsafe {
                libc::dup2(f.as_raw_fd(), 2);
            },
            Err(e) => tracing::warn!("cannot open a new {}: {e}", path.display()),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (dir, max);
    }
}

#[cfg(unix)]
fn stderr_is(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(named) = std::fs::metadata(path) else {
        return false;
    };
    // SAFETY: fstat on fd 2 only reads into the zeroed struct it is handed.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(2, &mut st) } != 0 {
        return false;
    }
    #[allow(clippy::unnecessary_cast)] // st_dev is i32 on macOS
    let same = st.st_dev as u64 == named.dev() && st.st_ino as u64 == named.ino();
    same
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_log_is_rotated_and_the_new_one_is_private() {
        let dir = std::env::temp_dir().join(format!("albedo-otel-log-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(path(&dir), vec![b'x'; 100]).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path(&dir), std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        // Under the bound: kept, and made private.
        drop(open(&dir, 1000).unwrap());
        assert_eq!(std::fs::metadata(path(&dir)).unwrap().len(), 100);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path(&dir)).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // Over it: the old one becomes daemon.log.1, one of them kept.
        drop(open(&dir, 50).unwrap());
        assert_eq!(std::fs::metadata(path(&dir)).unwrap().len(), 0);
        assert_eq!(
            std::fs::metadata(dir.join("daemon.log.1")).unwrap().len(),
            100
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
