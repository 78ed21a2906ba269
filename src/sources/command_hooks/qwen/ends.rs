//! How a Qwen Code turn ends: at its `Stop`, once the grace has passed with nothing of the
//! turn after it (a stop another hook blocked goes on with tool calls); at the next prompt,
//! when no `Stop` came; or unseen, when the agent is gone (`-p` sends no `SessionEnd`). Every
//! way goes through the shared [`OpenTurn::flush`](super::OpenTurn::flush).

use super::{Adapter, Why};
use crate::protocol::Record;

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
}
