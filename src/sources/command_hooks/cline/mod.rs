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
//! - the model calls are in the session's messages file ([`models`]), read once the turn
//!   ends (Cline writes it just behind its hooks) or when the next begins.
//!
//! A sub-agent (`spawn_agent`) sends the same payloads with its own `agent_id` and its
//! parent's as `parent_agent_id`: it is a session of its own under the call that started it
//! ([`subagents`]), with its own messages file. Reading the messages files is the caller's
//! I/O, behind [`Transcripts`]; the rest is pure.

mod contract;
pub(crate) use contract::adapter;
pub use contract::{HISTORY, SPEC};
mod history;
mod models;
mod payload;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod script;
pub mod scripts;
mod subagents;

use std::borrow::Cow;
use std::collections::HashMap;

pub use payload::{journaled, root_session, Payload};

use crate::sources::command_hooks::engine::files::{FileCursor, Transcripts};
use crate::sources::command_hooks::engine::records::{record, rfc3339_ms, session_opened, Outcome};
use crate::sources::command_hooks::engine::session_key;
use crate::sources::command_hooks::engine::open_turn::{OpenTurn, Why};
use crate::protocol::{Event, Record};

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

/// What Cline alone keeps of an open turn: how its held end ends it, and the sub-agents it
/// started.
#[derive(Debug, Default)]
struct Held {
    /// The session ended with the turn (`session_shutdown`, or a sub-agent's end), at the
    /// held stop's time.
    closes: bool,
    /// Each `spawn_agent` call that has its sub-agent, and when that sub-agent began.
    spawned: Vec<(String, u64)>,
}

#[derive(Debug, Default)]
pub struct Session {
    started: bool,
    turn: Option<OpenTurn<Held>>,
    /// The session's messages file, as the hook named it.
    messages: Option<String>,
    /// How far the turns read so far reach into it, and the last message's time there.
    read: Option<FileCursor>,
    last_ts: Option<u64>,
    /// Where an earlier daemon had read it to.
    resumed: Option<FileCursor>,
    /// A sub-agent's session: its one turn's end closes it.
    sub: bool,
    /// A sub-agent's task, its turn's prompt.
    task: Option<String>,
    /// A top session's sub-agents still open (their sessions' ids).
    children: Vec<String>,
    /// A sub-agent waiting for the call that started it (its hooks came first).
    waiting: Option<subagents::Waiting>,
}

impl Session {
    /// The open turn, opened without a prompt if there is none (a call whose `TaskStart` an
    /// earlier daemon read).
    fn turn(
        &mut self,
        sid: &str,
        at_ms: u64,
        out: &mut Vec<Record<'static>>,
    ) -> &mut OpenTurn<Held> {
        if self.turn.is_none() {
            out.push(prompted(sid, at_ms, self.task.take()));
        }
        self.turn.get_or_insert_with(|| OpenTurn::new(at_ms))
    }
}

/// A turn's prompt: no hook carries the user's; a sub-agent's is its task.
fn prompted(sid: &str, at_ms: u64, text: Option<String>) -> Record<'static> {
    record(
        sid,
        Event::Prompted {
            at_ms,
            text: text.map_or(Cow::Borrowed(""), Cow::Owned),
        },
    )
}

#[derive(Debug, Default)]
pub struct Adapter {
    sessions: HashMap<String, Session>,
}

impl Adapter {
    pub fn new() -> Self {
        Adapter::default()
    }

