//! Cline CLI's hook payloads and messages file to protocol records (what they carry:
//! docs/agents/cline.md).
//!
//! Cline runs an executable named after each event in its hooks folder ([`contract::SPEC`]),
//! and hands it a payload named by its inner event (`hookName`):
//! - `agent_start` (TaskStart) opens a turn: each prompt, a new run of the session's task;
//! - `tool_call` (PreToolUse) starts a call and `tool_result` (PostToolUse) ends it, by the
//!   call's id, with the times the tool itself ran and its `error` when it failed;
//! - `agent_end` (TaskComplete) ends the turn after the answer; `agent_error` and
//!   `agent_abort` end it too. A hook that cancels a call stops the whole turn: the call never
//!   gets its `tool_result`, and `session_shutdown` comes instead; the call was refused;
//! - the model calls are in the session's messages file ([`messages`]), read once the turn
//!   ends (Cline writes it just behind its hooks) or when the next begins.
//!
//! A sub-agent's payloads (`parent_agent_id` set) are left out for now. Reading the messages
//! file is the caller's I/O, behind [`Transcripts`]; the rest is pure.

mod contract;
pub(crate) use contract::adapter;
pub use contract::SPEC;
mod messages;
mod payload;
#[cfg(test)]
pub(crate) mod script;
pub mod scripts;

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::value::RawValue;

pub use payload::{journaled, root_session, Payload};

use super::files::{FileCursor, Transcripts};
use super::records::{raw, record, rfc3339_ms, session_opened, Ended, Outcome};
use crate::protocol::{Call, Event, Record};

/// The agent name on Cline's turns.
pub const AGENT: &str = "cline";

/// Cline's hook files that make a trace (named after the events, as Cline reads them).
pub const HOOK_EVENTS: &[&str] = &[
    "TaskStart",
    "TaskResume",
    "TaskCancel",
    "TaskComplete",
    "TaskError",
    "PreToolUse",
    "PostToolUse",
    "SessionShutdown",
];

/// How long after a turn's end its messages are read: Cline writes the file just behind the
/// hook, and runs that hook without waiting for it.
const READ_GRACE_MS: u64 = 1_000;

/// A call `tool_call` started and no `tool_result` has ended yet.
#[derive(Debug)]
struct Pending {
    id: String,
    name: String,
    input: Option<Box<RawValue>>,
    at_ms: u64,
}

/// A turn's end, held until its messages are written.
#[derive(Debug, Clone, Copy)]
struct Stop {
    at_ms: u64,
    reason: &'static str,
    /// How the calls still pending ended: a hook refused the one the turn stopped on.
    pending: Outcome,
    /// The session ended with the turn (`session_shutdown`).
    closes: bool,
}

#[derive(Debug, Default)]
struct Session {
    started: bool,
    turn_open: bool,
    turn_start: u64,
    pending: Vec<Pending>,
    stop: Option<Stop>,
    /// The session's messages file, as the hook named it.
    messages: Option<String>,
    /// How far the turns read so far reach into it, and the last message's time there.
    read: Option<FileCursor>,
    last_ts: Option<u64>,
    /// Where an earlier daemon had read it to.
    resumed: Option<FileCursor>,
}

#[derive(Debug, Default)]
pub struct Adapter {
    sessions: HashMap<String, Session>,
}

impl Adapter {
    pub fn new() -> Self {
        Adapter::default()
    }

    /// Sessions with a turn open or not yet read.
    pub fn open_turns(&self) -> usize {
        let open = |s: &&Session| s.turn_open || s.stop.is_some();
        self.sessions.values().filter(open).count()
    }

    pub fn at_rest(&self, id: &str) -> bool {
        self.sessions
            .get(id)
            .is_none_or(|s| !s.turn_open && s.stop.is_none())
    }

