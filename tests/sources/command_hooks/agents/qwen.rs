//! The real Qwen Code CLI, offline, against a scripted stand-in for OpenAI's chat completions,
//! albedo-otel's hook installed by `albedo-otel install qwen-code` beside a hook of the user's
//! own that denies force-pushes. Two turns of one session (the second by `--resume`): a shell
//! call that takes a second, and one the user's hook denies; a sub-agent that runs the shell
//! call; a turn answered at once, after which Qwen runs its background memory agent, and a
//! call that fails; a Qwen killed mid-call. Every trace is checked against the model calls
//! Qwen recorded in its own transcript (`qwen-code.api_response` lines) and against what the
//! API sent.
//! Needs the CLI: `npm install @qwen-code/qwen-code@0.24.4` (Node 22, in
//! `ALBEDO_OTEL_NODE22_DIR`), and `QWEN_BIN` (or `qwen` on PATH); `.ci/run` does both.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[cfg(unix)]
use crate::support::agent_trace::kill_mid_call;
use crate::support::agent_trace::{
    albedo_otel, chat_tokens, check_killed, check_sub_agent, check_two_turns, deny_force_push,
    drained, find_cli, install_as_user, isolated_env, key_only_in_config, lab, recorded_pairs,
    Expect,
};
use crate::support::ccusage;
use crate::support::openai_chat::{
    MockChat, CHAT_MARK, DELEGATE_MARK, DENIED_COMMAND, DENY_MARK, FAILING_COMMAND, FAIL_MARK,
    LINGER_MARK, QWEN_LONG_COMMAND,
};
use crate::support::*;

const API_KEY: &str = "test-key-5c1a7e3b9d";
const SHELL: &str = "execute_tool run_shell_command";
const MODEL: &str = "qwen3-coder-plus";

fn qwen() -> Option<PathBuf> {
    find_cli("qwen-code")
}

/// The user's own settings before albedo-otel's: a hook that denies force-pushes, and Qwen
/// kept from calling home. `install` must keep all of it.
fn user_settings(home: &Path) -> PathBuf {
    let deny = deny_force_push(
        home,
        &serde_json::json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": "force-push is not allowed"}}),
    );
    let settings = serde_json::json!({
        "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "hooks": {"PreToolUse": [{"matcher": "run_shell_command", "hooks": [
            {"type": "command", "command": deny.display().to_string(), "timeout": 5}]}]}
    });
    let file = home.join(".qwen/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, serde_json::to_string_pretty(&settings).unwrap()).unwrap();
    file
}

