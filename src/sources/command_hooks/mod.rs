//! The command-hook source (Claude Code, Gemini CLI, albedo's `hooks` extension): the hook process, the
//! per-session journal it appends to, and the daemon that turns journaled payloads into
//! records. How one agent's payloads become records lives in a folder of its own
//! ([`claude_code`], [`gemini`]); [`registry`] lists every agent's adapter and says which payload is whose.
//!
//! ```text
//!  agent ──payload on stdin──> albedo-otel hook ──append──> journal ──> albedo-otel daemon ──> pipeline
//!                              (exit 0, no output)          (per session)  (started on demand)
//! ```
//!
//! The hook is on the agent's critical path, so it does the least it can: check the payload
//! is JSON, append it to its session's journal, and start the daemon if none holds the lock.
//! It never talks to a collector, never prints, and always exits 0.
//!
//! [`invoke`] is that whole process. It runs as `albedo-otel hook` and as `albedo-otel-hook`,
//! a separate small binary: a process is started for every event, and most of its cost is the
//! kernel loading the executable, which grows with its size. The small binary links only this
//! module and is what `albedo-otel install` puts in the agent's settings when it is there.

pub mod adapter;
pub mod agent;
pub mod claude_code;
pub mod cline;
pub mod codex;
#[cfg(test)]
mod conformance;
pub mod copilot;
pub mod cursor;
pub mod daemon;
pub mod doctor;
pub mod files;
pub mod foreign;
pub mod gemini;
mod held;
pub mod journal;
pub mod kilo;
pub mod kimi;
pub mod opencode;
pub mod oversized;
pub mod pi;
mod profiles;
pub mod qwen;
mod records;
pub mod registry;
pub mod session_key;
pub mod spec;
#[cfg(test)]
mod steps;
pub mod stream;
mod turn;

use std::borrow::Cow;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;
use serde_json::value::RawValue;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum HookError {
    #[error("the hook payload is not JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("the hook payload has no session_id")]
    NoSession,
    #[error("cannot write the journal in {dir}: {source}")]
    Journal {
        dir: String,
        #[source]
        source: std::io::Error,
    },
}

/// What the hook reads of every payload, in one pass: its session, and what tells another
/// agent's payload from Claude Code's (see [`foreign`]; raw, so that a field of a shape no
/// one expected never costs the payload).
#[derive(Deserialize)]
pub(crate) struct Minimal<'a> {
    #[serde(borrow)]
    pub(crate) session_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(crate) transcript_path: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) hook_event_name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) doctor_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) cursor_version: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) conversation_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) generation_id: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "sessionId")]
    pub(crate) session_id_camel: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "hookEventName")]
    pub(crate) hook_event_camel: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "transcriptPath")]
    pub(crate) transcript_path_camel: Option<&'a RawValue>,
}

/// Payloads larger than this are not journaled whole (a tool output is cut to 64 KiB before
/// hooks see it): what identifies the event is, marked truncated (see [`oversized`]).
pub(crate) const MAX_PAYLOAD: u64 = 16 << 20;

/// Where the journals go: the flag, `ALBEDO_OTEL_HOOK_DIR`, or the default under
/// `XDG_STATE_HOME` (or `HOME`). The hook reads only this of the configuration: everything
/// else is the daemon's to resolve.
pub fn hook_dir(flag: Option<PathBuf>, env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    flag.or_else(|| set(crate::config::env::ALBEDO_OTEL_HOOK_DIR).map(Into::into))
        .or_else(|| crate::config::default_hook_dir(&set))
}

/// What a hook is told on its command line.
#[derive(Debug, Clone, Default)]
pub struct HookArgs {
    /// Where journals go (`--hook-dir`).
    pub dir: Option<PathBuf>,
    /// The configuration file the daemon exports this payload with (`--config`).
    pub config: Option<PathBuf>,
    /// Whose hook this is (`--agent`): none for Claude Code's and albedo's.
    pub agent: Option<String>,
}

/// The settings a payload is handed off with: the configuration file in force for the hook
/// (its `--config`, `ALBEDO_OTEL_CONFIG`, or the default file if it exists), and the
/// `OTEL_*`/`ALBEDO_OTEL_*` variables the hook saw. Header variables are not recorded: they
/// are secrets, and their place is the configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize, Deserialize)]
pub struct HandOff {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
}

