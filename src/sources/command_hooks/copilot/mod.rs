//! Copilot CLI's command hooks and session log to protocol records.
//!
//! Copilot's hooks, in Claude Code's style, carry no call id, no turn id and nothing of the
//! model calls. Its session log (`events.jsonl`, which `Stop` names) has all of that, timed:
//! - `UserPromptSubmit` opens the turn, at the payload's own time;
//! - `Stop` ends it. Copilot writes its log behind its hooks, so the log is read a little
//!   later (or at the next prompt): each model call (`session.usage_record`, timed at its end,
//!   with its duration and tokens) and each tool call (`tool.execution_start` to
//!   `tool.execution_complete`, by call id; a call a hook denied completes with the code
//!   `denied`) between the turn's start and its `Stop`;
//! - `SessionEnd` closes the session once its turn is read; `copilot --resume` opens it
//!   again under its id.
//!
//! A sub-agent's hooks are left out; its events in the log (with its `agentId`) open it as a
//! session of its own under the `task` call that started it ([`subagents`]). Reading the log
//! is the caller's I/O, behind [`Transcripts`]; the rest is pure.

mod contract;
pub mod history;
pub(crate) use contract::adapter;
pub use contract::{HISTORY, SPEC};
mod models;
mod payload;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod script;
mod ends;
mod subagents;

use std::borrow::Cow;
use std::collections::HashMap;

use models::{answer_of, call_sent};
pub use payload::{sub_agents_parent, with_log, Payload};
use payload::{LogEvent, UsageRecord};

use crate::sources::command_hooks::engine::files::{FileCursor, Transcripts};
use crate::sources::command_hooks::engine::held::WentOut;
use crate::sources::command_hooks::engine::records::{record, rfc3339_ms, Ended, Outcome};
use crate::sources::command_hooks::engine::open_turn::{OpenTurn, Why};
use crate::protocol::{Call, CallSent, Event, Json, Record};

/// The agent name on Copilot CLI's turns.
pub const AGENT: &str = "copilot";

/// Copilot CLI's events that make a trace: its session log has the calls.
pub const HOOK_EVENTS: &[&str] = &["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"];

/// How long after `Stop` the session log is read: Copilot writes it behind the hooks, and a
/// turn's last model call and tool end can reach it after its `Stop` has run.
const LOG_GRACE_MS: u64 = 2_000;

#[derive(Debug, Default)]
pub struct Session {
    started: bool,
    /// The open turn: the log's events from its start on are its; its held stop is its
    /// `Stop`, read once the log has caught up.
    turn: Option<OpenTurn>,
    /// `SessionEnd` came: the session closes once its last turn is read.
    closing: Option<u64>,
    /// The log the last `Stop` named (or the prompt's hook added): a turn that ends without one (an error, a `Stop` hook
    /// that timed out) still reads its calls from it.
    log: Option<String>,
    /// How far into which log the turns already read reach: the next turn reads on from
    /// there, not the whole session's log again.
    read: Option<FileCursor>,
    /// Where an earlier daemon's turns had read this session's log to: the first read here
    /// goes on from there, not from the log's start, if it is still that log.
    resumed: Option<FileCursor>,
    /// When the last turn went out at its `Stop` (see [`WentOut`]).
    went_out: WentOut,
    /// A prompt after a stop, which the log may yet show is the reason a hook blocked that
    /// stop with (Copilot writes its log behind its hooks).
    undecided: Option<ends::Undecided>,
}

impl Session {
    /// No turn open, and no prompt waiting to be one.
    pub(super) fn rests(&self) -> bool {
        self.turn.is_none() && self.undecided.is_none()
    }
}

#[derive(Debug, Default)]
pub struct Adapter {
    sessions: HashMap<String, Session>,
}

impl Adapter {
    pub fn new() -> Self {
        Adapter::default()
    }
}

/// When the open turn's log last says anything: 0 if it says nothing since the turn began.
fn last_logged(s: &Session, turn_start: u64, path: &str, logs: &mut dyn Transcripts) -> u64 {
    let from = s
        .read
        .as_ref()
        .or(s.resumed.as_ref())
        .map_or(0, |r| r.offset_in(path, logs));
    logs.read_from(path, from)
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice::<LogEvent>(line).ok())
        .filter_map(|e| e.timestamp.as_deref().and_then(rfc3339_ms))
        .filter(|at| *at >= turn_start)
        .max()
        .unwrap_or(0)
}

/// Ends session `sid`'s turn: a held `Stop`'s turn with what the log has of it, at the `Stop`;
/// a turn with no `Stop` with what the log has of it by `at_ms`, ended then for `cut` (the next
/// prompt, the session's end), or, the agent gone, left for the session's close to mark
/// unfinished. Either way through the one flush every turn ends by.
fn finish(
    sid: &str,
    s: &mut Session,
    at_ms: u64,
    cut: Why,
    logs: &mut dyn Transcripts,
    out: &mut Vec<Record<'static>>,
) {
    let Some(turn) = s.turn.take() else {
        return;
    };
    let (to, why) = match turn.stop {
        Some((stop_at, reason)) => (stop_at, Why::Stopped(reason)),
        None => (at_ms, cut),
    };
    if let Some(path) = s.log.clone() {
        read_turn(sid, s, turn.at_ms, &path, to, logs, out);
    }
    turn.flush(sid, to, why, out);
}

