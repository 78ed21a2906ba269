//! `albedo-otel hook` (and `albedo-otel-hook`) as Claude Code and albedo run it: one process per
//! event, payload on stdin.
//! The recorded sessions in tests/fixtures/claude-code are played through the real binary;
//! the background daemon it starts delivers to a real receiver, and the trees are checked.

use std::collections::HashSet;

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::hooks::{recorded, Setup, StandIn};
use crate::support::*;

fn play(name: &str) -> (Vec<FlatSpan>, Vec<Duration>) {
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    let times: Vec<Duration> = recorded(name).iter().map(|p| setup.hook(p)).collect();
    setup.wait_idle();
    assert!(
        albedo_otel::sources::command_hooks::journal::list(&setup.hook_dir).is_empty(),
        "ended sessions leave no journal: {}",
        setup.daemon_log()
    );
    let log = setup.daemon_log();
    assert!(log.contains("daemon done"), "{log}");
    (rx.spans(), times)
}

fn names(spans: &[FlatSpan]) -> Vec<String> {
    let mut n: Vec<String> = spans.iter().map(|s| s.span.name.clone()).collect();
    n.sort();
    n
}

#[test]
fn a_recorded_session_with_parallel_calls_and_a_failure_becomes_one_trace() {
    let (spans, _) = play("multi_tool");
    assert_eq!(check_invariants(&spans), 1);
    assert_eq!(
        names(&spans),
        [
            "chat claude-opus-5-5",
            "chat claude-opus-5-5",
            "chat claude-opus-5-5",
            "chat claude-opus-5-5",
            "execute_tool Bash",
            "execute_tool Bash",
            "execute_tool Edit",
            "execute_tool Read",
            "invoke_agent claude-code",
        ]
    );
    let failed = spans
        .iter()
        .find(|s| s.attr("gen_ai.tool.call.id").as_deref() == Some("toolu_01Mockmain0200"))
        .unwrap();
    assert_eq!(failed.span.status.as_ref().map(|s| s.code), Some(2));
    // `grep -q goodbye notes.txt || exit 3`, which Claude Code reported as "Exit code 3".
    assert_eq!(failed.attr("process.exit.code").as_deref(), Some("3"));
    assert_eq!(
        failed.attr("process.executable.name").as_deref(),
        Some("grep")
    );
    assert_eq!(
        failed.attr("gen_ai.agent.name").as_deref(),
        Some("claude-code")
    );
    assert_eq!(failed.attr("gen_ai.tool.type").as_deref(), Some("function"));
    let chat = spans
        .iter()
        .find(|s| s.attr("gen_ai.response.id").as_deref() == Some("msg_01Mockmain000001"))
        .unwrap();
    assert_eq!(
        chat.attr("gen_ai.usage.input_tokens").as_deref(),
        Some("14215")
    );
    assert_eq!(
        chat.attr("gen_ai.usage.cache_write.input_tokens")
            .as_deref(),
        Some("14211")
    );
    assert_eq!(
        chat.attr("gen_ai.usage.cache_creation.input_tokens")
            .as_deref(),
        Some("14211")
    );
    // Tool spans take the duration the tool itself measured.
    let read = spans
        .iter()
        .find(|s| s.span.name == "execute_tool Read")
        .unwrap();
    assert_eq!(
        read.span.end_time_unix_nano - read.span.start_time_unix_nano,
        14_000_000
    );
}

#[test]
fn a_blocked_call_appears_refused() {
    let (spans, _) = play("pretool_block");
    assert_eq!(check_invariants(&spans), 1);
    let blocked = spans
        .iter()
        .find(|s| s.attr("gen_ai.tool.call.id").as_deref() == Some("toolu_01Mockmain0000"))
        .unwrap();
    assert_eq!(blocked.attr("albedo.tool.refused").as_deref(), Some("true"));
    assert_eq!(blocked.span.status.as_ref().map(|s| s.code), Some(2));
}