impl HandOff {
    /// What this process is handed: its `--config`, else the variable or the default file,
    /// and its own variables. A variable whose name or value is not UTF-8 is left out (and
    /// named in `skipped`, if it is one of ours): `std::env::vars` would panic on it, and a
    /// Latin-1 value in a user's shell profile must not cost every event.
    /// `otel`: whether the hook's `OTEL_*` variables are the agent's to hand on (see
    /// [`agent::Agent::passes_its_environment`]); `ALBEDO_OTEL_*` always are.
    pub fn of_process(config: Option<PathBuf>, otel: bool, skipped: &mut Vec<String>) -> HandOff {
        let env = |k: &str| std::env::var(k).ok();
        // Named by the variable (any bytes: it is a path), else the default file if it exists.
        let named = std::env::var_os(crate::config::env::ALBEDO_OTEL_CONFIG)
            .filter(|v| !v.to_string_lossy().trim().is_empty())
            .map(PathBuf::from);
        let config = config.or(named).or_else(|| {
            let path = crate::config::file::default_path(&env)?;
            path.is_file().then_some(path)
        });
        let ours = |k: &str| {
            (((otel && k.starts_with("OTEL_")) || k.starts_with("ALBEDO_OTEL_"))
                && !k.contains("HEADERS")
                && k != crate::config::env::ALBEDO_OTEL_CONFIG)
                || is_session_place(k)
        };
        let mut env = std::collections::BTreeMap::new();
        for (k, v) in std::env::vars_os() {
            let name = k.to_string_lossy();
            if !ours(&name) {
                continue;
            }
            match (k.to_str(), v.into_string()) {
                (Some(k), Ok(v)) => {
                    env.insert(k.to_string(), v);
                }
                _ => skipped.push(name.into_owned()),
            }
        }
        HandOff { config, env }
    }
}

/// The variables that say where a session's files are (`HOME`, `XDG_*`): handed off with
/// each payload, so the daemon, which serves every session, resolves each session's own
/// (its spool, its default configuration) rather than the first hook's.
pub fn is_session_place(name: &str) -> bool {
    matches!(
        name,
        "HOME" | "XDG_CONFIG_HOME" | "XDG_STATE_HOME" | "XDG_CACHE_HOME" | "XDG_DATA_HOME"
    )
}

/// One hook invocation: the payload on stdin goes to its journal, and `daemon_exe` is
/// started as the daemon if none runs. Whatever happens it prints nothing and returns 0 (the
/// exit code): a trace exporter must never steer or stall the agent. Problems go to the
/// daemon's log.
///
/// Every step runs under `catch_unwind`: under `albedo-otel-hook`'s C `main` a panic that
/// escaped would abort the process (exit 134) before the payload is journaled. If building
/// the hand-off panics, the payload is still journaled, with the configuration file alone.
pub fn invoke(args: HookArgs, daemon_exe: impl FnOnce() -> std::io::Result<PathBuf>) -> i32 {
    // The default hook prints to stderr, which the agent may show; the message is kept for
    // the daemon's log instead.
    std::panic::set_hook(Box::new(|info| {
        let _ = PANIC.set(info.to_string());
    }));
    let Some(Some(dir)) = caught(|| hook_dir(args.dir.clone(), &|k| std::env::var(k).ok())) else {
        return 0;
    };
    if args
        .agent
        .as_deref()
        .and_then(agent::Agent::from_name)
        .is_some_and(agent::Agent::streams)
    {
        stream::journal_lines(&args, &dir, daemon_exe);
        return 0;
    }
    let mut problems = Vec::new();
    let payload = read_payload(&mut problems);
    let mut skipped = Vec::new();
    let journaled = caught(|| {
        let known = args.agent.as_deref().and_then(agent::Agent::from_name);
        let otel = !known.is_some_and(agent::Agent::passes_its_environment);
        let handoff = HandOff::of_process(args.config.clone(), otel, &mut skipped);
        hand_off(&dir, &payload, &handoff, args.agent.as_deref())
    });
    for name in &skipped {
        problems.push(format!(
            "the variable {name} is not UTF-8; the payload went out without it"
        ));
    }
    let journaled = match journaled {
        Some(Ok(())) => true,
        Some(Err(e)) => {
            problems.push(e.to_string());
            false
        }
        None => {
            problems.push(format!("the hook panicked: {}", panic_message()));
            let bare = HandOff {
                config: args.config.clone(),
                env: Default::default(),
            };
            match caught(|| hand_off(&dir, &payload, &bare, args.agent.as_deref())) {
                Some(Ok(())) => {
                    problems.push("the payload was journaled without its variables".into());
                    true
                }
                Some(Err(e)) => {
                    problems.push(e.to_string());
                    false
                }
                None => {
                    problems.push("the payload was lost".into());
                    false
                }
            }
        }
    };
    // A daemon only for a payload it has to export.
    if journaled {
        match caught(|| ensure_daemon(&dir, daemon_exe, &[])) {
            Some(Ok(_)) => {}
            Some(Err(e)) => problems.push(e),
            None => problems.push(format!("starting the daemon panicked: {}", panic_message())),
        }
    }
    if !problems.is_empty() {
        let _ = caught(|| log_problems(&dir, &problems));
    }
    0
}

