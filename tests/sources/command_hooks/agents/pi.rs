//! The real Pi coding agent, offline, with a provider of the user's own in `models.json` (a
//! scripted stand-in for OpenAI's chat completions), albedo-otel's extension installed by
//! `albedo-otel install pi`, and an extension of the user's own that refuses force-pushes (Pi
//! has no permission rules of its own: its gates are extensions). Two turns of one session
//! (the second by `--session`): a shell call that takes a second, and one the user's
//! extension refuses. The trace must have one root a turn, the calls in it with Pi's own ids,
//! the model calls with the tokens and times Pi wrote to its session file; a killed Pi's turn
//! goes out unfinished; and Pi runs as ever when albedo-otel's hook is missing or dies. Pi
//! runs extensions with the user's whole environment; a bogus `OTEL_EXPORTER_OTLP_ENDPOINT`
//! there proves the configuration file decides.
//! Needs the CLI: `npm install @earendil-works/pi-coding-agent@1.6.0`, Node 22.19 or later
//! first on PATH (or in `ALBEDO_OTEL_NODE22_DIR`), and `PI_BIN` (or `pi` on PATH); `.ci/run`
//! does all three.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[cfg(unix)]
use crate::support::agent_trace::kill_mid_call;
use crate::support::agent_trace::{
    check_killed, check_two_turns, drained, find_cli, install_as_user, isolated_env,
    key_only_in_config, lab, Expect,
};
use crate::support::openai_chat::{MockChat, DENIED_COMMAND, DENY_MARK, LINGER_MARK, LONG_COMMAND};
use crate::support::*;

const API_KEY: &str = "test-key-9d2e41b7c6";
/// What the user's own extension answers a force-push.
const REFUSAL: &str = "force-pushes are not allowed here";

fn pi() -> Option<PathBuf> {
    find_cli("pi")
}

/// Pi's own settings: the scripted provider, and the user's extension against force-pushes.
fn configure(home: &Path, api: &MockChat) {
    let agent = home.join(".pi/agent");
    std::fs::create_dir_all(agent.join("extensions")).unwrap();
    let models = serde_json::json!({"providers": {"mock": {
        "baseUrl": format!("http://{}/v1", api.addr), "api": "openai-completions",
        "apiKey": "dummy",
        "models": [{"id": "mock-model", "name": "Mock", "contextWindow": 128000,
                    "maxTokens": 4096}]}}});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    std::fs::write(
        agent.join("extensions/deny-force-push.js"),
        format!(
            "export default function (pi) {{\n  pi.on(\"tool_call\", (e) => {{\n    \
             if (e.toolName === \"bash\" && e.input.command.includes(\"git push --force\"))\n      \
             return {{ block: true, reason: \"{REFUSAL}\" }};\n  }});\n}}\n"
        ),
    )
    .unwrap();
}

/// `pi -p PROMPT [ARGS]` in `work`, as a user's shell would start it.
fn pi_cmd(bin: &Path, args: &[&str], home: &Path, work: &Path, spool: &Path) -> Command {
    let mut cmd = Command::new(bin);
    isolated_env(&mut cmd, home, spool);
    // Pi needs Node 22.19 or later: the one `.ci/run` installs goes first.
    if let Some(node) = std::env::var_os("ALBEDO_OTEL_NODE22_DIR") {
        let mut path = vec![PathBuf::from(node)];
        path.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        cmd.env("PATH", std::env::join_paths(path).unwrap());
    }
    cmd.args([
        "--provider",
        "mock",
        "--model",
        "mock-model",
        "--mode",
        "json",
    ])
    .args(args)
    .current_dir(work)
    .stdin(Stdio::null())
    .env("PI_OFFLINE", "1")
    .env("PI_SKIP_VERSION_CHECK", "1")
    .env("PI_TELEMETRY", "0")
    // The user's shell's variables, meant for other programs.
    .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9");
    cmd
}

