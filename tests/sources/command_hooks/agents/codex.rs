//! The real Codex CLI, offline, against a scripted stand-in for OpenAI's Responses API, with
//! albedo-otel's hook installed by `albedo-otel install codex` beside a hook of the user's own
//! that denies force-pushes. Two turns of one session (the second by `codex exec resume`): a
//! shell call that takes a second, and one the user's hook denies. The trace must have one
//! root a turn, the calls inside it, and the model calls with the tokens Codex's own rollout
//! recorded. The collector demands an API key, which reaches it only through the
//! configuration file.
//! Needs the CLI: `npm install @openai/codex@0.171.0`, and `CODEX_BIN` (or `codex` on PATH);
//! `.ci/run` does both.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[cfg(unix)]
use crate::support::agent_trace::kill_mid_call;
use crate::support::agent_trace::{
    albedo_otel, capture_messages, check_captured_prompt, check_killed, check_sub_agent,
    check_two_turns, deny_force_push, drained, find_cli, install_as_user, isolated_env,
    key_only_in_config, lab, recorded_pairs, Expect, PASTED_KEY,
};
use crate::support::ccusage;
use crate::support::openai_responses::{
    MockResponses, DELEGATE_MARK, DENIED_COMMAND, DENY_MARK, LINGER_MARK, LONG_COMMAND,
};
use crate::support::*;

const API_KEY: &str = "test-key-5d8f1a3c7e";

fn codex() -> Option<PathBuf> {
    find_cli("codex")
}

/// The user's Codex before albedo-otel: the scripted provider, and a hook of their own.
fn user_setup(home: &Path, api: &MockResponses) -> PathBuf {
    let codex_home = home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model = \"gpt-5-mock\"\nmodel_provider = \"lab\"\n\n[model_providers.lab]\nname = \"lab\"\nbase_url = \"http://{}/v1\"\nwire_api = \"responses\"\n",
            api.addr
        ),
    )
    .unwrap();
    let deny = deny_force_push(
        home,
        &serde_json::json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": "force-push is not allowed"}}),
    );
    let hooks = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": deny.display().to_string(), "timeout": 3}]}]}});
    let file = codex_home.join("hooks.json");
    std::fs::write(&file, serde_json::to_string_pretty(&hooks).unwrap()).unwrap();
    file
}

fn base_env(cmd: &mut Command, home: &Path, spool: &Path) {
    isolated_env(cmd, home, spool);
    cmd.env("CODEX_HOME", home.join(".codex"));
}

/// `codex exec` with `args`, as a user's shell would start it. `bypass`: run untrusted hooks
/// too (the user's own among them), as `--dangerously-bypass-hook-trust` does.
fn codex_cmd(
    bin: &Path,
    args: &[&str],
    bypass: bool,
    home: &Path,
    work: &Path,
    spool: &Path,
) -> Command {
    let mut cmd = Command::new(bin);
    base_env(&mut cmd, home, spool);
    cmd.args(["exec", "--json", "--skip-git-repo-check"])
        .args(bypass.then_some("--dangerously-bypass-hook-trust"))
        .args(args)
        .current_dir(work)
        .stdin(Stdio::null())
        // Codex hands hooks its whole environment: the user's shell's variables for other
        // programs must not take the traces elsewhere.
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9");
    cmd
}

