//! An agent's open turn in Kimi Code: the shared open turn, with what Kimi alone keeps of it
//! ([`Own`](super::Own)), so that the main agent's turn and each sub-agent's end the one way
//! every agent's turns end ([`OpenTurn::flush`]), with their sub-agents ([`end`]).
//!
//! [`OpenTurn::flush`]: crate::sources::command_hooks::engine::open_turn::OpenTurn::flush

use super::Turn;
use crate::protocol::Record;
use crate::sources::command_hooks::engine::open_turn::Why;

/// A turn begun at `at_ms`. Kimi records a call another hook refused as it records one that
/// failed (a `tool.result` with its error), so a call still pending at the turn's end ran and
/// was cut short.
pub(super) fn begin(at_ms: u64) -> Turn {
    let mut turn = Turn::new(at_ms);
    turn.reports_refusals = true;
    turn
}

/// Whether anything of the turn is in flight: a model call, a tool call, a sub-agent.
pub(super) fn busy(turn: &Turn) -> bool {
    !turn.models.is_empty()
        || !turn.answered.is_empty()
        || !turn.pending.is_empty()
        || !turn.own.subs.is_empty()
}

/// How a turn that ended for `reason` (in the protocol's words) ends.
pub(super) fn why_of(reason: &'static str) -> Why {
    match reason {
        "interrupted" => Why::Interrupted,
        reason => Why::Stopped(reason),
    }
}

/// Ends `turn`, session `session`'s, at `at_ms` (never before it began), for `why`: its
/// sub-agents still at work first (their turns end as their own wires say, else cut short
/// with it, or unseen with it), then the one flush.
pub(super) fn end(
    mut turn: Turn,
    session: &str,
    at_ms: u64,
    why: Why,
    out: &mut Vec<Record<'static>>,
) {
    let at_ms = at_ms.max(turn.at_ms);
    let cut = match why {
        Why::Unseen => Why::Unseen,
        Why::Stopped(_) | Why::Interrupted => Why::Interrupted,
    };
    for sub in std::mem::take(&mut turn.own.subs) {
        sub.close(at_ms, cut, out);
    }
    turn.flush(session, at_ms, why, out);
}
