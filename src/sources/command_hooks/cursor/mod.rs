//! Cursor's command-hook payloads to protocol records (what they carry: docs/agents/cursor.md,
//! written from Cursor's hooks documentation: its CLI needs a login, so none of this has run
//! against Cursor itself).
//!
//! - Every payload names its conversation (`conversation_id`), which is the session; a
//!   `session_id` comes only with `sessionStart` and `sessionEnd`. No payload has a time, so
//!   spans take the hook's arrival; a tool's end that comes alone starts `duration` before it.
//! - `beforeSubmitPrompt` opens a turn and `stop` ends it, held for a grace: a stop hook may
//!   answer with a follow-up, and what the agent does then is the same turn. A turn with no
//!   prompt hook (`cursor-agent -p` fires none) opens at its first tool, and a turn with no
//!   `stop` ends at the next prompt (interrupted) or at `sessionEnd`.
//! - `preToolUse` starts a call (every tool: `Shell`, `Read`, `Write`, `MCP:…`, `Task`) and
//!   `postToolUse` ends it, paired by `tool_use_id`; `postToolUseFailure` ends it failed, or
//!   refused when permission was denied. A call still pending when its turn ends never ran: a
//!   hook denied it. The older shell, MCP and file-edit events make calls only in a
//!   conversation that sends no `preToolUse` ([`tools`]), so no call is counted twice.
//! - `subagentStart` opens a session under the `Task` call that started it, `subagentStop`
//!   closes it ([`subagents`]).
//! - Cursor's hooks give no model call and no token count: there are no chat spans.
//!
//! Pure: no I/O. The records pass `protocol::validate` in the pipeline like every source's.

mod contract;
pub(crate) use contract::adapter;
pub use contract::{HISTORY, SPEC};
mod own_hook;
pub use own_hook::runs_ours_too;
mod payload;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod script;
mod subagents;
mod tools;

use std::borrow::Cow;
use std::collections::HashMap;

pub use payload::{conversation, journaled, Payload};

use super::engine::AgentRules;
use crate::sources::command_hooks::engine::files::NoTranscripts;
use crate::sources::command_hooks::engine::records::record;
use crate::sources::command_hooks::engine::open_turn::{OpenTurn, Why};
use crate::protocol::{Event, Record};

/// The agent name on Cursor's turns.
pub const AGENT: &str = "cursor";

/// The events `install` puts the hook in for: those that make a trace. Each is one Cursor
/// documents ([`KNOWN_EVENTS`]): it discards a whole hooks file that names one it does not.
pub const HOOK_EVENTS: &[&str] = &[
    "sessionStart",
    "beforeSubmitPrompt",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "subagentStart",
    "subagentStop",
    "afterAgentResponse",
    "stop",
    "sessionEnd",
];

/// Every event Cursor's hooks documentation names (agent and Tab).
pub const KNOWN_EVENTS: &[&str] = &[
    "sessionStart",
    "sessionEnd",
    "beforeSubmitPrompt",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "subagentStart",
    "subagentStop",
    "beforeShellExecution",
    "afterShellExecution",
    "beforeMCPExecution",
    "afterMCPExecution",
    "beforeReadFile",
    "afterFileEdit",
    "afterAgentResponse",
    "afterAgentThought",
    "preCompact",
    "stop",
    "beforeTabFileRead",
    "afterTabFileEdit",
];

#[derive(Debug, Default)]
pub struct Session {
    turn: Option<OpenTurn>,
    /// Whether the conversation sends `preToolUse`: then its older shell, MCP and edit events
    /// repeat calls already made.
    generic: bool,
    /// The agent's last answer (`afterAgentResponse`), for the turn's end.
    reply: Option<String>,
    /// On a top session: its sub-agents running now.
    agents: Vec<subagents::Running>,
}

/// Turns Cursor's hook payloads into protocol records; see the module docs.
#[derive(Debug)]
pub struct Adapter {
    sessions: HashMap<String, Session>,
    /// A running sub-agent's own conversation id, to the session made for it.
    aliases: HashMap<String, String>,
    /// How long a `stop` waits for a follow-up's continuation.
    grace_ms: u64,
}