/// `qwen ARGS` in `work`, with the scripted API, as a user's shell would start it: Node 22
/// first on PATH, and OTLP variables meant for other programs, which the hook must not take.
fn qwen_cmd(
    bin: &Path,
    args: &[&str],
    home: &Path,
    work: &Path,
    api: &MockChat,
    spool: &Path,
) -> Command {
    let mut cmd = Command::new(bin);
    isolated_env(&mut cmd, home, spool);
    if let Some(node) = std::env::var_os("ALBEDO_OTEL_NODE22_DIR") {
        let mut path = vec![PathBuf::from(node)];
        path.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        cmd.env("PATH", std::env::join_paths(path).unwrap());
    }
    cmd.args(["--auth-type", "openai", "--yolo"])
        .args(args)
        .current_dir(work)
        .stdin(Stdio::null())
        .env("OPENAI_BASE_URL", format!("http://{}/v1", api.addr))
        .env("OPENAI_API_KEY", "dummy-openai-key")
        .env("OPENAI_MODEL", MODEL)
        .env("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
        .env("OTEL_SERVICE_NAME", "not-albedo");
    cmd
}

fn run_qwen(bin: &Path, args: &[&str], home: &Path, work: &Path, api: &MockChat, spool: &Path) {
    let out = qwen_cmd(bin, args, home, work, api, spool)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "qwen {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The session Qwen recorded: its transcript's name.
fn session_id(home: &Path) -> String {
    files_under(&home.join(".qwen/projects"))
        .into_iter()
        .find(|p| p.parent().is_some_and(|d| d.ends_with("chats")))
        .and_then(|p| Some(p.file_stem()?.to_string_lossy().into_owned()))
        .expect("a transcript under ~/.qwen/projects/*/chats")
}

/// Each model call's `(input, output)` tokens as Qwen's transcript recorded them.
fn transcript_tokens(home: &Path) -> Vec<(u64, u64)> {
    let files = files_containing(&home.join(".qwen/projects"), "qwen-code.api_response");
    recorded_pairs(&files, |v| {
        let e = &v["systemPayload"]["uiEvent"];
        (e["event.name"] == "qwen-code.api_response").then(|| {
            (
                e["input_token_count"].as_u64().unwrap_or(0),
                e["output_token_count"].as_u64().unwrap_or(0),
            )
        })
    })
}

/// Installs albedo-otel's hook as a user would, after the user's own settings.
fn install(home: &Path, hook_dir: &Path, spool: &Path, rx: &Receiver) {
    let settings = user_settings(home);
    let install = albedo_otel(isolated_env, home, spool);
    install_as_user(install, &["qwen-code"], hook_dir, rx, API_KEY);
    let ours = std::fs::read_to_string(settings).unwrap();
    assert!(
        ours.contains("--agent qwen-code")
            && ours.contains("deny-force-push.sh")
            && ours.contains("disableAutoUpdate")
            && !ours.contains(API_KEY),
        "{ours}"
    );
}

#[test]
fn a_real_qwen_session_becomes_a_trace_per_turn() {
    let Some(bin) = qwen() else { return };
    let (rx, home, work, hook_dir, spool) = lab("qw", API_KEY);
    let api = MockChat::start();
    install(&home, &hook_dir, &spool, &rx);

    run_qwen(&bin, &["-p", "run the command"], &home, &work, &api, &spool);
    let session = session_id(&home);
    let denied = format!("{DENY_MARK}: push it");
    let resume = ["--resume", &session, "-p", &denied];
    run_qwen(&bin, &resume, &home, &work, &api, &spool);

    let log = drained(&hook_dir, &rx);
    // ccusage 20 reads the same transcript and counts its cache reads twice: inside the input
    // (Qwen's `input_token_count` counts them, as OpenAI's prompt tokens do) and as cache
    // reads. The store counts the input without them, as ccusage does for every other agent;
    // the rest agrees to the token.
    let fix = |[input, output, write, read]: ccusage::Tokens| [input - read, output, write, read];
    ccusage::live_route_agrees_as("qwen", &home, fix);
    // An import of the same files counts what the live route counted, and again nothing.
    crate::support::ccusage::import_agrees("qwen-code", &home);
    key_only_in_config(&home, &hook_dir, API_KEY);
    let expect = Expect {
        root: "invoke_agent qwen-code",
        session: Some(&session),
        tool: SHELL,
        denied: DENIED_COMMAND,
        provider: "openai",
        model: MODEL,
        own_tool_times: false,
    };
    check_two_turns(
        &rx.spans(),
        &expect,
        &transcript_tokens(&home),
        &api.sent(),
        &log,
    );
}

/// A sub-agent the `agent` tool started (told to wait for it) nests under that call, with its
/// own shell call and model calls.
#[test]
fn a_sub_agent_nests_under_the_agent_call_that_started_it() {
    let Some(bin) = qwen() else { return };
    let (rx, home, work, hook_dir, spool) = lab("qws", API_KEY);
    let api = MockChat::start();
    install(&home, &hook_dir, &spool, &rx);
    let prompt = format!("{DELEGATE_MARK}: look around");
    run_qwen(&bin, &["-p", &prompt], &home, &work, &api, &spool);
    let log = drained(&hook_dir, &rx);
    check_sub_agent(
        &rx.spans(),
        "execute_tool agent",
        true,
        SHELL,
        transcript_tokens(&home),
        &api.sent(),
        &log,
    );
}

/// A turn answered at once is followed by Qwen's background memory agent, whose model calls
/// stay in that turn's trace, under a `background_agent` call, in a sub-agent named after
/// it; the next turn is a trace of its own, with its failed call an error.
#[test]
fn the_background_memory_agent_stays_in_its_turn_and_a_failed_call_is_an_error() {
    let Some(bin) = qwen() else { return };
    let (rx, home, work, hook_dir, spool) = lab("qwb", API_KEY);
    let api = MockChat::start();
    install(&home, &hook_dir, &spool, &rx);
    let chat = format!("{CHAT_MARK}: hello");
    run_qwen(&bin, &["-p", &chat], &home, &work, &api, &spool);
    let session = session_id(&home);
    let fail = format!("{FAIL_MARK}: try it");
    run_qwen(
        &bin,
        &["--resume", &session, "-p", &fail],
        &home,
        &work,
        &api,
        &spool,
    );
    let log = drained(&hook_dir, &rx);

    let spans = rx.spans();
    let tree = render_trees(&spans, &["gen_ai.agent.name", "gen_ai.usage.input_tokens"]);
    eprintln!("{tree}");
    assert_eq!(check_invariants(&spans), 2, "two turns:\n{tree}\n{log}");
    let named =
        |name: &str| -> Vec<&FlatSpan> { spans.iter().filter(|s| s.span.name == name).collect() };
    let background = named("execute_tool background_agent");
    assert_eq!(background.len(), 1, "{tree}");
    let memory = spans
        .iter()
        .find(|s| s.span.parent_span_id == background[0].span.span_id)
        .unwrap_or_else(|| panic!("the background agent's turn:\n{tree}"));
    assert_eq!(
        memory.attr("gen_ai.agent.name").as_deref(),
        Some("managed-auto-memory-extractor"),
        "{tree}"
    );
    let chats_under = |parent: &FlatSpan| {
        spans
            .iter()
            .filter(|s| {
                s.span.parent_span_id == parent.span.span_id
                    && s.attr("gen_ai.operation.name").as_deref() == Some("chat")
            })
            .count()
    };
    assert!(chats_under(memory) >= 1, "its calls are its own:\n{tree}");
    // The background call is in the trace of the turn answered at once, not a trace or turn
    // of its own.
    let first = spans
        .iter()
        .filter(|s| s.span.parent_span_id.is_empty())
        .min_by_key(|s| s.span.start_time_unix_nano)
        .unwrap();
    assert_eq!(background[0].span.trace_id, first.span.trace_id, "{tree}");
    assert_eq!(
        background[0].span.parent_span_id, first.span.span_id,
        "{tree}"
    );
    assert_eq!(chats_under(first), 1, "the turn's own answer:\n{tree}");

    let failed = named(SHELL);
    assert_eq!(failed.len(), 1, "{tree}");
    assert_ne!(failed[0].span.trace_id, first.span.trace_id, "{tree}");
    assert_eq!(
        failed[0].span.status.as_ref().map(|s| s.code),
        Some(2),
        "{tree}"
    );
    assert!(
        failed[0]
            .attr("gen_ai.tool.call.arguments")
            .unwrap_or_default()
            .contains(FAILING_COMMAND),
        "{tree}"
    );

    let mut traced = chat_tokens(&spans);
    let mut recorded = transcript_tokens(&home);
    let mut sent: Vec<(u64, u64)> = api
        .sent()
        .iter()
        .map(|s| (s.prompt_tokens, s.output_tokens))
        .collect();
    traced.sort();
    recorded.sort();
    sent.sort();
    assert_eq!(traced, recorded, "as Qwen recorded:\n{tree}");
    assert_eq!(traced, sent, "as the API sent:\n{tree}");
}

/// Qwen killed during a call (a closed terminal): no `Stop`, and `-p` sends no `SessionEnd`.
/// The daemon sees Qwen gone and exports the open turn, unfinished, with its running call.
#[cfg(unix)]
#[test]
fn a_killed_qwen_leaves_its_turn_unfinished_not_lost() {
    let Some(bin) = qwen() else { return };
    let (rx, home, work, hook_dir, spool) = lab("qwk", API_KEY);
    let api = MockChat::start();
    install(&home, &hook_dir, &spool, &rx);
    let prompt = format!("{LINGER_MARK}: wait");
    let cmd = qwen_cmd(&bin, &["-p", &prompt], &home, &work, &api, &spool);
    // The hook's journal holds the long call once its `PreToolUse` has run.
    kill_mid_call(cmd, &hook_dir, QWEN_LONG_COMMAND);
    let log = drained(&hook_dir, &rx);
    check_killed(&rx.spans(), SHELL, &log);
}
