//! The contract every agent's adapter keeps, so that the daemon (and the tests) drive every
//! agent the same way, with the agent's payload type erased so that every agent sits in one
//! list ([`Dispatch`]). No agent implements it: each implements its own rules
//! ([`AgentRules`](super::AgentRules)), and the engine keeps this contract for all of
//! them, once.

use std::any::Any;
use std::fmt;

use super::files::{FileCursor, Transcripts};
use crate::protocol::Record;

/// A payload read by some agent's adapter, kept for that adapter to take.
pub struct Parsed(Box<dyn Any + Send>);

impl Parsed {
    pub(in crate::sources::command_hooks) fn new<P: Send + 'static>(payload: P) -> Parsed {
        Parsed(Box::new(payload))
    }

    /// The payload, if it is a `P`.
    pub(in crate::sources::command_hooks) fn get<P: 'static>(&self) -> Option<&P> {
        self.0.downcast_ref::<P>()
    }

    /// The payload, if it is a `P`.
    pub(in crate::sources::command_hooks) fn take<P: 'static>(self) -> Option<P> {
        self.0.downcast::<P>().ok().map(|p| *p)
    }
}

impl fmt::Debug for Parsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Parsed(..)")
    }
}

/// One agent's payloads to protocol records, as the daemon drives them.
pub trait Dispatch: fmt::Debug + Send {
    /// Reads one payload; an error says why it is not one of this agent's.
    fn parse(&self, json: &str) -> Result<Parsed, String>;
    /// The session the payload names, if it is this agent's.
    fn session_of<'a>(&self, payload: &'a Parsed) -> Option<&'a str>;
    /// Takes one payload received at `at_ms`; appends records to `out`.
    fn take(
        &mut self,
        payload: Parsed,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    );
    /// Ends what time ends (a held stop past its grace, a log that is due).
    fn tick(&mut self, now_ms: u64, files: &mut dyn Transcripts, out: &mut Vec<Record<'static>>);
    /// Sessions with anything in flight (the daemon does not exit while there are any).
    fn open_turns(&self) -> usize;
    /// What the adapter keeps: nothing once every session has ended or been abandoned.
    fn kept(&self) -> usize;
    /// Whether session `id` is between turns: nothing of it is in flight in the adapter.
    fn at_rest(&self, id: &str) -> bool;
    /// Gives up on session `id`, which will send nothing more: what it left open goes out
    /// unfinished, ending at `at_ms`, the session is closed and forgotten.
    fn abandon(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    );
    /// Where session `id`'s transcript or log has been read to, if its agent reads one.
    fn cursor(&self, id: &str) -> Option<FileCursor>;
    /// Resumes session `id` where an earlier daemon left its transcript or log.
    fn resume(&mut self, id: &str, at: FileCursor);
    /// How much of session `id`'s conversation its model calls carry (0: capture is off).
    fn message_budget(&mut self, id: &str, bytes: usize);
}
