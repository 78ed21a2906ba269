//! Starting the daemon from a hook: only when none holds the lock, in a process group and a
//! folder of its own, with an allow-listed environment (the hook's may hold an agent's API
//! keys).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::super::daemon;

/// The variables a daemon is started with: where things are (`HOME`, `XDG_*`, `PATH`, the
/// temporary folder), who runs it (the login name, a `user.id` of last resort), the TLS
/// roots a collector's certificate may need, locale, and our own
/// `ALBEDO_OTEL_*` but their headers. Never `OTEL_*`: those of an agent that passes its
/// environment down are its shell's, meant for other programs.
pub fn daemon_may_inherit(name: &str) -> bool {
    const KEEP: &[&str] = &[
        "HOME",
        "USER",
        "LOGNAME",
        "USERNAME",
        "PATH",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "RUST_BACKTRACE",
        // Windows: where its system, profile and temporary folders are.
        "SYSTEMROOT",
        "USERPROFILE",
        "APPDATA",
        "LOCALAPPDATA",
        "TEMP",
        "TMP",
    ];
    KEEP.iter().any(|k| k.eq_ignore_ascii_case(name))
        || name.starts_with("XDG_")
        || (name.starts_with("ALBEDO_OTEL_") && !name.contains("HEADERS"))
}

/// Starts `exe daemon …` in the background unless a daemon as new as this hook holds the
/// lock (one older is taken over from: it may not know this hook's agent; see
/// [`daemon::Lock::acquire_or_take_over`]); `exe` is found only then (a hook whose daemon
/// runs, the usual case, does not look). The daemon gets a process group of its own, so a
/// host that kills the hook's group when the hook returns (as albedo does) leaves it running.
pub fn ensure_daemon(
    dir: &Path,
    exe: impl FnOnce() -> std::io::Result<PathBuf>,
    args: &[String],
) -> Result<bool, String> {
    if let Some(holder) = daemon::holder(dir) {
        if !daemon::older(holder.version.as_deref(), daemon::VERSION)
            || daemon::successor_waits(dir)
        {
            return Ok(false);
        }
    }
    let exe = exe().map_err(|e| format!("cannot find albedo-otel: {e}"))?;
    spawn_daemon(dir, &exe, args)
        .map_err(|e| format!("cannot start {} daemon: {e}", exe.display()))?;
    Ok(true)
}

fn spawn_daemon(dir: &Path, exe: &Path, args: &[String]) -> std::io::Result<()> {
    let log = daemon::log::open(dir, daemon::log::MAX_LOG)?;
    let mut cmd = Command::new(exe);
    // The daemon outlives the hook that starts it and serves every session after it, so it
    // gets no more of that hook's environment than it needs (an agent that passes its whole
    // environment down hands its hooks API keys), and a folder of its own rather than that
    // session's workspace. Each payload is exported with the settings it was handed off with.
    cmd.env_clear();
    for (k, v) in std::env::vars_os() {
        if k.to_str().is_some_and(daemon_may_inherit) {
            cmd.env(k, v);
        }
    }
    cmd.current_dir(dir);
    cmd.arg("daemon")
        .arg("--hook-dir")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    cmd.spawn()?;
    Ok(())
}
