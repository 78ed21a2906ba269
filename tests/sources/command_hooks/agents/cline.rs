//! The real Cline CLI, offline, with an OpenAI-compatible provider of the user's own (a
//! scripted stand-in for chat completions), albedo-otel's hook scripts installed by
//! `albedo-otel install cline` beside a hook script of the user's own that cancels
//! force-pushes. Two turns of one session, through one `cline --acp` process (Cline resumes a
//! session with `--id` only into its interactive screen): a shell call that takes a second,
//! and one the user's hook cancels. The trace must have one root a turn, the calls inside it
//! with Cline's ids and times, and the model calls with the tokens Cline recorded in its
//! messages file. A sub-agent (`spawn_agent`) nests under the call that started it, with its
//! own shell call and model calls. Cline runs hooks with its whole environment; a bogus
//! `OTEL_EXPORTER_OTLP_ENDPOINT` there proves the configuration file decides.
//! Needs the CLI: `npm install cline@3.0.65`, and `CLINE_BIN` (or `cline` on PATH); `.ci/run`
//! does both.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[cfg(unix)]
use crate::support::agent_trace::kill_mid_call;
use crate::support::agent_trace::{
    albedo_otel, capture_messages, chat_tokens, check_killed, check_sub_agent, check_two_turns,
    deny_force_push, drained, find_cli, install_as_user, isolated_env, key_only_in_config, lab,
    Expect, PASTED_KEY,
};
#[cfg(unix)]
use crate::support::cline::stop_hub;
use crate::support::cline::{retire_after_exit, sub_agent_file, Acp};
use crate::support::openai_chat::{
    MockChat, DELEGATE_MARK, DENIED_COMMAND, DENY_MARK, LINGER_MARK, LONG_COMMAND,
};
use crate::support::FlatSpan;
use serde_json::{json, Value};

const API_KEY: &str = "test-key-7d2c5b1e40";
const MODEL: &str = "gpt-4.1";

fn cline() -> Option<PathBuf> {
    find_cli("cline")
}

