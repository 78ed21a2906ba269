//! Pi's history from its own files, for `import`: each session file under
//! `$PI_CODING_AGENT_DIR/sessions/` (`~/.pi/agent` by default) read whole into the records its
//! extension's events would have made: a turn per user message, each assistant message a model
//! call with Pi's own times and tokens (the same builder and id as the live route, so a call
//! met both ways is counted once), and each tool result a tool call, refused when it never
//! ran. Pure, but for the file handed in.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::models::{call_sent, provider_name};
use super::payload::Message;
use super::AGENT;
use crate::protocol::{Call, Called, Event, Json, Record, SessionInfo};
use crate::sources::command_hooks::engine::records::{prompted, record, rfc3339_ms, turn_ended};
use crate::sources::command_hooks::spec::{self, Env, Reading};

#[derive(Deserialize)]
struct Entry {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    message: Value,
}

/// Where Pi keeps its sessions.
pub fn roots(env: Env<'_>) -> Vec<PathBuf> {
    match env("PI_CODING_AGENT_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => vec![Path::new(&dir).join("sessions")],
        None => spec::under_home(env, ".pi/agent/sessions").into_iter().collect(),
    }
}

/// A session file: `<project>/<time>_<session>.jsonl`.
pub fn is_session(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
}

/// What a session file's entries say, as the records the live route would have made.
pub fn records(_path: &Path, bytes: &[u8], _: Reading) -> Vec<Record<'static>> {
    let mut out = Vec::new();
    let mut sid: Option<String> = None;
    let (mut open, mut last_ms) = (false, 0);
    // The tool calls the model asked for, by id: their name and arguments, and when asked.
    let mut asked: HashMap<String, (String, Value, u64)> = HashMap::new();
    for raw in bytes.split(|&b| b == b'\n') {
        let Ok(e) = serde_json::from_slice::<Entry>(raw) else {
            continue;
        };
        let at = e.timestamp.as_deref().and_then(rfc3339_ms).unwrap_or(last_ms);
        if e.kind == "session" && sid.is_none() {
            let Some(id) = e.id.clone() else { continue };
            let info = SessionInfo {
                at_ms: at,
                agent: Some(Cow::Borrowed(AGENT)),
                workspace: e.cwd.clone().map(Cow::Owned),
                ..SessionInfo::default()
            };
            out.push(record(&id, Event::Session(info)));
            sid = Some(id);
            continue;
        }
        let Some(sid) = sid.as_deref() else { continue };
        let m = &e.message;
        let at = m["timestamp"].as_u64().unwrap_or(at);
        match m["role"].as_str() {
            Some("user") => {
                if std::mem::replace(&mut open, true) {
                    out.push(turn_ended(sid, last_ms));
                }
                let text: Vec<&str> = (m["content"].as_array().into_iter().flatten())
                    .filter_map(|c| c["text"].as_str())
                    .collect();
                out.push(prompted(sid, at, text.join("\n")));
            }
            Some("assistant") => {
                let Ok(message) = serde_json::from_value::<Message>(m.clone()) else {
                    continue;
                };
                let started = message.timestamp.unwrap_or(at);
                let finished = started.saturating_add(message.duration_ms.unwrap_or(0));
                for c in (m["content"].as_array().into_iter().flatten())
                    .filter(|c| c["type"] == "toolCall")
                {
                    if let Some(id) = c["id"].as_str() {
                        let name = c["name"].as_str().unwrap_or_default().to_string();
                        asked.insert(id.to_string(), (name, c["arguments"].clone(), finished));
                    }
                }
                let model = message.model.clone().unwrap_or_default();
                let provider = (message.provider.as_deref().map(provider_name))
                    .map(Cow::into_owned)
                    .unwrap_or_default();
                let call = call_sent(&message, started, finished, model, provider, None);
                out.push(record(sid, Event::CallSent(call)));
                last_ms = last_ms.max(finished);
            }
            Some("toolResult") => {
                let Some(id) = m["toolCallId"].as_str() else { continue };
                let (name, args, asked_at) = asked.remove(id).unwrap_or_default();
                let ran = m["durationMs"].as_u64();
                let started = ran.map_or(asked_at.min(at), |d| at.saturating_sub(d));
                let error = m["isError"] == true;
                let call = Call {
                    id: Cow::Owned(id.to_string()),
                    name: Cow::Owned(m["toolName"].as_str().map_or(name, str::to_string)),
                    arguments: Json::of(&args).ok(),
                    within: None,
                };
                out.push(record(
                    sid,
                    Event::Called(Called {
                        call,
                        output: None,
                        started_ms: started,
                        finished_ms: at.max(started),
                        // A call that never ran was refused by another extension's gate.
                        refused: error && ran.is_none(),
                        failed: error && ran.is_some(),
                    }),
                ));
            }
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

