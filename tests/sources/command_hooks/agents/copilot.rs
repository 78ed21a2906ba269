//! The real Copilot CLI, offline, with a provider of the user's own (a scripted stand-in for
//! OpenAI's chat completions), albedo-otel's hook installed by `albedo-otel install copilot`
//! beside a hook of the user's own that denies force-pushes. Two turns of one session (the
//! second by `--resume`): a shell call that takes a second, and one the user's hook denies.
//! The trace must have one root a turn, the calls inside it with their ids and times from
//! Copilot's session log, and the model calls with the tokens the log recorded. Copilot
//! removes every `OTEL_*` variable from its hooks, so the collector's address and key reach
//! the hook only through the configuration file.
//! Needs the CLI: `npm install @github/copilot@1.0.102`, and `COPILOT_BIN` (or `copilot` on
//! PATH); `.ci/run` does both.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[cfg(unix)]
use crate::support::agent_trace::kill_mid_call;
use crate::support::agent_trace::{
    albedo_otel, capture_messages, check_captured_prompt, check_killed, check_sub_agent,
    check_two_turns, deny_force_push, drained, find_cli, install_as_user, isolated_env,
    key_only_in_config, lab, recorded_pairs, Expect, PASTED_KEY,
};
use crate::support::openai_chat::{
    MockChat, DELEGATE_MARK, DENIED_COMMAND, DENY_MARK, LINGER_MARK,
};
use crate::support::*;

const API_KEY: &str = "test-key-2b6e9d4f8a";

fn copilot() -> Option<PathBuf> {
    find_cli("copilot")
}

/// A hook of the user's own, in a file of its own: Copilot loads every file in the folder.
fn user_hook(home: &Path) {
    let deny = deny_force_push(
        home,
        &serde_json::json!({"permissionDecision": "deny",
            "permissionDecisionReason": "force-push is not allowed"}),
    );
    let hooks = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": deny.display().to_string(), "timeout": 5}]}]}});
    let dir = home.join(".copilot/hooks");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mine.json"), hooks.to_string()).unwrap();
}

/// `copilot ARGS` in `work`, with the scripted provider, as a user's shell would start it.
fn copilot_cmd(
    bin: &Path,
    args: &[&str],
    home: &Path,
    work: &Path,
    api: &MockChat,
    spool: &Path,
) -> Command {
    let mut cmd = Command::new(bin);
    isolated_env(&mut cmd, home, spool);
    cmd.args(args)
        .args(["--allow-all", "--no-auto-update"])
        .current_dir(work)
        .stdin(Stdio::null())
        .env("COPILOT_OFFLINE", "true")
        .env(
            "COPILOT_PROVIDER_BASE_URL",
            format!("http://{}/v1", api.addr),
        )
        .env("COPILOT_MODEL", "gpt-4.1");
    cmd
}

fn run_copilot(
    bin: &Path,
    args: &[&str],
    home: &Path,
    work: &Path,
    api: &MockChat,
    spool: &Path,
) -> String {
    let out = copilot_cmd(bin, args, home, work, api, spool)
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "copilot {args:?} failed: {all}");
    all
}

/// Each model call's `(input, output)` tokens as Copilot's session log recorded them.
fn log_tokens(home: &Path) -> Vec<(u64, u64)> {
    let files = files_containing(&home.join(".copilot/session-state"), "session.usage_record");
    recorded_pairs(&files, |v| {
        let u = &v["data"]["usage"];
        (v["type"] == "session.usage_record").then(|| {
            (
                u["inputTokens"].as_u64().unwrap_or(0),
                u["outputTokens"].as_u64().unwrap_or(0),
            )
        })
    })
}

