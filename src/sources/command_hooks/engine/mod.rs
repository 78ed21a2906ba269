//! The session engine: what every agent's adapter does alike, written once. An agent says in
//! its own vocabulary what its payloads are, whose session each is, what each does and what a
//! session given up on leaves ([`AgentRules`]); the engine keeps the contract the daemon and
//! the conformance suite drive ([`Dispatch`]) for every agent alike:
//! - a session is busy while anything of it is in flight (a turn open, a stop held, a prompt
//!   not yet placed, a sub-agent still running): the daemon neither exits nor saves a resume
//!   point past it, one rule for both, from the agent's one answer ([`AgentRules::busy`]);
//! - a session given up on is closed here, once, at the time its agent gives
//!   ([`AgentRules::give_up`]);
//! - a stop another hook may block is held, and its turn ends at it, for the reason the stop
//!   gave, once its grace has passed with nothing of the turn after it, or when the session
//!   goes ([`AgentRules::held_stop`], [`AgentRules::end_held`]; the agent says what ends with
//!   its turn, [`AgentRules::end_turn`]);
//! - a payload that names no session is no session's: it is left out;
//! - what the agent keeps is its sessions, and what it says it keeps besides.

pub mod adapter;
pub(super) mod content;
pub mod files;
pub(super) mod held;
pub(crate) mod model_call;
pub(super) mod open_turn;
pub(super) mod records;
pub mod session_key;
pub(crate) mod tail;

use std::collections::HashMap;
use std::fmt;

use serde::de::DeserializeOwned;

use crate::protocol::{Event, Record};
use adapter::{Dispatch, Parsed};
use files::{FileCursor, Transcripts};
use open_turn::Why;
use records::record;

/// An agent's sessions, by the id its payloads name.
pub type Sessions<S> = HashMap<String, S>;

