//! Claude Code's history from its own files, for `import`: each transcript under
//! `~/.claude/projects/` (or `$CLAUDE_CONFIG_DIR/projects/`, and `~/.config/claude/projects/`)
//! read whole into the records the hooks would have made: a turn per prompt, its tool calls
//! from their `tool_use` to their `tool_result`, its model calls with their usage (the same
//! reader the live route uses, so a model call met both ways has the same id and is counted
//! once). A sub-agent's transcript (`<session>/subagents/agent-<id>.jsonl`) is read with its
//! parent's, at the `Agent` call whose result names it: its session the live route's name for
//! it, opened under that call, so that it nests there as it does live. One no call names (an
//! older Claude Code's) is a session of its own, `<session>/<file>`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::call_sent::call_sent;
use super::transcript::TranscriptCursor;
use crate::sources::command_hooks::engine::content::Content;
use crate::protocol::{Call, Called, Event, Json, Record};
use crate::sources::command_hooks::engine::records::{
    record, rfc3339_ms, session_opened_under, turn_ended,
};
use crate::sources::command_hooks::engine::session_key;
use crate::sources::command_hooks::spec::{self, Env, Reading};

#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default, rename = "isMeta")]
    meta: bool,
    #[serde(default)]
    message: Option<Message>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<Content>,
}

/// Where Claude Code keeps its transcripts.
pub fn roots(env: Env<'_>) -> Vec<PathBuf> {
    let set = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(dir) = set("CLAUDE_CONFIG_DIR") {
        // Several, comma-separated, as Claude Code and ccusage take it.
        return dir
            .split(',')
            .map(|d| Path::new(d.trim()).join("projects"))
            .collect();
    }
    [".claude/projects", ".config/claude/projects"]
        .into_iter()
        .filter_map(|p| spec::under_home(env, p))
        .collect()
}

/// Whether `path` is a transcript.
pub fn is_session(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
}

/// The session a transcript is: its own name, or, for a sub-agent's
/// (`<session>/subagents/<file>.jsonl`), `<session>/<file>`.
fn session_of(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = path.parent();
    if parent.and_then(Path::file_name).is_some_and(|n| n == "subagents") {
        if let Some(session) = parent.and_then(Path::parent).and_then(Path::file_name) {
            return format!("{}/{stem}", session.to_string_lossy());
        }
    }
    stem
}

/// The prompt a user line is, if it is one (not a tool's result, not a line of Claude Code's
/// own).
fn prompt(line: &Line) -> Option<String> {
    if line.meta {
        return None;
    }
    match line.message.as_ref()?.content.as_ref()? {
        Content::Text(t) => Some(t.clone()),
        Content::Blocks(blocks) => {
            if blocks.iter().any(|b| b.kind == "tool_result") {
                return None;
            }
            let text: Vec<&str> = blocks.iter().filter_map(|b| b.text.as_deref()).collect();
            (!text.is_empty()).then(|| text.join("\n"))
        }
    }
}

/// What one turn read so far holds, to go out in time order at its end.
#[derive(Default)]
struct Turn {
    events: Vec<(u64, Record<'static>)>,
    last_ms: u64,
}

/// The records of the transcript at `path`, whose contents are `bytes`: a session's with its
/// sub-agents'; none for a sub-agent's beside its session's (read with it).
pub fn records(path: &Path, bytes: &[u8], reading: Reading) -> Vec<Record<'static>> {
    if let Some((parent, _)) = sub_agent_of(path) {
        if parent.exists() {
            return Vec::new();
        }
        return read(&session_of(path), None, path, bytes, reading);
    }
    let sid = session_of(path);
    let mut out = read(&sid, None, path, bytes, reading);
    out.extend(unnested(path, &sid, &out, reading));
    out
}

/// For a sub-agent's transcript, `<dir>/<session>/subagents/agent-<id>.jsonl`: its parent's,
/// `<dir>/<session>.jsonl`, and `id`.
fn sub_agent_of(path: &Path) -> Option<(PathBuf, String)> {
    let agent = path.file_stem()?.to_str()?.strip_prefix("agent-")?;
    let subagents = path.parent().filter(|p| p.file_name().is_some_and(|n| n == "subagents"))?;
    let session = subagents.parent()?;
    let parent = session.with_file_name(format!("{}.jsonl", session.file_name()?.to_str()?));
    Some((parent, agent.to_string()))
}

/// The records of the sub-agents' transcripts beside session `sid`'s (at `path`) that no call
/// of it nested (`out` has their records when one did): sessions of their own, `<session>/<file>`,
/// rather than lost (an older Claude Code names them in no call's result).
fn unnested(
    path: &Path,
    sid: &str,
    out: &[Record<'static>],
    reading: Reading,
) -> Vec<Record<'static>> {
    let nested = |agent: &str| {
        let key = session_key::sub_agent(sid, agent);
        out.iter()
            .any(|r| matches!(&r.event, Event::Session(i) if i.parent.is_some()) && r.session == key)
    };
    let dir = path.with_extension("").join("subagents");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| is_session(p))
        .collect();
    files.sort();
    let mut own = Vec::new();
    for file in files {
        let Some((_, agent)) = sub_agent_of(&file) else {
            continue;
        };
        if nested(&agent) {
            continue;
        }
        if let Ok(bytes) = std::fs::read(&file) {
            own.extend(read(&session_of(&file), None, &file, &bytes, reading));
        }
    }
    own
}

