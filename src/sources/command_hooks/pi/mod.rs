//! Pi's events to protocol records (what they carry: docs/agents/pi.md).
//!
//! Pi has no command hooks. albedo-otel's extension ([`EXTENSION`], which `install pi` writes)
//! hands the events below to one `albedo-otel-hook --agent pi` process, which journals them
//! like any agent's payloads. A turn is what the user asked, from `before_agent_start` to
//! `agent_settled` (Pi's own `turn_start`/`turn_end` are one model call each, and `agent_end`
//! comes again when Pi retries or goes on):
//! - `before_provider_request` starts a model call, the assistant message's first
//!   `message_update` is its first streamed chunk (`message_start` is the response's headers),
//!   and `message_end` ends it with the message's own times (`timestamp`, `durationMs`), its
//!   tokens and its stop reason;
//! - `tool_execution_start` and `_end` are a tool call. A call that ended in an error without
//!   running (`durationMs` absent) was refused by an extension's `tool_call` gate, unless its
//!   error is Pi's own (aborted, unknown tool, invalid arguments);
//! - `agent_settled` ends the turn (interrupted when the run was aborted); a prompt while a
//!   turn is open ends that one, interrupted.
//!
//! The extension's hook process ends with Pi's session (`session_shutdown`, or Pi gone
//! however it went): the hook then says [`EXITED`] for the session, which closes it (a turn
//! still open goes out unfinished), and the next `pi --session` opens it again. Pi has no
//! sub-agents.
//!
//! Pure: no I/O. The records pass `protocol::validate` in the pipeline like every source's.

mod contract;
pub(crate) use contract::adapter;
pub use contract::{HISTORY, SPEC};
mod extension;
pub mod history;
mod models;
mod payload;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod script;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

pub use extension::{extension, extension_command, EXTENSION, EXTENSION_COMMAND_MARK};
pub use payload::Payload;

use super::engine::AgentRules;
use crate::sources::command_hooks::engine::records::{raw, record, session_opened, Ended, Outcome};
pub use super::hook::streaming::EXITED;
use crate::sources::command_hooks::engine::open_turn::{OpenTurn, Why};
use crate::protocol::{Event, Json, Record};

/// The agent name on Pi's turns.
pub const AGENT: &str = "pi";

/// The events the extension hands on: those that make a trace.
pub const HOOK_EVENTS: &[&str] = &[
    "session_start",
    "before_agent_start",
    "before_provider_request",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_end",
    "agent_settled",
    "session_shutdown",
];

/// The errors Pi gives a call that never ran for reasons of its own (pi-agent-core 1.6.0's
/// words): any other error of a call that never ran is an extension's refusal.
const PI_OWN: &[&str] = &[
    "Operation aborted",
    "Tool \"",
    "Invalid arguments for tool ",
    "Validation failed for tool ",
];

/// What Pi alone keeps of an open turn: the calls already ended, so that an event seen twice
/// (an extension reloaded mid-run hands on what it sees again) makes no second span.
#[derive(Debug, Default)]
struct Own {
    calls: HashSet<String>,
}

type Turn = OpenTurn<Own>;

#[derive(Debug, Default)]
pub struct Session {
    started: bool,
    turn: Option<Turn>,
}

/// Turns Pi's events into protocol records; see the module docs.
#[derive(Debug, Default)]
pub struct Adapter {
    sessions: HashMap<String, Session>,
}

impl Adapter {
    pub fn new() -> Self {
        Adapter::default()
    }

    fn open_session(
        &mut self,
        sid: &str,
        at_ms: u64,
        cwd: Option<&str>,
        out: &mut Vec<Record<'static>>,
    ) {
        let s = self.sessions.entry(sid.to_string()).or_default();
        if !s.started {
            s.started = true;
            out.push(session_opened(sid, at_ms, AGENT, cwd));
        }
    }

    fn begin(&mut self, sid: &str, at_ms: u64, text: String, out: &mut Vec<Record<'static>>) {
        self.open_session(sid, at_ms, None, out);
        let s = self.sessions.entry(sid.to_string()).or_default();
        let mut turn = Turn::new(at_ms);
        // Pi reports every call it ends, a refused one too (`tool_execution_end` with the
        // gate's error): a call still running when the turn ends failed.
        turn.reports_refusals = true;
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
    /// without its prompt (the extension loaded mid-run) still has a turn.
    fn turn(&mut self, sid: &str, at_ms: u64, out: &mut Vec<Record<'static>>) -> &mut Turn {
        if self.at_rest(sid) {
            self.begin(sid, at_ms, String::new(), out);
        }
        let s = self.sessions.get_mut(sid).expect("begun above");
        s.turn.as_mut().expect("begun above")
    }

    fn on_tool_start(&mut self, sid: &str, at: u64, p: &Payload, out: &mut Vec<Record<'static>>) {
        let Some(id) = p.tool_call_id.clone() else {
            return;
        };
        let name = p.tool_name.clone().unwrap_or_default();
        let turn = self.turn(sid, at, out);
        if turn.pending.iter().any(|c| c.id == id) || turn.own.calls.contains(&id) {
            return;
        }
        turn.start_call(sid, Some(id), name, p.args.clone(), None, at, out);
        // A tool called by a tool (Pi's `parentToolCallId`) nests under its caller.
        if let (Some(parent), Some(Event::Calling { call, .. })) = (
            p.parent_tool_call_id.clone(),
            out.last_mut().map(|r| &mut r.event),
        ) {
            call.within = Some(Cow::Owned(parent));
        }
    }

    fn on_tool_end(&mut self, sid: &str, at: u64, p: &Payload, out: &mut Vec<Record<'static>>) {
        let Some(id) = p.tool_call_id.clone() else {
            return;
        };
        let turn = self.turn(sid, at, out);
        if !turn.own.calls.insert(id.clone()) {
            return;
        }
        let text = p.text();
        let never_ran = p.is_error && p.duration_ms.is_none();
        let refused = never_ran
            && !text
                .as_deref()
                .is_some_and(|t| PI_OWN.iter().any(|own| t.starts_with(own)));
        let outcome = Outcome::of(refused, p.is_error && !refused);
        let output = text
            .and_then(|t| Json::of(&t).ok())
            .map(|j| j.0.into_owned());
        if let Some(i) = turn.pending.iter().position(|c| c.id == id) {
            turn.end_call(sid, i, output, outcome, at, out);
            return;
        }
        // A call whose start the extension never saw ran for the time Pi measured.
        out.push(
            Ended {
                session: sid,
                id,
                name: p.tool_name.clone().unwrap_or_default(),
                arguments: raw(&p.args),
                output: raw(&output),
                started_ms: at.saturating_sub(p.duration_ms.unwrap_or(0)),
            }
            .record(at, outcome),
        );
    }

    fn end_turn(&mut self, sid: &str, at_ms: u64, why: Why, out: &mut Vec<Record<'static>>) {
        if let Some(turn) = self.sessions.get_mut(sid).and_then(|s| s.turn.take()) {
            turn.flush(sid, at_ms, why, out);
        }
    }
}

#[cfg(test)]
mod tests;
