//! One tool call as a turn remembers it: below both the turn, which holds its calls, and the
//! call graph (`calls`), which works on them.

use super::span::SpanId;

#[derive(Debug)]
pub(super) struct CallNode {
    pub(super) span_id: SpanId,
    /// How many spans this call id has had in this turn before this one.
    pub(super) nth: u64,
    /// The call this one is nested in. The graph of parents is kept acyclic.
    pub(super) parent: Option<String>,
    pub(super) open: Option<OpenCall>,
}

/// A call without its result yet.
#[derive(Debug)]
pub(super) struct OpenCall {
    pub(super) name: Option<String>,
    /// The `within` the call itself declared, for the span's attribute.
    pub(super) within: Option<String>,
    /// When `calling` was seen; `None` for a call only named as a `within`.
    pub(super) start_ms: Option<u64>,
    /// The time range its nested calls covered.
    pub(super) children: Option<(u64, u64)>,
}
