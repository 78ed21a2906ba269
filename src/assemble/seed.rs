//! What one assembler hands the next about a session between two turns, so that a restarted
//! exporter (a hook daemon that idled out while a stop hook ran) goes on with it as if it
//! had never stopped: the turn numbers go on, the next turn links to the last, and what the
//! agent does after its turn went out goes into that turn's trace.
//!
//! It is saved as JSON beside the journal's resume point: ids as the hex OTLP viewers show.

use serde::{Deserialize, Serialize};

use super::span::{SpanId, TraceId};

/// A session's state between two turns, as far as the ids and links of its next spans go.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSeed {
    /// Turns the session had.
    pub(super) turns: u64,
    /// When the latest of them began (ms since the epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) latest_start_ms: Option<u64>,
    /// The root of the last turn, which the next prompt's turn links to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) last_root: Option<Root>,
    /// The last turn, if it went out at the agent's stop and no prompt came since: what the
    /// agent does with no turn open goes under its root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) went_out: Option<Continued>,
}

/// A span, by the ids a viewer shows (lowercase hex).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Root {
    trace_id: String,
    span_id: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Continued {
    pub(super) root: Root,
    /// The turn's number in its session.
    pub(super) number: u64,
    /// Continuations already opened under it.
    #[serde(default)]
    pub(super) pieces: u64,
}

impl Root {
    pub(super) fn of(trace_id: TraceId, span_id: SpanId) -> Root {
        Root {
            trace_id: trace_id.to_string(),
            span_id: span_id.to_string(),
        }
    }

    /// The ids, if they are ids (a state file edited by hand may hold anything).
    pub(super) fn ids(&self) -> Option<(TraceId, SpanId)> {
        let trace = TraceId::from_hex(&self.trace_id).ok()?;
        let span = SpanId::from_hex(&self.span_id).ok()?;
        (trace != TraceId::INVALID && span != SpanId::INVALID).then_some((trace, span))
    }
}

impl SessionSeed {
    /// The turn that went out last, if a continuation would go under it: its trace id and its
    /// root's span id, as a viewer shows them.
    pub fn went_out(&self) -> Option<(&str, &str)> {
        self.went_out
            .as_ref()
            .map(|w| (w.root.trace_id.as_str(), w.root.span_id.as_str()))
    }

    /// How many turns the session had.
    pub fn turns(&self) -> u64 {
        self.turns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_reads_back_as_it_was_written() {
        let seed = SessionSeed {
            turns: 3,
            latest_start_ms: Some(1_700_000_000_000),
            last_root: Some(Root::of(TraceId::from(7u128), SpanId::from(9u64))),
            went_out: Some(Continued {
                root: Root::of(TraceId::from(7u128), SpanId::from(9u64)),
                number: 3,
                pieces: 1,
            }),
        };
        let text = serde_json::to_string(&seed).unwrap();
        assert!(
            text.contains(r#""span_id":"0000000000000009""#),
            "ids as a viewer shows them: {text}"
        );
        assert_eq!(serde_json::from_str::<SessionSeed>(&text).unwrap(), seed);
    }

    #[test]
    fn ids_that_are_not_ids_are_no_root() {
        const ZERO: &str = "00000000000000000000000000000000";
        for (trace, span) in [("zz", "0000000000000009"), (ZERO, "0000000000000009")] {
            let r = Root {
                trace_id: trace.to_string(),
                span_id: span.to_string(),
            };
            assert_eq!(r.ids(), None, "{trace} {span}");
        }
    }
}