/// `pi ARGS` in `work`; returns its JSON lines.
fn run_pi(bin: &Path, args: &[&str], home: &Path, work: &Path, spool: &Path) -> String {
    let out = pi_cmd(bin, args, home, work, spool).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "pi {args:?} failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The session id of a `--mode json` run's output: its first line is the session's header.
fn session_of(output: &str) -> String {
    output
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == "session")
        .and_then(|v| v["id"].as_str().map(str::to_string))
        .expect("a session id in Pi's output")
}

/// What Pi wrote to its session file (`~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`).
#[derive(Default, Debug)]
struct Recorded {
    /// Each model call: its start and end in Unix ms, and `(input, output)` tokens in the
    /// API's terms (the cache's in the input).
    calls: Vec<(u64, u64, (u64, u64))>,
    /// Each tool call by its id: how long it ran (none: it never ran), and whether it is an
    /// error.
    tools: std::collections::BTreeMap<String, (Option<u64>, bool)>,
}

fn recorded(home: &Path, session: &str) -> Recorded {
    let files: Vec<PathBuf> = files_under(&home.join(".pi/agent/sessions"))
        .into_iter()
        .filter(|f| f.to_string_lossy().ends_with(&format!("_{session}.jsonl")))
        .collect();
    assert_eq!(files.len(), 1, "one session file: {files:?}");
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    let mut r = Recorded::default();
    for line in std::fs::read_to_string(&files[0]).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let m = &v["message"];
        match m["role"].as_str() {
            Some("assistant") => {
                let u = &m["usage"];
                r.calls.push((
                    n(&m["timestamp"]),
                    n(&m["timestamp"]) + n(&m["durationMs"]),
                    (
                        n(&u["input"]) + n(&u["cacheRead"]) + n(&u["cacheWrite"]),
                        n(&u["output"]),
                    ),
                ));
            }
            Some("toolResult") => {
                r.tools.insert(
                    m["toolCallId"].as_str().unwrap_or_default().to_string(),
                    (m["durationMs"].as_u64(), m["isError"] == true),
                );
            }
            _ => {}
        }
    }
    r
}

fn setup(
    name: &str,
) -> Option<(
    PathBuf,
    Receiver,
    MockChat,
    Scratch,
    Scratch,
    Scratch,
    Scratch,
)> {
    let bin = pi()?;
    let (rx, home, work, hook_dir, spool) = lab(name, API_KEY);
    let api = MockChat::start();
    configure(&home, &api);
    let mut install = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
    isolated_env(&mut install, &home, &spool);
    install_as_user(install, &["pi"], &hook_dir, &rx, API_KEY);
    let ext = std::fs::read_to_string(home.join(".pi/agent/extensions/albedo-otel.js")).unwrap();
    assert!(
        ext.contains("\"--agent\",\"pi\"") && !ext.contains(API_KEY),
        "{ext}"
    );
    Some((bin, rx, api, home, work, hook_dir, spool))
}