pub(crate) static PANIC: std::sync::OnceLock<String> = std::sync::OnceLock::new();

pub(crate) fn caught<T>(f: impl FnOnce() -> T) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).ok()
}

pub(crate) fn panic_message() -> &'static str {
    PANIC.get().map_or("(no message)", String::as_str)
}

/// The payload, as text. Agents send UTF-8 JSON; bytes that are not UTF-8 are replaced
/// rather than losing the event over them. One over [`MAX_PAYLOAD`] is read to its end and
/// stands in the journal as its identifying fields.
fn read_payload(problems: &mut Vec<String>) -> String {
    let mut bytes = Vec::new();
    let mut stdin = std::io::stdin().lock();
    if let Err(e) = (&mut stdin).take(MAX_PAYLOAD).read_to_end(&mut bytes) {
        problems.push(format!("cannot read the payload: {e}"));
    }
    let mut next = [0u8; 1];
    if bytes.len() as u64 == MAX_PAYLOAD && matches!(stdin.read(&mut next), Ok(1)) {
        bytes.push(next[0]);
        return match oversized::identify(&bytes, stdin) {
            Ok(kept) => {
                problems.push(format!(
                    "a payload over {MAX_PAYLOAD} bytes was journaled as what identifies it ({kept:.200}), marked {}",
                    oversized::TRUNCATED
                ));
                kept
            }
            Err(e) => {
                problems.push(format!(
                    "a payload over {MAX_PAYLOAD} bytes is not a JSON object ({e}); dropped"
                ));
                String::new()
            }
        };
    }
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            problems.push(format!(
                "the payload is not UTF-8 at byte {}; those bytes were replaced",
                e.utf8_error().valid_up_to()
            ));
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    }
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

/// Appends one hook payload to its session's journal, stamped with the time it arrived, the
/// settings it is handed off with, and the agent process that ran the hook (so the daemon can
/// tell when that agent is gone).
pub fn hand_off(
    dir: &Path,
    payload: &str,
    handoff: &HandOff,
    agent: Option<&str>,
) -> Result<(), HookError> {
    let received_ms = crate::clock::unix_ms();
    let raw: &RawValue = serde_json::from_str(payload).map_err(HookError::NotJson)?;
    let minimal = serde_json::from_str::<Minimal<'_>>(raw.get()).map_err(HookError::NotJson)?;
    let known = agent.and_then(agent::Agent::from_name);
    // Claude Code's hook is run by other agents too: theirs never go into its sessions.
    if known.is_none_or(|a| a == agent::Agent::ClaudeCode) {
        if let Some(caller) = foreign::recognise(&minimal, &|k| std::env::var(k).ok()) {
            return foreign::hand_off(dir, raw, &minimal, handoff, caller, received_ms);
        }
    }
    let spec = known.map(agent::Agent::spec);
    let parent = spec.and_then(|s| (s.journal_under)(raw.get()));
    let session = parent
        .map(Cow::Owned)
        .or(minimal.session_id)
        .filter(|s| !s.is_empty())
        .ok_or(HookError::NoSession)?;
    let rewritten = spec.and_then(|s| (s.rewrite)(raw.get(), &|k| std::env::var(k).ok()));
    // A journal line is one line: re-encode the rare pretty-printed payload.
    let compact: Cow<'_, str> = if let Some(slim) = rewritten {
        Cow::Owned(slim)
    } else if raw.get().contains('\n') {
        let v: serde_json::Value = serde_json::from_str(raw.get()).map_err(HookError::NotJson)?;
        Cow::Owned(v.to_string())
    } else {
        Cow::Borrowed(raw.get())
    };
    let stamp = journal::Stamp {
        received_ms,
        host: crate::process::hook_host(),
        handoff,
        agent,
    };
    journal::append(dir, &session, &compact, &stamp).map_err(|source| HookError::Journal {
        dir: dir.display().to_string(),
        source,
    })
}

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

/// Starts `exe daemon …` in the background unless a daemon holds the lock; `exe` is found
/// only then (a hook whose daemon runs, the usual case, does not look). The daemon gets a
/// process group of its own, so a host that kills the hook's group when the hook returns (as
/// albedo does) leaves it running.
pub fn ensure_daemon(
    dir: &Path,
    exe: impl FnOnce() -> std::io::Result<PathBuf>,
    args: &[String],
) -> Result<bool, String> {
    if daemon::running(dir) {
        return Ok(false);
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
