//! The real Gemini CLI, offline, against a scripted stand-in for the Gemini API, with
//! albedo-otel's hook installed by `albedo-otel install gemini` beside a hook of the user's
//! own that denies force-pushes. Two turns of one session (the second by `--resume`): a shell
//! call that takes a second, and one the user's hook denies. The trace must have one root a
//! turn, the calls with their real times inside it, and the model calls with the tokens the
//! CLI's own transcript recorded. The collector demands an API key, which reaches it only
//! through the configuration file. Then a third turn with the hook taken out, which an import
//! adds to the store beside the two the hook traced.
//! Needs the CLI: `npm install @google/gemini-cli@0.61.0`, and `GEMINI_BIN` (or `gemini` on
//! PATH); `.ci/run` does both.

use std::path::{Path, PathBuf};
use std::process::Command;

#[cfg(unix)]
use crate::support::agent_trace::kill_mid_call;
use crate::support::agent_trace::{
    albedo_otel, capture_messages, check_captured_prompt, check_killed, check_sub_agent,
    check_two_turns, deny_force_push, drained, find_cli, install_as_user, key_only_in_config, lab,
    Expect, PASTED_KEY,
};
use crate::support::gemini_api::{
    MockGemini, DELEGATE_MARK, DENIED_COMMAND, DENY_MARK, LINGER_MARK, LONG_COMMAND,
};
use crate::support::*;

const API_KEY: &str = "test-key-9c2e4b7a1d";

fn gemini() -> Option<PathBuf> {
    find_cli("gemini")
}

/// The user's settings before albedo-otel: offline-friendly, and a hook of their own.
fn user_settings(home: &Path) -> PathBuf {
    let deny = deny_force_push(
        home,
        &serde_json::json!({"decision": "deny", "reason": "force-push is not allowed"}),
    );
    let settings = serde_json::json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        // The CLI's own clean-up would delete a resumed session's transcript.
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false,
                    "sessionRetention": {"enabled": false}},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [
            {"name": "no-force-push", "type": "command", "command": deny.display().to_string(), "timeout": 5000}]}]}
    });
    let file = home.join(".gemini/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, serde_json::to_string_pretty(&settings).unwrap()).unwrap();
    file
}

/// A clean environment, as a user's shell would have: the API's address and key, and what
/// the test wants of the daemon (its spool, a quick exit once idle).
fn base_env(cmd: &mut Command, home: &Path, spool: &Path) {
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("TERM", "dumb")
        .env("ALBEDO_OTEL_SPOOL_DIR", spool)
        .env("ALBEDO_OTEL_IDLE_EXIT", "1s")
        .env("OTEL_BSP_SCHEDULE_DELAY", "100");
}

fn gemini_cmd(
    bin: &Path,
    args: &[&str],
    home: &Path,
    work: &Path,
    api: &MockGemini,
    spool: &Path,
) -> Command {
    let mut cmd = Command::new(bin);
    base_env(&mut cmd, home, spool);
    cmd.args(["-m", "gemini-2.5-flash", "--yolo", "--skip-trust"])
        .args(args)
        .current_dir(work)
        .env("GOOGLE_GEMINI_BASE_URL", format!("http://{}", api.addr))
        .env("GEMINI_API_KEY", "dummy-gemini-key")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
        .env("OTEL_SERVICE_NAME", "not-albedo");
    cmd
}

