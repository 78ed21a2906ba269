//! Folders and files only their owner can read (0700 and 0600): the spool and the hook
//! journals hold what agents did, arguments and outputs included.

use std::fs::{self, OpenOptions};
use std::io;
use std::path::Path;

/// Makes `dir` (and its parents), and makes it private even if it was already there.
pub fn create_dir(dir: &Path) -> io::Result<()> {
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

/// Options that create a file private to its owner; the caller says how to open it.
pub fn file_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
}
