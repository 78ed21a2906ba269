//! Running an agent's CLI the way its user does, for every agent's test: finding the CLI, a
//! clean environment, a test's own folders and collector, the user's own hook, installing as
//! a user would, killing the agent mid-call, and waiting for the daemon to finish.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::{files_containing, require_tool, scratch, wait_until, which, Receiver, Scratch};

/// Agent `name`'s CLI, as its spec pins it (`Spec::cli`, which `.ci/run` installs): the
/// variable the spec names when it names a file, else its executable on PATH. Without either
/// the test is skipped, or fails under `ALBEDO_OTEL_REQUIRE_TOOLS`.
pub fn find_cli(name: &str) -> Option<PathBuf> {
    let spec = albedo_otel::sources::command_hooks::agent::Agent::from_name(name)
        .unwrap_or_else(|| panic!("no agent named {name}"))
        .spec();
    let cli = spec
        .cli
        .unwrap_or_else(|| panic!("{name}'s spec names no CLI"));
    let found = std::env::var_os(cli.var)
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .or_else(|| which(cli.bin));
    require_tool(
        &format!("{} ({})", cli.bin, spec.title),
        found,
        &format!(
            "install it with `npm install {}@{}` and set {} to node_modules/.bin/{}",
            cli.package, cli.version, cli.var, cli.bin
        ),
    )
}

/// A hook of the user's own, in their home: it answers `answer` to a force-push, and nothing
/// to anything else.
pub fn deny_force_push(home: &Path, answer: &serde_json::Value) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let deny = home.join("deny-force-push.sh");
    std::fs::write(
        &deny,
        format!("#!/bin/sh\ncase \"$(cat)\" in *'git push --force'*) echo '{answer}';; esac\n"),
    )
    .unwrap();
    std::fs::set_permissions(&deny, std::fs::Permissions::from_mode(0o755)).unwrap();
    deny
}

/// `albedo-otel install AGENT [FLAGS]` (`what`) as a user runs it: the standard variables exported, the
/// collector's key among them. `cmd` carries the test's clean environment. Returns what it
/// printed.
pub fn install_as_user(
    mut cmd: Command,
    what: &[&str],
    hook_dir: &Path,
    rx: &Receiver,
    key: &str,
) -> String {
    let out = cmd
        .arg("install")
        .args(what)
        .env("ALBEDO_OTEL_HOOK_DIR", hook_dir)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", rx.grpc_url())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .env("OTEL_EXPORTER_OTLP_HEADERS", format!("x-api-key={key}"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    said
}

/// Waits for the hook daemon to send everything and exit, checks that the collector refused
/// nothing for a missing key, and returns the daemon's log.
pub fn drained(hook_dir: &Path, rx: &Receiver) -> String {
    use albedo_otel::sources::command_hooks::{daemon, journal};
    wait_until(
        Duration::from_secs(60),
        "the hook daemon to drain and exit",
        || journal::list(hook_dir).is_empty() && !daemon::running(hook_dir),
    );
    let log = std::fs::read_to_string(hook_dir.join("daemon.log")).unwrap_or_default();
    assert_eq!(rx.unauthorized(), 0, "{log}");
    log
}

/// A clean environment for an agent and albedo-otel under `home`: its own `HOME` and XDG
/// folders, the test's `PATH`, and the daemon's spool in `spool`, idle after a second.
pub fn isolated_env(cmd: &mut Command, home: &Path, spool: &Path) {
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("TERM", "dumb")
        .env("LANG", "C.UTF-8")
        .env("ALBEDO_OTEL_SPOOL_DIR", spool)
        .env("ALBEDO_OTEL_IDLE_EXIT", "1s");
}

/// A key a user pasted into a prompt (random, not a real one; from the redaction corpus).
pub const PASTED_KEY: &str = "sk-ant-api03-odJFCrnl2edlBDdz1C5Jau2RJtBRnlWmTSHf6pWkLUyifDLkDmWJ6UuVTAIjvFu7WICPhDeOZIiBOB_Y6sHrFH2ZUCr_lAA";

/// Turns message capture on for an `install` (the setting goes into the configuration file).
pub fn capture_messages(cmd: &mut Command) {
    cmd.env("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true");
}

/// Starts the agent (`cmd`, in a process group of its own), waits until a file under `dir`
/// holds `marker` (its long call has begun), then kills the group with SIGKILL, as a closed
/// terminal can: the agent says nothing more.
#[cfg(unix)]
pub fn kill_mid_call(mut cmd: Command, dir: &Path, marker: &str) {
    use std::os::unix::process::CommandExt;
    let mut child = cmd
        .process_group(0)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let begun = || !files_containing(dir, marker).is_empty();
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while !begun() {
        if std::time::Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "the long call never began: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let group = format!("-{}", child.id());
    let killed = Command::new("kill").args(["-KILL", "--", &group]).status();
    assert!(killed.is_ok_and(|s| s.success()), "kill -KILL {group}");
    child.wait().unwrap();
}

/// One agent test's world: a collector that demands `key`, and a home, a work folder, a hook
/// folder and a spool of its own (removed when the test passes), in that order.
pub fn lab(name: &str, key: &str) -> (Receiver, Scratch, Scratch, Scratch, Scratch) {
    let rx = Receiver::start();
    rx.require_header("x-api-key", key);
    let dir = |what: &str| scratch(&format!("{name}-{what}"));
    (rx, dir("home"), dir("work"), dir("hooks"), dir("spool"))
}

/// `albedo-otel` in the environment `env` makes for `home` and `spool`.
pub fn albedo_otel(env: fn(&mut Command, &Path, &Path), home: &Path, spool: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
    env(&mut cmd, home, spool);
    cmd
}