fn run_gemini(bin: &Path, args: &[&str], home: &Path, work: &Path, api: &MockGemini, spool: &Path) {
    let out = gemini_cmd(bin, args, home, work, api, spool)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gemini {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The model messages the CLI recorded, as `(input, output)` tokens, in order: its transcript
/// is JSON lines where a record with an id replaces the earlier one with that id.
fn transcript_tokens(home: &Path) -> Vec<(u64, u64)> {
    let chats: Vec<PathBuf> = files_under(&home.join(".gemini/tmp"))
        .into_iter()
        .filter(|p| {
            p.extension().is_some_and(|e| e == "jsonl") && p.to_string_lossy().contains("/chats/")
        })
        .collect();
    let mut order: Vec<String> = Vec::new();
    let mut by_id = std::collections::HashMap::new();
    for file in chats {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if v["type"] != "gemini" {
                continue;
            }
            let id = v["id"].as_str().unwrap_or_default().to_string();
            if !by_id.contains_key(&id) {
                order.push(id.clone());
            }
            by_id.insert(
                id,
                (
                    v["tokens"]["input"].as_u64().unwrap_or(0),
                    v["tokens"]["output"].as_u64().unwrap_or(0),
                ),
            );
        }
    }
    order.iter().map(|id| by_id[id]).collect()
}

#[test]
fn a_real_gemini_cli_session_becomes_a_trace_per_turn() {
    let Some(bin) = gemini() else { return };
    let (rx, home, work, hook_dir, spool) = lab("gm", API_KEY);
    let api = MockGemini::start();
    let settings = user_settings(&home);

    // Installed as a user would: the standard variables exported, the key among them.
    let install = albedo_otel(base_env, &home, &spool);
    install_as_user(install, &["gemini"], &hook_dir, &rx, API_KEY);
    let installed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(
        installed["security"]["auth"]["selectedType"], "gemini-api-key",
        "other settings are kept"
    );
    let before_tool = installed["hooks"]["BeforeTool"].as_array().unwrap();
    assert!(
        before_tool
            .iter()
            .any(|g| g["hooks"][0]["name"] == "no-force-push"),
        "the user's hook is kept: {installed:#}"
    );
    let ours = &installed["hooks"]["AfterModel"][0]["hooks"][0];
    assert_eq!(
        ours["timeout"], 10_000,
        "Gemini counts milliseconds: {ours}"
    );
    assert!(
        ours["command"]
            .as_str()
            .unwrap()
            .ends_with("--agent gemini"),
        "{ours}"
    );
    assert!(
        !installed.to_string().contains(API_KEY),
        "the hook carries no secret"
    );

    // doctor finds the installed route and runs it as the CLI would.
    let mut doctor = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
    base_env(&mut doctor, &home, &spool);
    let out = doctor
        .arg("doctor")
        .env("ALBEDO_OTEL_HOOK_DIR", &hook_dir)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains("ok   hook, Gemini CLI (user)"),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );

    run_gemini(&bin, &["-p", "run the command"], &home, &work, &api, &spool);
    run_gemini(
        &bin,
        &["--resume", "latest", "-p", &format!("{DENY_MARK}: push it")],
        &home,
        &work,
        &api,
        &spool,
    );

    let log = drained(&hook_dir, &rx);
    // ccusage 20 reads the same files: the live route counted what it counts, and an import
    // of them into an empty store counts it too; beside the live route, it adds nothing (the
    // sessions the hooks traced are theirs).
    crate::support::ccusage::live_route_agrees("gemini", &home);
    crate::support::ccusage::import_agrees("gemini", &home);
    // The doctor's test traces aside.
    let doctor: Vec<Vec<u8>> = rx
        .spans()
        .iter()
        .filter(|s| s.span.name == "albedo-otel doctor")
        .map(|s| s.span.trace_id.clone())
        .collect();
    assert!(!doctor.is_empty());
    let spans: Vec<FlatSpan> = rx
        .spans()
        .into_iter()
        .filter(|s| !doctor.contains(&s.span.trace_id))
        .collect();
    key_only_in_config(&home, &hook_dir, API_KEY);
    // Gemini hands its own key to every hook; the hook never journals it.
    assert!(files_containing(&hook_dir, "dummy-gemini-key").is_empty());

    let expect = Expect {
        root: "invoke_agent gemini-cli",
        session: None,
        tool: "execute_tool run_shell_command",
        denied: DENIED_COMMAND,
        provider: "gcp.gemini",
        model: "gemini-2.5-flash",
        own_tool_times: false,
    };
    check_two_turns(
        &spans,
        &expect,
        &transcript_tokens(&home),
        &api.sent(),
        &log,
    );
    assert_eq!(api.requests().len(), 4, "two model calls a turn");

    // uninstall takes ours out and leaves the user's.
    let mut uninstall = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
    base_env(&mut uninstall, &home, &spool);
    assert!(uninstall
        .args(["uninstall", "gemini"])
        .status()
        .unwrap()
        .success());
    let left = std::fs::read_to_string(&settings).unwrap();
    assert!(
        !left.contains("albedo-otel-hook")
            && !left.contains(" hook --")
            && left.contains("no-force-push"),
        "{left}"
    );

    // A third turn with the hooks taken out: an import reads it, and only it, into the store
    // the hooks wrote, which then counts what ccusage counts, that turn included.
    let resume = ["--resume", "latest", "-p", "run the command"];
    run_gemini(&bin, &resume, &home, &work, &api, &spool);
    let live_store = home.join(".local/share");
    crate::support::ccusage::import("gemini", &live_store, &[("HOME", &home)]);
    crate::support::ccusage::live_route_agrees("gemini", &home);
}

