//! The daemon's lock: one daemon drains a journal folder at a time, and the lock file says
//! which process it is (for `doctor`, and for people).

use std::fs::File;
use std::io;
use std::path::Path;

use super::super::journal;

pub(super) fn try_lock(dir: &Path) -> io::Result<Option<File>> {
    crate::fs::create_private_dir(dir)?;
    try_lock_in(dir)
}

/// As `try_lock`, in a folder that exists (a hook just wrote its journal there).
pub(super) fn try_lock_in(dir: &Path) -> io::Result<Option<File>> {
    // Private like everything in the folder: it names the daemon's process.
    let f = crate::fs::private_file_options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(journal::DAEMON_LOCK))?;
    super::log::make_private(&f);
    match f.try_lock() {
        Ok(()) => Ok(Some(f)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// The lock file says which process holds it (for `doctor`, and for people).
pub(super) fn write_pid(lock: &File) {
    use std::io::Write;
    let mut f = lock;
    let _ = lock.set_len(0);
    let _ = f.write_all(std::process::id().to_string().as_bytes());
}

/// The pid written in the lock file, if a daemon holds it.
pub fn pid(dir: &Path) -> Option<u32> {
    if !running(dir) {
        return None;
    }
    std::fs::read_to_string(dir.join(journal::DAEMON_LOCK))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether a daemon holds the lock now. A folder that does not exist has none.
pub fn running(dir: &Path) -> bool {
    matches!(try_lock_in(dir), Ok(None))
}

/// The right to drain a journal folder: one daemon at a time holds it.
pub struct Lock(pub(super) File);

impl Lock {
    /// Takes the lock, or `None` if another daemon has it.
    pub fn acquire(dir: &Path) -> io::Result<Option<Lock>> {
        Ok(try_lock(dir)?.map(|f| {
            write_pid(&f);
            Lock(f)
        }))
    }
}
