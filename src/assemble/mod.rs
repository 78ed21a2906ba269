//! Assemble: protocol records in, finished spans out. Pure: no I/O, no clock, no threads.
//!
//! One trace per turn. A turn's root opens at `prompted` (or at the first event of a turn that
//! was never prompted) and is emitted at `turn_ended`, `closed`, a new `prompted`, or the end of
//! input. Tool and model-call spans are emitted the moment they are complete, children before
//! their parents, and every span that is ever named as a parent is guaranteed to be emitted
//! later in the same trace: calls still open when their turn ends are closed there, marked
//! unfinished, and a `within` that names a call never seen gets a synthesized span. That is the
//! invariant the tests hold the assembly to: **no exported parent id dangles**.
//!
//! Bad ordering is repaired, never fatal: each repair is reported as a [`Note`] so the caller
//! can log it with the line that caused it.
//!
//! - `sessions`: the session table (bounded; the least recently active goes first) and the
//!   link from a child session to the call that spawned it;
//! - `turn`: one open turn, its root and its model calls; `calls`: its tool calls' graph;
//! - `spans`: what each kind of span says (names in [`semconv`]);
//! - [`policy`] and [`redact`]: what text may leave the machine; [`ids`]: ids derived from
//!   what happened, so a replay gives the same ones; `pricing`: what each model call cost,
//!   from a price table compiled in; [`SessionSeed`]: what one assembler hands the next
//!   about a session between turns.

mod attribution;
mod calls;
pub mod defaults;
pub mod ids;
mod messages;
mod node;
mod notes;
pub mod policy;
pub(crate) mod pricing;
pub mod redact;
mod seed;
pub mod semconv;
mod sessions;
pub mod span;
mod spans;
mod turn;

pub use attribution::Attribution;
pub use notes::Note;
pub use policy::ContentPolicy;
use pricing::Pricer;
pub use seed::SessionSeed;
pub use span::{Span, SpanId, TraceId};

use std::sync::Arc;

use sessions::SessionTable;

use crate::protocol::{Event, Record};

/// The agent name used when a session does not give one.
pub const DEFAULT_AGENT: &str = "albedo";

#[derive(Debug, Clone)]
pub struct AssembleConfig {
    /// `gen_ai.agent.name` for sessions that do not name their agent.
    pub default_agent: String,
    pub policy: ContentPolicy,
    /// Memory bound: past this many open sessions, the least recently active one is ended.
    pub max_sessions: usize,
    /// Memory bound: past this many calls in one turn, the oldest finished ones are forgotten
    /// (then the oldest running ones are exported as unfinished).
    pub max_calls_per_turn: usize,
}

impl Default for AssembleConfig {
    fn default() -> Self {
        AssembleConfig {
            default_agent: DEFAULT_AGENT.to_string(),
            policy: ContentPolicy::default(),
            max_sessions: defaults::MAX_SESSIONS,
            max_calls_per_turn: defaults::MAX_CALLS_PER_TURN,
        }
    }
}

/// What one step of assembly produced.
#[derive(Debug, Default)]
pub struct Output {
    pub spans: Vec<Span>,
    pub notes: Vec<Note>,
}

/// Events in, spans out. See the module docs for the rules.
#[derive(Debug)]
pub struct Assembler {
    config: AssembleConfig,
    sessions: SessionTable,
    pricer: Pricer,
}

impl Assembler {
    pub fn new(config: AssembleConfig) -> Self {
        Assembler {
            config,
            sessions: SessionTable::default(),
            pricer: Pricer::default(),
        }
    }

    /// The folder session `sid` works in, or the one its parent session works in: where
    /// the caller looks for the checkout its turns are attributed to.
    pub fn workspace(&self, sid: &str) -> Option<&str> {
        self.sessions.workspace(sid)
    }

    /// What a later assembler needs to go on with session `sid` (see [`SessionSeed`]), if
    /// it is open here between two turns.
    pub fn seed(&self, sid: &str) -> Option<SessionSeed> {
        self.sessions.seed_of(sid)
    }

    /// Goes on with session `sid` from where an earlier assembler left it (its
    /// [`seed`](Self::seed)): unless this one knows more of it already, its next turn gets the
    /// next number and links to the last, and what comes before a prompt continues the turn
    /// that went out last, in its trace.
    pub fn resume(&mut self, sid: &str, seed: &SessionSeed, out: &mut Output) {
        self.sessions.resume(sid, seed, &self.config, out)
    }

    /// How many sessions are open.
    pub fn open_sessions(&self) -> usize {
        self.sessions.len()
    }

    /// Takes one record; appends finished spans and repair notes to `out`.
    pub fn push(&mut self, record: &Record<'_>, out: &mut Output) {
        self.push_attributed(record, None, out)
    }

    /// As [`push`](Self::push), with who and where (looked up by the caller) for the
    /// session's turns from this record on: a `prompted` record's turn starts with them.
    pub fn push_attributed(
        &mut self,
        record: &Record<'_>,
        attribution: Option<Arc<Attribution>>,
        out: &mut Output,
    ) {
        let sid = record.session.as_ref();
        let Assembler {
            config,
            sessions,
            pricer,
        } = self;
        if let Some(a) = attribution {
            sessions.attribute(sid, a, config, out);
        }
        let policy = &config.policy;
        match &record.event {
            Event::Session(info) => sessions.describe(sid, info, config, out),
            Event::Closed { at_ms } => sessions.close(sid, *at_ms, config, out),
            Event::Prompted { at_ms, text } => {
                sessions
                    .prompted(sid, *at_ms, config, out)
                    .prompt(text, policy);
            }
            Event::Calling { at_ms, call } => {
                let mut turn = sessions.turn(sid, *at_ms, config, out);
                turn.calling(*at_ms, call, policy, out);
                turn.cap_calls(config.max_calls_per_turn, policy, out);
            }
            Event::Called(called) => {
                let mut turn = sessions.turn(sid, called.started_ms, config, out);
                turn.called(called, policy, out);
                turn.cap_calls(config.max_calls_per_turn, policy, out);
            }
            Event::CallSent(sent) => {
                sessions
                    .turn(sid, sent.started_ms, config, out)
                    .call_sent(sent, policy, pricer, out);
            }
            Event::Stopping { at_ms, reply, held } => {
                sessions
                    .turn(sid, *at_ms, config, out)
                    .stopping(*at_ms, reply, *held, policy);
            }
            Event::TurnEnded { at_ms, reason } => {
                sessions.turn_ended(sid, *at_ms, reason.as_deref(), config, out)
            }
        }
    }

    /// End of input: every open turn is exported, marked unfinished.
    pub fn finish(&mut self, out: &mut Output) {
        while self.finish_some(out, usize::MAX) {}
    }

    /// End of input, a few sessions at a time: ends up to `max` open sessions and says
    /// whether any are left. Ten thousand open turns ended at once would be tens of
    /// megabytes of spans; taken `max` at a time, a caller can send them on as they come.
    pub fn finish_some(&mut self, out: &mut Output, max: usize) -> bool {
        self.sessions.finish_some(&self.config, out, max)
    }
}

#[cfg(test)]
mod tests;