/// One agent, in its own vocabulary: implemented by each agent's `Adapter`, in its folder's
/// `contract.rs`. Everything but the transcripts and logs it is handed (`files`) is pure: the
/// same payloads in the same order give the same records.
pub trait AgentRules: fmt::Debug + Send + 'static {
    /// The agent's payload, as its types read it.
    type Payload: DeserializeOwned + Send + 'static;
    /// What the agent keeps of one session.
    type Session: fmt::Debug + Send;

    /// Reads one payload; an error says why it is not one of this agent's.
    fn parse(json: &str) -> Result<Self::Payload, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    /// The session the payload names (for a sub-agent, whatever its agent sends there).
    fn session_of(payload: &Self::Payload) -> &str;

    /// The sessions the agent keeps.
    fn sessions(&self) -> &Sessions<Self::Session>;

    /// Whether anything of the session is in flight: a turn open, a stop held, a prompt not
    /// yet placed, a sub-agent still running.
    fn busy(session: &Self::Session) -> bool;

    /// Takes one payload received at `at_ms` (one that names a session: the engine leaves
    /// out those that name none); appends records to `out`.
    fn take(
        &mut self,
        payload: Self::Payload,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    );

    /// How long a held stop waits for its turn to go on (another hook blocked it) before the
    /// turn ends at it; `None` for an agent that holds no stop.
    fn grace_ms(&self) -> Option<u64> {
        None
    }

    /// Session `s`'s held stop, if one is held: when it came, and the reason its turn ends
    /// with.
    fn held_stop(s: &Self::Session) -> Option<(u64, &'static str)> {
        let _ = s;
        None
    }

    /// Ends session `id`'s open turn, if one is, at `at_ms` for `why`, with what ends with it
    /// (its sub-agents), for an agent that holds its stops.
    fn end_turn(&mut self, id: &str, at_ms: u64, why: Why, out: &mut Vec<Record<'static>>) {
        let _ = (id, at_ms, why, out);
    }

    /// Ends session `id`'s turn at its held stop, if one is held (another hook did not block
    /// it in time, or the session goes); whether one was.
    fn end_held(&mut self, id: &str, out: &mut Vec<Record<'static>>) -> bool {
        let Some((at, reason)) = self.sessions().get(id).and_then(Self::held_stop) else {
            return false;
        };
        self.end_turn(id, at, Why::Stopped(reason), out);
        true
    }

    /// Ends session `id`'s turn at its held stop, whose grace has passed, with what the agent
    /// reads first (its transcript).
    fn end_held_stop(
        &mut self,
        id: &str,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let _ = files;
        self.end_held(id, out);
    }

    /// Ends what time ends: the held stops past their grace, and for an agent that reads a
    /// log as time goes, what is due of it.
    fn tick(&mut self, now_ms: u64, files: &mut dyn Transcripts, out: &mut Vec<Record<'static>>) {
        let Some(grace_ms) = self.grace_ms() else {
            return;
        };
        let stop_at = |s: &Self::Session| Self::held_stop(s).map(|(at, _)| at);
        for id in held::due(self.sessions(), now_ms, grace_ms, stop_at) {
            self.end_held_stop(&id, files, out);
        }
    }

    /// Gives up on session `id`, which will send nothing more (its agent is gone): what it
    /// left open goes out, unfinished, ending at `at_ms` (when the agent was last seen), and
    /// the session is forgotten. Returns when the session closes, if it was one the agent
    /// opened: the engine then closes it.
    fn give_up(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> Option<u64>;

    /// What the agent keeps besides its sessions (Codex: model calls waiting for their end).
    fn kept_besides(&self) -> usize {
        0
    }

    /// Where session `id`'s transcript or log has been read to, for a later daemon to resume
    /// from; `None` for an agent that reads none.
    fn cursor(&self, id: &str) -> Option<FileCursor> {
        let _ = id;
        None
    }

    /// Resumes session `id` where an earlier daemon left its transcript or log: read on from
    /// `at` if it is still that file (see [`FileCursor::offset_in`]).
    fn resume(&mut self, id: &str, at: FileCursor) {
        let _ = (id, at);
    }

    /// How much of session `id`'s conversation its model calls carry (0: capture is off).
    fn message_budget(&mut self, id: &str, bytes: usize) {
        let _ = (id, bytes);
    }

    /// Sessions with anything in flight (the daemon does not exit while there are any).
    fn open_turns(&self) -> usize {
        self.sessions().values().filter(|s| Self::busy(s)).count()
    }

    /// Whether session `id` is between turns, nothing of it in flight.
    fn at_rest(&self, id: &str) -> bool {
        self.sessions().get(id).is_none_or(|s| !Self::busy(s))
    }

    /// Sessions the agent keeps anything of, and what it keeps besides: nothing once each
    /// has ended or been given up on, so that a daemon that never idles does not grow.
    fn kept(&self) -> usize {
        self.sessions().len() + self.kept_besides()
    }

    /// [`give_up`](Self::give_up), and the session's close.
    fn abandon(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        if let Some(at_ms) = self.give_up(id, at_ms, files, out) {
            out.push(record(id, Event::Closed { at_ms }));
        }
    }
}

impl<A: AgentRules> Dispatch for A {
    fn parse(&self, json: &str) -> Result<Parsed, String> {
        A::parse(json).map(Parsed::new)
    }

    fn session_of<'a>(&self, payload: &'a Parsed) -> Option<&'a str> {
        payload.get::<A::Payload>().map(A::session_of)
    }

    fn take(
        &mut self,
        payload: Parsed,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        // Only this agent's own `parse` makes its payloads: another's cannot reach it. One
        // that names no session is no session's.
        if let Some(p) = payload.take::<A::Payload>() {
            if !A::session_of(&p).is_empty() {
                AgentRules::take(self, p, at_ms, files, out);
            }
        }
    }

    fn tick(&mut self, now_ms: u64, files: &mut dyn Transcripts, out: &mut Vec<Record<'static>>) {
        AgentRules::tick(self, now_ms, files, out);
    }

    fn open_turns(&self) -> usize {
        AgentRules::open_turns(self)
    }

    fn kept(&self) -> usize {
        AgentRules::kept(self)
    }

    fn at_rest(&self, id: &str) -> bool {
        AgentRules::at_rest(self, id)
    }

    fn abandon(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        AgentRules::abandon(self, id, at_ms, files, out);
    }

    fn cursor(&self, id: &str) -> Option<FileCursor> {
        AgentRules::cursor(self, id)
    }

    fn resume(&mut self, id: &str, at: FileCursor) {
        AgentRules::resume(self, id, at);
    }

    fn message_budget(&mut self, id: &str, bytes: usize) {
        AgentRules::message_budget(self, id, bytes);
    }
}