/// The sub-agent a tool result's line names, if the line has a `toolUseResult` naming one.
fn named_agent(line: &[u8]) -> Option<&str> {
    let result = memchr::memmem::find(line, b"\"toolUseResult\":")?;
    let key = b"\"agentId\":\"";
    let from = result + memchr::memmem::find(&line[result..], key)? + key.len();
    let len = memchr::memchr(b'"', &line[from..])?;
    std::str::from_utf8(&line[from..from + len]).ok()
}

/// The records of sub-agent `agent`'s transcript beside `path` (its parent's), started by call
/// `call` of session `sid`; none when it is not there.
fn sub_agent(
    path: &Path,
    sid: &str,
    agent: &str,
    call: &str,
    reading: Reading,
) -> Vec<Record<'static>> {
    let Some(dir) = path.parent() else {
        return Vec::new();
    };
    let file = dir.join(sid).join("subagents").join(format!("agent-{agent}.jsonl"));
    match std::fs::read(&file) {
        Ok(bytes) => read(
            &session_key::sub_agent(sid, agent),
            Some((sid, call)),
            &file,
            &bytes,
            reading,
        ),
        Err(_) => Vec::new(),
    }
}

/// The records of one transcript as session `sid`, opened under `under` (a parent session and
/// its call) for a sub-agent's.
fn read(
    sid: &str,
    under: Option<(&str, &str)>,
    path: &Path,
    bytes: &[u8],
    reading: Reading,
) -> Vec<Record<'static>> {
    let sid = sid.to_string();
    let mut out = Vec::new();
    let mut models = TranscriptCursor::default();
    models.set_message_budget(reading.message_budget);
    let mut turn = Turn::default();
    let mut calls: HashMap<String, (u64, Call<'static>)> = HashMap::new();
    let mut opened = false;
    let mut last_ms = 0;
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', bytes).chain([bytes.len()]) {
        let (from, raw) = (start, &bytes[start..end]);
        start = end + 1;
        let Ok(line) = serde_json::from_slice::<Line>(raw) else {
            continue;
        };
        let Some(at) = line.timestamp.as_deref().and_then(rfc3339_ms) else {
            continue;
        };
        last_ms = last_ms.max(at);
        if !opened {
            opened = true;
            let cwd = line.cwd.as_deref();
            out.push(session_opened_under(&sid, at, super::AGENT, cwd, under));
        }
        let kind = line.kind.as_deref();
        if kind == Some("user") {
            if let Some(text) = prompt(&line) {
                end_turn(&sid, &mut turn, &mut models, &mut out);
                turn.events.push((
                    at,
                    record(
                        &sid,
                        Event::Prompted {
                            at_ms: at,
                            text: Cow::Owned(text),
                        },
                    ),
                ));
            }
        }
        // The model calls, as the live route reads them, the line with its newline; one without
        // it, at the file's end, is complete here too.
        match bytes.get(from..=end) {
            Some(with_newline) if end < bytes.len() => models.feed(with_newline),
            _ => models.feed(&[raw, b"\n"].concat()),
        };
        let blocks = match line.message.and_then(|m| m.content) {
            Some(Content::Blocks(b)) => b,
            _ => Vec::new(),
        };
        for b in blocks {
            match (kind, b.kind.as_str()) {
                (Some("assistant"), "tool_use") => {
                    let (Some(id), Some(name)) = (b.id, b.name) else {
                        continue;
                    };
                    let call = Call {
                        id: Cow::Owned(id.clone()),
                        name: Cow::Owned(name),
                        arguments: b.input.as_ref().and_then(|v| Json::of(v).ok()),
                        within: None,
                    };
                    turn.events.push((
                        at,
                        record(
                            &sid,
                            Event::Calling {
                                at_ms: at,
                                call: call.clone(),
                            },
                        ),
                    ));
                    calls.insert(id, (at, call));
                }
                (Some("user"), "tool_result") => {
                    let Some((started, call)) = b.tool_use_id.and_then(|id| calls.remove(&id))
                    else {
                        continue;
                    };
                    if super::AGENT_TOOLS.contains(&call.name.as_ref()) {
                        // The sub-agent it ran, in its time, inside the call.
                        if let Some(agent) = named_agent(raw) {
                            let child = sub_agent(path, &sid, agent, &call.id, reading);
                            turn.events.extend(child.into_iter().map(|r| (started, r)));
                        }
                    }
                    turn.events.push((
                        at,
                        record(
                            &sid,
                            Event::Called(Called {
                                call,
                                output: None,
                                started_ms: started,
                                finished_ms: at.max(started),
                                refused: false,
                                failed: b.is_error.unwrap_or(false),
                            }),
                        ),
                    ));
                }
                _ => {}
            }
        }
        turn.last_ms = turn.last_ms.max(at);
    }
    end_turn(&sid, &mut turn, &mut models, &mut out);
    if opened {
        out.push(record(&sid, Event::Closed { at_ms: last_ms }));
    }
    out
}

/// Sends the turn read so far, its model calls among its events in time order, and ends it
/// at its last line.
fn end_turn(
    sid: &str,
    turn: &mut Turn,
    models: &mut TranscriptCursor,
    out: &mut Vec<Record<'static>>,
) {
    for call in models.take_calls() {
        let at = call.started_ms;
        turn.last_ms = turn.last_ms.max(call.finished_ms);
        turn.events
            .push((at, record(sid, Event::CallSent(call_sent(call)))));
    }
    if turn.events.is_empty() {
        return;
    }
    // Stable: what came first in the file stays first at the same millisecond.
    turn.events.sort_by_key(|(at, _)| *at);
    out.extend(turn.events.drain(..).map(|(_, r)| r));
    out.push(turn_ended(sid, turn.last_ms));
    turn.last_ms = 0;
}
