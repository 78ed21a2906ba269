//! `albedo-otel-hook`: `albedo-otel hook` as a small executable of its own.
//!
//! Claude Code and albedo start a process for every hook event, and the agent waits for it.
//! Most of that wait is the kernel loading the executable, which grows with its size: the full
//! `albedo-otel` carries gRPC, HTTP and TLS clients that a hook never uses. This binary links
//! only the hand-off (`albedo_otel::sources::command_hooks`), no argument parser and no logger, and starts the
//! full `albedo-otel` next to it as the daemon. See docs/performance.md for the difference.

use std::path::PathBuf;

const USAGE: &str = "usage: albedo-otel-hook [--hook-dir DIR] [--config FILE]

Reads one hook payload (Claude Code or albedo) on stdin, appends it to its session's journal,
and starts `albedo-otel daemon` (from the same folder) if none runs. Prints nothing, exits 0.
Journals go to --hook-dir, ALBEDO_OTEL_HOOK_DIR, or $XDG_STATE_HOME/albedo-otel/hooks. The
payload is exported with the settings of --config, ALBEDO_OTEL_CONFIG, or
$XDG_CONFIG_HOME/albedo-otel/config.toml.";

fn main() {
    let mut args = std::env::args_os().skip(1);
    let mut hook = albedo_otel::sources::command_hooks::HookArgs::default();
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--hook-dir") => hook.dir = args.next().map(PathBuf::from),
            Some("--config") => hook.config = args.next().map(PathBuf::from),
            Some("--help" | "-h") => {
                println!("{USAGE}");
                return;
            }
            Some("--version" | "-V") => {
                println!("albedo-otel-hook {}", env!("CARGO_PKG_VERSION"));
                return;
            }
            // Unknown arguments are ignored: a hook must never fail the agent.
            _ => {}
        }
    }
    let daemon = std::env::current_exe().map(|exe| exe.with_file_name("albedo-otel"));
    std::process::exit(albedo_otel::sources::command_hooks::invoke(hook, daemon));
}
