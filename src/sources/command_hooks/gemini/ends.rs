//! How a Gemini turn ends. Its `AfterAgent` ends a turn only once nothing of that turn
//! follows within the grace: another hook may block the stop, and the agent then goes on
//! (model and tool hooks, no new `BeforeAgent`), which belongs to the same prompt's turn, not
//! to a second trace. A turn also ends at the next prompt, or with its session.

use super::Adapter;
use crate::protocol::Record;
use crate::sources::command_hooks::engine::AgentRules;
use crate::sources::command_hooks::engine::files::NoTranscripts;

impl Adapter {
    /// `AfterAgent`: the turn's end is held back from `at_ms`.
    pub(super) fn hold_stop(&mut self, sid: &str, at_ms: u64) {
        if let Some(turn) = self.sessions.get_mut(sid).and_then(|s| s.turn.as_mut()) {
            turn.hold(at_ms, "end_turn");
        }
    }

    /// A model or tool hook after `AfterAgent`: that stop was blocked, the turn goes on.
    pub(super) fn went_on(&mut self, sid: &str) {
        if let Some(turn) = self.sessions.get_mut(sid).and_then(|s| s.turn.as_mut()) {
            turn.went_on();
        }
    }

    /// The session ends (its process exits); a resumed session starts again with its id. A
    /// turn still open is exported as it stands, unfinished.
    pub(super) fn close(&mut self, sid: &str, at_ms: u64, out: &mut Vec<Record<'static>>) {
        self.abandon(sid, at_ms, &mut NoTranscripts, out);
    }
}
