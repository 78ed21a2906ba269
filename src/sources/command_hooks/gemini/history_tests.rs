//! Gemini CLI 0.61's own chats, recorded from the real CLI (`tests/sources/command_hooks/agents/gemini.rs`'s
//! sessions, trimmed of the context message and the test's paths), read as `import` reads
//! them: two turns of one session (the second resumed), a shell call that takes a second and
//! one a hook blocked; and a session whose sub-agent ran in its `invoke_agent` call.

use std::path::{Path, PathBuf};

use super::*;
use crate::assemble::semconv::*;
use crate::assemble::span::{Status, Value};
use crate::assemble::Span;

const MAIN: &str = include_str!("recorded/main.jsonl");
const DELEGATING: &str = include_str!("recorded/delegating.jsonl");
const SUB_AGENT: &str = include_str!("recorded/sub-agent.jsonl");
const DELEGATING_ID: &str = "00c68f6e-f141-44a3-9677-2ff39f36f615";

/// The chats where Gemini keeps them, in a project folder of their own; the path of `main`'s.
fn written(what: &str, main: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "albedo-otel-gemini-history-{what}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let chats = dir.join("proj/chats");
    std::fs::create_dir_all(chats.join(DELEGATING_ID)).unwrap();
    std::fs::write(dir.join("proj/.project_root"), "/home/u/proj\n").unwrap();
    let session = chats.join("session-2026-12-07T17-05-x.jsonl");
    std::fs::write(&session, main).unwrap();
    std::fs::write(
        chats.join(DELEGATING_ID).join("814ae61a-7578-414c-b352-44b751d64c7b.jsonl"),
        SUB_AGENT,
    )
    .unwrap();
    (dir, session)
}

fn spans(path: &Path) -> Vec<Span> {
    let bytes = std::fs::read(path).unwrap();
    crate::testing::assembled(&records(path, &bytes, Reading::default()))
}

fn op(s: &Span) -> &str {
    s.attr(GEN_AI_OPERATION_NAME)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn int(s: &Span, key: &str) -> i64 {
    match s.attr(key) {
        Some(Value::Int(n)) => *n,
        _ => -1,
    }
}

fn of<'a>(spans: &'a [Span], operation: &str) -> Vec<&'a Span> {
    let mut found: Vec<&Span> = spans.iter().filter(|s| op(s) == operation).collect();
    found.sort_by_key(|s| s.start_ns);
    found
}

const MS: u64 = 1_000_000;

#[test]
fn a_chat_is_a_trace_per_prompt_with_its_answers_and_calls_in_their_time() {
    let (dir, path) = written("main", MAIN);
    let spans = spans(&path);
    let turns = of(&spans, OP_INVOKE_AGENT);
    assert_eq!(turns.len(), 2, "a turn a prompt");
    assert_ne!(turns[0].trace_id, turns[1].trace_id);
    assert_eq!(
        turns[0].attr(SESSION_ID).and_then(Value::as_str),
        Some("e0b5e61e-318b-4d31-9c30-459c79be816c"),
        "the session the hooks name"
    );
    // Each answer once (Gemini wrote two of them twice), with the tokens it recorded.
    let chats = of(&spans, OP_CHAT);
    let tokens: Vec<(i64, i64)> = chats
        .iter()
        .map(|c| (int(c, GEN_AI_USAGE_INPUT_TOKENS), int(c, GEN_AI_USAGE_OUTPUT_TOKENS)))
        .collect();
    assert_eq!(tokens, [(1017, 21), (2017, 22), (3017, 23), (4017, 24)]);
    assert!(chats.iter().all(|c| c.status == Status::Unset));
    // The shell call: from the answer that asked for it (17:05:54.977) to its result
    // (17:05:56.061), inside the first turn; the blocked push refused, inside the second.
    let tools = of(&spans, OP_EXECUTE_TOOL);
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0].end_ns - tools[0].start_ns, 1_084 * MS);
    assert_eq!(tools[0].trace_id, turns[0].trace_id);
    assert_eq!(tools[0].status, Status::Unset);
    assert_eq!(tools[1].trace_id, turns[1].trace_id);
    assert!(matches!(tools[1].status, Status::Error(_)), "{:?}", tools[1]);
    // The turn runs from its prompt to its last answer.
    assert_eq!(turns[0].start_ns, chats[0].start_ns);
    assert_eq!(turns[0].end_ns, chats[1].end_ns);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_sub_agents_chat_nests_under_the_invoke_agent_call_that_ran_it() {
    let (dir, path) = written("sub", DELEGATING);
    let spans = spans(&path);
    let call = spans
        .iter()
        .find(|s| op(s) == OP_EXECUTE_TOOL && s.name.ends_with("invoke_agent"))
        .expect("the invoke_agent call");
    let inner: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id == Some(call.span_id))
        .collect();
    assert_eq!(inner.len(), 1, "{inner:?}");
    let sub = inner[0];
    assert_eq!(op(sub), OP_INVOKE_AGENT);
    assert_eq!(
        sub.attr(GEN_AI_AGENT_NAME).and_then(Value::as_str),
        Some("generalist")
    );
    // Its answers and its shell call are in the caller's trace, under its turn.
    let its: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id == Some(sub.span_id))
        .collect();
    let chats: Vec<i64> = its
        .iter()
        .filter(|s| op(s) == OP_CHAT)
        .map(|s| int(s, GEN_AI_USAGE_INPUT_TOKENS))
        .collect();
    assert_eq!(chats, [2017, 3017]);
    assert!(its.iter().all(|s| s.trace_id == call.trace_id));
    assert!(sub.start_ns >= call.start_ns && sub.end_ns <= call.end_ns);
    // Every answer counted once: the caller's two and the sub-agent's two.
    assert_eq!(of(&spans, OP_CHAT).len(), 4);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn only_a_sessions_own_chat_is_a_session() {
    assert!(is_session(Path::new(
        "/h/.gemini/tmp/proj/chats/session-2026-12-07T17-05-e0b5e61e.jsonl"
    )));
    assert!(is_session(Path::new("/h/.gemini/tmp/proj/chats/session-2025-01-01T10-00-ab.json")));
    assert!(!is_session(Path::new(
        "/h/.gemini/tmp/proj/chats/00c68f6e/814ae61a-7578-414c-b352-44b751d64c7b.jsonl"
    )));
    assert!(!is_session(Path::new("/h/.gemini/tmp/proj/logs.json")));
}

