//! The real opencode, offline, with a provider of the user's own (a scripted stand-in for
//! OpenAI's chat completions), albedo-otel's plugin installed by `albedo-otel install
//! opencode`, and a permission rule of the user's own that denies force-pushes. Two turns of
//! one session (the second by `run --session`): a shell call that takes a second, and one the
//! rule refuses; then a session whose turn starts a sub-agent. The trace must have one root a
//! turn, the calls inside it with opencode's own ids and times, the model calls with the
//! tokens opencode recorded (`opencode export`), and the sub-agent's turn under the `task`
//! call that started it. opencode runs plugins with the user's whole environment; a bogus
//! `OTEL_EXPORTER_OTLP_ENDPOINT` there proves the configuration file decides.
//! Needs the CLI: `npm install opencode-ai@1.18.33`, and `OPENCODE_BIN` (or `opencode` on
//! PATH); `.ci/run` does both.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[cfg(unix)]
use crate::support::agent_trace::kill_mid_call;
use crate::support::agent_trace::{
    capture_messages, chat_tokens, check_captured_prompt, check_killed, check_two_turns, drained,
    find_cli, install_as_user, isolated_env, key_only_in_config, Expect, PASTED_KEY,
};
use crate::support::openai_chat::{
    MockChat, DELEGATE_MARK, DENIED_COMMAND, DENY_MARK, LINGER_MARK, LONG_COMMAND,
};
use crate::support::opencode_export::{session_of, Recorded};
use crate::support::*;

const API_KEY: &str = "test-key-5c1f0a7e93";

fn opencode() -> Option<PathBuf> {
    find_cli("opencode")
}