    /// Takes one payload received at `received_ms`; appends records to `out`.
    pub fn push(
        &mut self,
        received_ms: u64,
        p: &Payload,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let sid = p.session();
        if sid.is_empty() || p.parent_agent_id.as_deref().is_some_and(|a| !a.is_empty()) {
            return;
        }
        let at_ms = p.at_ms().unwrap_or(received_ms);
        let s = self.sessions.entry(sid.to_string()).or_default();
        if !s.started {
            s.started = true;
            let cwd = p.workspace_roots.first().map(String::as_str);
            out.push(session_opened(sid, at_ms, AGENT, cwd));
        }
        if let Some(path) = p.messages_path.as_deref().filter(|p| !p.is_empty()) {
            s.messages = Some(path.to_string());
        }
        match p.hook_name.as_str() {
            "agent_start" | "agent_resume" => {
                finish(sid, s, at_ms, files, out);
                s.turn_open = true;
                s.turn_start = at_ms;
                out.push(record(
                    sid,
                    Event::Prompted {
                        at_ms,
                        text: Cow::Borrowed(""),
                    },
                ));
            }
            "tool_call" => {
                // A turn whose end was held went on (nothing blocks Cline's, but a late end
                // must not cut the turn).
                s.stop = None;
                let Some(c) = &p.tool_call else { return };
                s.pending.push(Pending {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    input: c.input.clone(),
                    at_ms,
                });
                out.push(record(
                    sid,
                    Event::Calling {
                        at_ms,
                        call: Call {
                            id: Cow::Owned(c.id.clone()),
                            name: Cow::Owned(c.name.clone()),
                            arguments: raw(&c.input),
                            within: None,
                        },
                    },
                ));
            }
            "tool_result" => {
                let Some(r) = &p.tool_result else { return };
                let Some(i) = s.pending.iter().position(|c| c.id == r.id) else {
                    return;
                };
                let pre = s.pending.remove(i);
                let started = r.started_at.as_deref().and_then(rfc3339_ms);
                let ended = r.ended_at.as_deref().and_then(rfc3339_ms);
                let failed = r.error.as_ref().is_some_and(|e| e.get() != "null");
                out.push(
                    Ended {
                        session: sid,
                        id: pre.id,
                        name: pre.name,
                        arguments: raw(&pre.input).or_else(|| raw(&r.input)),
                        output: raw(&r.output).or_else(|| raw(&r.error)),
                        started_ms: started.map_or(pre.at_ms, |t| t.max(pre.at_ms)),
                    }
                    .record(ended.unwrap_or(at_ms), Outcome::of(false, failed)),
                );
            }
            "agent_end" => hold(s, at_ms, "end_turn", Outcome::Refused, false),
            "agent_error" => hold(s, at_ms, "error", Outcome::Failed, false),
            "agent_abort" => hold(s, at_ms, "interrupted", Outcome::Failed, false),
            "session_shutdown" => hold(s, at_ms, "cancelled", Outcome::Refused, true),
            _ => {}
        }
    }

    /// Ends each turn whose end is old enough for its messages to be written.
    pub fn tick(
        &mut self,
        now_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let mut closed = Vec::new();
        for (sid, s) in self.sessions.iter_mut() {
            let Some(stop) = s
                .stop
                .filter(|st| now_ms >= st.at_ms.saturating_add(READ_GRACE_MS))
            else {
                continue;
            };
            finish(sid, s, now_ms, files, out);
            if stop.closes {
                out.push(record(sid, Event::Closed { at_ms: stop.at_ms }));
                closed.push(sid.clone());
            }
        }
        for sid in closed {
            self.sessions.remove(&sid);
        }
    }

    /// Gives up on a session that will send nothing more: its open turn's model calls go
    /// out, its running calls stay open, and the session's close marks them unfinished.
    pub fn abandon(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(mut s) = self.sessions.remove(id) else {
            return;
        };
        let closed_at = match s.stop {
            Some(stop) => {
                finish(id, &mut s, at_ms, files, out);
                if stop.closes {
                    stop.at_ms
                } else {
                    at_ms
                }
            }
            // Cline was alive when it wrote its last message.
            None if s.turn_open => at_ms.max(read_calls(id, &mut s, u64::MAX, files, out)),
            None => at_ms,
        };
        out.push(record(id, Event::Closed { at_ms: closed_at }));
    }
}

fn hold(s: &mut Session, at_ms: u64, reason: &'static str, pending: Outcome, closes: bool) {
    if s.turn_open {
        s.stop = Some(Stop {
            at_ms,
            reason,
            pending,
            closes,
        });
    }
}

/// Ends session `sid`'s turn, at its held end, or (with none) at `at_ms` as interrupted: its
/// model calls from the messages file up to `at_ms`, its calls still pending as the end says.
fn finish(
    sid: &str,
    s: &mut Session,
    at_ms: u64,
    files: &mut dyn Transcripts,
    out: &mut Vec<Record<'static>>,
) {
    if !std::mem::take(&mut s.turn_open) {
        s.stop = None;
        return;
    }
    let stop = s.stop.take().unwrap_or(Stop {
        at_ms,
        reason: "interrupted",
        pending: Outcome::Failed,
        closes: false,
    });
    read_calls(sid, s, at_ms, files, out);
    for pre in s.pending.drain(..) {
        out.push(
            Ended {
                session: sid,
                id: pre.id,
                name: pre.name,
                arguments: raw(&pre.input),
                output: None,
                started_ms: pre.at_ms,
            }
            .record(stop.at_ms, stop.pending),
        );
    }
    out.push(record(
        sid,
        Event::TurnEnded {
            at_ms: stop.at_ms,
            reason: Some(Cow::Borrowed(stop.reason)),
        },
    ));
}

/// The open turn's model calls, from its start to `to`; returns when the last ended (0: none).
fn read_calls(
    sid: &str,
    s: &mut Session,
    to: u64,
    files: &mut dyn Transcripts,
    out: &mut Vec<Record<'static>>,
) -> u64 {
    let Some(path) = s.messages.clone() else {
        return 0;
    };
    let at = s.read.take().or_else(|| s.resumed.take());
    let read = messages::read(&path, at.as_ref(), s.last_ts, s.turn_start, to, files);
    s.read = Some(read.cursor);
    s.last_ts = read.last_ts;
    let mut last = 0;
    for c in read.calls {
        last = last.max(c.finished_ms);
        out.push(record(sid, Event::CallSent(c)));
    }
    last
}

#[cfg(test)]
mod tests;
