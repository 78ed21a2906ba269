//! `import` of opencode's database: a session with a sub-agent, written as opencode 1.18.33
//! writes it (docs/agents/opencode.md, its storage), read back into the live route's spans.

use rusqlite::Connection;
use serde_json::json;

use super::spans;
use crate::assemble::semconv::{GEN_AI_CONVERSATION_ID, GEN_AI_USAGE_OUTPUT_TOKENS};
use crate::assemble::Span;
use crate::protocol::Record;

const T0: i64 = 1_796_641_792_000;

/// A database with the columns the reader takes, as opencode makes them.
fn database(dir: &std::path::Path) -> std::path::PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("opencode.db");
    let db = Connection::open(&path).unwrap();
    db.execute_batch(
        "CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, directory TEXT NOT NULL,
           time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
         CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
           time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
         CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL,
           session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
           time_updated INTEGER NOT NULL, data TEXT NOT NULL);",
    )
    .unwrap();
    let session = |id: &str, parent: Option<&str>, at: i64, updated: i64| {
        db.execute(
            "INSERT INTO session VALUES (?1, ?2, '/w', ?3, ?4)",
            rusqlite::params![id, parent, T0 + at, T0 + updated],
        )
        .unwrap();
    };
    let message = |id: &str, sid: &str, at: i64, data: serde_json::Value| {
        db.execute(
            "INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)",
            rusqlite::params![id, sid, T0 + at, data.to_string()],
        )
        .unwrap();
    };
    let part = |id: &str, msg: &str, sid: &str, at: i64, data: serde_json::Value| {
        db.execute(
            "INSERT INTO part VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
            rusqlite::params![id, msg, sid, T0 + at, data.to_string()],
        )
        .unwrap();
    };
    let answer = |prompt: &str, at: i64, done: i64, output: u64, finish: &str| {
        json!({"parentID": prompt, "role": "assistant", "modelID": "mock-model",
            "providerID": "mock", "time": {"created": T0 + at, "completed": T0 + done},
            "tokens": {"input": 900, "output": output, "reasoning": 0,
                "cache": {"read": 100, "write": 0}}, "finish": finish})
    };
    let (top, child) = ("ses_top", "ses_child");
    session(top, None, 0, 3_000);
    message("msg_u1", top, 100, json!({"role": "user", "time": {"created": T0 + 100}}));
    part("prt_1", "msg_u1", top, 110, json!({"type": "text", "text": "look around"}));
    message("msg_a1", top, 200, answer("msg_u1", 200, 1_500, 21, "tool-calls"));
    part("prt_2", "msg_a1", top, 300, json!({"type": "step-start"}));
    part("prt_3", "msg_a1", top, 400, json!({"type": "tool", "tool": "task", "callID": "call_1",
        "state": {"status": "completed", "input": {"prompt": "say what you see"},
            "metadata": {"sessionId": child}, "time": {"start": T0 + 400, "end": T0 + 1_400}}}));
    session(child, Some(top), 450, 1_300);
    message("msg_u2", child, 460, json!({"role": "user", "time": {"created": T0 + 460}}));
    message("msg_a2", child, 500, answer("msg_u2", 500, 1_200, 22, "stop"));
    message("msg_a3", top, 1_600, answer("msg_u1", 1_600, 2_000, 23, "stop"));
    // A session of a month before.
    session("ses_old", None, -30 * 86_400_000, -30 * 86_400_000 + 1_000);
    message("msg_u3", "ses_old", -30 * 86_400_000, json!({"role": "user",
        "time": {"created": T0 - 30 * 86_400_000}}));
    path
}

/// Every record of the database at `path`, and how many families they came in.
fn read(path: &std::path::Path, since: Option<u64>) -> Result<(Vec<Record<'static>>, usize), String> {
    let (mut all, mut families) = (Vec::new(), 0);
    super::super::history::records(path, since, &mut |family| {
        families += 1;
        all.extend(family);
    })?;
    Ok((all, families))
}

fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name.starts_with(name)).collect()
}

#[test]
fn a_session_and_its_sub_agent_come_back_as_the_live_route_traced_them() {
    let dir = std::env::temp_dir().join(format!("albedo-otel-oc-history-{}", std::process::id()));
    let path = database(&dir);
    let since = Some((T0 - 86_400_000) as u64);
    let (got, families) = read(&path, since).unwrap();
    assert_eq!(families, 1, "the session with its sub-agent, read together");
    let got = spans(&got);
    let turns = named(&got, "invoke_agent");
    assert_eq!(turns.len(), 2, "the turn and its sub-agent's, not the old session's");
    let task = named(&got, "execute_tool task")[0];
    let sub = turns
        .iter()
        .find(|t| t.attr(GEN_AI_CONVERSATION_ID).and_then(|v| v.as_str()) == Some("ses_child"))
        .expect("the sub-agent's turn");
    assert_eq!(sub.parent_span_id, Some(task.span_id), "under its task call");
    assert_eq!(sub.trace_id, task.trace_id);
    let outputs: Vec<i64> = named(&got, "chat")
        .iter()
        .filter_map(|s| match s.attr(GEN_AI_USAGE_OUTPUT_TOKENS) {
            Some(crate::assemble::span::Value::Int(n)) => Some(*n),
            _ => None,
        })
        .collect();
    let mut sorted = outputs.clone();
    sorted.sort();
    assert_eq!(sorted, [21, 22, 23], "each answer once, with its tokens");
    assert_eq!(
        (task.start_ns, task.end_ns),
        ((T0 + 400) as u64 * 1_000_000, (T0 + 1_400) as u64 * 1_000_000),
        "the call's own times"
    );
    // Without `--since`, the old session too.
    let (all, families) = read(&path, None).unwrap();
    assert_eq!(families, 2, "each session a family of its own, the old one too");
    let all = spans(&all);
    assert_eq!(named(&all, "invoke_agent").len(), 3);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_file_that_is_not_opencode_s_database_is_an_error_that_says_so() {
    let dir = std::env::temp_dir().join(format!("albedo-otel-oc-not-db-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("opencode.db");
    std::fs::write(&path, "not a database").unwrap();
    let err = read(&path, None).unwrap_err();
    assert!(err.contains("opencode's database"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}
