//! `hook` (one command-hook invocation: hand the payload off and return) and `daemon` (the
//! background exporter that drains the journals).

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};

use super::{stream, ExportArgs};
use albedo_otel::hooks::{self, daemon, journal};

/// Payloads larger than this are cut off (a tool output is cut to 64 KiB before hooks see it).
const MAX_PAYLOAD: u64 = 16 << 20;

pub fn hook_dir(flag: Option<PathBuf>) -> Result<PathBuf> {
    flag.or_else(|| super::var("ALBEDO_OTEL_HOOK_DIR").map(Into::into))
        .or_else(|| journal::default_dir(&|k| std::env::var(k).ok()))
        .context("no folder for hook journals: set --hook-dir, ALBEDO_OTEL_HOOK_DIR, XDG_STATE_HOME or HOME")
}

/// One hook invocation. Whatever happens, it prints nothing and exits 0: a trace exporter
/// must never steer or stall the agent. Problems go to the daemon's log.
pub fn hook(dir: Option<PathBuf>) -> i32 {
    let Ok(dir) = hook_dir(dir) else { return 0 };
    let mut payload = String::new();
    let read = std::io::stdin()
        .lock()
        .take(MAX_PAYLOAD)
        .read_to_string(&mut payload);
    let result = read
        .map_err(anyhow::Error::from)
        .and_then(|_| hooks::hand_off(&dir, &payload).map_err(anyhow::Error::from))
        .and_then(|_| {
            let exe = std::env::current_exe()?;
            hooks::ensure_daemon(&dir, &exe, &[]).map_err(anyhow::Error::from)
        });
    if let Err(e) = result {
        use std::io::Write;
        if let Ok(mut log) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(journal::DAEMON_LOG))
        {
            let _ = writeln!(log, "albedo-otel hook: {e:#}");
        }
    }
    0
}

pub fn daemon(
    args: &ExportArgs,
    dir: Option<PathBuf>,
    idle_exit: Duration,
    stop_grace: Duration,
) -> Result<i32> {
    let dir = hook_dir(dir)?;
    journal::ensure_dir(&dir)?;
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