/// `codex exec` with `args`; its `--json` output.
fn run_codex(
    bin: &Path,
    args: &[&str],
    bypass: bool,
    home: &Path,
    work: &Path,
    spool: &Path,
) -> String {
    let out = codex_cmd(bin, args, bypass, home, work, spool)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "codex {args:?} failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Each response's `(input, output)` tokens as Codex's rollouts recorded them, in order.
fn rollout_tokens(codex_home: &Path) -> Vec<(u64, u64)> {
    let mut files = files_containing(&codex_home.join("sessions"), "token_usage_record");
    files.sort();
    recorded_pairs(&files, |v| {
        let u = &v["payload"]["usage"];
        (v["type"] == "token_usage_record").then(|| {
            (
                u["input_tokens"].as_u64().unwrap_or(0),
                u["output_tokens"].as_u64().unwrap_or(0),
            )
        })
    })
}

#[test]
fn a_real_codex_session_becomes_a_trace_per_turn() {
    let Some(bin) = codex() else { return };
    let (rx, home, work, hook_dir, spool) = lab("cx", API_KEY);
    let api = MockResponses::start();
    let hooks_file = user_setup(&home, &api);

    let install = albedo_otel(base_env, &home, &spool);
    let said = install_as_user(install, &["codex"], &hook_dir, &rx, API_KEY);
    assert!(
        said.contains("only once it is trusted"),
        "install says Codex must trust the hooks:\n{said}"
    );
    let installed = std::fs::read_to_string(&hooks_file).unwrap();
    assert!(
        installed.contains("deny-force-push.sh") && installed.contains("--agent codex"),
        "{installed}"
    );
    assert!(!installed.contains(API_KEY));

    let first = run_codex(&bin, &["run the command"], true, &home, &work, &spool);
    let thread: serde_json::Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    let session = thread["thread_id"]
        .as_str()
        .expect("thread.started first")
        .to_string();
    run_codex(
        &bin,
        &["resume", &session, &format!("{DENY_MARK}: push it")],
        true,
        &home,
        &work,
        &spool,
    );

    let log = drained(&hook_dir, &rx);
    key_only_in_config(&home, &hook_dir, API_KEY);

    let spans = rx.spans();
    let expect = Expect {
        root: "invoke_agent codex",
        session: Some(&session),
        tool: "execute_tool Bash",
        denied: DENIED_COMMAND,
        provider: "openai",
        model: "gpt-5-mock",
        own_tool_times: false,
    };
    check_two_turns(
        &spans,
        &expect,
        &rollout_tokens(&home.join(".codex")),
        &api.sent(),
        &log,
    );
    reconciled_with_ccusage(&home);
}

/// ccusage 20 reads the same rollouts: the live route's store, and an import of them into an
/// empty store, count the same tokens as it does, session by session.
fn reconciled_with_ccusage(home: &Path) {
    let Some(ccusage) = ccusage::find() else {
        return;
    };
    let codex_home = home.join(".codex");
    let env = [("HOME", home), ("CODEX_HOME", codex_home.as_path())];
    let live = ccusage::report(&home.join(".local/share"));
    let theirs = ccusage::matched(&ccusage::sessions(&ccusage, "codex", &env), &live);
    assert!(!theirs.is_empty());
    assert_eq!(live, theirs, "the live route's store against ccusage codex");
    let listed = ccusage::shown(&home.join(".local/share"));
    let fresh = scratch("cx-import");
    ccusage::import("codex", &fresh, &env);
    assert_eq!(
        ccusage::report(&fresh),
        theirs,
        "an import against ccusage codex"
    );
    // Imported again, or after the live route: nothing twice.
    ccusage::import("codex", &fresh, &env);
    ccusage::import("codex", &home.join(".local/share"), &env);
    assert_eq!(ccusage::report(&fresh), theirs);
    assert_eq!(ccusage::report(&home.join(".local/share")), theirs);
    assert_eq!(
        ccusage::shown(&home.join(".local/share")),
        listed,
        "codex's sessions after an import of what the live route traced: each turn once"
    );
}

/// A sub-agent that `spawn_agent` started nests under that call, in its parent's trace: its
/// turn, its own shell call, and its model calls with the tokens both rollouts recorded.
#[test]
fn a_sub_agent_nests_under_the_spawn_agent_call_that_started_it() {
    let Some(bin) = codex() else { return };
    let (rx, home, work, hook_dir, spool) = lab("cxs", API_KEY);
    let api = MockResponses::start();
    user_setup(&home, &api);
    let mut install = albedo_otel(base_env, &home, &spool);
    capture_messages(&mut install);
    install_as_user(install, &["codex"], &hook_dir, &rx, API_KEY);
    let prompt = format!("{DELEGATE_MARK}: look around, my key is {PASTED_KEY}");
    run_codex(&bin, &[&prompt], true, &home, &work, &spool);
    let log = drained(&hook_dir, &rx);
    let spans = rx.spans();
    check_captured_prompt(&spans, DELEGATE_MARK);
    let recorded = rollout_tokens(&home.join(".codex"));
    // `spawn_agent` ends as soon as the sub-agent has started; `wait_agent` waits.
    check_sub_agent(
        &spans,
        "execute_tool spawn_agent",
        false,
        "execute_tool Bash",
        recorded,
        &api.sent(),
        &log,
    );
}

/// `install codex --trust` trusts our hooks the way Codex checks trust: the real CLI then runs
/// them with no bypass flag, and `uninstall` takes the trust out with them.
#[test]
fn hooks_installed_with_trust_run_without_the_bypass_flag() {
    let Some(bin) = codex() else { return };
    let (rx, home, work, hook_dir, spool) = lab("cxt", API_KEY);
    let api = MockResponses::start();
    user_setup(&home, &api);
    let install = albedo_otel(base_env, &home, &spool);
    let said = install_as_user(install, &["codex", "--trust"], &hook_dir, &rx, API_KEY);
    assert!(
        said.contains("which Codex now runs without asking"),
        "{said}"
    );
    let config = home.join(".codex/config.toml");
    let trusted = std::fs::read_to_string(&config).unwrap();
    assert!(
        trusted.contains("[model_providers.lab]") && trusted.contains("trusted_hash"),
        "the user's settings stay, and the trust is added:\n{trusted}"
    );

    run_codex(&bin, &["run the command"], false, &home, &work, &spool);
    let log = drained(&hook_dir, &rx);
    let spans = rx.spans();
    let roots: Vec<&FlatSpan> = spans
        .iter()
        .filter(|s| s.span.parent_span_id.is_empty())
        .collect();
    assert_eq!(roots.len(), 1, "{log}");
    assert_eq!(roots[0].span.name, "invoke_agent codex");
    assert!(
        spans.iter().any(|s| s.span.name == "execute_tool Bash"),
        "the tool hooks ran too:\n{}",
        render_trees(&spans, &[])
    );

    let mut uninstall = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
    base_env(&mut uninstall, &home, &spool);
    let out = uninstall.args(["uninstall", "codex"]).output().unwrap();
    assert!(out.status.success());
    let left = std::fs::read_to_string(&config).unwrap();
    assert!(
        !left.contains("trusted_hash") && left.contains("[model_providers.lab]"),
        "{left}"
    );
}

/// Codex killed during a call (SIGKILL: a closed terminal; Codex's own SIGTERM handling fires
/// no hook either): no `Stop`, no `SessionEnd`. The daemon sees Codex gone and exports the
/// open turn, unfinished, with the call in it.
#[cfg(unix)]
#[test]
fn a_killed_codex_leaves_its_turn_unfinished_not_lost() {
    let Some(bin) = codex() else { return };
    let (rx, home, work, hook_dir, spool) = lab("cxk", API_KEY);
    let api = MockResponses::start();
    user_setup(&home, &api);
    let install = albedo_otel(base_env, &home, &spool);
    install_as_user(install, &["codex"], &hook_dir, &rx, API_KEY);
    let prompt = format!("{LINGER_MARK}: wait");
    let cmd = codex_cmd(&bin, &[&prompt], true, &home, &work, &spool);
    kill_mid_call(cmd, &hook_dir, LONG_COMMAND);
    let log = drained(&hook_dir, &rx);
    check_killed(&rx.spans(), "execute_tool Bash", &log);
}
