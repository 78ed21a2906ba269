//! Other agents run Claude Code's hooks (Cursor, Grok Build, Devin CLI, Continue's CLI read
//! `~/.claude/settings.json`), so the hook `install claude-code` wrote is handed their
//! payloads too. A recorded Claude Code session, played through the real hook binaries with
//! those agents' payloads (tests/fixtures/foreign, written from their documentation) in
//! between, must export exactly the spans it exports alone. Cursor's become a Cursor trace
//! of their own (its adapter, as from Cursor's own hooks file); each of the others, whose
//! agents nothing here traces, is dropped with one line in the daemon's log per session, and
//! nothing it said is kept.

use std::ffi::OsString;
use std::time::Duration;

use crate::support::hooks::{recorded, Setup};
use crate::support::*;

/// One payload of another agent, with the variables it runs its hooks with.
struct Foreign {
    env: Vec<(OsString, OsString)>,
    payload: String,
}

fn foreign(agent: &str) -> Vec<Foreign> {
    let path = repo_file(&format!("tests/fixtures/foreign/{agent}.jsonl"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let env = v["env"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.into(), v.as_str().unwrap().into()))
                .collect();
            Foreign {
                env,
                payload: v["payload"].to_string(),
            }
        })
        .collect()
}

/// The foreign sessions in the fixtures, by agent file and the session id each names.
const SESSIONS: [(&str, &str); 4] = [
    ("cursor", CURSOR),
    ("grok", "grok-7d2e-session-0001"),
    ("devin", "devin-cooked-exhaust"),
    ("continue", "cn-3b8f0c1e-0001"),
];

/// The Cursor conversation in the fixtures: traced, as Cursor's.
const CURSOR: &str = "6f1c9a52-cursor-conv-0001";

/// The sessions nothing here traces, dropped with a line in the log.
fn dropped() -> impl Iterator<Item = (&'static str, &'static str)> {
    SESSIONS.into_iter().filter(|(a, _)| *a != "cursor")
}

/// Whether a span is of the Cursor conversation's trace.
fn cursors(s: &FlatSpan) -> bool {
    s.attr("gen_ai.conversation.id").as_deref() == Some(CURSOR)
}

/// The Cursor conversation's trace, as its adapter makes it from the fixture: one turn with
/// its prompt hook, under `invoke_agent` named `cursor`, with the one shell command it ran
/// (reported by Cursor's shell hooks: the fixture has no `preToolUse`), ended by its `stop`.
fn assert_cursor_trace(spans: &[FlatSpan]) {
    let ours: Vec<FlatSpan> = spans.iter().filter(|s| cursors(s)).cloned().collect();
    assert_eq!(check_invariants(&ours), 1, "one Cursor trace, one root");
    let root = ours
        .iter()
        .find(|s| s.span.parent_span_id.is_empty())
        .unwrap();
    assert_eq!(
        root.attr("gen_ai.operation.name").as_deref(),
        Some("invoke_agent")
    );
    assert_eq!(root.attr("gen_ai.agent.name").as_deref(), Some("cursor"));
    assert_eq!(root.attr("albedo.turn.reason").as_deref(), Some("end_turn"));
    let tools: Vec<&FlatSpan> = ours
        .iter()
        .filter(|s| s.attr("gen_ai.operation.name").as_deref() == Some("execute_tool"))
        .collect();
    assert_eq!(tools.len(), 1, "the shell command");
    assert_eq!(tools[0].attr("gen_ai.tool.name").as_deref(), Some("Shell"));
    assert_eq!(tools[0].span.parent_span_id, root.span.span_id);
    assert!(tools[0].span.start_time_unix_nano >= root.span.start_time_unix_nano);
    assert!(tools[0].span.end_time_unix_nano <= root.span.end_time_unix_nano);
    for s in &ours {
        assert!(!s.attrs().values().any(|v| v.contains("dev@example.com")));
    }
}

