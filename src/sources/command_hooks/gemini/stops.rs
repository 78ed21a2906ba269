//! How a Gemini turn ends. Its `AfterAgent` ends a turn only once nothing of that turn
//! follows within the grace: another hook may block the stop, and the agent then goes on
//! (model and tool hooks, no new `BeforeAgent`), which belongs to the same prompt's turn, not
//! to a second trace. A turn also ends at the next prompt, or with its session.

use std::borrow::Cow;

use super::Adapter;
use crate::protocol::{Event, Record};
use crate::sources::command_hooks::records::record;

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
        let due =
            crate::sources::command_hooks::held::due(&self.sessions, now_ms, self.grace_ms, |s| {
                s.stop_at
            });
        for id in due {
            self.end_held(&id, out);
        }
    }

    pub(super) fn end_turn(
        &mut self,
        sid: &str,
        at_ms: u64,
        reason: &'static str,
        out: &mut Vec<Record<'static>>,
    ) {
        if self.at_rest(sid) {
            return;
        }
        self.sub_agents_stopped(sid, at_ms, out);
        self.refuse_pending(sid, at_ms, out);
        self.unanswered(sid, at_ms, out);
        let s = self.sessions.entry(sid.to_string()).or_default();
        s.turn_open = false;
        out.push(record(
            sid,
            Event::TurnEnded {
                at_ms,
                reason: Some(Cow::Borrowed(reason)),
            },
        ));
    }

    /// The session ends (its process exits); a resumed session starts again with its id. A
    /// turn still open is exported as it stands, unfinished.
    pub(super) fn close(&mut self, sid: &str, at_ms: u64, out: &mut Vec<Record<'static>>) {
        self.abandon(sid, at_ms, out);
    }

    /// Gives up on a session that will send nothing more: it is closed at `at_ms`, so its open
    /// turn is exported, marked unfinished, and the session is forgotten.
    pub fn abandon(&mut self, id: &str, at_ms: u64, out: &mut Vec<Record<'static>>) {
        // A stop held back did end its turn.
        self.end_held(id, out);
        self.sub_agents_stopped(id, at_ms, out);
        if self.sessions.remove(id).is_some() {
            out.push(record(id, Event::Closed { at_ms }));
        }
    }
}
