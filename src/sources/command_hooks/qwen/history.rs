//! Qwen Code's history from its own files, for `import`: each chat under
//! `~/.qwen/projects/<project>/chats/` read whole into the records the hooks would have made:
//! a turn per prompt, its tool calls from the CLI's `qwen-code.tool_call` lines (their
//! duration, their outcome), and its model calls from its `qwen-code.api_response` lines, read
//! as the live route reads them (the same id, so a call met both ways is counted once). A
//! sub-agent's and a background agent's calls count in the session they ran in. Pure, but for
//! the file handed in.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::payload::api_event;
use super::transcript::call_sent;
use super::AGENT;
use crate::protocol::{Call, Called, Event, Json, Record, SessionInfo};
use crate::sources::command_hooks::engine::records::{prompted, record, rfc3339_ms, turn_ended};
use crate::sources::command_hooks::spec::{self, Env, Reading};

#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default, rename = "sessionId")]
    session: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    message: Value,
    #[serde(default, rename = "systemPayload")]
    system: Value,
}

/// Where Qwen Code keeps its chats.
pub fn roots(env: Env<'_>) -> Vec<PathBuf> {
    spec::under_home(env, ".qwen/projects").into_iter().collect()
}

/// A chat: `<project>/chats/<session>.jsonl`.
pub fn is_session(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
        && path.parent().is_some_and(|d| d.ends_with("chats"))
}

/// What a chat's lines say, as the records the live route would have made.
pub fn records(_path: &Path, bytes: &[u8], _: Reading) -> Vec<Record<'static>> {
    let mut sid: Option<String> = None;
    let mut out = Vec::new();
    let (mut open, mut last_ms) = (false, 0);
    for raw in bytes.split(|&b| b == b'\n') {
        let Ok(line) = serde_json::from_slice::<Line>(raw) else {
            continue;
        };
        let Some(at) = line.timestamp.as_deref().and_then(rfc3339_ms) else {
            continue;
        };
        if sid.is_none() {
            let Some(id) = line.session.clone() else {
                continue;
            };
            let info = SessionInfo {
                at_ms: at,
                agent: Some(Cow::Borrowed(AGENT)),
                workspace: line.cwd.clone().map(Cow::Owned),
                ..SessionInfo::default()
            };
            out.push(record(&id, Event::Session(info)));
            sid = Some(id);
        }
        let sid = sid.as_deref().unwrap_or_default();
        if line.kind == "user" {
            if let Some(text) = prompt(&line.message) {
                if std::mem::replace(&mut open, true) {
                    out.push(turn_ended(sid, last_ms));
                }
                out.push(prompted(sid, at, text));
            }
        }
        let event = &line.system["uiEvent"];
        match event["event.name"].as_str() {
            Some("qwen-code.api_response" | "qwen-code.api_error") => {
                if let Some(e) = api_event(raw) {
                    let end = e.timestamp.as_deref().and_then(rfc3339_ms).unwrap_or(at);
                    let start = end.saturating_sub(e.duration_ms.unwrap_or(0));
                    out.push(record(sid, Event::CallSent(call_sent(e, start, end))));
                }
            }
            Some("qwen-code.tool_call") => out.extend(tool_call(sid, event, at)),
            _ => {}
        }
        last_ms = last_ms.max(at);
    }
    if let Some(sid) = sid {
        if open {
            out.push(turn_ended(&sid, last_ms));
        }
        out.push(record(&sid, Event::Closed { at_ms: last_ms }));
    }
    out
}

/// What the user typed: a user line's text parts (a tool's result is a line of its own).
fn prompt(message: &Value) -> Option<String> {
    let parts = message["parts"].as_array()?;
    let text: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
    (!text.is_empty()).then(|| text.join("\n"))
}

/// A tool call as the CLI recorded it when it ended: its name and arguments, its duration,
/// and whether it was refused or failed.
fn tool_call(sid: &str, e: &Value, at: u64) -> Option<Record<'static>> {
    let id = e["call_id"].as_str()?;
    let end = e["event.timestamp"].as_str().and_then(rfc3339_ms).unwrap_or(at);
    let start = end.saturating_sub(e["duration_ms"].as_u64().unwrap_or(0));
    // Refused by the user, or by a hook or a rule before it started.
    let refused = e["decision"].as_str() == Some("reject")
        || e["execution_status"].as_str() == Some("not_started");
    let call = Call {
        id: Cow::Owned(id.to_string()),
        name: Cow::Owned(e["function_name"].as_str().unwrap_or_default().to_string()),
        arguments: Json::of(&e["function_args"]).ok(),
        within: None,
    };
    Some(record(
        sid,
        Event::Called(Called {
            call,
            output: None,
            started_ms: start,
            finished_ms: end,
            refused,
            failed: !refused && e["success"].as_bool() == Some(false),
        }),
    ))
}

