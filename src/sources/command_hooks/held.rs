//! A stop that another hook may block is held for a grace before its turn ends (Claude Code's
//! `Stop`, Gemini's `AfterAgent`): which sessions' held stops are due, written once.

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
