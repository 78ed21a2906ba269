//! `hook` (one command-hook invocation: hand the payload off and return) and `daemon` (the
//! background exporter that drains the journals).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};

use super::{stream, ExportArgs};
use albedo_otel::hooks::{self, daemon};

pub fn hook_dir(flag: Option<PathBuf>) -> Result<PathBuf> {
    hooks::hook_dir(flag, &|k| std::env::var(k).ok()).context(
        "no folder for hook journals: set --hook-dir, ALBEDO_OTEL_HOOK_DIR, XDG_STATE_HOME or HOME",
    )
}

/// One hook invocation (see [`hooks::invoke`]); this binary is its own daemon.
pub fn hook(dir: Option<PathBuf>) -> i32 {
    hooks::invoke(dir, std::env::current_exe())
}

pub fn daemon(
    args: &ExportArgs,
    dir: Option<PathBuf>,
    idle_exit: Duration,
    stop_grace: Duration,
) -> Result<i32> {
    let dir = hook_dir(dir)?;
    albedo_otel::private_fs::create_dir(&dir)?;
    // The lock first: hooks that came at once may have started several daemons.
    let Some(lock) = daemon::Lock::acquire(&dir)? else {
        return Ok(0);
    };
    let (handle, guard) = stream::start_pipeline(args)?;
    let mut config = daemon::DaemonConfig::new(dir.clone());
    config.idle_exit = idle_exit;
    config.stop_grace = stop_grace;
    tracing::info!("draining hook journals in {}", dir.display());
    let exit = daemon::run(&config, lock, &handle);
    drop(handle);
    let summary = guard.close();
    tracing::info!("daemon done ({:?}): {summary}", exit.as_ref().ok());
    exit?;
    Ok(0)
}
