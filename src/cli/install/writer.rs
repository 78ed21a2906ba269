//! Each way an agent takes our hook (its spec's [`Form`]) has a writer: how `install` puts the
//! hook in the agent's file, how `uninstall` takes it out, and what `doctor` reads back. A new
//! form is a writer and one line in [`super::writer_of`], not a branch in each command.

use std::path::Path;

use anyhow::Result;

use super::Target;

/// How one form is written and read. `file` is where the target's scope puts it (a folder, for
/// hook scripts).
pub(super) trait Writer {
    /// Reads `file` before anything is written, so that a file it cannot edit fails the
    /// install before the configuration file changes.
    fn check(&self, file: &Path) -> Result<()> {
        let _ = file;
        Ok(())
    }

    /// Puts `command` in `file`, running on `events`: what to tell the user.
    fn install(
        &self,
        file: &Path,
        command: &str,
        events: &str,
        target: &Target,
    ) -> Result<Vec<String>>;

    /// Takes ours out of `file`, and nothing else: what to tell the user.
    fn uninstall(&self, file: &Path, target: &Target) -> Result<Vec<String>>;

    /// Our hook commands in `file`, for `doctor` (one per event, usually the same).
    fn commands(&self, file: &Path) -> Vec<String>;
}

/// "installed in FILE" or "already installed in FILE", as `changed` says.
pub(super) fn installed(changed: bool, file: &Path) -> String {
    let already = if changed { "" } else { "already " };
    format!("{already}installed in {}", file.display())
}