/// Plays the recorded Claude Code session `name` through the hook binaries, each foreign
/// session's next payload after each of its own, with a lock held as a daemon holds it: the
/// hooks journal and start no daemon. Then the Claude Code session's journal alone, copied
/// to a folder of its own, and the folder of all journals are each drained by a daemon to
/// `rx`: the same journaled lines, so the same times and ids, with and without the others.
/// Returns the spans of each, the mixed folder's daemon log, and the files that held a
/// foreign prompt once every payload was journaled.
fn play(
    name: &str,
    rx: &Receiver,
    setup: &Setup,
) -> (
    Vec<FlatSpan>,
    Vec<FlatSpan>,
    String,
    Vec<std::path::PathBuf>,
) {
    let lock = albedo_otel::sources::command_hooks::daemon::Lock::acquire(&setup.hook_dir)
        .unwrap()
        .expect("no daemon yet");
    let mut others: Vec<std::vec::IntoIter<Foreign>> = SESSIONS
        .iter()
        .map(|(a, _)| foreign(a).into_iter())
        .collect();
    let mut next_other = |setup: &Setup| {
        for o in others.iter_mut() {
            if let Some(f) = o.next() {
                setup.hook_with(&f.payload, &f.env);
            }
        }
    };
    let payloads = recorded(name);
    let session: serde_json::Value = serde_json::from_str(&payloads[0]).unwrap();
    let session = session["session_id"].as_str().unwrap().to_string();
    for p in &payloads {
        setup.hook(p);
        next_other(setup);
    }
    // Those longer than the Claude Code session.
    for _ in 0..8 {
        next_other(setup);
    }
    let kept = files_containing(&setup.hook_dir, "FOREIGN-PROMPT");
    let alone = scratch("alone");
    let journal = albedo_otel::sources::command_hooks::journal::journal_name(&session);
    std::fs::copy(setup.hook_dir.join(&journal), alone.join(&journal)).unwrap();
    drop(lock);
    drain(&alone, setup);
    let alone_spans = rx.spans();
    drain(&setup.hook_dir, setup);
    let all = rx.spans();
    let mixed = all[alone_spans.len()..].to_vec();
    (alone_spans, mixed, setup.daemon_log(), kept)
}

/// Runs `albedo-otel daemon` on the journals in `dir` with the hooks' environment until it
/// has drained them and exited (it idles after a second).
fn drain(dir: &std::path::Path, setup: &Setup) {
    // Appended to: the hooks write their own problems there.
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("daemon.log"))
        .unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
    cmd.arg("daemon").arg("--hook-dir").arg(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("OTEL_") || k.starts_with("ALBEDO_OTEL") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(setup.env())
        .env("ALBEDO_OTEL_HOOK_DIR", dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log);
    let mut child = cmd.spawn().unwrap();
    wait_until(
        Duration::from_secs(30),
        "the daemon to drain and exit",
        || child.try_wait().unwrap().is_some(),
    );
    let log = std::fs::read_to_string(dir.join("daemon.log")).unwrap_or_default();
    assert!(log.contains("daemon done (Some(Idle))"), "{log}");
}

