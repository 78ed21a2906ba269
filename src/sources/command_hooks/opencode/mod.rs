//! opencode's events to protocol records (what they carry: docs/agents/opencode.md).
//!
//! opencode has no command hooks. albedo-otel's plugin ([`PLUGIN`], which `install opencode`
//! writes) hands the events below to one `albedo-otel-hook --agent opencode` process, which
//! journals them like any agent's payloads. Every event carries its own times:
//! - `chat.message` (the plugin hook that carries the prompt) opens the turn, at the user
//!   message's creation; `session.idle` ends it;
//! - an assistant `message.updated` is a model call: it starts at the message's creation and
//!   ends once the message has `time.completed`, with its tokens and finish reason. Its
//!   `step-start` part is the first streamed chunk;
//! - a `tool` part is a call: it starts when it is `running` and ends `completed` or `error`,
//!   with the start and end opencode measured. A call opencode's permissions refused is an
//!   error that says so, and is marked refused;
//! - `session.created` with a `parentID` is a sub-agent's session (the `task` tool's): it is
//!   nested under the parent's `task` call that is running, and closed when its turn ends.
//!
//! The process exits once a `run` is over, and a later `run --session` goes on with the same
//! session id. The hook's input closes when opencode exits, however it exits, and the hook
//! then says [`EXITED`] for each session: the session closes (a turn still open goes out
//! unfinished), and the next process opens it again.
//!
//! Pure: no I/O. The records pass `protocol::validate` in the pipeline like every source's.

mod contract;
pub(crate) use contract::adapter;
pub use contract::{HISTORY, SPEC};
#[cfg(feature = "store")]
pub(crate) mod history;
mod models;
mod payload;
mod plugin;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod script;
mod subagents;
mod tools;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

pub use payload::Payload;
pub use plugin::{plugin, plugin_command, PLUGIN, PLUGIN_COMMAND_MARK};

use super::engine::AgentRules;
use crate::sources::command_hooks::engine::files::NoTranscripts;
use crate::sources::command_hooks::engine::records::record;
pub use super::hook::streaming::EXITED;
use crate::sources::command_hooks::engine::open_turn::{OpenTurn, Why};
use crate::protocol::{Event, Record};

/// The agent name on opencode's turns.
pub const AGENT: &str = "opencode";

/// The events the plugin hands on: those that make a trace.
pub const HOOK_EVENTS: &[&str] = &[
    "session.created",
    "chat.message",
    "message.updated",
    "message.part.updated",
    "session.idle",
];

/// opencode's names for the refusals of its permission rules and of the user
/// (`PermissionNext.DeniedError`, `RejectedError`, `CorrectedError`), as 1.18.33 words them.
const REFUSALS: &[&str] = &[
    "The user has specified a rule which prevents",
    "The user rejected permission",
    "The user dismissed",
];

/// What an opencode turn keeps beside what every agent's does.
#[derive(Debug, Default)]
struct Own {
    /// The user message that opened it (empty when a model call or a tool opened it).
    prompt: String,
    /// The turn's assistant messages, ended or not: a tool part names its message.
    messages: HashSet<String>,
    /// Model calls and tool calls already ended: opencode repeats its updates.
    ended: HashSet<String>,
}

/// An opencode turn: its model calls are its assistant messages, by id.
type Turn = OpenTurn<Own>;

#[derive(Debug, Default)]
pub struct Session {
    started: bool,
    turn: Option<Turn>,
    /// A sub-agent's session: it closes when its turn ends, or with the session that
    /// started it.
    parent: Option<String>,
    /// `task` calls that already have their sub-agent.
    spawned: HashSet<String>,
    /// A sub-agent's session not yet opened: waiting for the call that starts it.
    opening: Option<subagents::Opening>,
    /// A sub-agent's: when the call that started it started. Its turns begin no earlier:
    /// Kilo Code dates a `task` call's start some 20 ms after its sub-agent's prompt.
    floor_ms: u64,
}

/// Turns opencode's events into protocol records; see the module docs.
#[derive(Debug)]
pub struct Adapter {
    sessions: HashMap<String, Session>,
    /// The agent name on the sessions: opencode's, or a fork's that shares its plugin API.
    agent: &'static str,
}

impl Default for Adapter {
    fn default() -> Self {
        Adapter::named(AGENT)
    }
}

impl Adapter {
    pub fn new() -> Self {
        Adapter::default()
    }

    /// For a fork of opencode with its plugin API (Kilo Code), under its own name.
    pub fn named(agent: &'static str) -> Self {
        Adapter {
            sessions: HashMap::new(),
            agent,
        }
    }

    fn on_prompt(
        &mut self,
        sid: &str,
        at_ms: u64,
        id: String,
        text: String,
        out: &mut Vec<Record<'static>>,
    ) {
        self.open_session(sid, at_ms, None, None, out);
        let s = self.sessions.get_mut(sid).expect("opened above");
        if s.turn
            .as_ref()
            .is_some_and(|t| !id.is_empty() && t.own.prompt == id)
        {
            return;
        }
        // A turn that never went idle (opencode was stopped) ends where the next begins.
        self.end_turn(sid, at_ms, Why::Interrupted, out);
        self.begin(sid, at_ms, id, text, out);
    }

    fn begin(
        &mut self,
        sid: &str,
        at_ms: u64,
        id: String,
        text: String,
        out: &mut Vec<Record<'static>>,
    ) {
        let s = self.sessions.entry(sid.to_string()).or_default();
        let at_ms = at_ms.max(s.floor_ms);
        let mut turn = Turn::new(at_ms);
        // A call opencode refused ends as a tool part with an error: one still running when
        // its turn ends did not end as it should have.
        turn.reports_refusals = true;
        turn.own.prompt = id;
        s.turn = Some(turn);
        out.push(record(
            sid,
            Event::Prompted {
                at_ms,
                text: Cow::Owned(text),
            },
        ));
    }

    /// The open turn, opened at `at_ms` without a prompt if there is none: a call seen
    /// without its prompt (a sub-agent's, or a turn the plugin joined late) still has a turn.
    fn turn(&mut self, sid: &str, at_ms: u64, out: &mut Vec<Record<'static>>) -> &mut Turn {
        self.open_session(sid, at_ms, None, None, out);
        if self.at_rest(sid) {
            self.begin(sid, at_ms, String::new(), String::new(), out);
        }
        let s = self.sessions.get_mut(sid).expect("opened above");
        s.turn.as_mut().expect("begun above")
    }

    /// Ends session `sid`'s open turn (if any) at `at_ms`, the one way every turn ends
    /// (`OpenTurn::flush`).
    fn end_turn(&mut self, sid: &str, at_ms: u64, why: Why, out: &mut Vec<Record<'static>>) {
        // Its sub-agents still waiting for their call ran inside this turn.
        for child in self.holding(Some(sid), None) {
            self.release(&child, None, out);
        }
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let Some(turn) = s.turn.take() else {
            return;
        };
        let child = s.parent.is_some();
        turn.flush(sid, at_ms, why, out);
        // A sub-agent's session has done its one task.
        if child {
            self.abandon(sid, at_ms, &mut NoTranscripts, out);
        }
    }
}

#[cfg(test)]
mod tests;
