//! Folders a test works in, removed when the test is done with them: a real agent's home
//! holds hundreds of megabytes (Copilot unpacks itself into it), and leftovers from every run
//! once helped fill CI's disk.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A new, empty folder under the system's temporary folder, left in place. Prefer [`scratch`]
/// wherever the caller can hold the guard.
pub fn temp_dir(what: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "albedo-otel-test-{what}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A new, empty folder that is removed when the guard drops, unless the test is failing:
/// then it stays, and its path is printed, for whoever reads the failure.
#[must_use = "the folder is removed when this guard drops"]
pub struct Scratch(PathBuf);

pub fn scratch(what: &str) -> Scratch {
    Scratch(temp_dir(what))
}

impl Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept for the failure: {}", self.0.display());
        } else if let Err(e) = std::fs::remove_dir_all(&self.0) {
            eprintln!("could not remove {}: {e}", self.0.display());
        }
    }
}

/// A git checkout of `branch` at `sha`, written file by file as git leaves one (no `git`
/// needed): `origin` at `remote`, and `user.email` when given.
pub fn git_checkout(remote: &str, branch: &str, sha: &str, email: Option<&str>) -> Scratch {
    let d = scratch("checkout");
    let git = d.join(".git");
    std::fs::create_dir_all(git.join("refs/heads")).unwrap();
    std::fs::write(git.join("HEAD"), format!("ref: refs/heads/{branch}\n")).unwrap();
    let user = email.map_or(String::new(), |e| format!("[user]\n\temail = {e}\n"));
    std::fs::write(
        git.join("config"),
        format!("[core]\n\tbare = false\n[remote \"origin\"]\n\turl = {remote}\n{user}"),
    )
    .unwrap();
    std::fs::write(git.join("refs/heads").join(branch), format!("{sha}\n")).unwrap();
    d
}
