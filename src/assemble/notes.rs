//! The repairs the assembly makes to input that is out of order or inconsistent, as notes the
//! caller logs with the line that caused them.

use std::fmt;

/// A repair the assembly made to input that was out of order or inconsistent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// `finished_ms` was before `started_ms`; the span was given zero length.
    EndBeforeStart { session: String, id: String },
    /// A call named a `within` that was never seen; a span was synthesized for it.
    UnknownWithin {
        session: String,
        call: String,
        within: String,
    },
    /// Following `within` from this call leads back to it; it was attached to the turn instead.
    WithinCycle {
        session: String,
        call: String,
        within: String,
    },
    /// `turn_ended` arrived with no turn open.
    TurnEndedWithoutTurn { session: String },
    /// A call id was used twice in one turn; the second use got a span of its own.
    DuplicateCall { session: String, call: String },
    /// Calls were still open when their turn ended; they were exported as unfinished.
    Unfinished { session: String, calls: usize },
    /// A child session's parent call is not known here; its turns get traces of their own.
    ParentNotFound {
        session: String,
        parent_session: String,
        call: String,
    },
    /// Too many open sessions: the least recently active one was ended and exported.
    SessionEvicted { session: String, open: usize },
    /// Too many calls in one turn: the oldest were forgotten or exported as unfinished.
    CallsEvicted { session: String, calls: usize },
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::EndBeforeStart { session, id } => write!(
                f,
                "session {session}: `{id}` finished before it started; exported with zero length"
            ),
            Note::UnknownWithin { session, call, within } => write!(
                f,
                "session {session}: call `{call}` is within `{within}`, which was never seen; a span stands in for it"
            ),
            Note::WithinCycle { session, call, within } => write!(
                f,
                "session {session}: call `{call}` within `{within}` would make a cycle; attached to the turn instead"
            ),
            Note::TurnEndedWithoutTurn { session } => {
                write!(f, "session {session}: `turn_ended` with no turn open; ignored")
            }
            Note::DuplicateCall { session, call } => write!(
                f,
                "session {session}: call id `{call}` was used again in the same turn; exported as a separate span"
            ),
            Note::Unfinished { session, calls } => write!(
                f,
                "session {session}: {calls} call(s) still open when the turn ended; exported as unfinished"
            ),
            Note::ParentNotFound { session, parent_session, call } => write!(
                f,
                "session {session}: parent call `{call}` of session {parent_session} is unknown; its turns get traces of their own"
            ),
            Note::SessionEvicted { session, open } => write!(
                f,
                "session {session} ended early: {open} sessions are open, the most this exporter keeps (--max-sessions); it was the least recently active"
            ),
            Note::CallsEvicted { session, calls } => write!(
                f,
                "session {session}: a turn passed {calls} calls (--max-calls-per-turn); its oldest calls were let go"
            ),
        }
    }
}

impl Note {
    /// Whether the note is about input that is wrong (worth a warning) rather than merely
    /// incomplete (normal when a session is cut short).
    pub fn is_warning(&self) -> bool {
        matches!(
            self,
            Note::EndBeforeStart { .. }
                | Note::WithinCycle { .. }
                | Note::DuplicateCall { .. }
                | Note::UnknownWithin { .. }
                | Note::SessionEvicted { .. }
                | Note::CallsEvicted { .. }
        )
    }
}