#[test]
fn a_real_copilot_session_becomes_a_trace_per_turn() {
    let Some(bin) = copilot() else { return };
    let (rx, home, work, hook_dir, spool) = lab("cp", API_KEY);
    let api = MockChat::start();
    user_hook(&home);

    let install = albedo_otel(isolated_env, &home, &spool);
    install_as_user(install, &["copilot"], &hook_dir, &rx, API_KEY);
    let ours = std::fs::read_to_string(home.join(".copilot/hooks/albedo-otel.json")).unwrap();
    assert!(
        ours.contains("--agent copilot") && !ours.contains(API_KEY),
        "{ours}"
    );

    run_copilot(&bin, &["-p", "run the command"], &home, &work, &api, &spool);
    // The session's folder is the one with a log in it; Copilot keeps lock folders beside it.
    let session = std::fs::read_dir(home.join(".copilot/session-state"))
        .unwrap()
        .flatten()
        .find(|e| e.path().join("events.jsonl").is_file())
        .expect("a session folder with events.jsonl")
        .file_name()
        .to_string_lossy()
        .into_owned();
    run_copilot(
        &bin,
        &[
            &format!("--resume={session}"),
            "-p",
            &format!("{DENY_MARK}: push it"),
        ],
        &home,
        &work,
        &api,
        &spool,
    );

    let log = drained(&hook_dir, &rx);
    // ccusage 20 reads the same files: the live route counted what it counts.
    crate::support::ccusage::live_route_agrees("copilot", &home);
    // An import of the same files counts what the live route counted, and again nothing.
    crate::support::ccusage::import_agrees("copilot", &home);
    key_only_in_config(&home, &hook_dir, API_KEY);

    let spans = rx.spans();
    let expect = Expect {
        root: "invoke_agent copilot",
        session: Some(&session),
        tool: "execute_tool bash",
        denied: DENIED_COMMAND,
        provider: "openai",
        model: "gpt-4.1",
        own_tool_times: false,
    };
    check_two_turns(&spans, &expect, &log_tokens(&home), &api.sent(), &log);
    // The call ids come from Copilot's log: its hooks have none.
    let ids: Vec<String> = spans
        .iter()
        .filter_map(|s| s.attr("gen_ai.tool.call.id"))
        .collect();
    assert!(
        ids.contains(&"call_1".to_string()) && ids.contains(&"call_3".to_string()),
        "{ids:?}"
    );
}

/// A sub-agent that `task` started nests under that call, in its parent's trace: its turn,
/// its own shell call, and its model calls, all read from the parent's session log (its hooks
/// come under its own id, and are left to the log).
#[test]
fn a_sub_agent_nests_under_the_task_call_that_started_it() {
    let Some(bin) = copilot() else { return };
    let (rx, home, work, hook_dir, spool) = lab("cps", API_KEY);
    let api = MockChat::start();
    let mut install = albedo_otel(isolated_env, &home, &spool);
    capture_messages(&mut install);
    install_as_user(install, &["copilot"], &hook_dir, &rx, API_KEY);
    let prompt = format!("{DELEGATE_MARK}: look around, my key is {PASTED_KEY}");
    run_copilot(&bin, &["-p", &prompt], &home, &work, &api, &spool);
    // The sub-agent's journal is its parent's, which the session's end retires.
    let log = drained(&hook_dir, &rx);
    let spans = rx.spans();
    check_captured_prompt(&spans, DELEGATE_MARK);
    // Copilot's `task` waits for its sub-agent.
    check_sub_agent(
        &spans,
        "execute_tool task",
        true,
        "execute_tool bash",
        log_tokens(&home),
        &api.sent(),
        &log,
    );
    // With capture on, each model call carries its answer from the log: the text, and the
    // calls it asked for, by id.
    let answers: Vec<String> = spans
        .iter()
        .filter_map(|s| s.attr("gen_ai.output.messages"))
        .collect();
    assert!(
        answers
            .iter()
            .any(|a| a.contains("call_1") && a.contains("task"))
            && answers.iter().any(|a| a.contains("The command ran")),
        "{answers:?}"
    );
}

/// Copilot killed during a call (a closed terminal): no `Stop`, no `SessionEnd`. The daemon
/// sees Copilot gone and exports the open turn, unfinished, with the call its log has begun
/// (the hook named the log at the prompt: Copilot names it only at `Stop`).
#[cfg(unix)]
#[test]
fn a_killed_copilot_leaves_its_turn_unfinished_not_lost() {
    let Some(bin) = copilot() else { return };
    let (rx, home, work, hook_dir, spool) = lab("cpk", API_KEY);
    let api = MockChat::start();
    let install = albedo_otel(isolated_env, &home, &spool);
    install_as_user(install, &["copilot"], &hook_dir, &rx, API_KEY);
    let prompt = format!("{LINGER_MARK}: wait");
    let cmd = copilot_cmd(&bin, &["-p", &prompt], &home, &work, &api, &spool);
    // Copilot's hooks do not see tool calls; its session log does.
    kill_mid_call(
        cmd,
        &home.join(".copilot/session-state"),
        "tool.execution_start",
    );
    let log = drained(&hook_dir, &rx);
    check_killed(&rx.spans(), "execute_tool bash", &log);
}