#[test]
fn a_sub_agent_nests_under_the_agent_call() {
    let (spans, _) = play("subagent");
    assert_eq!(
        check_invariants(&spans),
        1,
        "the sub-agent is in its parent's trace"
    );
    let agent = spans
        .iter()
        .find(|s| s.span.name == "execute_tool Agent")
        .unwrap();
    let sub = spans
        .iter()
        .find(|s| s.span.name == "invoke_agent general-purpose")
        .unwrap();
    assert_eq!(sub.span.parent_span_id, agent.span.span_id);
    let inner = spans
        .iter()
        .find(|s| s.attr("gen_ai.tool.call.id").as_deref() == Some("toolu_01Mocksub0001"))
        .unwrap();
    assert_eq!(inner.span.parent_span_id, sub.span.span_id);
    let sub_chats = spans
        .iter()
        .filter(|s| s.span.name.starts_with("chat") && s.span.parent_span_id == sub.span.span_id)
        .count();
    assert!(sub_chats >= 1);
    // The sub-agent's spans are filed under the parent's session (one trace, one session.id,
    // as check_invariants says), and keep their own conversation id.
    let parent_session = agent.attr("session.id").unwrap();
    assert_eq!(inner.attr("session.id"), Some(parent_session.clone()));
    assert_eq!(sub.attr("session.id"), Some(parent_session.clone()));
    let child = sub.attr("gen_ai.conversation.id").unwrap();
    assert_ne!(child, parent_session);
    assert_eq!(inner.attr("gen_ai.conversation.id"), Some(child));
}