/// `cline ARGS` in `work`, as a user's shell would start it, with the scripted provider
/// chosen (`cline auth` has stored its address).
fn cline_cmd(bin: &Path, args: &[&str], home: &Path, work: &Path, spool: &Path) -> Command {
    let mut cmd = Command::new(bin);
    isolated_env(&mut cmd, home, spool);
    cmd.args(args)
        .current_dir(work)
        // `--acp` takes the provider from here; the key is the scripted provider's own.
        .env("CLINE_PROVIDER", "openai-compatible")
        .env("CLINE_MODEL", MODEL)
        .env("CLINE_API_KEY", "dummy")
        // Cline starts a hub on a fixed port, in a process group of its own, and leaves it
        // running: a port of the test's own keeps tests apart, and `stop_hub` stops it.
        .env("CLINE_HUB_PORT", free_port().to_string())
        // The user's shell's variables, meant for other programs.
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9");
    cmd
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Points Cline at the scripted provider, as its user would.
fn auth(bin: &Path, home: &Path, work: &Path, spool: &Path, api: &MockChat) {
    let base = format!("http://{}/v1", api.addr);
    let args = [
        "auth",
        "-p",
        "openai-compatible",
        "-b",
        &base,
        "-k",
        "dummy",
        "-m",
        MODEL,
    ];
    let out = cline_cmd(bin, &args, home, work, spool)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cline auth: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A hook script of the user's own, beside ours under another name Cline reads (`.sh`).
fn user_hook(home: &Path) {
    let deny = deny_force_push(
        home,
        &json!({"cancel": true, "errorMessage": "force-push is not allowed"}),
    );
    let dir = home.join(".cline/hooks");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(deny, dir.join("PreToolUse.sh")).unwrap();
}

/// The session's messages file (the one session folder) and its id.
fn messages_file(home: &Path) -> (PathBuf, String) {
    let sessions = home.join(".cline/data/sessions");
    let dir = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .find(|e| e.path().is_dir())
        .expect("a session folder");
    let id = dir.file_name().to_string_lossy().into_owned();
    (dir.path().join(format!("{id}.messages.json")), id)
}

/// The one model of the messages file's answers.
fn recorded_model(messages: &Path) -> String {
    let file: Value = serde_json::from_slice(&std::fs::read(messages).unwrap()).unwrap();
    let mut models: Vec<&str> = file["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["modelInfo"]["id"].as_str())
        .collect();
    models.dedup();
    assert_eq!(models.len(), 1, "{models:?}");
    models[0].to_string()
}

/// Each model call's `(input, output)` tokens as Cline recorded them.
fn recorded_tokens(messages: &Path) -> Vec<(u64, u64)> {
    let file: Value = serde_json::from_slice(&std::fs::read(messages).unwrap()).unwrap();
    file["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant" && m["metrics"].is_object())
        .map(|m| {
            let n = |k: &str| m["metrics"][k].as_u64().unwrap_or(0);
            (n("inputTokens"), n("outputTokens"))
        })
        .collect()
}

#[test]
fn a_real_cline_session_becomes_a_trace_per_turn() {
    let Some(bin) = cline() else { return };
    let (rx, home, work, hook_dir, spool) = lab("cl", API_KEY);
    let api = MockChat::start();
    user_hook(&home);
    auth(&bin, &home, &work, &spool, &api);

    let install = albedo_otel(isolated_env, &home, &spool);
    install_as_user(install, &["cline"], &hook_dir, &rx, API_KEY);
    let ours = std::fs::read_to_string(home.join(".cline/hooks/TaskStart")).unwrap();
    assert!(
        ours.contains("'--agent' 'cline'") && !ours.contains(API_KEY),
        "{ours}"
    );

    let mut acp = Acp::start(cline_cmd(&bin, &[], &home, &work, &spool));
    acp.request(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    let session = acp.request("session/new", json!({"cwd": &*work, "mcpServers": []}));
    let sid = session["sessionId"].as_str().unwrap().to_string();
    let prompt = |text: &str| json!({"sessionId": sid, "prompt": [{"type": "text", "text": text}]});
    let first = acp.request("session/prompt", prompt("run the command"));
    assert_eq!(first["stopReason"], "end_turn");
    // The user's hook cancels the call, and with it the turn.
    let second = acp.request("session/prompt", prompt(&format!("{DENY_MARK}: push it")));
    assert_eq!(second["stopReason"], "cancelled");
    acp.close();
    #[cfg(unix)]
    stop_hub(&work);

    let log = drained(&hook_dir, &rx);
    crate::support::ccusage::import_agrees("cline", &home);
    key_only_in_config(&home, &hook_dir, API_KEY);
    let (messages, session) = messages_file(&home);
    // The model Cline recorded: its ACP session takes its own default (gpt-4o), not the one
    // `cline auth` set, and says so in its messages file, as the provider was sent.
    let model = recorded_model(&messages);
    let spans = rx.spans();
    let expect = Expect {
        root: "invoke_agent cline",
        session: Some(&session),
        tool: "execute_tool run_commands",
        denied: DENIED_COMMAND,
        provider: "openai",
        model: &model,
        own_tool_times: false,
    };
    check_two_turns(
        &spans,
        &expect,
        &recorded_tokens(&messages),
        &api.sent(),
        &log,
    );
    // The call ids are Cline's own.
    let ids: Vec<String> = spans
        .iter()
        .filter_map(|s| s.attr("gen_ai.tool.call.id"))
        .collect();
    assert!(
        ids.contains(&"call_1".to_string()) && ids.contains(&"call_3".to_string()),
        "{ids:?}"
    );
}

/// Cline killed during a call (a closed terminal): no `TaskComplete`. The daemon sees Cline
/// gone and exports the open turn, unfinished, with the call it had begun.
#[cfg(unix)]
#[test]
fn a_killed_cline_leaves_its_turn_unfinished_not_lost() {
    let Some(bin) = cline() else { return };
    let (rx, home, work, hook_dir, spool) = lab("clk", API_KEY);
    let api = MockChat::start();
    auth(&bin, &home, &work, &spool, &api);
    let install = albedo_otel(isolated_env, &home, &spool);
    install_as_user(install, &["cline"], &hook_dir, &rx, API_KEY);
    let prompt = format!("{LINGER_MARK}: wait");
    let cmd = cline_cmd(&bin, &["--json", &prompt], &home, &work, &spool);
    // Killed once the long command's `PreToolUse` is journaled: the daemon knows Cline's
    // process from two payloads of it, and sees it gone.
    kill_mid_call(cmd, &hook_dir, LONG_COMMAND);
    stop_hub(&work);
    let log = drained(&hook_dir, &rx);
    check_killed(&rx.spans(), "execute_tool run_commands", &log);
}

/// A sub-agent the model starts with `spawn_agent` nests under that call, in its parent's
/// trace, with its own shell call and the model calls of its own messages file
/// (`<session>/<agent_id>.messages.json`), with the tokens the API sent it. With capture on,
/// its turn's prompt is its task, with the key pasted there redacted.
#[test]
fn a_sub_agent_nests_under_the_spawn_agent_call_that_started_it() {
    let Some(bin) = cline() else { return };
    let (rx, home, work, hook_dir, spool) = lab("cls", API_KEY);
    let api = MockChat::start();
    auth(&bin, &home, &work, &spool, &api);
    let mut install = albedo_otel(isolated_env, &home, &spool);
    capture_messages(&mut install);
    install_as_user(install, &["cline"], &hook_dir, &rx, API_KEY);
    let prompt = format!("{DELEGATE_MARK}: look around");
    let ran = cline_cmd(&bin, &["--json", &prompt], &home, &work, &spool)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "cline: {}",
        String::from_utf8_lossy(&ran.stderr)
    );
    #[cfg(unix)]
    stop_hub(&work);
    retire_after_exit(&home, &spool, &hook_dir);
    let log = drained(&hook_dir, &rx);
    crate::support::ccusage::import_agrees("cline", &home);

    let (lead, _) = messages_file(&home);
    let own_file = sub_agent_file(&lead);
    let own = recorded_tokens(&own_file);
    let mut recorded = recorded_tokens(&lead);
    recorded.extend(own.iter().copied());
    let spans = rx.spans();
    let sub = check_sub_agent(
        &spans,
        "execute_tool spawn_agent",
        true,
        "execute_tool run_commands",
        recorded,
        &api.sent(),
        &log,
    );
    // The sub-agent's own model calls are those its own file has, as the API sent them.
    let under: Vec<FlatSpan> = spans
        .iter()
        .filter(|s| s.span.parent_span_id == sub.span.span_id)
        .cloned()
        .collect();
    let mine = chat_tokens(&under);
    assert_eq!(mine, own, "the sub-agent's model calls: {under:#?}");
    let sent: Vec<(u64, u64)> = api
        .sent()
        .iter()
        .map(|s| (s.prompt_tokens, s.output_tokens))
        .collect();
    assert!(
        !mine.is_empty() && mine.iter().all(|t| sent.contains(t)),
        "{mine:?} as sent: {sent:?}"
    );
    let task = sub.attr("input.value").unwrap_or_default();
    assert!(
        task.starts_with("run the command") && task.contains("[REDACTED:anthropic-key]"),
        "the sub-agent's task, captured and scrubbed: {task:?}"
    );
    assert!(
        !format!("{spans:?}").contains(PASTED_KEY),
        "the pasted key was exported"
    );
}

/// A hook file of the user's own under an event's name is never replaced or removed: `install`
/// refuses, writing none of ours; `uninstall` leaves it.
#[test]
fn a_users_script_of_an_events_name_is_never_touched() {
    let (rx, home, _work, hook_dir, spool) = lab("clu", API_KEY);
    let dir = home.join(".cline/hooks");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("TaskComplete"), "#!/bin/sh\necho mine\n").unwrap();
    let out = albedo_otel(isolated_env, &home, &spool)
        .args(["install", "cline"])
        .env("ALBEDO_OTEL_HOOK_DIR", &*hook_dir)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", rx.grpc_url())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("TaskComplete"),
        "{said}"
    );
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["TaskComplete"], "nothing of ours was written");
    std::fs::remove_file(dir.join("TaskComplete")).unwrap();

    // Installed, twice: the same scripts, executable; then the user's own beside them.
    for _ in 0..2 {
        install_as_user(
            albedo_otel(isolated_env, &home, &spool),
            &["cline"],
            &hook_dir,
            &rx,
            API_KEY,
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("PreToolUse"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
    }
    std::fs::write(dir.join("TaskComplete.sh"), "#!/bin/sh\necho mine\n").unwrap();
    let out = albedo_otel(isolated_env, &home, &spool)
        .args(["uninstall", "cline"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["TaskComplete.sh"], "only ours removed");
}