/// How long the user's verifier runs before it blocks the first stop: past the 2 s after
/// `Stop` at which albedo-otel reads Copilot's log and sends the turn out.
const VERIFIER_SECS: u64 = 6;

/// A `Stop` hook of the user's own, a verifier that runs the tests: the first stop it blocks
/// after [`VERIFIER_SECS`], the next it lets go.
#[cfg(unix)]
fn verifier_hook(home: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let script = home.join("verify.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat >/dev/null\n[ -e \"$0.blocked\" ] && exit 0\ntouch \"$0.blocked\"\n\
             sleep {VERIFIER_SECS}\necho '{}'\n",
            serde_json::json!({"decision": "block", "reason": "the tests fail: run the command again"})
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let hooks = serde_json::json!({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": script.display().to_string(), "timeout": 60}]}]}});
    let dir = home.join(".copilot/hooks");
    std::fs::create_dir_all(&dir).unwrap();
    // Copilot 1.0.102 runs the `Stop` hooks of its files one after another: from a file so
    // named, the verifier runs after albedo-otel's own hook (from `verify.json` it ran first,
    // and albedo-otel saw the stop only once it was blocked: the turn stayed open).
    std::fs::write(dir.join("0-verify.json"), hooks.to_string()).unwrap();
}

/// Issue 37: the user's verifier blocks Copilot's stop only once albedo-otel has sent the
/// turn out; Copilot submits the verifier's reason as a prompt and goes on (a model call, a
/// shell call, a model call), and stops again. All of it is in the turn's trace: a
/// continuation under its root, at its own times (before the fix: a second turn of its own).
#[cfg(unix)]
#[test]
fn a_stop_blocked_after_the_turn_went_out_keeps_its_continuation_in_the_turns_trace() {
    let Some(bin) = copilot() else { return };
    let (rx, home, work, hook_dir, spool) = lab("cpv", API_KEY);
    let api = MockChat::start();
    verifier_hook(&home);
    let install = albedo_otel(isolated_env, &home, &spool);
    install_as_user(install, &["copilot"], &hook_dir, &rx, API_KEY);
    let mut cmd = copilot_cmd(&bin, &["-p", "run the command"], &home, &work, &api, &spool);
    // The daemon stays up while the verifier runs, as it does by default (a minute idle).
    cmd.env("ALBEDO_OTEL_IDLE_EXIT", "20s");
    let out = cmd.output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "copilot failed: {said}");
    assert!(home.join("verify.sh.blocked").exists(), "the verifier ran");
    let log = drained(&hook_dir, &rx);
    let spans = rx.spans();
    let tree = render_trees(&spans, &["albedo.turn.continued", "gen_ai.tool.call.id"]);
    assert_eq!(check_invariants(&spans), 1, "one turn:\n{tree}\n{log}");
    let root = spans
        .iter()
        .find(|s| s.span.parent_span_id.is_empty())
        .unwrap();
    let continued: Vec<&FlatSpan> = spans
        .iter()
        .filter(|s| s.attr("albedo.turn.continued").as_deref() == Some("true"))
        .collect();
    let [cont] = continued.as_slice() else {
        panic!("one continuation:\n{tree}")
    };
    assert_eq!(cont.span.parent_span_id, root.span.span_id, "{tree}");
    let calls: Vec<&FlatSpan> = spans
        .iter()
        .filter(|s| s.span.name == "execute_tool bash")
        .collect();
    let [first, again] = calls.as_slice() else {
        panic!("two shell calls:\n{tree}")
    };
    assert_eq!(first.span.parent_span_id, root.span.span_id, "{tree}");
    assert_eq!(again.span.parent_span_id, cont.span.span_id, "{tree}");
    // The continuation came once the verifier had blocked, after the turn had ended.
    assert!(
        again.span.start_time_unix_nano
            >= root.span.end_time_unix_nano + (VERIFIER_SECS - 1) * 1_000_000_000,
        "{tree}"
    );
    // Every model call the agent made is in the trace.
    let chats = spans
        .iter()
        .filter(|s| s.span.name.starts_with("chat "))
        .count();
    assert_eq!(chats, api.sent().len(), "{tree}");
}
