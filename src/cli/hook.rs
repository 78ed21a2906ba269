//! `hook` (one command-hook invocation: hand the payload off and return) and `daemon` (the
//! background exporter that drains the journals).

use std::path::PathBuf;

use anyhow::{Context, Result};

use super::{stream, ExportArgs, HookArgs};
use albedo_otel::sources::command_hooks::{self as hooks, daemon};

/// One hook invocation (see [`hooks::invoke`]); this binary is its own daemon.
pub fn hook(dir: Option<PathBuf>) -> i32 {
    hooks::invoke(dir, std::env::current_exe())
}

pub fn daemon(args: &ExportArgs, hook_args: &HookArgs) -> Result<i32> {
    let settings = args.settings(Some(hook_args))?;
    let dir = settings.hooks.dir.clone().context(
        "no folder for hook journals: set --hook-dir, ALBEDO_OTEL_HOOK_DIR, XDG_STATE_HOME or HOME",
    )?;
    albedo_otel::fs::create_private_dir(&dir)?;
    // The lock first: hooks that came at once may have started several daemons.
    let Some(lock) = daemon::Lock::acquire(&dir)? else {
        return Ok(0);
    };
    let (handle, guard) = stream::start_pipeline(&settings)?;
    let mut config = daemon::DaemonConfig::new(dir.clone());
    config.idle_exit = settings.hooks.idle_exit;
    config.stop_grace = settings.hooks.stop_grace;
    tracing::info!("draining hook journals in {}", dir.display());
    let exit = daemon::run(&config, lock, &handle);
    drop(handle);
    let summary = guard.close();
    tracing::info!("daemon done ({:?}): {summary}", exit.as_ref().ok());
    exit?;
    Ok(0)
}