/// opencode's own settings: the scripted provider, and the user's rule against force-pushes.
fn configure(home: &Path, api: &MockChat) {
    let provider = serde_json::json!({"npm": "@ai-sdk/openai-compatible", "name": "Mock",
        "options": {"baseURL": format!("http://{}/v1", api.addr), "apiKey": "dummy"},
        "models": {"mock-model": {"name": "Mock", "tool_call": true,
                                  "limit": {"context": 128000, "output": 4096}}}});
    let config = serde_json::json!({"model": "mock/mock-model", "small_model": "mock/mock-model",
        "autoupdate": false, "share": "disabled", "lsp": false, "formatter": false,
        "permission": {"bash": {"*": "allow", "git push *": "deny"}, "edit": "allow",
                       "external_directory": "allow"},
        "provider": {"mock": provider}});
    let dir = home.join(".config/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("opencode.json"), config.to_string()).unwrap();
}

/// `opencode run ARGS` in `work`, as a user's shell would start it.
fn opencode_cmd(bin: &Path, args: &[&str], home: &Path, work: &Path, spool: &Path) -> Command {
    let mut cmd = Command::new(bin);
    isolated_env(&mut cmd, home, spool);
    cmd.arg("run")
        .args(["--format", "json"])
        .args(args)
        .current_dir(work)
        // `run` reads a stdin that is not a terminal as more prompt.
        .stdin(Stdio::null())
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .env("OPENCODE_DISABLE_SHARE", "1")
        // Each config folder npm-installs opencode's plugin package first: offline, that
        // stalls for a minute unless npm knows it is offline.
        .env("npm_config_offline", "true")
        // The user's shell's variables, meant for other programs.
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9");
    cmd
}

/// `opencode run ARGS` in `work`; returns its JSON lines.
fn run_opencode(bin: &Path, args: &[&str], home: &Path, work: &Path, spool: &Path) -> String {
    let out = opencode_cmd(bin, args, home, work, spool).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "opencode {args:?} failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// What opencode recorded (`opencode export` reads its database) of sessions' model calls and
/// tool calls. Sub-agents' sessions are exported one by one.
fn recorded(bin: &Path, sessions: &[&str], home: &Path, spool: &Path) -> Recorded {
    let mut r = Recorded::default();
    for session in sessions {
        let mut cmd = Command::new(bin);
        isolated_env(&mut cmd, home, spool);
        let out = cmd
            .args(["export", session])
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("npm_config_offline", "true")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        r.add_export(&String::from_utf8_lossy(&out.stdout));
    }
    r
}

struct Setup {
    bin: PathBuf,
    rx: Receiver,
    api: MockChat,
    home: Scratch,
    work: Scratch,
    hook_dir: Scratch,
    spool: Scratch,
}

/// `capture`: with message capture on.
fn setup(name: &str, capture: bool) -> Option<Setup> {
    let bin = opencode()?;
    let rx = Receiver::start();
    rx.require_header("x-api-key", API_KEY);
    let api = MockChat::start();
    let s = Setup {
        bin,
        rx,
        api,
        home: scratch(&format!("{name}-home")),
        work: scratch(&format!("{name}-work")),
        hook_dir: scratch(&format!("{name}-hooks")),
        spool: scratch(&format!("{name}-spool")),
    };
    configure(&s.home, &s.api);
    let mut install = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
    isolated_env(&mut install, &s.home, &s.spool);
    if capture {
        capture_messages(&mut install);
    }
    install_as_user(install, &["opencode"], &s.hook_dir, &s.rx, API_KEY);
    let plugin =
        std::fs::read_to_string(s.home.join(".config/opencode/plugin/albedo-otel.js")).unwrap();
    assert!(
        plugin.contains("\"--agent\",\"opencode\"") && !plugin.contains(API_KEY),
        "{plugin}"
    );
    Some(s)
}

#[test]
fn a_real_opencode_session_becomes_a_trace_per_turn() {
    let Some(s) = setup("oc", false) else { return };
    let first = run_opencode(
        &s.bin,
        &["run", "the", "command"],
        &s.home,
        &s.work,
        &s.spool,
    );
    let session = session_of(&first);
    run_opencode(
        &s.bin,
        &[
            "--session",
            &session,
            &format!("{DENY_MARK}:"),
            "push",
            "it",
        ],
        &s.home,
        &s.work,
        &s.spool,
    );
    let log = drained(&s.hook_dir, &s.rx);
    // ccusage 20 reads the same files: the live route counted what it counts.
    crate::support::ccusage::live_route_agrees("opencode", &s.home);
    crate::support::ccusage::import_agrees("opencode", &s.home);
    key_only_in_config(&s.home, &s.hook_dir, API_KEY);

    let spans = s.rx.spans();
    let expect = Expect {
        root: "invoke_agent opencode",
        session: Some(&session),
        tool: "execute_tool bash",
        denied: DENIED_COMMAND,
        provider: "mock",
        model: "mock-model",
        own_tool_times: true,
    };
    let recorded = recorded(&s.bin, &[&session], &s.home, &s.spool);
    check_two_turns(&spans, &expect, &recorded.pairs(), &s.api.sent(), &log);
    recorded.check_tools(&spans);
    // opencode's own call ids, and the title its small model wrote is no model call of a turn.
    let ids: Vec<String> = spans
        .iter()
        .filter_map(|s| s.attr("gen_ai.tool.call.id"))
        .collect();
    assert!(
        ids.contains(&"call_1".to_string()) || ids.contains(&"call_2".to_string()),
        "{ids:?}"
    );
    assert!(s.api.untooled() >= 1, "opencode asked for a title");
    let denied = spans
        .iter()
        .find(|s| s.attr("albedo.tool.refused").is_some())
        .unwrap();
    assert!(
        denied
            .span
            .status
            .as_ref()
            .unwrap()
            .message
            .contains("rule"),
        "opencode's own reason: {:?}",
        denied.span.status
    );
}

#[test]
fn a_sub_agent_s_turn_nests_under_the_task_call_that_started_it() {
    let Some(s) = setup("oc-task", true) else {
        return;
    };
    let out = run_opencode(
        &s.bin,
        &[
            &format!("{DELEGATE_MARK}:"),
            "look",
            "around,",
            "my",
            "key",
            "is",
            PASTED_KEY,
        ],
        &s.home,
        &s.work,
        &s.spool,
    );
    let session = session_of(&out);
    let log = drained(&s.hook_dir, &s.rx);
    crate::support::ccusage::import_agrees("opencode", &s.home);
    let spans = s.rx.spans();
    check_captured_prompt(&spans, DELEGATE_MARK);
    let tree = render_trees(&spans, &["gen_ai.tool.call.id", "gen_ai.conversation.id"]);
    eprintln!("{tree}");
    assert_eq!(
        check_invariants(&spans),
        1,
        "one turn, every parent present:\n{tree}\n{log}"
    );
    let task = spans
        .iter()
        .find(|s| s.span.name == "execute_tool task")
        .unwrap_or_else(|| panic!("the task call:\n{tree}"));
    let sub = spans
        .iter()
        .find(|s| s.span.name.starts_with("invoke_agent") && !s.span.parent_span_id.is_empty())
        .unwrap_or_else(|| panic!("the sub-agent's turn:\n{tree}"));
    assert_eq!(sub.span.parent_span_id, task.span.span_id, "{tree}");
    assert!(
        sub.span.start_time_unix_nano >= task.span.start_time_unix_nano
            && sub.span.end_time_unix_nano <= task.span.end_time_unix_nano,
        "{tree}"
    );
    // The trace is filed under the top session; the sub-agent's own is its conversation.
    assert_eq!(
        sub.attr("session.id").as_deref(),
        Some(session.as_str()),
        "{tree}"
    );
    let child = sub
        .attr("gen_ai.conversation.id")
        .expect("the sub-agent's session");
    assert_ne!(child, session);
    // Both sessions' model calls, as opencode recorded them, and as the API answered.
    let recorded = recorded(&s.bin, &[&session, &child], &s.home, &s.spool);
    assert_eq!(chat_tokens(&spans), recorded.pairs(), "{tree}");
    recorded.check_tools(&spans);
    let sent: Vec<(u64, u64)> = s
        .api
        .sent()
        .iter()
        .map(|s| (s.prompt_tokens, s.output_tokens))
        .collect();
    assert_eq!(chat_tokens(&spans), sent, "{tree}");
}

/// opencode killed during a call (a closed terminal): the plugin's hook sees its input close,
/// and the open turn is exported, unfinished, with the call in it.
#[cfg(unix)]
#[test]
fn a_killed_opencode_leaves_its_turn_unfinished_not_lost() {
    let Some(s) = setup("oc-kill", false) else {
        return;
    };
    let prompt = format!("{LINGER_MARK}: wait");
    let cmd = opencode_cmd(&s.bin, &[&prompt], &s.home, &s.work, &s.spool);
    kill_mid_call(cmd, &s.hook_dir, LONG_COMMAND);
    let log = drained(&s.hook_dir, &s.rx);
    check_killed(&s.rx.spans(), "execute_tool bash", &log);
}