/// Reads the open turn's calls from `path`, on from where the last turn read this log got to.
fn read_turn(
    sid: &str,
    s: &mut Session,
    turn_start: u64,
    path: &str,
    to: u64,
    logs: &mut dyn Transcripts,
    out: &mut Vec<Record<'static>>,
) {
    // The read starts one byte early, on the newline that ended the last whole line read: a
    // log that shrank or was replaced shows no newline there, and is read again from its
    // start (the events' times keep the turns apart).
    let held = match (&s.read, s.resumed.take()) {
        (Some(read), _) if read.path == path && read.offset > 0 => read.offset,
        (None, Some(at)) => at.offset_in(path, logs),
        _ => 0,
    };
    let mut bytes = logs.read_from(path, held.saturating_sub(1));
    let offset = if held == 0 {
        0
    } else if bytes.first() == Some(&b'\n') {
        bytes.remove(0);
        held
    } else {
        bytes = logs.read_from(path, 0);
        0
    };
    let done = read_log(sid, turn_start, to, &bytes, out);
    s.read = Some(FileCursor::at(path, offset + done, logs));
}

/// The model and tool calls the log (`bytes`) has between a turn's start and its `Stop`; the
/// log holds every turn of the session, resumed ones included, and each event its time, so a
/// turn takes its own whichever daemon reads it, and from wherever. Returns how many bytes of
/// whole lines no later turn needs: those up to the first event after `to`. A last line with
/// no newline yet is taken if it parses, and read again next time.
pub(super) fn read_log(
    sid: &str,
    from: u64,
    to: u64,
    bytes: &[u8],
    out: &mut Vec<Record<'static>>,
) -> u64 {
    // Calls running: their tool, input, start, and the session that made them.
    let mut running: HashMap<String, (String, Option<Json<'static>>, u64, String)> = HashMap::new();
    let mut children = subagents::Children::default();
    let mut held: Option<(String, CallSent<'static>)> = None;
    let (mut pos, mut done, mut later) = (0usize, 0usize, false);
    while pos < bytes.len() {
        let (line, whole) = match bytes[pos..].iter().position(|b| *b == b'\n') {
            Some(n) => (&bytes[pos..pos + n], true),
            None => (&bytes[pos..], false),
        };
        pos += line.len() + 1;
        let at = serde_json::from_slice::<LogEvent>(line)
            .ok()
            .and_then(|e| Some((e.timestamp.as_deref().and_then(rfc3339_ms)?, e)));
        later |= !whole || at.as_ref().is_some_and(|(at, _)| *at > to);
        if !later {
            done = pos;
        }
        let Some((at, e)) = at else {
            continue;
        };
        if at < from || at > to {
            continue;
        }
        // A model call's answer is logged just after its usage: it goes with the call, and
        // any other event sends the call on first.
        let answer = e.data["apiCallId"]
            .as_str()
            .filter(|_| e.kind == "assistant.message");
        if let Some((by, mut c)) = held.take() {
            if answer.is_some() && answer == c.id.as_deref() {
                if let Some(r) = c.response.as_mut() {
                    r.content = answer_of(&e.data);
                }
                out.push(record(&by, Event::CallSent(c)));
                continue;
            }
            out.push(record(&by, Event::CallSent(c)));
        }
        let caller = |call: &str| running.get(call).map(|r| r.3.clone());
        if children.take(sid, at, &e, &caller, out) {
            continue;
        }
        let Some(target) = children.session_of(sid, &e) else {
            continue;
        };
        let target = target.as_str();
        let text = |v: &serde_json::Value| v.as_str().map(str::to_string);
        match e.kind.as_str() {
            "session.usage_record" => {
                let Ok(u) = serde_json::from_value::<UsageRecord>(e.data["usage"].clone()) else {
                    continue;
                };
                let mut c = call_sent(u, at);
                c.started_ms = c.started_ms.max(from);
                held = Some((target.to_string(), c));
            }
            "tool.execution_start" => {
                let Some(id) = text(&e.data["toolCallId"]) else {
                    continue;
                };
                let name = text(&e.data["toolName"]).unwrap_or_default();
                let args = Json::of(&e.data["arguments"])
                    .ok()
                    .filter(|_| !e.data["arguments"].is_null());
                out.push(record(
                    target,
                    Event::Calling {
                        at_ms: at,
                        call: Call {
                            id: Cow::Owned(id.clone()),
                            name: Cow::Owned(name.clone()),
                            arguments: args.clone(),
                            within: None,
                        },
                    },
                ));
                running.insert(id, (name, args, at, target.to_string()));
            }
            "tool.execution_complete" => {
                let Some(id) = text(&e.data["toolCallId"]) else {
                    continue;
                };
                let Some((name, arguments, started, _)) = running.remove(&id) else {
                    continue;
                };
                // A `task` call's sub-agent ends with it.
                children.call_ended(&id, at.max(started), out);
                let success = e.data["success"].as_bool().unwrap_or(true);
                let refused = e.data["error"]["code"] == "denied";
                let output = if success {
                    &e.data["result"]["content"]
                } else {
                    &e.data["error"]["message"]
                };
                out.push(
                    Ended {
                        session: target,
                        id,
                        name,
                        arguments,
                        output: Json::of(output).ok().filter(|_| !output.is_null()),
                        started_ms: started,
                    }
                    .record(at, Outcome::of(refused, !success && !refused)),
                );
            }
            _ => {}
        }
    }
    if let Some((by, c)) = held {
        out.push(record(&by, Event::CallSent(c)));
    }
    children.close_all(to, out);
    done as u64
}

#[cfg(test)]
mod tests;
