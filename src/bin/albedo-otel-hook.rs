//! `albedo-otel-hook`: `albedo-otel hook` as a small executable of its own.
//!
//! Claude Code and albedo start a process for every hook event, and the agent waits for it.
//! Most of that wait is the kernel loading the executable, which grows with its size: the full
//! `albedo-otel` carries gRPC, HTTP and TLS clients that a hook never uses. This binary links
//! only the hand-off (`albedo_otel::sources::command_hooks`), no argument parser and no logger, and starts the
//! full `albedo-otel` next to it as the daemon. See docs/performance.md for the difference.
//!
//! It has a C `main` (`no_main`): std's own start-up installs a stack-overflow handler, which
//! reads `/proc/self/maps` and sets up an alternate signal stack, a dozen system calls a
//! process this short does not need. A stack overflow is then a plain SIGSEGV; a hook's
//! stack is a few frames deep. The two parts of std's start-up that do matter are done here
//! ([`start_like_std`]).
#![no_main]

use std::ffi::OsString;
use std::path::PathBuf;

const USAGE: &str = "usage: albedo-otel-hook [--hook-dir DIR] [--config FILE] [--agent NAME]

Reads one hook payload (Claude Code or albedo; another agent's with --agent, such as gemini) on
stdin, appends it to its session's journal, and starts `albedo-otel daemon` (from the same
folder) if none runs. With --agent opencode it reads a payload a line until stdin closes, and
journals each as it comes. Prints nothing, exits 0.
Journals go to --hook-dir, ALBEDO_OTEL_HOOK_DIR, or $XDG_STATE_HOME/albedo-otel/hooks. The
payload is exported with the settings of --config, ALBEDO_OTEL_CONFIG, or
$XDG_CONFIG_HOME/albedo-otel/config.toml.";

#[no_mangle]
pub extern "C" fn main(
    argc: std::ffi::c_int,
    argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    start_like_std();
    let mut args = arguments(argc, argv).into_iter().skip(1);
    let mut hook = albedo_otel::sources::command_hooks::HookArgs::default();
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--hook-dir") => hook.dir = args.next().map(PathBuf::from),
            Some("--config") => hook.config = args.next().map(PathBuf::from),
            // Journaled as given: a name this build does not know is the daemon's to report.
            Some("--agent") => hook.agent = args.next().map(|a| a.to_string_lossy().into_owned()),
            Some("--help" | "-h") => {
                println!("{USAGE}");
                return 0;
            }
            Some("--version" | "-V") => {
                println!("albedo-otel-hook {}", env!("CARGO_PKG_VERSION"));
                return 0;
            }
            // Unknown arguments are ignored: a hook must never fail the agent.
            _ => {}
        }
    }
    let daemon = || std::env::current_exe().map(|exe| exe.with_file_name("albedo-otel"));
    albedo_otel::sources::command_hooks::invoke(hook, daemon)
}

/// What std's start-up does that this process relies on: SIGPIPE ignored, so that a write to
/// a closed pipe is an error rather than a silent death before the payload is journaled; and
/// fds 0-2 open, so that a host that closed one (a daemonised runner) does not get the
/// journal or the daemon's log opened as "stdout" and written to by a stray print.
#[cfg(unix)]
fn start_like_std() {
    // SAFETY: setting a signal's disposition to SIG_IGN and asking about an fd number are
    // plain system calls with no memory passed; `open` gets a NUL-terminated literal.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        for fd in 0..3 {
            if libc::fcntl(fd, libc::F_GETFD) == -1
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
            {
                // `open` takes the lowest free number, which is this one.
                libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            }
        }
    }
}

#[cfg(not(unix))]
fn start_like_std() {}

/// The arguments from `main`'s own `argv`. `std::env::args` is not used: without std's
/// start-up it is only filled where libc hands the arguments to initialisers (glibc,
/// macOS), and would be empty on musl.
#[cfg(unix)]
fn arguments(argc: std::ffi::c_int, argv: *const *const std::ffi::c_char) -> Vec<OsString> {
    use std::os::unix::ffi::OsStrExt;
    let count = usize::try_from(argc).unwrap_or(0);
    if argv.is_null() {
        return Vec::new();
    }
    (0..count)
        .map(|i| {
            // SAFETY: the C runtime passes `argc` valid, NUL-terminated strings in `argv`,
            // which live for the whole process.
            let arg = unsafe { *argv.add(i) };
            if arg.is_null() {
                return OsString::new();
            }
            let bytes = unsafe { std::ffi::CStr::from_ptr(arg) }.to_bytes();
            std::ffi::OsStr::from_bytes(bytes).to_owned()
        })
        .collect()
}

#[cfg(not(unix))]
fn arguments(_argc: std::ffi::c_int, _argv: *const *const std::ffi::c_char) -> Vec<OsString> {
    std::env::args_os().collect()
}