#[test]
fn a_real_pi_session_becomes_a_trace_per_turn() {
    let Some((bin, rx, api, home, work, hook_dir, spool)) = setup("pi") else {
        return;
    };
    let first = run_pi(&bin, &["-p", "run the command"], &home, &work, &spool);
    let session = session_of(&first);
    let prompt = format!("{DENY_MARK}: push it");
    run_pi(
        &bin,
        &["--session", &session, "-p", &prompt],
        &home,
        &work,
        &spool,
    );
    let log = drained(&hook_dir, &rx);
    // ccusage 20 reads the same files: the live route counted what it counts.
    crate::support::ccusage::live_route_agrees("pi", &home);
    // An import of the same files counts what the live route counted, and again nothing.
    crate::support::ccusage::import_agrees("pi", &home);
    key_only_in_config(&home, &hook_dir, API_KEY);

    let spans = rx.spans();
    let expect = Expect {
        root: "invoke_agent pi",
        session: Some(&session),
        tool: "execute_tool bash",
        denied: DENIED_COMMAND,
        provider: "mock",
        model: "mock-model",
        own_tool_times: false,
    };
    let recorded = recorded(&home, &session);
    let pairs: Vec<(u64, u64)> = recorded.calls.iter().map(|c| c.2).collect();
    check_two_turns(&spans, &expect, &pairs, &api.sent(), &log);
    let tree = render_trees(&spans, &["gen_ai.tool.call.id"]);

    // Each model call starts and ends when Pi's session file says it did.
    let mut chats: Vec<(u64, u64)> = spans
        .iter()
        .filter(|s| s.attr("gen_ai.operation.name").as_deref() == Some("chat"))
        .map(|s| {
            (
                s.span.start_time_unix_nano / 1_000_000,
                s.span.end_time_unix_nano / 1_000_000,
            )
        })
        .collect();
    chats.sort();
    let times: Vec<(u64, u64)> = recorded.calls.iter().map(|c| (c.0, c.1)).collect();
    assert_eq!(chats, times, "Pi's own times:\n{tree}");

    // Each call has Pi's id, lasts at least as long as Pi says it ran, and is an error only
    // where Pi recorded one; the refused one carries the user's extension's reason.
    let tools: Vec<&FlatSpan> = spans
        .iter()
        .filter(|s| s.span.name.starts_with("execute_tool "))
        .collect();
    assert_eq!(tools.len(), recorded.tools.len(), "{tree}");
    for span in tools {
        let id = span.attr("gen_ai.tool.call.id").expect("a call id");
        let (ran, error) = recorded.tools[&id];
        let took = (span.span.end_time_unix_nano - span.span.start_time_unix_nano) / 1_000_000;
        assert!(
            took >= ran.unwrap_or(0),
            "{id}: {took} ms < {ran:?}\n{tree}"
        );
        let is_error = span.span.status.as_ref().is_some_and(|s| s.code == 2);
        assert_eq!(is_error, error, "{id}\n{tree}");
        if span.attr("albedo.tool.refused").is_some() {
            assert_eq!(ran, None, "a refused call never ran");
            let status = span.span.status.as_ref().unwrap();
            assert!(status.message.contains(REFUSAL), "{status:?}");
        }
    }
}

/// Pi killed during a call (a closed terminal): the extension's hook sees its input close, and
/// the open turn is exported, unfinished, with the call in it.
#[cfg(unix)]
#[test]
fn a_killed_pi_leaves_its_turn_unfinished_not_lost() {
    let Some((bin, rx, _api, home, work, hook_dir, spool)) = setup("pi-kill") else {
        return;
    };
    let prompt = format!("{LINGER_MARK}: wait");
    let cmd = pi_cmd(&bin, &["-p", &prompt], &home, &work, &spool);
    kill_mid_call(cmd, &hook_dir, LONG_COMMAND);
    let log = drained(&hook_dir, &rx);
    check_killed(&rx.spans(), "execute_tool bash", &log);
}

/// Pi runs as ever, answer and session file alike, when the hook the extension starts is not
/// there, or exits at once: the extension waits on nothing and throws nothing at Pi.
#[test]
fn pi_runs_as_ever_when_albedo_otel_is_missing_or_dies() {
    let Some(bin) = pi() else { return };
    let (_rx, home, work, _hooks, spool) = lab("pi-gone", API_KEY);
    let api = MockChat::start();
    configure(&home, &api);
    let file = home.join(".pi/agent/extensions/albedo-otel.js");
    let missing = home.join("no-such-albedo-otel-hook").display().to_string();
    for command in [
        vec![missing, "--agent".into(), "pi".into()],
        vec!["sh".into(), "-c".into(), "exit 3".into()],
    ] {
        std::fs::write(
            &file,
            albedo_otel::sources::command_hooks::pi::extension(&command),
        )
        .unwrap();
        let out = run_pi(&bin, &["-p", "run the command"], &home, &work, &spool);
        assert!(out.contains("The command ran"), "{command:?}: {out}");
        let session = session_of(&out);
        let r = recorded(&home, &session);
        assert_eq!(r.calls.len(), 2, "{command:?}: {r:?}");
        assert!(
            r.tools.values().all(|(ran, error)| ran.is_some() && !error),
            "{r:?}"
        );
    }
}