impl Default for Adapter {
    fn default() -> Self {
        Adapter::with_grace(15_000)
    }
}

impl Adapter {
    pub fn with_grace(grace_ms: u64) -> Self {
        Adapter {
            sessions: HashMap::new(),
            aliases: HashMap::new(),
            grace_ms,
        }
    }

    fn on_prompt(
        &mut self,
        sid: &str,
        at_ms: u64,
        text: Option<&str>,
        out: &mut Vec<Record<'static>>,
    ) {
        // A turn whose `stop` never came (the user cut it short) ends where the next begins.
        if !self.end_held(sid, out) {
            self.end_turn(sid, at_ms, Why::Interrupted, out);
        }
        self.open_turn(sid, at_ms, Some(text.unwrap_or_default()), out);
    }

    /// Opens a turn at `at_ms`, prompted with `text` if a prompt began it.
    fn open_turn(
        &mut self,
        sid: &str,
        at_ms: u64,
        text: Option<&str>,
        out: &mut Vec<Record<'static>>,
    ) {
        let s = self.sessions.entry(sid.to_string()).or_default();
        s.turn = Some(OpenTurn::new(at_ms));
        s.reply = None;
        if let Some(text) = text {
            out.push(record(
                sid,
                Event::Prompted {
                    at_ms,
                    text: Cow::Owned(text.to_string()),
                },
            ));
        }
    }

    /// A tool hook with no turn open: `cursor-agent -p` sends no `beforeSubmitPrompt`, and the
    /// turn begins with its first call, its prompt unknown; or a `stop` hook answered with a
    /// follow-up once its turn went out, and the agent goes on. No `prompted` record: the
    /// assembly puts what comes with no prompt after an ended turn in that turn's trace.
    fn ensure_turn(&mut self, sid: &str, at_ms: u64, out: &mut Vec<Record<'static>>) {
        if self.end_held(sid, out) || self.at_rest(sid) {
            self.open_turn(sid, at_ms, None, out);
        }
    }

    /// Session `sid`'s open turn, opened as [`Adapter::ensure_turn`] does if there is none.
    fn turn(&mut self, sid: &str, at_ms: u64, out: &mut Vec<Record<'static>>) -> &mut OpenTurn {
        self.ensure_turn(sid, at_ms, out);
        let s = self.sessions.entry(sid.to_string()).or_default();
        s.turn.get_or_insert_with(|| OpenTurn::new(at_ms))
    }

    fn on_stop(&mut self, sid: &str, at_ms: u64, p: &Payload, out: &mut Vec<Record<'static>>) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let Some(turn) = s.turn.as_mut() else {
            return;
        };
        out.push(record(
            sid,
            Event::Stopping {
                at_ms,
                reply: Cow::Owned(s.reply.take().unwrap_or_default()),
                held: turn.stops,
            },
        ));
        turn.stops = turn.stops.saturating_add(1);
        match p.status.as_deref() {
            // The user stopped it: no follow-up comes.
            Some("aborted") => self.end_turn(sid, at_ms, Why::Interrupted, out),
            Some("error") => self.end_turn(sid, at_ms, Why::Stopped("error"), out),
            _ => turn.hold(at_ms, "end_turn"),
        }
    }

    /// `sessionEnd`: a turn still open ends here (`-p` runs send no `stop`), and the session
    /// is over; a resumed conversation opens again with its id.
    fn on_session_end(
        &mut self,
        sid: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) {
        if !self.end_held(sid, out) {
            let why = match p.reason.as_deref() {
                Some("completed") | None => Why::Stopped("end_turn"),
                Some("error") => Why::Stopped("error"),
                Some(_) => Why::Interrupted,
            };
            self.end_turn(sid, at_ms, why, out);
        }
        self.abandon(sid, at_ms, &mut NoTranscripts, out);
    }

    /// A tool or sub-agent hook after `stop`: that stop was answered with a follow-up, and
    /// the turn goes on.
    fn went_on(&mut self, sid: &str) {
        if let Some(turn) = self.sessions.get_mut(sid).and_then(|s| s.turn.as_mut()) {
            turn.went_on();
        }
    }
}

#[cfg(test)]
mod tests;
