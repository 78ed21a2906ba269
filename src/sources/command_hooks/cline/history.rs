//! Cline's history from its own files, for `import`: each session's messages file
//! (`<sessions>/<root>/<root>.messages.json`, where the live route reads it) read whole into
//! the records its hooks would have made: a turn per `<user_input>` prompt, its tool calls from
//! the answer that asked for them to the message with their results, its model calls by the
//! live route's own reader (so a call met both ways has the same id, the message's, and is
//! counted once). A sub-agent's file (`<root>/<agent>.messages.json`) is read with its parent's,
//! under the `spawn_agent` call whose `task` it opens with, as the live route nests it. Pure,
//! but for the session's folder it reads.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::models::{call_of, Message};
use crate::protocol::{Call, Called, Event, Json, Record};
use crate::sources::command_hooks::engine::content::Content;
use crate::sources::command_hooks::engine::records::{record, session_opened_under};
use crate::sources::command_hooks::engine::session_key;
use crate::sources::command_hooks::spec::{Env, Reading};

/// Where Cline keeps its sessions: `CLINE_SESSION_DATA_DIR`, else `$CLINE_DATA_DIR/sessions`,
/// else `$CLINE_DIR/data/sessions`, else `~/.cline/data/sessions`.
pub fn roots(env: Env<'_>) -> Vec<PathBuf> {
    super::payload::messages_path("x", None, env)
        .and_then(|p| Some(p.parent()?.parent()?.to_path_buf()))
        .into_iter()
        .collect()
}

/// Whether `path` is a messages file.
pub fn is_session(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".messages.json"))
}

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    messages: Vec<Box<RawValue>>,
}

#[derive(Deserialize)]
struct Shape {
    #[serde(default)]
    role: String,
    #[serde(default)]
    ts: Option<u64>,
    #[serde(default)]
    content: Content,
}

/// The records of the messages file at `path`, whose contents are `bytes`: a session's, with
/// its sub-agents; none for a sub-agent's whose session's file is there (read with it).
pub fn records(path: &Path, bytes: &[u8], _: Reading) -> Vec<Record<'static>> {
    let (Some(dir), Some(stem)) = (path.parent(), file_stem(path)) else {
        return Vec::new();
    };
    let root = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if stem != root && dir.join(format!("{root}.messages.json")).exists() {
        return Vec::new();
    }
    let mut agents = sub_agents(dir, &root);
    let cwd = std::fs::read(dir.join(format!("{root}.json")))
        .ok()
        .and_then(|b| serde_json::from_slice::<Facts>(&b).ok())
        .and_then(|f| f.cwd);
    let mut out = Vec::new();
    read(&root, None, cwd.as_deref(), bytes, &mut agents, &mut out);
    // Sub-agents no call of the session started, as far as its file says: sessions of their
    // own, rather than lost.
    for (agent, _, bytes) in std::mem::take(&mut agents) {
        let child = session_key::sub_agent(&root, &agent);
        read(&child, None, cwd.as_deref(), &bytes, &mut Vec::new(), &mut out);
    }
    out
}

/// The session's facts, beside its messages (`<root>.json`).
#[derive(Deserialize)]
struct Facts {
    #[serde(default)]
    cwd: Option<String>,
}

fn file_stem(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    Some(name.strip_suffix(".messages.json")?.to_string())
}

/// The sub-agents' files beside the session's: each agent's id, its task (its first message)
/// and its contents, oldest first (their ids carry their creation time).
fn sub_agents(dir: &Path, root: &str) -> Vec<(String, String, Vec<u8>)> {
    let mut agents = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = e.path();
        let Some(agent) = file_stem(&path).filter(|s| s != root) else {
            continue;
        };
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let task = first_text(&bytes).unwrap_or_default();
        agents.push((agent, task, bytes));
    }
    agents.sort_by(|a, b| a.0.cmp(&b.0));
    agents
}

/// The text of a file's first message, if it is the user's.
fn first_text(bytes: &[u8]) -> Option<String> {
    let file: File = serde_json::from_slice(bytes).ok()?;
    let first: Shape = serde_json::from_str(file.messages.first()?.get()).ok()?;
    (first.role == "user").then(|| first.content.text(""))
}


/// A prompt's text: inside `<user_input …>`; a sub-agent's first message is its task as it is.
fn prompt(text: &str, first: bool) -> Option<String> {
    match text.find("<user_input") {
        Some(at) => {
            let body = &text[at..];
            let open = body.find('>')? + 1;
            let close = body.rfind("</user_input>").unwrap_or(body.len()).max(open);
            Some(body[open..close].to_string())
        }
        None => first.then(|| text.to_string()),
    }
}

