//! Copilot CLI's history from its own files, for `import`: each session's log
//! (`$COPILOT_HOME/session-state/<session>/events.jsonl`, `~/.copilot` by default) read turn by
//! turn, each turn from its `user.message` to the next, by the live route's own log reader: its
//! model calls (`session.usage_record`, keyed by their API call ids as the live route keys
//! them), its tool calls by call id, denied ones refused, and its sub-agents under their
//! `task` call. Pure, but for the file handed in.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::payload::LogEvent;
use super::{read_log, AGENT};
use crate::protocol::{Event, Record, SessionInfo};
use crate::sources::command_hooks::engine::records::{record, rfc3339_ms, turn_ended};
use crate::sources::command_hooks::spec::{self, Env, Reading};

/// Where Copilot keeps its sessions' logs.
pub fn roots(env: Env<'_>) -> Vec<PathBuf> {
    match env("COPILOT_HOME").filter(|h| !h.is_empty()) {
        Some(home) => vec![Path::new(&home).join("session-state")],
        None => spec::under_home(env, ".copilot/session-state").into_iter().collect(),
    }
}

/// A session's log.
pub fn is_session(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "events.jsonl")
}

/// What a session's log says, as the records the live route would have made of it.
pub fn records(path: &Path, bytes: &[u8], _: Reading) -> Vec<Record<'static>> {
    let mut out = Vec::new();
    // Each event with its time and where its line begins.
    let mut events: Vec<(u64, LogEvent, usize)> = Vec::new();
    let mut start = 0;
    for line in bytes.split(|&b| b == b'\n') {
        let e = serde_json::from_slice::<LogEvent>(line).ok();
        if let Some((at, e)) = e.and_then(|e| Some((e.timestamp.as_deref().and_then(rfc3339_ms)?, e))) {
            events.push((at, e, start));
        }
        start += line.len() + 1;
    }
    let from_file = path.parent().and_then(|d| d.file_name()).map(|n| n.to_string_lossy().into_owned());
    let started = events.iter().find(|(_, e, _)| e.kind == "session.start");
    let sid = started
        .and_then(|(_, e, _)| e.data["sessionId"].as_str().map(str::to_string))
        .or(from_file);
    let (Some(sid), Some(&(first, _, _))) = (sid, events.first()) else {
        return out;
    };
    let cwd = started.and_then(|(_, e, _)| e.data["context"]["cwd"].as_str().map(str::to_string));
    let info = SessionInfo {
        at_ms: first,
        agent: Some(Cow::Borrowed(AGENT)),
        workspace: cwd.map(Cow::Owned),
        ..SessionInfo::default()
    };
    out.push(record(&sid, Event::Session(info)));
    // The user's prompts (a sub-agent's are its own), each a turn until the next.
    let prompts: Vec<(u64, String, usize)> = (events.iter())
        .filter(|(_, e, _)| e.kind == "user.message" && e.agent_id.is_none())
        .map(|(at, e, from)| (*at, e.data["content"].as_str().unwrap_or_default().to_string(), *from))
        .collect();
    let last = events.iter().map(|(at, _, _)| *at).max().unwrap_or(first);
    for (i, (at, text, from)) in prompts.iter().enumerate() {
        let to = prompts.get(i + 1).map_or(last, |(next, _, _)| next.saturating_sub(1));
        out.push(record(
            &sid,
            Event::Prompted {
                at_ms: *at,
                text: Cow::Owned(text.clone()),
            },
        ));
        // From the prompt's line to the next prompt's: each turn reads its own lines only.
        let until = prompts.get(i + 1).map_or(bytes.len(), |(_, _, next)| *next);
        read_log(&sid, *at, to, &bytes[*from..until.max(*from)], &mut out);
        let end = (events.iter())
            .map(|(t, _, _)| *t)
            .filter(|t| *t >= *at && *t <= to)
            .max()
            .unwrap_or(*at);
        out.push(turn_ended(&sid, end));
    }
    out.push(record(&sid, Event::Closed { at_ms: last }));
    out
}
