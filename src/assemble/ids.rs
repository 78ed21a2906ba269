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

/// The trace of one turn: the session, when the turn began, and a salt that is 0 unless an
/// earlier turn of the session began in the same millisecond.
pub(crate) fn turn_trace(session: &str, start_ms: u64, salt: u64) -> TraceId {
    let h = hasher(&[
        b"turn",
        session.as_bytes(),
        &start_ms.to_le_bytes(),
        &salt.to_le_bytes(),
    ]);
    let id = h.digest128();
    // All-zero is the invalid id; the odds are nil but the fix is free.
    TraceId::from(if id == 0 { 1 } else { id })
}

/// The root span of a turn: its trace, session, start and salt. Several turns can share a
/// trace (a sub-agent's turns live in its parent's trace), so the session and start are in it.
pub(crate) fn turn_span(trace: TraceId, session: &str, start_ms: u64, salt: u64) -> SpanId {
    let h = hasher(&[
        &trace.to_bytes(),
        session.as_bytes(),
        &[Role::Turn as u8],
        &start_ms.to_le_bytes(),
        &salt.to_le_bytes(),
    ]);
    non_zero(h.digest())
}

/// A span inside a turn: its role, its key (call id, model call id) and how many earlier
/// spans had the same key in this turn. Derived from the turn's root, which is unique, so two
/// turns never share a child id even when they share a trace and reuse call ids.
pub(crate) fn child_span(turn: SpanId, role: Role, key: &str, nth: u64) -> SpanId {
    let h = hasher(&[
        &turn.to_bytes(),
        &[role as u8],
        key.as_bytes(),
        &nth.to_le_bytes(),
    ]);
    non_zero(h.digest())
}

fn non_zero(id: u64) -> SpanId {
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
        let root = turn_span(t, "s", 1000, 0);
        assert_ne!(
            root,
            turn_span(t, "s2", 1000, 0),
            "child sessions share a trace"
        );
        assert_ne!(root, turn_span(t, "s", 1000, 1));
        let a = child_span(root, Role::Tool, "c1", 0);
        assert_eq!(a, child_span(root, Role::Tool, "c1", 0));
        assert_ne!(a, child_span(root, Role::Tool, "c1", 1));
        assert_ne!(a, child_span(root, Role::Chat, "c1", 0));
        assert_ne!(
            a,
            child_span(turn_span(t, "s", 2000, 1), Role::Tool, "c1", 0)
        );
        assert_ne!(
            child_span(root, Role::Tool, "ab", 0),
            child_span(root, Role::Tool, "a", 0),
        );
        // Pinned: a changed hash would silently stop replays from overwriting earlier ones.
        assert_eq!(t.to_string(), "2eda31dc4446b727ee61c110fa777693");
    }
}