/// The records of one messages file as session `sid`, opened under `under` (its parent
/// session and call) for a sub-agent's; `agents`: the sub-agents still to place.
fn read(
    sid: &str,
    under: Option<(&str, &str)>,
    cwd: Option<&str>,
    bytes: &[u8],
    agents: &mut Vec<(String, String, Vec<u8>)>,
    out: &mut Vec<Record<'static>>,
) {
    let Ok(file) = serde_json::from_slice::<File>(bytes) else {
        return;
    };
    let mut open_turn = false;
    let (mut last_ts, mut first) = (None::<u64>, true);
    let mut calls: HashMap<String, (u64, Call<'static>)> = HashMap::new();
    for raw in &file.messages {
        let Ok(m) = serde_json::from_str::<Shape>(raw.get()) else {
            continue;
        };
        let Some(ts) = m.ts else { continue };
        if first {
            out.push(session_opened_under(sid, ts, super::AGENT, cwd, under));
        }
        match m.role.as_str() {
            "user" => {
                // Results first: a message can end the calls of one turn and open the next.
                for b in m.content.blocks().iter().filter(|b| b.kind == "tool_result") {
                    let Some((started, call)) = b.tool_use_id.as_ref().and_then(|id| calls.remove(id))
                    else {
                        continue;
                    };
                    out.push(record(sid, Event::Called(Called {
                        call,
                        output: None,
                        started_ms: started,
                        finished_ms: ts.max(started),
                        refused: false,
                        failed: b.is_error.unwrap_or(false),
                    })));
                }
                if let Some(text) = prompt(&m.content.text(""), first) {
                    if open_turn {
                        end_turn(sid, last_ts.unwrap_or(ts), &mut calls, out);
                    }
                    out.push(record(sid, Event::Prompted { at_ms: ts, text: Cow::Owned(text) }));
                    open_turn = true;
                }
            }
            "assistant" => {
                let started = last_ts.unwrap_or(ts);
                if let Some(call) = serde_json::from_str::<Message>(raw.get())
                    .ok()
                    .and_then(|msg| call_of(msg, started))
                {
                    out.push(record(sid, Event::CallSent(call)));
                }
                for b in m.content.blocks().iter().filter(|b| b.kind == "tool_use") {
                    let (Some(id), Some(name)) = (b.id.clone(), b.name.clone()) else {
                        continue;
                    };
                    let call = Call {
                        id: Cow::Owned(id.clone()),
                        name: Cow::Owned(name.clone()),
                        arguments: b.input.as_ref().and_then(|v| Json::of(v).ok()),
                        within: None,
                    };
                    out.push(record(sid, Event::Calling { at_ms: ts, call: call.clone() }));
                    calls.insert(id.clone(), (ts, call));
                    if name == "spawn_agent" {
                        let task = b.input.as_ref().and_then(|i| i["task"].as_str());
                        spawned(sid, &id, task, cwd, agents, out);
                    }
                }
            }
            _ => {}
        }
        last_ts = Some(ts);
        first = false;
    }
    if let Some(ts) = last_ts {
        if open_turn {
            end_turn(sid, ts, &mut calls, out);
        }
        out.push(record(sid, Event::Closed { at_ms: ts }));
    }
}


/// Call `call` of session `sid` started a sub-agent with `task`: its file, the oldest whose
/// first message is that task (else the oldest left), read as its session under the call.
fn spawned(
    sid: &str,
    call: &str,
    task: Option<&str>,
    cwd: Option<&str>,
    agents: &mut Vec<(String, String, Vec<u8>)>,
    out: &mut Vec<Record<'static>>,
) {
    let at = agents
        .iter()
        .position(|(_, t, _)| Some(t.as_str()) == task)
        .or_else(|| (!agents.is_empty()).then_some(0));
    let Some(at) = at else { return };
    let (agent, _, bytes) = agents.remove(at);
    let top = session_key::top(sid);
    let child = session_key::sub_agent(top, &agent);
    read(&child, Some((sid, call)), cwd, &bytes, agents, out);
}

/// Ends the turn at `at_ms`: at its end, or cut short when calls of it have no result (they
/// end with it, unfinished).
fn end_turn(
    sid: &str,
    at_ms: u64,
    calls: &mut HashMap<String, (u64, Call<'static>)>,
    out: &mut Vec<Record<'static>>,
) {
    let reason = if calls.is_empty() { "end_turn" } else { "interrupted" };
    calls.clear();
    out.push(record(
        sid,
        Event::TurnEnded {
            at_ms,
            reason: Some(Cow::Borrowed(reason)),
        },
    ));
}
