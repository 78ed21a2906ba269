//! The real Claude Code CLI, offline, against a scripted stand-in for the Messages API, with
//! `albedo-otel hook` installed (by `albedo-otel install`) for every event. The trace that
//! reaches the receiver must show the turn, the tool calls with their real durations, the
//! model calls with usage, and the sub-agent nested under its `Agent` call.
//! Needs the CLI: `npm install @anthropic-ai/claude-code@2.1.332`, and `CLAUDE_BIN` (or
//! `claude` on PATH); `.ci/run` does both.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::agent_trace::{check_killed, drained, find_cli};
use crate::support::anthropic::{MockAnthropic, LONG_TOOL_MARK};
use crate::support::*;

fn claude() -> Option<PathBuf> {
    find_cli("claude-code")
}

/// Starts the real CLI on `prompt`, offline against `api`, with the settings `install` wrote.
fn start_claude(
    claude: &Path,
    prompt: &str,
    settings: &Path,
    home: &Path,
    work: &Path,
    api: &MockAnthropic,
    spool: &Path,
) -> Child {
    let mut cmd = Command::new(claude);
    cmd.args(["-p", prompt, "--output-format", "json", "--settings"])
        .arg(settings)
        .args(["--permission-mode", "bypassPermissions"])
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, _) in std::env::vars() {
        if k.starts_with("OTEL_")
            || k.starts_with("ALBEDO_OTEL")
            || k.starts_with("ANTHROPIC")
            || k.starts_with("CLAUDE")
            || k.starts_with("XDG_")
        {
            cmd.env_remove(k);
        }
    }
    cmd.env("HOME", home)
        .env("ANTHROPIC_BASE_URL", format!("http://{}", api.addr))
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("IS_SANDBOX", "1")
        .env("ALBEDO_OTEL_SPOOL_DIR", spool)
        // Sub-agents run in the background: the main agent answers again once one reports,
        // and that answer's Stop must fall within the grace to stay in the same turn.
        .env("ALBEDO_OTEL_STOP_GRACE", "5s")
        .env("ALBEDO_OTEL_IDLE_EXIT", "1s")
        .env("OTEL_BSP_SCHEDULE_DELAY", "100");
    cmd.spawn().unwrap()
}

