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
pub use contract::SPEC;
mod extension;
mod models;
mod payload;
#[cfg(test)]
pub(crate) mod script;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde_json::value::RawValue;

pub use extension::{extension, extension_command, EXTENSION, EXTENSION_COMMAND_MARK};
pub use payload::Payload;

use super::records::{raw, record, session_opened, Ended, Outcome};
pub use super::stream::EXITED;
use crate::protocol::{Call, Event, Json, Record};

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

/// A model call sent and not yet answered.
#[derive(Debug)]
struct ModelStart {
    at_ms: u64,
    model: String,
    provider: String,
    first_chunk_ms: Option<u64>,
}

/// A tool call that is running.
#[derive(Debug)]
struct Running {
    name: String,
    input: Option<Box<RawValue>>,
    at_ms: u64,
}

#[derive(Debug, Default)]
struct Turn {
    model: Option<ModelStart>,
    running: HashMap<String, Running>,
    /// Calls already ended.
    ended: HashSet<String>,
}

#[derive(Debug, Default)]
struct Session {
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

    /// Sessions with a turn open.
    pub fn open_turns(&self) -> usize {
        self.sessions.values().filter(|s| s.turn.is_some()).count()
    }

    /// Whether session `id` is between turns.
    pub fn at_rest(&self, id: &str) -> bool {
        self.sessions.get(id).is_none_or(|s| s.turn.is_none())
    }

    /// Takes one event that reached the journal at `received_ms`; appends records to `out`.
    pub fn push(&mut self, received_ms: u64, p: &Payload, out: &mut Vec<Record<'static>>) {
        let sid = p.session_id.as_str();
        if sid.is_empty() {
            return;
        }
        let at = p.at_ms.unwrap_or(received_ms);
        match p.hook_event_name.as_str() {
            "session_start" => self.open_session(sid, at, p.cwd.as_deref(), out),
            "before_agent_start" => {
                // A turn that never settled (Pi was stopped mid-run) ends where the next begins.
                self.end_turn(sid, at, "interrupted", out);
                self.begin(sid, at, p.prompt.clone().unwrap_or_default(), out);
            }
            "before_provider_request" => {
                let model = p.model.clone().unwrap_or_default();
                let provider = p.provider.clone().unwrap_or_default();
                self.on_request(sid, at, model, provider, out);
            }
            "message_start" => self.on_response(sid, at, p.message.as_ref(), out),
            "message_update" => self.on_first_chunk(sid, at, out),
            "message_end" => {
                if let Some(m) = &p.message {
                    self.on_message(sid, at, m, out);
                }
            }
            "tool_execution_start" => self.on_tool_start(sid, at, p, out),
            "tool_execution_end" => self.on_tool_end(sid, at, p, out),
            "agent_settled" => {
                let reason = if p.aborted { "interrupted" } else { "end_turn" };
                self.end_turn(sid, at, reason, out);
            }
            EXITED => self.abandon(sid, at, out),
            // `session_shutdown`: the hook's input closes right after, and it says EXITED.
            _ => {}
        }
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
        s.turn = Some(Turn::default());
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
        if turn.running.contains_key(&id) || turn.ended.contains(&id) {
            return;
        }
        turn.running.insert(
            id.clone(),
            Running {
                name: name.clone(),
                input: p.args.clone(),
                at_ms: at,
            },
        );
        out.push(record(
            sid,
            Event::Calling {
                at_ms: at,
                call: Call {
                    id: Cow::Owned(id),
                    name: Cow::Owned(name),
                    arguments: raw(&p.args),
                    within: p.parent_tool_call_id.clone().map(Cow::Owned),
                },
            },
        ));
    }

    fn on_tool_end(&mut self, sid: &str, at: u64, p: &Payload, out: &mut Vec<Record<'static>>) {
        let Some(id) = p.tool_call_id.clone() else {
            return;
        };
        let turn = self.turn(sid, at, out);
        if !turn.ended.insert(id.clone()) {
            return;
        }
        let pre = turn.running.remove(&id);
        // A call whose start the extension never saw ran for the time Pi measured.
        let started = pre
            .as_ref()
            .map_or(at.saturating_sub(p.duration_ms.unwrap_or(0)), |r| r.at_ms);
        let text = p.text();
        let never_ran = p.is_error && p.duration_ms.is_none();
        let refused = never_ran
            && !text
                .as_deref()
                .is_some_and(|t| PI_OWN.iter().any(|own| t.starts_with(own)));
        let (name, input) = match pre {
            Some(r) => (r.name, r.input),
            None => (p.tool_name.clone().unwrap_or_default(), p.args.clone()),
        };
        out.push(
            Ended {
                session: sid,
                id,
                name,
                arguments: raw(&input),
                output: text.and_then(|t| Json::of(&t).ok()),
                started_ms: started,
            }
            .record(at, Outcome::of(refused, p.is_error && !refused)),
        );
    }

    fn end_turn(
        &mut self,
        sid: &str,
        at_ms: u64,
        reason: &'static str,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(mut turn) = self.sessions.get_mut(sid).and_then(|s| s.turn.take()) else {
            return;
        };
        models::unanswered(
            sid,
            &mut turn,
            at_ms,
            "the turn ended before the model call did",
            out,
        );
        let mut running: Vec<_> = turn.running.into_iter().collect();
        running.sort_by_key(|(_, r)| r.at_ms);
        for (id, r) in running {
            out.push(
                Ended {
                    session: sid,
                    id,
                    name: r.name,
                    arguments: raw(&r.input),
                    output: Json::of("the turn ended before the call did").ok(),
                    started_ms: r.at_ms,
                }
                .record(at_ms, Outcome::Failed),
            );
        }
        out.push(record(
            sid,
            Event::TurnEnded {
                at_ms,
                reason: Some(Cow::Borrowed(reason)),
            },
        ));
    }

    /// Gives up on a session that will send nothing more (Pi is gone, or on to another
    /// session): its open turn is exported, marked unfinished, and the session is forgotten.
    /// A later `pi --session` opens it again.
    pub fn abandon(&mut self, id: &str, at_ms: u64, out: &mut Vec<Record<'static>>) {
        let Some(mut s) = self.sessions.remove(id) else {
            return;
        };
        if !s.started {
            return;
        }
        if let Some(turn) = s.turn.as_mut() {
            models::unanswered(id, turn, at_ms, "Pi ended before the model call did", out);
        }
        out.push(record(id, Event::Closed { at_ms }));
    }
}

#[cfg(test)]
mod tests;