#[test]
fn eight_hooks_at_once_lose_nothing() {
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    let session = "concurrent-session";
    setup.hook(&format!(r#"{{"session_id":"{session}","hook_event_name":"UserPromptSubmit","prompt":"go","cwd":"/w"}}"#));
    std::thread::scope(|s| {
        for worker in 0..8 {
            let setup = &setup;
            s.spawn(move || {
                for i in 0..12 {
                    let id = format!("toolu_{worker}_{i}");
                    setup.hook(&format!(r#"{{"session_id":"{session}","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"{id}","tool_input":{{"command":"echo {i}"}}}}"#));
                    setup.hook(&format!(r#"{{"session_id":"{session}","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"{id}","tool_input":{{"command":"echo {i}"}},"tool_response":{{"stdout":"{i}"}},"duration_ms":3}}"#));
                }
            });
        }
    });
    setup.hook(&format!(
        r#"{{"session_id":"{session}","hook_event_name":"Stop","stop_hook_active":false}}"#
    ));
    setup.hook(&format!(
        r#"{{"session_id":"{session}","hook_event_name":"SessionEnd","reason":"other"}}"#
    ));
    setup.wait_idle();
    let spans = rx.spans();
    assert_eq!(check_invariants(&spans), 1);
    let tools: HashSet<_> = spans
        .iter()
        .filter_map(|s| s.attr("gen_ai.tool.call.id"))
        .collect();
    assert_eq!(tools.len(), 96);
    assert!(
        spans.iter().all(|s| s.attr("albedo.unfinished").is_none()),
        "every call was paired"
    );
}

#[test]
fn a_killed_daemon_is_replaced_and_its_turns_arrive() {
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    let s = "kill-session";
    let turn = |n: u32| {
        setup.hook(&format!(
            r#"{{"session_id":"{s}","hook_event_name":"UserPromptSubmit","prompt":"turn {n}"}}"#
        ));
        setup.hook(&format!(r#"{{"session_id":"{s}","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t{n}","tool_input":{{}}}}"#));
        setup.hook(&format!(r#"{{"session_id":"{s}","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t{n}","duration_ms":5}}"#));
        setup.hook(&format!(
            r#"{{"session_id":"{s}","hook_event_name":"Stop","stop_hook_active":false}}"#
        ));
    };
    turn(1);
    rx.wait_for_spans(2, Duration::from_secs(30));
    // The first turn is out; SIGKILL the daemon in the middle of the second.
    setup.hook(&format!(
        r#"{{"session_id":"{s}","hook_event_name":"UserPromptSubmit","prompt":"turn 2"}}"#
    ));
    let pid =
        albedo_otel::sources::command_hooks::daemon::pid(&setup.hook_dir).expect("a daemon runs");
    assert!(Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap()
        .success());
    wait_until(Duration::from_secs(10), "the daemon to die", || {
        !albedo_otel::process::alive(pid)
            || !albedo_otel::sources::command_hooks::daemon::running(&setup.hook_dir)
    });
    // The next hook starts a new daemon, which resumes from the last turn boundary.
    setup.hook(&format!(r#"{{"session_id":"{s}","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t2","tool_input":{{}}}}"#));
    setup.hook(&format!(r#"{{"session_id":"{s}","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t2","duration_ms":5}}"#));
    setup.hook(&format!(
        r#"{{"session_id":"{s}","hook_event_name":"Stop","stop_hook_active":false}}"#
    ));
    setup.hook(&format!(
        r#"{{"session_id":"{s}","hook_event_name":"SessionEnd"}}"#
    ));
    setup.wait_idle();
    let spans = rx.spans();
    let unique: HashSet<_> = spans
        .iter()
        .map(|x| (x.span.trace_id.clone(), x.span.span_id.clone()))
        .collect();
    assert_eq!(unique.len(), 4, "two turns, two calls: {:?}", names(&spans));
    let roots: Vec<_> = spans
        .iter()
        .filter(|x| x.span.parent_span_id.is_empty())
        .collect();
    assert!(
        roots.iter().all(|r| r.attr("albedo.unfinished").is_none()),
        "both turns complete"
    );
}

/// An agent killed mid-turn (Ctrl-C, a closed terminal) sends no `Stop` and no `SessionEnd`.
/// The hooks' parent here is a stand-in agent (python, as Claude Code is node): while it
/// lives, its turn stays open however long its tool runs; once it is killed, the turn arrives
/// within seconds, marked unfinished, and the daemon exits when idle.
#[test]
fn a_killed_agent_has_its_open_turn_exported_and_the_daemon_exits() {
    let Some(python) = require_tool("python3", which("python3"), "install Python 3") else {
        return;
    };
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    let payloads = [
        r#"{"session_id":"killed","hook_event_name":"UserPromptSubmit","prompt":"build it","cwd":"/w"}"#,
        r#"{"session_id":"killed","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"long","tool_input":{"command":"cargo build"}}"#,
    ];
    // The stand-in agent runs each hook as its child, then "runs a long tool".
    let mut cmd = Command::new(python);
    // The daemon says at debug level each time it finds the agent alive.
    cmd.envs(setup.env()).env("ALBEDO_OTEL_LOG", "debug");
    let mut agent = StandIn::start(cmd, &[env!("CARGO_BIN_EXE_albedo-otel-hook")]);
    for p in payloads {
        agent.run(p);
    }
    let journal = albedo_otel::sources::command_hooks::journal::list(&setup.hook_dir);
    let text = std::fs::read_to_string(&journal[0]).unwrap();
    assert!(
        text.contains(&format!("\"host\":{}", agent.pid())),
        "the hook names its agent: {text}"
    );
    // Alive: several checks of the agent (one a second) pass with the turn still open.
    setup.wait_for_alive_checks(3);
    assert!(rx.spans().is_empty(), "a live agent's turn stays open");
    assert!(albedo_otel::sources::command_hooks::daemon::running(
        &setup.hook_dir
    ));

    let killed_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    agent.kill();
    let spans = rx.wait_for_spans(2, Duration::from_secs(20));
    assert_eq!(check_invariants(&spans), 1, "{:?}", names(&spans));
    let root = spans
        .iter()
        .find(|s| s.span.parent_span_id.is_empty())
        .unwrap();
    assert_eq!(root.span.name, "invoke_agent claude-code");
    assert_eq!(root.attr("albedo.unfinished").as_deref(), Some("true"));
    let tool = spans
        .iter()
        .find(|s| s.span.name == "execute_tool Bash")
        .unwrap();
    assert_eq!(tool.attr("albedo.unfinished").as_deref(), Some("true"));
    // The call ran while its agent lived: it ends when the daemon last saw the agent (it
    // looks once a second), not at its own start.
    let (start, end) = (tool.span.start_time_unix_nano, tool.span.end_time_unix_nano);
    assert!(
        end + 2_000_000_000 >= killed_ns && end <= killed_ns + 1_000_000_000 && end > start + 2_000_000_000,
        "the unfinished call ends when its agent was last seen: start {start}, end {end}, killed {killed_ns}"
    );
    assert_eq!(root.span.end_time_unix_nano, end, "the turn ends with it");
    setup.wait_idle();
    assert!(setup.daemon_log().contains("is gone with a turn open"));
}

/// An agent that exits between turns with no `SessionEnd` (a closed terminal, a crash) leaves
/// a journal of unscrubbed prompts and outputs: a later daemon retires it. The daemon that
/// runs meanwhile has only the environment it needs, its own folder, and private files.
#[test]
fn a_session_whose_agent_is_gone_between_turns_is_retired() {
    use albedo_otel::sources::command_hooks::{daemon, journal};
    let Some(python) = require_tool("python3", which("python3"), "install Python 3") else {
        return;
    };
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    let secret = "sk-ant-api03-not-for-the-daemon";
    let mut cmd = Command::new(python);
    cmd.envs(setup.env()).env("ANTHROPIC_API_KEY", secret);
    let mut agent = StandIn::start(cmd, &[env!("CARGO_BIN_EXE_albedo-otel-hook")]);
    let mut run = |payload: &str| agent.run(payload);
    run(r#"{"session_id":"left","hook_event_name":"UserPromptSubmit","prompt":"hi","cwd":"/w"}"#);
    // With a turn open the daemon stays: look at it.
    let pid = poll_until(Duration::from_secs(10), Duration::from_millis(20), || {
        daemon::pid(&setup.hook_dir).is_some()
    });
    assert!(pid, "a daemon runs");
    #[cfg(target_os = "linux")]
    {
        let pid = daemon::pid(&setup.hook_dir).unwrap();
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
        let environ = String::from_utf8_lossy(&environ);
        assert!(
            !environ.contains(secret),
            "the daemon has the agent's API key"
        );
        assert!(!environ.contains("OTEL_EXPORTER_OTLP_ENDPOINT"));
        assert!(environ.contains("ALBEDO_OTEL_HOOK_DIR="));
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap();
        assert_eq!(cwd, setup.hook_dir.canonicalize().unwrap());
    }
    #[cfg(unix)]
    for file in [journal::DAEMON_LOG, journal::DAEMON_LOCK] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(setup.hook_dir.join(file))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{file} is private");
    }
    run(r#"{"session_id":"left","hook_event_name":"Stop","last_assistant_message":"bye"}"#);
    rx.wait_for_spans(1, Duration::from_secs(20));
    // Between turns, with its agent alive, the session stays when the daemon goes idle.
    wait_until(
        Duration::from_secs(30),
        "the first daemon to go idle",
        || !daemon::running(&setup.hook_dir) && setup.daemon_log().contains("daemon done"),
    );
    let left = journal::list(&setup.hook_dir);
    assert_eq!(left.len(), 1, "the live session's journal stays");
    let state = std::fs::read_to_string(format!("{}.state", left[0].display())).unwrap();
    assert!(
        state.contains("\"host\""),
        "its state names its agent: {state}"
    );
    // The agent crashes between turns: no SessionEnd.
    agent.kill();
    // Any later hook starts a daemon, which retires it.
    for p in [
        r#"{"session_id":"next","hook_event_name":"UserPromptSubmit","prompt":"go","cwd":"/w"}"#,
        r#"{"session_id":"next","hook_event_name":"Stop","last_assistant_message":"done"}"#,
        r#"{"session_id":"next","hook_event_name":"SessionEnd","reason":"exit"}"#,
    ] {
        setup.hook(p);
    }
    setup.wait_idle();
    assert!(
        setup
            .daemon_log()
            .lines()
            .any(|l| l.contains("left-") && l.contains("its agent is gone between turns; retiring")),
        "{}",
        setup.daemon_log()
    );
    let files: Vec<String> = std::fs::read_dir(&setup.hook_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".journal") || n.ends_with(".state"))
        .collect();
    assert!(files.is_empty(), "journals and states left: {files:?}");
    assert_eq!(rx.spans().len(), 2, "one turn each, nothing exported twice");
}

/// One variable that is not UTF-8 (a Latin-1 value in a shell profile) used to panic the hook
/// (`std::env::vars`): exit 134 from `albedo-otel-hook`, 101 from `albedo-otel hook`, and
/// every event lost. Both executables now journal every payload, and say which of our
/// variables they had to leave out.
#[cfg(unix)]
#[test]
fn a_variable_that_is_not_utf8_loses_nothing() {
    use std::os::unix::ffi::OsStringExt;
    let latin1 = |b: &[u8]| std::ffi::OsString::from_vec(b.to_vec());
    let extra = [
        ("X".into(), latin1(b"caf\xe9")),
        (latin1(b"CAF\xc9"), "1".into()),
        ("OTEL_RESOURCE_ATTRIBUTES".into(), latin1(b"team=caf\xe9")),
    ];
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    for p in recorded("multi_tool") {
        setup.hook_with(&p, &extra);
    }
    setup.wait_idle();
    let expected = play("multi_tool").0;
    assert_eq!(
        names(&rx.spans()),
        names(&expected),
        "{}",
        setup.daemon_log()
    );
    let log = setup.daemon_log();
    assert!(
        log.contains("the variable OTEL_RESOURCE_ATTRIBUTES is not UTF-8"),
        "{log}"
    );
    assert!(!log.contains("panicked"), "{log}");
}

/// A value of our own the daemon cannot read where the agent runs (`ALBEDO_OTEL_STOP_GRACE=1`,
/// no unit) costs that setting only: the session's spans all arrive, and the log says which
/// value took its default (issue 37.13; it used to export nothing at all).
#[test]
fn a_bad_value_of_our_own_costs_that_setting_only() {
    let extra = [("ALBEDO_OTEL_STOP_GRACE".into(), "1".into())];
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    for p in recorded("multi_tool") {
        setup.hook_with(&p, &extra);
    }
    setup.wait_idle();
    let log = setup.daemon_log();
    assert_eq!(names(&rx.spans()), names(&play("multi_tool").0), "{log}");
    assert!(
        log.contains("ALBEDO_OTEL_STOP_GRACE=\"1\": expected a duration such as 15s")
            && log.contains("the setting takes its default instead"),
        "{log}"
    );
}

/// The agent the hooks named has exited, and its pid now belongs to another process (pids
/// wrap: at 99,999 on macOS). `kill(pid, 0)` answers for the newcomer, which used to keep the
/// turn open for good, since the silence cap applied only when no agent was known. The start
/// time recorded with the pid tells them apart: the turn arrives, unfinished.
#[cfg(any(target_os = "linux", target_os = "macos"))]
#[test]
fn a_reused_pid_is_not_taken_for_the_agent() {
    use albedo_otel::process::ProcessId;
    use albedo_otel::sources::command_hooks::{journal, HandOff};
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    let mut newcomer = Command::new("sleep").arg("600").spawn().unwrap();
    let now = ProcessId::of(newcomer.id()).unwrap();
    assert!(now.start.is_some(), "the OS tells when a process started");
    let agent = ProcessId {
        start: now.start.map(|s| s - 1),
        ..now
    };
    let handoff = HandOff {
        config: None,
        env: setup
            .env()
            .into_iter()
            .filter(|(k, _)| k.starts_with("OTEL_") || k.starts_with("ALBEDO_OTEL_"))
            .map(|(k, v)| (k.to_string(), v.into_string().unwrap()))
            .collect(),
    };
    // What two hooks run by that agent journaled.
    for payload in [
        r#"{"session_id":"reused","hook_event_name":"UserPromptSubmit","prompt":"build it"}"#,
        r#"{"session_id":"reused","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"long","tool_input":{"command":"cargo build"}}"#,
    ] {
        let stamp = journal::Stamp {
            received_ms: albedo_otel::clock::unix_ms(),
            host: Some(agent),
            handoff: &handoff,
            agent: None,
        };
        journal::append(&setup.hook_dir, "reused", payload, &stamp).unwrap();
    }
    let log = std::fs::File::create(setup.hook_dir.join("daemon.log")).unwrap();
    let mut daemon = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
        .arg("daemon")
        .arg("--hook-dir")
        .arg(&setup.hook_dir)
        .envs(setup.env())
        .stderr(log)
        .spawn()
        .unwrap();
    let spans = rx.wait_for_spans(2, Duration::from_secs(20));
    newcomer.kill().unwrap();
    newcomer.wait().unwrap();
    assert_eq!(check_invariants(&spans), 1, "{:?}", names(&spans));
    let tool = spans
        .iter()
        .find(|s| s.span.name == "execute_tool Bash")
        .unwrap();
    assert_eq!(tool.attr("albedo.unfinished").as_deref(), Some("true"));
    assert!(daemon.wait().unwrap().success());
    let log = setup.daemon_log();
    assert!(
        log.contains(&format!("its agent (pid {}) is gone", agent.pid)),
        "{log}"
    );
}

#[test]
fn a_hook_never_fails_the_agent() {
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    setup.hook("this is not json");
    setup.hook(r#"{"hook_event_name":"Stop"}"#);
    // An unwritable journal folder, and arguments the small executable does not know.
    for (exe, arg) in [
        (env!("CARGO_BIN_EXE_albedo-otel"), "hook"),
        (env!("CARGO_BIN_EXE_albedo-otel-hook"), "--unknown"),
    ] {
        let out = Command::new(exe)
            .arg(arg)
            .env("ALBEDO_OTEL_HOOK_DIR", "/proc/nope")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{exe}");
        assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{exe}");
    }
    let log = setup.daemon_log();
    assert!(
        log.contains("not JSON") && log.contains("no session_id"),
        "{log}"
    );
}

/// build.rs links the unwinder statically on Linux; a panic in a thread of ours must still
/// unwind to its `join` rather than abort the process (tokio and the pipeline rely on it).
#[test]
fn panics_unwind_with_the_static_unwinder() {
    let worker = std::thread::spawn(|| -> u32 { panic!("a deliberate panic") });
    let err = worker.join().expect_err("the panic reaches join");
    assert_eq!(err.downcast_ref::<&str>(), Some(&"a deliberate panic"));
    let caught = std::panic::catch_unwind(|| {
        let v: Vec<u8> = Vec::new();
        v[usize::from(v.is_empty())]
    });
    assert!(caught.is_err());
}

/// A payload over the hook's 16 MiB bound (a tool's huge output) keeps its event: the call
/// still ends when its `PostToolUse` came, marked by nothing worse than a lost output.
#[test]
fn an_oversized_payload_keeps_its_event() {
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    let huge = "x".repeat(17 << 20);
    let post = format!(
        r#"{{"session_id":"big","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t1","tool_input":{{"command":"cat big"}},"tool_response":{{"stdout":"{huge}"}}}}"#
    );
    for p in [
        r#"{"session_id":"big","hook_event_name":"UserPromptSubmit","prompt":"read it","cwd":"/w"}"#,
        r#"{"session_id":"big","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"cat big"}}"#,
        &post,
        r#"{"session_id":"big","hook_event_name":"Stop","last_assistant_message":"done"}"#,
        r#"{"session_id":"big","hook_event_name":"SessionEnd","reason":"exit"}"#,
    ] {
        setup.hook(p);
    }
    setup.wait_idle();
    let spans = rx.spans();
    assert_eq!(check_invariants(&spans), 1, "{:?}", names(&spans));
    let tool = spans
        .iter()
        .find(|s| s.span.name == "execute_tool Bash")
        .expect("the call's span");
    assert_eq!(tool.attr("albedo.unfinished"), None, "the call ended");
    assert_eq!(tool.attr("gen_ai.tool.call.id").as_deref(), Some("t1"));
    assert!(
        setup
            .daemon_log()
            .contains("was journaled as what identifies it"),
        "{}",
        setup.daemon_log()
    );
}

/// A hook of a newer albedo-otel names an agent this build does not know (issue 37, item 4:
/// a daemon used to log "install the hook again" and delete such a journal, and an older
/// daemon, kept alive by another agent, destroyed a newer agent's sessions). The daemon
/// leaves the journal whole and unread for a daemon that knows the agent, says so once, and
/// still exits when idle.
#[test]
fn a_journal_of_an_agent_the_daemon_does_not_know_is_left_whole() {
    use albedo_otel::sources::command_hooks::{daemon, journal};
    let rx = Receiver::start();
    let mut setup = Setup::new(&rx);
    setup
        .args
        .extend(["--agent".into(), "an-agent-from-the-future".into()]);
    for n in 0..3 {
        setup.hook(&format!(
            r#"{{"session_id":"future","hook_event_name":"UserPromptSubmit","prompt":"turn {n}"}}"#
        ));
    }
    wait_until(Duration::from_secs(30), "the daemon to exit", || {
        !daemon::running(&setup.hook_dir) && setup.daemon_log().contains("daemon done (Some(Idle))")
    });
    let journals = journal::list(&setup.hook_dir);
    assert_eq!(journals.len(), 1, "{}", setup.daemon_log());
    let text = std::fs::read_to_string(&journals[0]).unwrap();
    assert_eq!(text.lines().count(), 3, "every line kept: {text}");
    assert!(text.contains("turn 0") && text.contains("turn 2"));
    let log = setup.daemon_log();
    let said = log
        .matches("\"an-agent-from-the-future\", which this albedo-otel")
        .count();
    let daemons = log.matches("draining hook journals").count();
    assert_eq!(said, daemons, "said once by each daemon: {log}");
    assert!(said >= 1, "{log}");
    assert!(!log.contains("install the hook again"), "{log}");
    assert!(rx.spans().is_empty());
}

/// A daemon of an older albedo-otel holds the folder and does not let go (one from before
/// daemons handed over, kept busy by another agent's session). A hook of this version starts
/// a daemon that waits for it (one, however many hooks come), and that daemon takes over once
/// the older one goes, and drains what came meanwhile.
#[test]
fn a_hook_newer_than_the_daemon_starts_one_that_takes_over() {
    use albedo_otel::sources::command_hooks::daemon;
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    let old = daemon::Lock::acquire_as(&setup.hook_dir, "0.0.1")
        .unwrap()
        .expect("the folder is this test's");
    let s = "takeover-session";
    setup.hook(&format!(
        r#"{{"session_id":"{s}","hook_event_name":"UserPromptSubmit","prompt":"hi"}}"#
    ));
    wait_until(Duration::from_secs(10), "a daemon to wait", || {
        daemon::successor_waits(&setup.hook_dir)
    });
    setup.hook(&format!(r#"{{"session_id":"{s}","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t1","tool_input":{{}}}}"#));
    setup.hook(&format!(r#"{{"session_id":"{s}","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t1","duration_ms":5}}"#));
    setup.hook(&format!(
        r#"{{"session_id":"{s}","hook_event_name":"Stop","stop_hook_active":false}}"#
    ));
    setup.hook(&format!(
        r#"{{"session_id":"{s}","hook_event_name":"SessionEnd"}}"#
    ));
    let holder = daemon::holder(&setup.hook_dir).unwrap();
    assert_eq!(
        holder.version.as_deref(),
        Some("0.0.1"),
        "the old one still holds it"
    );
    drop(old);
    setup.wait_idle();
    let log = setup.daemon_log();
    assert_eq!(
        log.matches("waiting for it to hand over").count(),
        1,
        "one daemon waited: {log}"
    );
    assert_eq!(rx.spans().len(), 2, "the turn and its call: {log}");
}

/// A Claude Code window left open for days (issue 37, item 7): each turn's payloads, a large
/// tool output among them, went into its journal for good, what a tool printed (a key) with
/// them. Once a turn is exported and its resume point saved, what came before it leaves the
/// disk: after each of N turns the journal holds no more than what is not exported yet, and
/// the key the first turn's tool printed is in no file of the journal folder.
#[test]
fn a_live_sessions_journal_keeps_only_what_is_not_exported() {
    use albedo_otel::sources::command_hooks::journal;
    const KEY: &str = "AKIAJOURNALSECRET0001";
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    let s = "open-for-days";
    let output = "o".repeat(200_000);
    let path = setup.hook_dir.join(journal::journal_name(s));
    for n in 1..=5u32 {
        let printed = if n == 1 { KEY } else { "nothing" };
        setup.hook(&format!(
            r#"{{"session_id":"{s}","hook_event_name":"UserPromptSubmit","prompt":"turn {n}"}}"#
        ));
        setup.hook(&format!(r#"{{"session_id":"{s}","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t{n}","tool_input":{{}}}}"#));
        setup.hook(&format!(r#"{{"session_id":"{s}","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t{n}","tool_response":{{"stdout":"{printed} {output}"}}}}"#));
        setup.hook(&format!(
            r#"{{"session_id":"{s}","hook_event_name":"Stop","stop_hook_active":false}}"#
        ));
        rx.wait_for_spans(2 * n as usize, Duration::from_secs(30));
        // Exported, and checkpointed within a second or so: nothing of it is left.
        wait_until(
            Duration::from_secs(10),
            "the exported turns to leave the journal",
            || std::fs::metadata(&path).map_or(0, |m| m.len()) < output.len() as u64,
        );
    }
    assert_eq!(
        files_containing(&setup.hook_dir, KEY),
        Vec::<std::path::PathBuf>::new()
    );
    setup.hook(&format!(
        r#"{{"session_id":"{s}","hook_event_name":"SessionEnd"}}"#
    ));
    setup.wait_idle();
    assert_eq!(rx.spans().len(), 10, "five turns, five calls");
}

/// A stop another hook blocked long after the turn went out, and after the daemon idled out
/// meanwhile (issue 37): the next daemon goes on from what the first saved with its resume
/// point, so the continuation lands in the exported turn's trace, under its root, and the
/// next prompt's turn is the session's second, linked to the first.
#[test]
fn a_continuation_after_the_daemon_idled_out_goes_into_the_turns_trace() {
    use albedo_otel::sources::command_hooks::{daemon, journal};
    use opentelemetry_proto::tonic::trace::v1::Span;
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    let s = "verified";
    let hook = |event: &str, rest: &str| {
        setup.hook(&format!(
            r#"{{"session_id":"{s}","hook_event_name":"{event}"{rest}}}"#
        ));
    };
    let call = |id: &str| {
        let args = r#","tool_name":"Bash","tool_input":{"command":"make test"}"#;
        hook("PreToolUse", &format!(r#"{args},"tool_use_id":"{id}""#));
        hook(
            "PostToolUse",
            &format!(r#"{args},"tool_use_id":"{id}","tool_response":{{"stdout":"ok"}}"#),
        );
    };
    hook("UserPromptSubmit", r#","prompt":"fix it","cwd":"/w""#);
    call("t1");
    hook("Stop", r#","stop_hook_active":false"#);
    rx.wait_for_spans(2, Duration::from_secs(20));
    // The verifier still runs: the daemon idles out, the session's journal stays.
    wait_until(
        Duration::from_secs(30),
        "the first daemon to go idle",
        || !daemon::running(&setup.hook_dir) && setup.daemon_log().contains("daemon done"),
    );
    let left = journal::list(&setup.hook_dir);
    assert_eq!(left.len(), 1, "the session's journal stays");
    let state = std::fs::read_to_string(format!("{}.state", left[0].display())).unwrap();
    let root = |spans: &[FlatSpan]| {
        spans
            .iter()
            .find(|f| f.span.parent_span_id.is_empty())
            .map(|f| f.span.clone())
            .expect("the turn's root")
    };
    let first = root(&rx.spans());
    assert!(
        state.contains(&hex(&first.span_id)),
        "the state names the turn that went out: {state}"
    );
    // The verifier blocks: the agent runs the tests again and stops, with no prompt.
    call("t2");
    hook("Stop", r#","stop_hook_active":true"#);
    rx.wait_for_spans(4, Duration::from_secs(20));
    hook(
        "UserPromptSubmit",
        r#","prompt":"and now the docs","cwd":"/w""#,
    );
    hook("Stop", r#","stop_hook_active":false"#);
    hook("SessionEnd", r#","reason":"exit""#);
    setup.wait_idle();
    let spans = rx.spans();
    assert_eq!(spans.len(), 5, "{:#?}", names(&spans));
    let continued: Vec<&Span> = spans
        .iter()
        .map(|f| &f.span)
        .filter(|s| {
            s.attributes
                .iter()
                .any(|a| a.key == "albedo.turn.continued")
        })
        .collect();
    let [c] = continued.as_slice() else {
        panic!("one continuation: {:#?}", names(&spans));
    };
    assert_eq!(c.trace_id, first.trace_id, "in the turn's trace");
    assert_eq!(c.parent_span_id, first.span_id, "under its root");
    let t2 = spans
        .iter()
        .find(|f| {
            f.span.name.starts_with("execute_tool")
                && f.span.start_time_unix_nano > first.end_time_unix_nano
        })
        .expect("the continuation's call");
    assert_eq!(t2.span.parent_span_id, c.span_id);
    let mut roots: Vec<&FlatSpan> = spans
        .iter()
        .filter(|f| f.span.parent_span_id.is_empty())
        .collect();
    roots.sort_by_key(|f| f.span.start_time_unix_nano);
    let [_, second] = roots.as_slice() else {
        panic!("two turns: {:#?}", names(&spans));
    };
    assert_eq!(second.attr("albedo.turn.number").as_deref(), Some("2"));
    assert_eq!(
        second
            .span
            .links
            .iter()
            .map(|l| &l.span_id)
            .collect::<Vec<_>>(),
        [&first.span_id],
        "linked to the turn it follows"
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