/// `albedo-otel install claude-code --settings FILE` as a user runs it: with the standard
/// variables exported, the API key among them, and `HOME` being the user's. Returns what it
/// printed.
fn install(settings: &Path, home: &Path, hook_dir: &Path, env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
    cmd.args(["install", "claude-code", "--settings"])
        .arg(settings);
    for (k, _) in std::env::vars() {
        if k.starts_with("OTEL_") || k.starts_with("ALBEDO_OTEL") || k.starts_with("XDG_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("HOME", home)
        .env("ALBEDO_OTEL_HOOK_DIR", hook_dir)
        .envs(env.iter().copied());
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The API key a hosted backend needs: Claude Code strips every `OTEL_*` variable from a
/// hook's environment, so it reaches the collector only through the configuration file.
const API_KEY: &str = "test-key-3f9a7c1e5b";

#[test]
fn a_real_claude_code_session_becomes_a_trace() {
    let Some(claude) = claude() else { return };
    let rx = Receiver::start();
    rx.require_header("x-api-key", API_KEY);
    let api = MockAnthropic::start();
    let home = scratch("cc-home");
    let work = scratch("cc-work");
    let hook_dir = scratch("cc-hooks");
    let spool = scratch("cc-spool");
    let settings = home.join("albedo-otel-settings.json");

    // Install the hook the way a user would: export the standard variables, run install.
    let said = install(
        &settings,
        &home,
        &hook_dir,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &rx.grpc_url()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                &format!("x-api-key={API_KEY}"),
            ),
            // Messages on, with room for a whole exchange: what each model call was sent.
            ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true"),
            ("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "65536"),
        ],
    );
    assert!(
        said.contains("otlp.headers.x-api-key = ******") && !said.contains(API_KEY),
        "install says where it wrote what, the key masked:\n{said}"
    );
    let installed = std::fs::read_to_string(&settings).unwrap();
    assert!(
        !installed.contains(API_KEY) && !installed.contains("OTEL_"),
        "the hook command carries no secret and no setting:\n{installed}"
    );

    let mut child = start_claude(
        &claude,
        "please say hello via a helper agent",
        &settings,
        &home,
        &work,
        &api,
        &spool,
    );
    let deadline = Instant::now() + Duration::from_secs(180);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "claude did not finish in 180 s; requests: {:#?}",
                api.requests.lock().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        status.success(),
        "claude failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(result["is_error"], false, "{stdout}");

    let log = drained(&hook_dir, &rx);
    // ccusage 20 reads the same transcript: the live route counted what it counts.
    crate::support::ccusage::live_route_agrees("claude", &home);
    // An import of the same transcript, alone or after the live route: the same numbers.
    crate::support::ccusage::import_agrees("claude-code", &home);
    let spans = rx.spans();
    // Every span arrived with the key, and no request went without it.
    assert!(rx.requests().iter().all(|r| r
        .headers
        .iter()
        .any(|(k, v)| k == "x-api-key" && v == API_KEY)));
    // The key is in no file under HOME but the private configuration file.
    let config = home.join(".config/albedo-otel/config.toml");
    assert_eq!(files_containing(&home, API_KEY), vec![config.clone()]);
    assert_eq!(mode(&config), 0o600);
    assert_eq!(mode(config.parent().unwrap()), 0o700);
    assert!(files_containing(&hook_dir, API_KEY).is_empty());
    assert!(files_containing(&spool, API_KEY).is_empty());
    let tree = render_trees(
        &spans,
        &["gen_ai.tool.call.id", "gen_ai.usage.input_tokens"],
    );
    eprintln!("{tree}");
    assert_eq!(
        check_invariants(&spans),
        1,
        "one turn, the sub-agent inside it:\n{tree}\n{log}"
    );
    let root = spans
        .iter()
        .find(|s| s.span.parent_span_id.is_empty())
        .unwrap();
    assert_eq!(root.span.name, "invoke_agent claude-code");
    assert!(root.attr("albedo.unfinished").is_none(), "{tree}");

    let tool = |name: &str, under: &[u8]| {
        spans
            .iter()
            .find(|s| {
                s.span.name == format!("execute_tool {name}") && s.span.parent_span_id == under
            })
            .unwrap_or_else(|| panic!("no {name} under {under:?}:\n{tree}"))
    };
    let bash = tool("Bash", &root.span.span_id);
    let took = bash.span.end_time_unix_nano - bash.span.start_time_unix_nano;
    assert!(
        took >= 200_000_000,
        "the Bash call slept 0.2 s; its span says {took} ns"
    );
    let agent = tool("Agent", &root.span.span_id);
    let sub = spans
        .iter()
        .find(|s| {
            s.span.parent_span_id == agent.span.span_id && s.span.name.starts_with("invoke_agent")
        })
        .unwrap_or_else(|| panic!("no sub-agent under Agent:\n{tree}"));
    let sub_bash = tool("Bash", &sub.span.span_id);
    assert!(sub_bash
        .attr("input.value")
        .unwrap()
        .contains("hello from the subagent"));

    let chats_under = |parent: &[u8]| {
        spans
            .iter()
            .filter(|s| s.span.name.starts_with("chat ") && s.span.parent_span_id == parent)
            .count()
    };
    assert!(
        chats_under(&root.span.span_id) >= 3,
        "bash, agent, answer:\n{tree}"
    );
    assert!(
        chats_under(&sub.span.span_id) >= 2,
        "the sub-agent's two model calls:\n{tree}"
    );
    // What each model call was sent, rebuilt from the transcript: the first, the prompt; the
    // second, the first call's tool calls and their results.
    let mut main_chats: Vec<&FlatSpan> = spans
        .iter()
        .filter(|s| s.span.name.starts_with("chat ") && s.span.parent_span_id == root.span.span_id)
        .collect();
    main_chats.sort_by_key(|s| s.span.start_time_unix_nano);
    let messages = |s: &FlatSpan, key: &str| -> serde_json::Value {
        let text = s
            .attr(key)
            .unwrap_or_else(|| panic!("no {key} on {}:\n{tree}", s.span.name));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{key}: {e}: {text}"))
    };
    let parts_of = |v: &serde_json::Value, kind: &str| -> Vec<serde_json::Value> {
        v.as_array()
            .into_iter()
            .flatten()
            .flat_map(|m| m["parts"].as_array().cloned().unwrap_or_default())
            .filter(|p| p["type"] == kind)
            .collect()
    };
    let first_in = messages(main_chats[0], "gen_ai.input.messages");
    assert_eq!(first_in[0]["role"], "user", "{first_in}");
    assert!(
        first_in
            .to_string()
            .contains("please say hello via a helper agent"),
        "{first_in}"
    );
    let called: Vec<String> = parts_of(
        &messages(main_chats[0], "gen_ai.output.messages"),
        "tool_call",
    )
    .iter()
    .map(|p| p["id"].as_str().unwrap().to_string())
    .collect();
    assert!(
        !called.is_empty(),
        "the first call asked for a tool:\n{tree}"
    );
    let second_in = messages(main_chats[1], "gen_ai.input.messages");
    let answered: Vec<String> = parts_of(&second_in, "tool_call_response")
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect();
    for id in &called {
        assert!(
            answered.contains(id),
            "the second call was sent the result of {id}: {second_in}"
        );
    }
    assert!(
        parts_of(&second_in, "tool_call").len() >= called.len(),
        "and the call that asked for it: {second_in}"
    );
    assert!(
        main_chats[0].attr("gen_ai.system_instructions").is_some(),
        "the system prompt is there too"
    );
    for chat in spans.iter().filter(|s| s.span.name.starts_with("chat ")) {
        let input: u64 = chat
            .attr("gen_ai.usage.input_tokens")
            .unwrap()
            .parse()
            .unwrap();
        let cached: u64 = chat
            .attr("gen_ai.usage.cache_read.input_tokens")
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            input >= cached + 100,
            "input includes cache reads and writes: {input} vs {cached}"
        );
        assert!(
            chat.attr("gen_ai.usage.output_tokens")
                .unwrap()
                .parse::<u64>()
                .unwrap()
                >= 25
        );
    }
}

/// Claude Code killed mid-turn (Ctrl-C, a closed terminal) sends no `Stop` and no
/// `SessionEnd`. Its turn must still arrive, marked unfinished, soon after, and the hook
/// daemon must not linger.
#[test]
fn a_killed_claude_code_leaves_no_turn_behind() {
    let Some(claude) = claude() else { return };
    let rx = Receiver::start();
    let api = MockAnthropic::start();
    let home = scratch("cc-kill-home");
    let work = scratch("cc-kill-work");
    let hook_dir = scratch("cc-kill-hooks");
    let spool = scratch("cc-kill-spool");
    let settings = home.join("albedo-otel-settings.json");
    install(
        &settings,
        &home,
        &hook_dir,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &rx.grpc_url()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ],
    );
    let mut child = start_claude(
        &claude,
        &format!("{LONG_TOOL_MARK}: wait for a while"),
        &settings,
        &home,
        &work,
        &api,
        &spool,
    );
    // Kill it while its Bash call runs: once that call's PreToolUse is journaled.
    let journaled = || {
        albedo_otel::sources::command_hooks::journal::list(&hook_dir)
            .iter()
            .filter_map(|j| std::fs::read_to_string(j).ok())
            .collect::<String>()
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while !(journaled().contains("PreToolUse") && journaled().contains("tail -f /dev/null")) {
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "the long Bash call never started; journal:\n{}\nclaude: {}{}",
                journaled(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let spans = rx.wait_for_spans(2, Duration::from_secs(60));
    check_killed(&spans, "execute_tool Bash", "");
    wait_until(Duration::from_secs(30), "the hook daemon to exit", || {
        !albedo_otel::sources::command_hooks::daemon::running(&hook_dir)
    });
    let log = std::fs::read_to_string(hook_dir.join("daemon.log")).unwrap_or_default();
    assert!(log.contains("is gone with a turn open"), "{log}");
}
