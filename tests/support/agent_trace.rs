//! What every agent's CLI test shares: finding the CLI, the user's own hook, installing as
//! a user would, waiting for the daemon, the key checks, and what the trace of the two-turn
//! session must say: one root a turn, every span inside its turn, the one-second shell call
//! and the denied one, and the model calls' tokens against what the agent itself recorded and
//! what the scripted API sent.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::gemini_api::Sent;
use super::{
    check_invariants, files_containing, render_trees, require_tool, scratch, wait_until, which,
    FlatSpan, Receiver, Scratch,
};

/// An agent's CLI: `$var` when it names a file, else `name` on PATH. Without either the test
/// is skipped, or fails under `ALBEDO_OTEL_REQUIRE_TOOLS`.
pub fn find_cli(var: &str, name: &str, what: &str, package: &str) -> Option<PathBuf> {
    let found = std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .or_else(|| which(name));
    require_tool(
        &format!("{name} ({what})"),
        found,
        &format!(
            "install it with `npm install {package}` and set {var} to node_modules/.bin/{name}"
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

/// The collector's key is in the configuration file under `home`, and in nothing else there
/// or in the hook's folder.
pub fn key_only_in_config(home: &Path, hook_dir: &Path, key: &str) {
    assert_eq!(
        files_containing(home, key),
        vec![home.join(".config/albedo-otel/config.toml")],
        "the key is only in the configuration file"
    );
    assert!(files_containing(hook_dir, key).is_empty());
}

/// What one agent's trace should say.
pub struct Expect<'a> {
    /// `invoke_agent NAME`.
    pub root: &'a str,
    /// The session id every root carries, when the test knows it.
    pub session: Option<&'a str>,
    /// `execute_tool NAME` of the shell.
    pub tool: &'a str,
    /// The command the user's hook denied.
    pub denied: &'a str,
    pub provider: &'a str,
    pub model: &'a str,
}

/// The model calls' `(input, output)` tokens, in the order they started.
pub fn chat_tokens(spans: &[FlatSpan]) -> Vec<(u64, u64)> {
    let mut chats: Vec<&FlatSpan> = spans
        .iter()
        .filter(|s| s.attr("gen_ai.operation.name").as_deref() == Some("chat"))
        .collect();
    chats.sort_by_key(|s| s.span.start_time_unix_nano);
    let tokens = |s: &FlatSpan, k: &str| s.attr(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    chats
        .iter()
        .map(|s| {
            (
                tokens(s, "gen_ai.usage.input_tokens"),
                tokens(s, "gen_ai.usage.output_tokens"),
            )
        })
        .collect()
}

/// Checks the trace; `recorded` is what the agent's own log says of its model calls, `sent`
/// what the API answered. `log` (the daemon's) goes with a failure.
pub fn check_two_turns(
    spans: &[FlatSpan],
    e: &Expect<'_>,
    recorded: &[(u64, u64)],
    sent: &[Sent],
    log: &str,
) {
    let tree = render_trees(
        spans,
        &[
            "gen_ai.tool.call.id",
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.output_tokens",
        ],
    );
    eprintln!("{tree}");
    assert_eq!(
        check_invariants(spans),
        2,
        "one root a turn, every parent present:\n{tree}\n{log}"
    );
    for root in spans.iter().filter(|s| s.span.parent_span_id.is_empty()) {
        assert_eq!(root.span.name, e.root, "{tree}");
        // Message capture is off: no prompt is exported.
        assert_eq!(root.attr("input.value"), None, "{tree}");
        assert!(root.attr("albedo.unfinished").is_none(), "{tree}");
        // The configuration file decides, not the variables the agent's shell had.
        assert_eq!(
            root.resource.get("service.name").map(String::as_str),
            Some("albedo")
        );
        if let Some(session) = e.session {
            assert_eq!(root.attr("session.id").as_deref(), Some(session), "{tree}");
        }
        for s in spans
            .iter()
            .filter(|s| s.span.trace_id == root.span.trace_id)
        {
            assert!(
                s.span.start_time_unix_nano >= root.span.start_time_unix_nano
                    && s.span.end_time_unix_nano <= root.span.end_time_unix_nano,
                "{} is outside its turn:\n{tree}",
                s.span.name
            );
        }
    }
    let tools: Vec<&FlatSpan> = spans.iter().filter(|s| s.span.name == e.tool).collect();
    assert_eq!(tools.len(), 2, "{tree}");
    let slow = tools
        .iter()
        .find(|s| s.attr("albedo.tool.refused").is_none())
        .expect("the sleep call");
    let took = slow.span.end_time_unix_nano - slow.span.start_time_unix_nano;
    assert!(
        took >= 1_000_000_000,
        "the call slept 1 s; its span says {took} ns:\n{tree}"
    );
    let denied = tools
        .iter()
        .find(|s| s.attr("albedo.tool.refused").is_some())
        .expect("the denied call");
    assert_eq!(
        denied.span.status.as_ref().map(|s| s.code),
        Some(2),
        "a denied call is an error:\n{tree}"
    );
    assert!(
        denied
            .attr("gen_ai.tool.call.arguments")
            .unwrap_or_default()
            .contains(e.denied),
        "{tree}"
    );

    let traced = chat_tokens(spans);
    assert_eq!(
        traced, recorded,
        "the trace's tokens against the agent's own record:\n{tree}"
    );
    let sent: Vec<(u64, u64)> = sent
        .iter()
        .map(|s| (s.prompt_tokens, s.output_tokens))
        .collect();
    assert_eq!(traced, sent, "and against what the API answered");
    for c in spans
        .iter()
        .filter(|s| s.attr("gen_ai.operation.name").as_deref() == Some("chat"))
    {
        assert_eq!(
            c.attr("gen_ai.provider.name").as_deref(),
            Some(e.provider),
            "{tree}"
        );
        assert_eq!(
            c.attr("gen_ai.request.model").as_deref(),
            Some(e.model),
            "{tree}"
        );
    }
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

/// `(input, output)` pairs from the JSON lines of `files` that `pick` takes, in file order.
pub fn recorded_pairs(
    files: &[PathBuf],
    pick: impl Fn(&serde_json::Value) -> Option<(u64, u64)>,
) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for f in files {
        for line in std::fs::read_to_string(f).unwrap().lines() {
            if let Some(pair) = serde_json::from_str(line).ok().as_ref().and_then(&pick) {
                out.push(pair);
            }
        }
    }
    out
}

/// What a sub-agent's trace must say: one turn; the sub-agent's turn under the call named
/// `call` (`execute_tool NAME`), inside it when the call `waits` for the sub-agent; its
/// `shell` call (`execute_tool NAME`) under its turn, a second long; and every model call's
/// tokens as the agent recorded them and as the API sent them (as multisets: parent and
/// sub-agent call the model at once). Returns the sub-agent's span.
pub fn check_sub_agent<'a>(
    spans: &'a [FlatSpan],
    call: &str,
    waits: bool,
    shell: &str,
    recorded: Vec<(u64, u64)>,
    sent: &[Sent],
    log: &str,
) -> &'a FlatSpan {
    let tree = render_trees(spans, &["gen_ai.tool.call.id", "gen_ai.usage.input_tokens"]);
    eprintln!("{tree}");
    assert_eq!(
        check_invariants(spans),
        1,
        "one turn, every parent present:\n{tree}\n{log}"
    );
    let call = spans
        .iter()
        .find(|s| s.span.name == call)
        .unwrap_or_else(|| panic!("{call}:\n{tree}\n{log}"));
    let sub = spans
        .iter()
        .find(|s| s.span.name.starts_with("invoke_agent") && !s.span.parent_span_id.is_empty())
        .unwrap_or_else(|| panic!("the sub-agent's turn:\n{tree}\n{log}"));
    assert_eq!(sub.span.parent_span_id, call.span.span_id, "{tree}");
    if waits {
        assert!(
            sub.span.start_time_unix_nano >= call.span.start_time_unix_nano
                && sub.span.end_time_unix_nano <= call.span.end_time_unix_nano,
            "the call spans its sub-agent:\n{tree}"
        );
    }
    let slept = spans
        .iter()
        .find(|s| s.span.name == shell && s.span.parent_span_id == sub.span.span_id)
        .unwrap_or_else(|| panic!("the sub-agent's shell call:\n{tree}"));
    assert!(
        slept.span.end_time_unix_nano - slept.span.start_time_unix_nano >= 1_000_000_000,
        "{tree}"
    );
    assert!(
        spans.iter().any(|s| {
            s.attr("gen_ai.operation.name").as_deref() == Some("chat")
                && s.span.parent_span_id == sub.span.span_id
        }),
        "the sub-agent's model calls are its own:\n{tree}"
    );
    let sorted = |mut v: Vec<(u64, u64)>| {
        v.sort();
        v
    };
    let traced = sorted(chat_tokens(spans));
    assert_eq!(traced, sorted(recorded), "as the agent recorded:\n{tree}");
    let sent = sent
        .iter()
        .map(|s| (s.prompt_tokens, s.output_tokens))
        .collect();
    assert_eq!(traced, sorted(sent), "as the API sent:\n{tree}");
    sub
}

/// A key a user pasted into a prompt (random, not a real one; from the redaction corpus).
pub const PASTED_KEY: &str = "sk-ant-api03-odJFCrnl2edlBDdz1C5Jau2RJtBRnlWmTSHf6pWkLUyifDLkDmWJ6UuVTAIjvFu7WICPhDeOZIiBOB_Y6sHrFH2ZUCr_lAA";

/// Turns message capture on for an `install` (the setting goes into the configuration file).
pub fn capture_messages(cmd: &mut Command) {
    cmd.env("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true");
}

/// With message capture on, each top turn carries its prompt (`input.value`), which began
/// with `head`, with [`PASTED_KEY`] redacted; and the key is nowhere in the trace.
pub fn check_captured_prompt(spans: &[FlatSpan], head: &str) {
    let everything = format!("{spans:?}");
    assert!(
        !everything.contains(PASTED_KEY),
        "the pasted key was exported"
    );
    let roots: Vec<&FlatSpan> = spans
        .iter()
        .filter(|s| s.span.parent_span_id.is_empty())
        .collect();
    assert!(!roots.is_empty());
    for root in roots {
        let prompt = root.attr("input.value").unwrap_or_default();
        assert!(
            prompt.starts_with(head) && prompt.contains("[REDACTED:anthropic-key]"),
            "the prompt, captured and scrubbed: {prompt:?}"
        );
    }
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

/// The trace of a session whose agent was killed during `tool` (`execute_tool NAME`): one
/// turn, exported, marked unfinished, the call in it unfinished too, every parent present.
pub fn check_killed(spans: &[FlatSpan], tool: &str, log: &str) {
    let tree = render_trees(spans, &["albedo.unfinished"]);
    assert_eq!(check_invariants(spans), 1, "{tree}\n{log}");
    let root = spans
        .iter()
        .find(|s| s.span.parent_span_id.is_empty())
        .unwrap();
    assert_eq!(
        root.attr("albedo.unfinished").as_deref(),
        Some("true"),
        "{tree}"
    );
    let call = spans
        .iter()
        .find(|s| s.span.name == tool)
        .unwrap_or_else(|| panic!("{tool}:\n{tree}\n{log}"));
    assert_eq!(
        call.attr("albedo.unfinished").as_deref(),
        Some("true"),
        "{tree}"
    );
}

/// One agent test's world: a collector that demands the test's key, and a home, a work
/// folder, a hook folder and a spool of its own, removed when the test passes.
pub struct Lab {
    pub rx: Receiver,
    pub home: Scratch,
    pub work: Scratch,
    pub hook_dir: Scratch,
    pub spool: Scratch,
}

impl Lab {
    pub fn new(name: &str, key: &str) -> Lab {
        let rx = Receiver::start();
        rx.require_header("x-api-key", key);
        Lab {
            rx,
            home: scratch(&format!("{name}-home")),
            work: scratch(&format!("{name}-work")),
            hook_dir: scratch(&format!("{name}-hooks")),
            spool: scratch(&format!("{name}-spool")),
        }
    }
}

/// `albedo-otel` in the environment `env` makes for `home` and `spool`.
pub fn albedo_otel(env: fn(&mut Command, &Path, &Path), home: &Path, spool: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
    env(&mut cmd, home, spool);
    cmd
}