/// A sub-agent that `invoke_agent` ran nests under that call, in its parent's trace: its
/// turn, its shell call and its model calls, which Gemini's hooks do not mark (they come
/// between the call's `BeforeTool` and `AfterTool`), with the tokens its own chat recorded.
#[test]
fn a_sub_agent_nests_under_the_invoke_agent_call_that_ran_it() {
    let Some(bin) = gemini() else { return };
    let (rx, home, work, hook_dir, spool) = lab("gms", API_KEY);
    let api = MockGemini::start();
    user_settings(&home);
    let mut install = albedo_otel(base_env, &home, &spool);
    capture_messages(&mut install);
    install_as_user(install, &["gemini"], &hook_dir, &rx, API_KEY);
    let prompt = format!("{DELEGATE_MARK}: look around, my key is {PASTED_KEY}");
    run_gemini(&bin, &["-p", &prompt], &home, &work, &api, &spool);
    let log = drained(&hook_dir, &rx);
    let spans = rx.spans();
    check_captured_prompt(&spans, DELEGATE_MARK);
    // Gemini's `invoke_agent` waits for its sub-agent.
    let sub = check_sub_agent(
        &spans,
        "execute_tool invoke_agent",
        true,
        "execute_tool run_shell_command",
        transcript_tokens(&home),
        &api.sent(),
        &log,
    );
    assert_eq!(sub.span.name, "invoke_agent generalist");
    // An import reads the sub-agent's chat into its session: the same tokens.
    crate::support::ccusage::import_agrees("gemini", &home);
}

/// Gemini CLI killed during a call (a closed terminal): no `AfterAgent`, no `SessionEnd`.
/// The daemon sees the CLI gone and exports the open turn, unfinished, with the call in it.
#[cfg(unix)]
#[test]
fn a_killed_gemini_cli_leaves_its_turn_unfinished_not_lost() {
    let Some(bin) = gemini() else { return };
    let (rx, home, work, hook_dir, spool) = lab("gmk", API_KEY);
    let api = MockGemini::start();
    user_settings(&home);
    let install = albedo_otel(base_env, &home, &spool);
    install_as_user(install, &["gemini"], &hook_dir, &rx, API_KEY);
    let prompt = format!("{LINGER_MARK}: wait");
    let cmd = gemini_cmd(&bin, &["-p", &prompt], &home, &work, &api, &spool);
    kill_mid_call(cmd, &hook_dir, LONG_COMMAND);
    let log = drained(&hook_dir, &rx);
    check_killed(&rx.spans(), "execute_tool run_shell_command", &log);
}
