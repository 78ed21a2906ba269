//! Appending one payload to its session's journal: which session's (another agent's payload
//! never goes into a Claude Code session), as one line, stamped with when it came and what it
//! is handed off with.

use std::borrow::Cow;
use std::path::Path;

use serde_json::value::RawValue;

use super::super::{agent, foreign, journal};
use super::handoff::{HandOff, HookError, RawHead};

/// Appends one hook payload to its session's journal, stamped with the time it arrived, the
/// settings it is handed off with, and the agent process that ran the hook (so the daemon can
/// tell when that agent is gone).
pub fn hand_off(
    dir: &Path,
    payload: &str,
    handoff: &HandOff,
    agent: Option<&str>,
) -> Result<(), HookError> {
    let received_ms = crate::clock::unix_ms();
    let raw: &RawValue = serde_json::from_str(payload).map_err(HookError::NotJson)?;
    let head = serde_json::from_str::<RawHead<'_>>(raw.get()).map_err(HookError::NotJson)?;
    let known = agent.and_then(agent::Agent::from_name);
    // Claude Code's hook is run by other agents too: theirs never go into its sessions.
    if known.is_none_or(|a| a == agent::Agent::ClaudeCode) {
        if let Some(borrower) = foreign::recognise(&head, &|k| std::env::var(k).ok()) {
            return foreign::hand_off(dir, raw, &head, handoff, borrower, received_ms);
        }
    }
    let spec = known.map(agent::Agent::spec);
    let parent = spec.and_then(|s| (s.journal_under)(raw.get()));
    let session = parent
        .map(Cow::Owned)
        .or(head.session_id)
        .filter(|s| !s.is_empty())
        .ok_or(HookError::NoSession)?;
    let rewritten = spec.and_then(|s| (s.rewrite)(raw.get(), &|k| std::env::var(k).ok()));
    // A journal line is one line: re-encode the rare pretty-printed payload.
    let compact: Cow<'_, str> = if let Some(slim) = rewritten {
        Cow::Owned(slim)
    } else if raw.get().contains('\n') {
        let v: serde_json::Value = serde_json::from_str(raw.get()).map_err(HookError::NotJson)?;
        Cow::Owned(v.to_string())
    } else {
        Cow::Borrowed(raw.get())
    };
    let stamp = journal::Stamp {
        received_ms,
        host: crate::process::hook_host(),
        handoff,
        agent,
    };
    journal::append(dir, &session, &compact, &stamp).map_err(|source| HookError::Journal {
        dir: dir.display().to_string(),
        source,
    })
}
