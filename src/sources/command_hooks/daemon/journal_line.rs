//! One journal line, read: its entry, whose hook it is, and the payload as that agent's
//! adapter takes it, or why it is not handed on.

use super::super::agent::Agent;
use super::super::foreign::{Borrower, Identity};
use super::super::journal::Entry;
use super::super::registry::Adapters;
use super::super::Head;
use crate::sources::command_hooks::engine::adapter::Parsed;

/// Why a journal line is not handed on.
pub(super) enum Unread {
    /// It is not a payload (a torn or edited line).
    Skip(String),
    /// It is another agent's, one this build does not know: why. The line stays where it is,
    /// unread, for a daemon that knows it.
    NotOurs(String),
    /// Another agent ran Claude Code's hook, and nothing here traces it: who, and its session.
    Foreign(Borrower, String),
}

/// A journal line: its entry, its agent, what every payload says, and the payload as its
/// agent's adapter reads it. A payload that is not what its agent sends is skipped before it
/// binds settings or touches the session.
pub(super) fn read_line(
    line: &[u8],
    adapter: &Adapters,
) -> Result<(Entry, Agent, Head, (Agent, Parsed)), Unread> {
    let entry = serde_json::from_slice::<Entry>(line).map_err(|e| Unread::Skip(e.to_string()))?;
    if let Err(name) = entry.agent() {
        if let Some(borrower) = Borrower::from_name(name) {
            // What the hook kept of it: its session, whatever else its line holds.
            let session = serde_json::from_str::<Identity>(entry.payload.get())
                .map(|i| i.session_id)
                .unwrap_or_default();
            return Err(Unread::Foreign(borrower, session));
        }
    }
    let head = serde_json::from_str::<Head>(entry.payload.get())
        .map_err(|e| Unread::Skip(e.to_string()))?;
    let agent = match entry.agent() {
        Ok(agent) => agent,
        Err(name) => {
            let message = format!(
                "its hooks are for the agent {name:?}, which this albedo-otel ({}) does not know; \
                 its journal is left unread for a newer albedo-otel's daemon (its next hook starts \
                 one, which takes over from this one)",
                super::lock::VERSION
            );
            return Err(Unread::NotOurs(message));
        }
    };
    let parsed = adapter.parse(agent, &entry.payload).map_err(Unread::Skip)?;
    Ok((entry, agent, head, parsed))
}
