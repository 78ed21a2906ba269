//! How a Qwen Code turn ends: at its `Stop`, once the grace has passed with nothing of the
//! turn after it (a stop another hook blocked goes on with tool calls); at the next prompt,
//! when no `Stop` came; or unseen, when the agent is gone (`-p` sends no `SessionEnd`). Every
//! way goes through the shared [`OpenTurn::flush`](super::OpenTurn::flush).

use super::{Adapter, Why};
use crate::protocol::Record;
use crate::sources::command_hooks::files::Transcripts;
use crate::sources::command_hooks::held;

impl Adapter {
    /// Ends session `sid`'s turn at its held-back `Stop`; whether there was one.
    pub(super) fn end_held(&mut self, sid: &str, out: &mut Vec<Record<'static>>) -> bool {
        let held = self
            .sessions
            .get(sid)
            .and_then(|s| s.turn.as_ref())
            .and_then(|t| t.stop);
        let Some((at, reason)) = held else {
            return false;
        };
        self.end_turn(sid, at, Why::Stopped(reason), out);
        true
    }

    /// Ends the open turn at `at_ms`, for `why`: its sub-agents and background agents with
    /// it, then its calls still pending.
    pub(super) fn end_turn(
        &mut self,
        sid: &str,
        at_ms: u64,
        why: Why,
        out: &mut Vec<Record<'static>>,
    ) {
        if self.sessions.get(sid).is_none_or(|s| s.turn.is_none()) {
            return;
        }
        self.close_children(sid, at_ms, out);
        if let Some(turn) = self.sessions.get_mut(sid).and_then(|s| s.turn.take()) {
            turn.flush(sid, at_ms, why, out);
        }
    }

    /// Ends the turns whose `Stop` is older than the grace, with what the transcript has
    /// gained since (the background agents' calls).
    pub fn tick(
        &mut self,
        now_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let due = held::due(&self.sessions, now_ms, self.grace_ms, |s| {
            s.turn.as_ref().and_then(|t| t.stop).map(|(at, _)| at)
        });
        for id in due {
            self.read(&id, files, out);
            self.end_held(&id, out);
        }
    }

    /// Gives up on session `id`, which will send nothing more (its agent is gone; `-p` sends
    /// no `SessionEnd`): what its transcript holds goes out, a held stop ends its turn, and
    /// the session is closed at `at_ms`, so a turn still open is exported unfinished.
    pub(super) fn give_up(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> Option<u64> {
        self.read(id, files, out);
        // The daemon last saw the agent alive up to a second before what its last payload
        // says it did: the session closes no earlier than that.
        let at_ms = self
            .sessions
            .get(id)
            .map_or(at_ms, |s| at_ms.max(s.seen_ms));
        if !self.end_held(id, out) {
            self.close_children(id, at_ms, out);
            if let Some(turn) = self.sessions.get_mut(id).and_then(|s| s.turn.take()) {
                turn.flush(id, at_ms, Why::Unseen, out);
            }
        }
        self.sessions.remove(id).map(|_| at_ms)
    }
}
