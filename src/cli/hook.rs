//! `hook` (one command-hook invocation: hand the payload off and return) and `daemon` (the
//! background exporter that drains the journals).

use std::path::PathBuf;

use anyhow::{Context, Result};

use super::{process_env, ExportArgs, HookArgs};
use albedo_otel::sources::command_hooks::{self as hooks, daemon};

/// One hook invocation (see [`hooks::invoke`]); this binary is its own daemon.
pub fn hook(dir: Option<PathBuf>, config: Option<PathBuf>, agent: Option<String>) -> i32 {
    hooks::invoke(
        hooks::HookArgs { dir, config, agent },
        std::env::current_exe,
    )
}

pub fn daemon(args: &ExportArgs, hook_args: &HookArgs) -> Result<i32> {
    let settings = args.settings(Some(hook_args))?;
    let dir = settings.hooks.dir.clone().context(
        "no folder for hook journals: set --hook-dir, ALBEDO_OTEL_HOOK_DIR, XDG_STATE_HOME or HOME",
    )?;
    albedo_otel::fs::create_private_dir(&dir)?;
    // The lock first: hooks that came at once may have started several daemons. One older
    // than this holds it: this one waits for it to hand over.
    let Some(lock) = daemon::Lock::acquire_or_take_over(&dir)? else {
        return Ok(0);
    };
    let mut config = daemon::DaemonConfig::new(dir.clone());
    config.idle_exit = settings.hooks.idle_exit;
    config.stop_grace = settings.hooks.stop_grace;
    tracing::info!("draining hook journals in {}", dir.display());
    // Each payload goes out with the settings it was handed off with; this process's own
    // environment is the first hook's, so only its flags apply to all.
    let mut profiles =
        daemon::Profiles::new(args.overrides(Some(hook_args)), Box::new(process_env));
    let exit = daemon::run(&config, lock, &mut profiles);
    let summary = profiles.close();
    tracing::info!("daemon done ({:?}): {summary}", exit.as_ref().ok());
    exit?;
    Ok(0)
}
