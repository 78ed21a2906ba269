//! The daemon's lock: one daemon drains a journal folder at a time, and the lock file says
//! which process it is and which version of albedo-otel (for `doctor`, for people, and for a
//! newer hook, whose daemon takes over from an older one: an older daemon does not know a
//! newer agent's payloads).
//!
//! Taking over: a hook whose version is newer than the lock's holder starts its own daemon,
//! which takes `daemon.next` (one successor at a time), writes its version there and waits
//! for `daemon.lock`. The holder sees a newer successor wait (it looks once a second), ends
//! its open turns' pass and lets go; the successor drains from the resume points it saved.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use super::super::journal;

/// The file a daemon waiting to take over holds locked, its pid and version written in it.
pub const DAEMON_NEXT: &str = "daemon.next";

/// This build's version, as the lock file names it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

fn open_lock_file(dir: &Path, name: &str) -> io::Result<File> {
    // Private like everything in the folder: it names the daemon's process.
    let f = crate::fs::private_file_options()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(dir.join(name))?;
    super::log::make_private(&f);
    Ok(f)
}

fn try_lock_file(f: File) -> io::Result<Option<File>> {
    match f.try_lock() {
        Ok(()) => Ok(Some(f)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

pub(super) fn try_lock(dir: &Path) -> io::Result<Option<File>> {
    crate::fs::create_private_dir(dir)?;
    try_lock_in(dir)
}

/// As `try_lock`, in a folder that exists (a hook just wrote its journal there).
pub(super) fn try_lock_in(dir: &Path) -> io::Result<Option<File>> {
    try_lock_file(open_lock_file(dir, journal::DAEMON_LOCK)?)
}

/// Writes `pid version` in a lock file (for `doctor`, for people, and for newer hooks): over
/// what was there, then cut to its length, so that a hook reading meanwhile never finds it
/// empty.
pub(super) fn write_holder(lock: &File, version: &str) {
    use std::io::{Seek, SeekFrom};
    let mut f = lock;
    let text = format!("{} {version}", std::process::id());
    let _ = f.seek(SeekFrom::Start(0));
    if f.write_all(text.as_bytes()).is_ok() {
        let _ = lock.set_len(text.len() as u64);
    }
}

/// Who holds a lock file, as it says: its pid, and its version (none from a daemon older
/// than versions in the lock).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: Option<u32>,
    pub version: Option<String>,
}

fn read_holder(path: &Path) -> Holder {
    holder_in(std::fs::read_to_string(path).ok().as_deref())
}

/// What a lock file's text says. One that cannot be read (Windows locks reads out too) or
/// names no pid says an unknown version, which is not taken for older.
fn holder_in(text: Option<&str>) -> Holder {
    let mut words = text.unwrap_or_default().split_whitespace();
    match words.next().and_then(|w| w.parse().ok()) {
        Some(pid) => Holder {
            pid: Some(pid),
            version: words.next().map(str::to_string),
        },
        None => Holder {
            pid: None,
            version: Some("unknown".into()),
        },
    }
}

/// Who holds the lock, if a daemon does: the file that was tried is the file read (the check
/// every hook makes costs one read more than [`running`]).
pub fn holder(dir: &Path) -> Option<Holder> {
    use std::io::Read;
    let mut f = open_lock_file(dir, journal::DAEMON_LOCK).ok()?;
    match f.try_lock() {
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut text = String::new();
            let read = f.read_to_string(&mut text).ok().map(|_| text.as_str());
            Some(holder_in(read))
        }
        _ => None,
    }
}

/// The pid written in the lock file, if a daemon holds it.
pub fn pid(dir: &Path) -> Option<u32> {
    holder(dir)?.pid
}

/// Whether a daemon holds the lock now. A folder that does not exist has none.
pub fn running(dir: &Path) -> bool {
    matches!(try_lock_in(dir), Ok(None))
}

/// Whether version `theirs` is older than `ours` (`major.minor.patch`, a pre-release before
/// its release). A holder that names no version is older than any that does; one that cannot
/// be read is not taken for older.
pub fn older(theirs: Option<&str>, ours: &str) -> bool {
    let Some(theirs) = theirs else { return true };
    fn key(v: &str) -> Option<(Vec<u64>, bool, &str)> {
        let (core, pre) = v.split_once('-').unwrap_or((v, ""));
        let core = core.split('+').next().unwrap_or(core);
        let nums = core
            .split('.')
            .map(|n| n.parse().ok())
            .collect::<Option<Vec<u64>>>()?;
        // A release sorts after its pre-releases.
        Some((nums, pre.is_empty(), pre))
    }
    match (key(theirs), key(ours)) {
        (Some(a), Some(b)) => a < b,
        _ => false,
    }
}

/// Whether a daemon newer than `ours` waits to take over (see the module's doc). A
/// `daemon.next` left by a successor that died is emptied, whatever its version: hooks start
/// no successor while it names one.
pub(super) fn newer_waits(dir: &Path, ours: &str) -> bool {
    let next = read_holder(&dir.join(DAEMON_NEXT));
    if next.pid.is_none() {
        return false;
    }
    match open_lock_file(dir, DAEMON_NEXT).and_then(try_lock_file) {
        Ok(None) => older(Some(ours), next.version.as_deref().unwrap_or("")),
        Ok(Some(stale)) => {
            let _ = stale.set_len(0);
            false
        }
        Err(_) => false,
    }
}

/// Whether a daemon that will take over from the holder waits already: a hook newer than the
/// holder starts one only if not.
pub fn successor_waits(dir: &Path) -> bool {
    read_holder(&dir.join(DAEMON_NEXT)).pid.is_some()
}

/// The right to drain a journal folder: one daemon at a time holds it.
pub struct Lock {
    pub(super) file: File,
    /// The version it holds it as.
    pub(super) version: String,
}

impl Lock {
    /// Takes the lock, or `None` if another daemon has it.
    pub fn acquire(dir: &Path) -> io::Result<Option<Lock>> {
        Self::acquire_as(dir, VERSION)
    }

    /// As [`Lock::acquire`], naming `version` in the lock (a test's stand-in for another
    /// albedo-otel's daemon).
    pub fn acquire_as(dir: &Path, version: &str) -> io::Result<Option<Lock>> {
        Ok(try_lock(dir)?.map(|file| {
            write_holder(&file, version);
            Lock {
                file,
                version: version.to_string(),
            }
        }))
    }

    /// Takes the lock; if a daemon older than this one holds it, waits for it to hand over
    /// (see the module's doc). `None` if a daemon as new holds it, or another waits already.
    pub fn acquire_or_take_over(dir: &Path) -> io::Result<Option<Lock>> {
        if let Some(lock) = Self::acquire(dir)? {
            return Ok(Some(lock));
        }
        let holder = read_holder(&dir.join(journal::DAEMON_LOCK));
        if !older(holder.version.as_deref(), VERSION) {
            return Ok(None);
        }
        let Some(next) = try_lock_file(open_lock_file(dir, DAEMON_NEXT)?)? else {
            return Ok(None);
        };
        write_holder(&next, VERSION);
        tracing::info!(
            "a daemon of albedo-otel {} (pid {}) drains this folder; waiting for it to hand over",
            holder.version.as_deref().unwrap_or("older than 0.1"),
            holder.pid.unwrap_or(0)
        );
        let file = open_lock_file(dir, journal::DAEMON_LOCK)?;
        let waited = file.lock();
        // Emptied before it is let go: a successor that died leaves its pid, which the
        // holder finds unlocked (see `newer_waits`).
        let _ = next.set_len(0);
        drop(next);
        waited?;
        write_holder(&file, VERSION);
        Ok(Some(Lock {
            file,
            version: VERSION.to_string(),
        }))
    }
}
