//! Gemini's `AfterAgent` ends a turn only once nothing of that turn follows within the grace:
//! another hook may block the stop, and the agent then goes on (model and tool hooks, no new
//! `BeforeAgent`), which belongs to the same prompt's turn, not to a second trace.

use super::Adapter;
use crate::protocol::Record;

impl Adapter {
    /// `AfterAgent`: the turn's end is held back from `at_ms`.
    pub(super) fn hold_stop(&mut self, sid: &str, at_ms: u64) {
        if let Some(s) = self.sessions.get_mut(sid).filter(|s| s.turn_open) {
            s.stop_at = Some(at_ms);
        }
    }

    /// A model or tool hook after `AfterAgent`: that stop was blocked, the turn goes on.
    pub(super) fn went_on(&mut self, sid: &str) {
        if let Some(s) = self.sessions.get_mut(sid) {
            s.stop_at = None;
        }
    }

    /// Ends session `sid`'s turn at its held-back `AfterAgent`; whether there was one.
    pub(super) fn end_held(&mut self, sid: &str, out: &mut Vec<Record<'static>>) -> bool {
        let Some(at) = self.sessions.get_mut(sid).and_then(|s| s.stop_at.take()) else {
            return false;
        };
        self.end_turn(sid, at, "end_turn", out);
        true
    }

    /// Ends the turns whose `AfterAgent` is older than the grace.
    pub fn tick(&mut self, now_ms: u64, out: &mut Vec<Record<'static>>) {
        let due: Vec<String> = self
            .sessions
            .iter()
            .filter(|(_, s)| {
                s.stop_at
                    .is_some_and(|at| now_ms >= at.saturating_add(self.grace_ms))
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in due {
            self.end_held(&id, out);
        }
    }
}
