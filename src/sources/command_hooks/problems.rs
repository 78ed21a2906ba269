//! A hook must never fail its agent: every step runs under `catch_unwind`, a panic's message
//! is kept rather than printed (the agent may show stderr), and problems go to the daemon's
//! log, never to the agent.

use std::io::Write;
use std::path::Path;

use super::journal;

static PANIC: std::sync::OnceLock<String> = std::sync::OnceLock::new();

pub(crate) fn caught<T>(f: impl FnOnce() -> T) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).ok()
}

pub(crate) fn panic_message() -> &'static str {
    PANIC.get().map_or("(no message)", String::as_str)
}

/// Keeps a panic's message for the daemon's log instead of printing it: the default hook
/// prints to stderr, which the agent may show.
pub(crate) fn keep_panic_messages() {
    std::panic::set_hook(Box::new(|info| {
        let _ = PANIC.set(info.to_string());
    }));
}

pub(crate) fn log_problems(dir: &Path, problems: &[String]) {
    if let Ok(mut log) = crate::fs::private_file_options()
        .create(true)
        .append(true)
        .open(dir.join(journal::DAEMON_LOG))
    {
        for p in problems {
            let _ = writeln!(log, "albedo-otel hook: {p}");
        }
    }
}