#[test]
fn a_claude_code_session_exports_the_same_spans_whoever_else_runs_its_hooks() {
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    let (alone, mixed, log, kept) = play("multi_tool", &rx, &setup);
    assert_eq!(check_invariants(&alone), 1, "one trace, one root");
    assert_eq!(alone.len(), 9, "the session's spans");
    // Cursor's payloads make Cursor's trace, and nothing else.
    assert_cursor_trace(&mixed);
    let claude: Vec<FlatSpan> = mixed.iter().filter(|s| !cursors(s)).cloned().collect();
    let extra: Vec<String> = claude
        .iter()
        .filter(|m| !alone.iter().any(|a| a.span.span_id == m.span.span_id))
        .map(|m| format!("{} {:?}", m.span.name, m.attrs()))
        .collect();
    assert!(
        extra.is_empty(),
        "spans another agent's payloads made:\n{extra:#?}\n{log}"
    );
    // Ids, tree, times, attributes, events, status: the same.
    assert_same_spans(&alone, &claude);

    // One line a dropped session, naming it; none of what its payloads said.
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("runs Claude Code's hooks"))
        .collect();
    for (agent, session) in dropped() {
        let about = lines.iter().filter(|l| l.contains(session)).count();
        assert_eq!(about, 1, "{agent}: one line for its session:\n{log}");
    }
    assert_eq!(lines.len(), dropped().count(), "{log}");
    assert!(!log.contains(CURSOR), "Cursor's session is traced: {log}");
    assert!(!log.contains("FOREIGN-PROMPT"), "{log}");
    assert!(
        !log.contains("no session_id") && !log.contains("skipped"),
        "a foreign payload is no error: {log}"
    );
    // Nothing the dropped ones said was ever written down (Cursor's journal keeps its
    // payloads, as every traced agent's does, until its session ends), and their journals
    // went with the Claude Code session's.
    let cursor_journal =
        albedo_otel::sources::command_hooks::journal::journal_name(&format!("cursor.{CURSOR}"));
    let not_cursor: Vec<_> = kept
        .iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy() != cursor_journal)
        .collect();
    assert!(not_cursor.is_empty(), "foreign prompts kept in {kept:?}");
    let left = albedo_otel::sources::command_hooks::journal::list(&setup.hook_dir);
    assert!(left.is_empty(), "journals left: {left:?}\n{log}");
    assert!(files_containing(&setup.spool, "FOREIGN-PROMPT").is_empty());
}

/// As agents run it: the hooks start the daemon, which drains as payloads come, and removes a
/// dropped session's journal between two of its payloads. Still one line a session, and no
/// span but the Claude Code session's and Cursor's own trace.
#[test]
fn a_foreign_session_is_named_once_though_its_journal_goes_and_comes_back() {
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    let claude = recorded("bash_write");
    let (first, second) = claude.split_at(claude.len() / 2);
    let sessions: Vec<Vec<Foreign>> = SESSIONS.iter().map(|(a, _)| foreign(a)).collect();
    for p in first {
        setup.hook(p);
    }
    for s in &sessions {
        for f in &s[..2] {
            setup.hook_with(&f.payload, &f.env);
        }
    }
    // The daemon reads the dropped sessions' journals and removes them at its next
    // checkpoint, while the Claude Code session's and Cursor's stay (their turns are open).
    let cursor_journal =
        albedo_otel::sources::command_hooks::journal::journal_name(&format!("cursor.{CURSOR}"));
    let claude_session: serde_json::Value = serde_json::from_str(&claude[0]).unwrap();
    let claude_journal = albedo_otel::sources::command_hooks::journal::journal_name(
        claude_session["session_id"].as_str().unwrap(),
    );
    wait_until(
        Duration::from_secs(20),
        "the foreign journals to be dropped",
        || {
            albedo_otel::sources::command_hooks::journal::list(&setup.hook_dir)
                .iter()
                .all(|p| {
                    let name = p.file_name().unwrap().to_string_lossy().into_owned();
                    name == claude_journal || name == cursor_journal
                })
        },
    );
    for p in second {
        setup.hook(p);
    }
    for s in &sessions {
        for f in &s[2..] {
            setup.hook_with(&f.payload, &f.env);
        }
    }
    setup.wait_idle();
    let all = rx.spans();
    assert_cursor_trace(&all);
    let spans: Vec<FlatSpan> = all.into_iter().filter(|s| !cursors(s)).collect();
    assert_eq!(
        check_invariants(&spans),
        1,
        "the Claude Code session's trace alone"
    );
    let foreign_ids: Vec<&str> = SESSIONS.iter().map(|(_, s)| *s).collect();
    for s in &spans {
        let conversation = s.attr("gen_ai.conversation.id").unwrap_or_default();
        assert!(
            !foreign_ids.contains(&conversation.as_str()),
            "{}",
            s.span.name
        );
    }
    let log = setup.daemon_log();
    assert!(!log.contains(CURSOR), "Cursor's session is traced: {log}");
    for (agent, session) in dropped() {
        let about = log
            .lines()
            .filter(|l| l.contains("runs Claude Code's hooks") && l.contains(session))
            .count();
        assert_eq!(about, 1, "{agent}: one line for its session:\n{log}");
    }
}