    /// Takes payload `p` (of `at_ms`) of session `sid`.
    fn take(
        &mut self,
        sid: &str,
        p: &Payload,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let s = self.sessions.entry(sid.to_string()).or_default();
        if !s.started {
            s.started = true;
            let cwd = p.workspace_roots.first().map(String::as_str);
            out.push(session_opened(sid, at_ms, AGENT, cwd));
        }
        if let Some(path) = p.messages_path.as_deref().filter(|p| !p.is_empty()) {
            s.messages = Some(path.to_string());
        }
        let sub = s.sub;
        match p.hook_name.as_str() {
            "agent_start" | "agent_resume" => {
                finish(sid, s, at_ms, files, out);
                s.turn = Some(OpenTurn::new(at_ms));
                out.push(prompted(sid, at_ms, s.task.take()));
            }
            "tool_call" => {
                let Some(c) = &p.tool_call else { return };
                let turn = s.turn(sid, at_ms, out);
                // A turn whose end was held went on (nothing blocks Cline's, but a late end
                // must not cut the turn).
                turn.went_on();
                let (id, name) = (Some(c.id.clone()), c.name.clone());
                turn.start_call(sid, id, name, c.input.clone(), None, at_ms, out);
            }
            "tool_result" => {
                let Some(r) = &p.tool_result else { return };
                let Some(turn) = s.turn.as_mut() else { return };
                let Some(i) = turn.pending.iter().position(|c| c.id == r.id) else {
                    return;
                };
                // The times the tool itself ran, within the turn's view of it, and no later
                // than a sub-agent it started.
                let child = turn
                    .own
                    .spawned
                    .iter()
                    .find(|(c, _)| *c == r.id)
                    .map(|c| c.1);
                let pre = &mut turn.pending[i];
                if let Some(started) = r.started_at.as_deref().and_then(rfc3339_ms) {
                    pre.at_ms = started.max(pre.at_ms).min(child.unwrap_or(u64::MAX));
                }
                if pre.input.is_none() {
                    pre.input = r.input.clone();
                }
                let ended = r.ended_at.as_deref().and_then(rfc3339_ms);
                let failed = r.error.as_ref().is_some_and(|e| e.get() != "null");
                let output = r.output.clone().or_else(|| r.error.clone());
                let outcome = Outcome::of(false, failed);
                turn.end_call(sid, i, output, outcome, ended.unwrap_or(at_ms), out);
            }
            // A sub-agent runs one turn: its end closes its session.
            "agent_end" => hold(s, at_ms, "end_turn", false, sub),
            // A call still pending when the task failed or was cancelled was cut short.
            "agent_error" => hold(s, at_ms, "error", true, sub),
            "agent_abort" => hold(s, at_ms, "interrupted", true, sub),
            // A hook that cancelled a call ends the session: that call was refused.
            "session_shutdown" => hold(s, at_ms, "cancelled", false, true),
            _ => {}
        }
    }

    /// Drops session `sid`, and its place among its top session's open sub-agents.
    fn forget(&mut self, sid: &str) -> Option<Session> {
        let top = session_key::top(sid);
        if top != sid {
            if let Some(t) = self.sessions.get_mut(top) {
                t.children.retain(|c| c != sid);
            }
        }
        self.sessions.remove(sid)
    }

    /// Gives up on sub-agent `child`, and closes it.
    fn close_child(
        &mut self,
        child: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        if let Some(at_ms) = self.give_up_one(child, at_ms, files, out) {
            out.push(record(child, Event::Closed { at_ms }));
        }
    }

    /// Gives up on session `id` alone; when it closes, if it was one.
    fn give_up_one(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> Option<u64> {
        self.place(id, true, files, out);
        let mut s = self.forget(id)?;
        let held = s
            .turn
            .as_ref()
            .and_then(|t| t.stop.map(|(at, _)| (at, t.own.closes)));
        let closed_at = match held {
            Some((stop_at, closes)) => {
                finish(id, &mut s, at_ms, files, out);
                if closes {
                    stop_at
                } else {
                    at_ms
                }
            }
            None => match s.turn.take() {
                Some(turn) => {
                    // Cline was alive when it wrote its last message.
                    let last = read_calls(id, &mut s, turn.at_ms, u64::MAX, files, out);
                    let at = at_ms.max(last);
                    turn.flush(id, at, Why::Unseen, out);
                    at
                }
                None => at_ms,
            },
        };
        Some(closed_at)
    }
}

/// Holds the open turn's end at `at_ms`: `cut` when the calls still pending were cut short
/// rather than refused, `closes` when the session ends with it.
fn hold(s: &mut Session, at_ms: u64, reason: &'static str, cut: bool, closes: bool) {
    if let Some(turn) = s.turn.as_mut() {
        turn.hold(at_ms, reason);
        // A pending call fails rather than being refused, as where an agent reports refusals.
        turn.reports_refusals = cut;
        turn.own.closes = closes;
    }
}

/// Ends session `sid`'s turn, at its held end, or (with none) at `at_ms` as interrupted: its
/// model calls from the messages file up to `at_ms`, then the one flush.
fn finish(
    sid: &str,
    s: &mut Session,
    at_ms: u64,
    files: &mut dyn Transcripts,
    out: &mut Vec<Record<'static>>,
) {
    let Some(turn) = s.turn.take() else {
        return;
    };
    read_calls(sid, s, turn.at_ms, at_ms, files, out);
    match turn.stop {
        Some((stop_at, reason)) => turn.flush(sid, stop_at, Why::Stopped(reason), out),
        None => turn.flush(sid, at_ms, Why::Interrupted, out),
    }
}

/// The model calls of a turn begun at `from`, up to `to`; returns when the last ended (0:
/// none).
fn read_calls(
    sid: &str,
    s: &mut Session,
    from: u64,
    to: u64,
    files: &mut dyn Transcripts,
    out: &mut Vec<Record<'static>>,
) -> u64 {
    let Some(path) = s.messages.clone() else {
        return 0;
    };
    let at = s.read.take().or_else(|| s.resumed.take());
    let read = models::read(&path, at.as_ref(), s.last_ts, from, to, files);
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