/// A chat's lines: its metadata, then each message.
fn lines(session: &str, kind: &str, start: &str, messages: &[serde_json::Value]) -> String {
    let mut out = serde_json::json!({"sessionId": session, "startTime": start, "kind": kind})
        .to_string();
    for m in messages {
        out += "\n";
        out += &m.to_string();
    }
    out + "\n"
}

fn said(id: &str, at: &str, text: &str) -> serde_json::Value {
    serde_json::json!({"id": id, "timestamp": at, "type": "user", "content": [{"text": text}]})
}

fn answered(id: &str, at: &str, input: u64, calls: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"id": id, "timestamp": at, "type": "gemini", "content": "",
        "tokens": {"input": input, "output": 1, "cached": 0, "thoughts": 0, "total": input + 1},
        "model": "gemini-2.5-flash", "toolCalls": calls})
}

fn invoke(id: &str, end: &str) -> serde_json::Value {
    serde_json::json!([{"id": id, "name": "invoke_agent", "status": "success", "timestamp": end,
        "args": {"agent_name": "generalist", "prompt": "run the tests"}}])
}

#[test]
fn two_sub_agents_asked_the_same_are_each_under_their_own_call_once() {
    let main = lines(
        DELEGATING_ID,
        "main",
        "2026-12-07T10:00:00.000Z",
        &[
            said("u1", "2026-12-07T10:00:00.000Z", "check it"),
            answered("a1", "2026-12-07T10:00:01.000Z", 100, invoke("call_1", "2026-12-07T10:00:09.000Z")),
            answered("a2", "2026-12-07T10:00:10.000Z", 200, serde_json::json!([])),
            said("u2", "2026-12-07T10:05:00.000Z", "check it again"),
            answered("a3", "2026-12-07T10:05:01.000Z", 300, invoke("call_1", "2026-12-07T10:05:09.000Z")),
            answered("a4", "2026-12-07T10:05:10.000Z", 400, serde_json::json!([])),
        ],
    );
    let (dir, path) = written("same", &main);
    let subs = path.parent().unwrap().join(DELEGATING_ID);
    std::fs::remove_dir_all(&subs).unwrap();
    std::fs::create_dir_all(&subs).unwrap();
    // Named so that the later one comes first by name.
    // And one begun when no call ran.
    for (file, at, input) in [
        ("b-first.jsonl", "10:00:02", 10),
        ("a-second.jsonl", "10:05:02", 20),
        ("c-stray.jsonl", "10:20:02", 30),
    ] {
        let start = format!("2026-12-07T{at}.000Z");
        let chat = lines(file, "subagent", &start, &[
            said(&format!("{file}-u"), &start, "run the tests"),
            answered(&format!("{file}-a"), &start.replace(":02.", ":05."), input, serde_json::json!([])),
        ]);
        std::fs::write(subs.join(file), chat).unwrap();
    }
    let spans = spans(&path);
    let calls = of(&spans, OP_EXECUTE_TOOL);
    assert_eq!(calls.len(), 2);
    // Each call has the sub-agent begun in its time, and each sub-agent is read once.
    for (call, input) in calls.iter().zip([10, 20]) {
        let sub = spans
            .iter()
            .find(|s| s.parent_span_id == Some(call.span_id))
            .expect("a sub-agent under the call");
        let inputs: Vec<i64> = spans
            .iter()
            .filter(|s| s.parent_span_id == Some(sub.span_id) && op(s) == OP_CHAT)
            .map(|s| int(s, GEN_AI_USAGE_INPUT_TOKENS))
            .collect();
        assert_eq!(inputs, [input]);
    }
    // The stray sub-agent's answer counts too, once.
    let inputs: Vec<i64> = of(&spans, OP_CHAT)
        .iter()
        .map(|s| int(s, GEN_AI_USAGE_INPUT_TOKENS))
        .collect();
    assert_eq!(inputs, [100, 10, 200, 300, 20, 400, 30]);
    let _ = std::fs::remove_dir_all(dir);
}
