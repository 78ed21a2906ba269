//! How each kind of span looks: names, kinds, attributes and status, one file per kind
//! ([`tool`], [`chat`], and [`root`], the turn's `invoke_agent`).
//!
//! The state machine (`sessions`, `turn`, `calls`) decides *which* spans exist, with which ids,
//! parents and times; this folder decides what they say. Keeping the two apart means a naming
//! change never touches the tree logic, and the tree logic is readable without the attribute
//! lists.

mod chat;
mod messages;
mod root;
mod tool;

pub(crate) use chat::chat_span;
pub(crate) use root::{stopping_event, turn_span, AgentInfo, TurnSummary};
#[cfg(test)]
pub(crate) use tool::executable;
pub(crate) use tool::ToolSpan;

use std::sync::Arc;

use super::semconv::*;
use super::span::{ms_to_ns, Span, SpanId, SpanKind, Status, TraceId, Value};

/// Where a span sits: its trace, its id and its parent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Place {
    pub trace_id: TraceId,
    pub span_id: SpanId,
    pub parent: Option<SpanId>,
}

/// What every span of a session carries.
#[derive(Debug, Clone)]
pub(crate) struct SessionAttrs {
    /// The session's own id: `gen_ai.conversation.id`, this agent's conversation.
    pub id: Arc<str>,
    /// The session its traces belong to, `session.id`: its own id, or for a sub-agent that of
    /// the top session that spawned it. Viewers that group traces by `session.id` (Phoenix,
    /// Langfuse) then list every turn of a session, sub-agents' work included, under that
    /// session; and Phoenix files a whole trace under the first `session.id` it reads in it.
    pub trace_session: Arc<str>,
    /// The agent's name, for `gen_ai.agent.name` on its tool spans.
    pub agent: Arc<str>,
}

/// A span of `kind` at `place`, with room for `attrs` attributes.
pub(super) fn base(
    place: Place,
    name: String,
    kind: SpanKind,
    start_ms: u64,
    end_ms: u64,
    attrs: usize,
) -> Span {
    Span {
        trace_id: place.trace_id,
        span_id: place.span_id,
        parent_span_id: place.parent,
        name,
        kind,
        start_ns: ms_to_ns(start_ms),
        end_ns: ms_to_ns(end_ms),
        attributes: Vec::with_capacity(attrs),
        events: Vec::new(),
        links: Vec::new(),
        status: Status::Unset,
    }
}

pub(super) fn session_attrs(span: &mut Span, s: &SessionAttrs) {
    span.push(GEN_AI_CONVERSATION_ID, Value::Shared(s.id.clone()));
    span.push(SESSION_ID, Value::Shared(s.trace_session.clone()));
}

pub(super) fn int(n: u64) -> Value {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

/// A refusal or an error is usually a JSON string; show it without its quotes.
pub(super) fn unquoted(raw: &str) -> String {
    serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.to_string())
}
