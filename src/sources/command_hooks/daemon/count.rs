//! What the daemon does to the files on disk, counted per file in tests: the promise that an
//! idle daemon's work does not grow with the journals on disk is checked on these counts, not
//! on a timer. Each is said with the path it is about (`metadata(count::stat(path))`);
//! outside tests each gives the path back and does nothing.

#[cfg(test)]
pub(super) use counted::*;

#[cfg(test)]
mod counted {
    use std::cell::RefCell;
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};

    /// One thread's counts: the daemon runs on its caller's thread.
    #[derive(Debug, Default, Clone)]
    pub(crate) struct Counts {
        /// Stats, per file.
        pub stats: HashMap<PathBuf, usize>,
        /// Opens (each read is one), per file.
        pub opens: HashMap<PathBuf, usize>,
        /// Checks whether a session's agent process runs.
        pub process_checks: usize,
        /// Folder listings, and the entries they read.
        pub listings: usize,
        pub listed: usize,
        /// The daemon's passes.
        pub passes: usize,
    }

    thread_local! {
        static COUNTS: RefCell<Counts> = RefCell::default();
    }

    pub(crate) fn with(f: impl FnOnce(&mut Counts)) {
        COUNTS.with(|c| f(&mut c.borrow_mut()));
    }

    /// The counts so far on this thread, reset.
    pub(crate) fn take() -> Counts {
        COUNTS.with(|c| std::mem::take(&mut *c.borrow_mut()))
    }

    pub(crate) fn stat(path: &Path) -> &Path {
        with(|c| *c.stats.entry(path.to_path_buf()).or_default() += 1);
        path
    }

    pub(crate) fn open(path: &Path) -> &Path {
        with(|c| *c.opens.entry(path.to_path_buf()).or_default() += 1);
        path
    }

    pub(crate) fn process_check() {
        with(|c| c.process_checks += 1);
    }

    pub(crate) fn listed(paths: Vec<PathBuf>) -> Vec<PathBuf> {
        with(|c| {
            c.listings += 1;
            c.listed += paths.len();
        });
        paths
    }

    pub(crate) fn pass() {
        with(|c| c.passes += 1);
    }
}

#[cfg(not(test))]
mod nothing {
    use std::path::{Path, PathBuf};
    pub(crate) fn stat(path: &Path) -> &Path {
        path
    }
    pub(crate) fn open(path: &Path) -> &Path {
        path
    }
    pub(crate) fn process_check() {}
    pub(crate) fn listed(paths: Vec<PathBuf>) -> Vec<PathBuf> {
        paths
    }
    pub(crate) fn pass() {}
}

#[cfg(not(test))]
pub(super) use nothing::*;
