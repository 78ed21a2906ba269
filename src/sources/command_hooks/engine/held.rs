//! A stop that another hook may block is held for a grace before its turn ends (Claude Code's
//! `Stop`, Gemini's `AfterAgent`): which sessions' held stops are due, written once; and what
//! is kept of a turn that went out at its stop, for the agent may go on after all.

use std::collections::HashMap;

/// The sessions whose held stop (`stop_at`) is at least `grace_ms` old at `now_ms`.
pub fn due<S>(
    sessions: &HashMap<String, S>,
    now_ms: u64,
    grace_ms: u64,
    stop_at: impl Fn(&S) -> Option<u64>,
) -> Vec<String> {
    sessions
        .iter()
        .filter(|(_, s)| stop_at(s).is_some_and(|at| now_ms >= at.saturating_add(grace_ms)))
        .map(|(id, _)| id.clone())
        .collect()
}

/// When a session's last turn went out at its stop, past the grace, with no prompt since.
///
/// No grace is long enough: another hook can block the stop as late as it likes (a verifier
/// that runs the tests answers `block` 30 s on), and the agent goes on with no prompt. What it
/// does then is sent with no `prompted` record, and the assembly puts it in the trace of the
/// turn that went out, under its root (`WentOut` in `assemble/turn.rs`). An agent whose hooks
/// report each call needs nothing more. An agent whose calls only its log has (Copilot, Kimi)
/// gets no hook for them, only the next stop's: a stop with no turn open opens the
/// continuation from here ([`WentOut::continuation`]), and the log, read on from where the
/// last turn's read ended, has what the agent did meanwhile.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct WentOut(Option<u64>);

impl WentOut {
    /// The turn went out at its stop at `stop_ms`.
    pub fn at(stop_ms: u64) -> Self {
        WentOut(Some(stop_ms))
    }

    /// When the stop was, if the last turn went out at one.
    pub fn stop(self) -> Option<u64> {
        self.0
    }

    /// When a continuation's turn begins, if the last turn went out at its stop: just after
    /// that stop (what the log had up to it, inclusive, was that turn's). Taken: a second
    /// continuation begins after the first's own stop.
    pub fn continuation(&mut self) -> Option<u64> {
        self.0.take().map(|at| at.saturating_add(1))
    }
}
