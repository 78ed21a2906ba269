//! What the store keeps of a finished span: a turn, a model call or a tool call, each a row
//! read from the span's attributes (what the export carries, nothing more). Pure.

use crate::assemble::semconv::*;
use crate::assemble::span::{Span, Value};

/// Who and where, on every row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Place {
    pub trace_id: String,
    pub span_id: String,
    /// The span it nests under, in its trace (none for a turn's root).
    pub parent_span_id: Option<String>,
    /// The session at the top of the span's chain of sessions (a sub-agent's parent's).
    pub session: String,
    pub agent: String,
    pub repository: Option<String>,
    pub branch: Option<String>,
    pub user: Option<String>,
    pub started_ns: i64,
    pub ended_ns: i64,
}

/// One turn's root, or a continuation of one.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub place: Place,
    pub number: Option<i64>,
    pub prompted: bool,
    /// What the agent did after the turn went out (a stop another hook blocked).
    pub continued: bool,
}

/// One model call, with its tokens and cost.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCall {
    pub place: Place,
    /// What it is known by, so that the same call met twice (the live route and an import, a
    /// replay) is one: its provider's response id where there is one, else its span.
    pub key: String,
    pub model: String,
    pub provider: Option<String>,
    /// Input neither read from nor written to the cache.
    pub input: i64,
    pub output: i64,
    pub cache_read: i64,
    pub cache_write: i64,
    pub reasoning: Option<i64>,
    /// US dollars; `None`: the price table has no price for the model.
    pub cost: Option<f64>,
}

/// One tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub place: Place,
    pub name: String,
    pub failed: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Row {
    Turn(Turn),
    ModelCall(ModelCall),
    ToolCall(ToolCall),
}

fn text(span: &Span, key: &str) -> Option<String> {
    span.attr(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn int(span: &Span, key: &str) -> Option<i64> {
    match span.attr(key) {
        Some(Value::Int(n)) => Some(*n),
        _ => None,
    }
}

fn flag(span: &Span, key: &str) -> Option<bool> {
    match span.attr(key) {
        Some(Value::Bool(b)) => Some(*b),
        _ => None,
    }
}

fn place(span: &Span) -> Place {
    Place {
        trace_id: span.trace_id.to_string(),
        span_id: span.span_id.to_string(),
        parent_span_id: span.parent_span_id.map(|p| p.to_string()),
        session: text(span, SESSION_ID)
            .or_else(|| text(span, GEN_AI_CONVERSATION_ID))
            .unwrap_or_default(),
        agent: text(span, GEN_AI_AGENT_NAME).unwrap_or_default(),
        repository: text(span, VCS_REPOSITORY_URL_FULL),
        branch: text(span, VCS_REF_HEAD_NAME),
        user: text(span, USER_ID),
        started_ns: span.start_ns.min(i64::MAX as u64) as i64,
        ended_ns: span.end_ns.min(i64::MAX as u64) as i64,
    }
}

/// The row a span is, if the store keeps spans of its kind.
pub fn row(span: &Span) -> Option<Row> {
    match span.attr(GEN_AI_OPERATION_NAME).and_then(Value::as_str)? {
        OP_INVOKE_AGENT => Some(Row::Turn(Turn {
            place: place(span),
            number: int(span, ALBEDO_TURN_NUMBER),
            prompted: flag(span, ALBEDO_TURN_PROMPTED).unwrap_or(false),
            continued: flag(span, ALBEDO_TURN_CONTINUED).unwrap_or(false),
        })),
        OP_CHAT => {
            let place = place(span);
            let model = text(span, GEN_AI_RESPONSE_MODEL)
                .or_else(|| text(span, GEN_AI_REQUEST_MODEL))
                .unwrap_or_default();
            let provider = text(span, GEN_AI_PROVIDER_NAME);
            let key = match text(span, GEN_AI_RESPONSE_ID) {
                Some(id) => format!("{}:{id}", provider.as_deref().unwrap_or("")),
                None => format!("{}:{}", place.trace_id, place.span_id),
            };
            let total = int(span, GEN_AI_USAGE_INPUT_TOKENS).unwrap_or(0);
            let cache_read = int(span, GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS).unwrap_or(0);
            let cache_write = int(span, GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS).unwrap_or(0);
            // A cost that is no number is no price (SQLite would keep it as NULL).
            let cost = match span.attr(GEN_AI_USAGE_COST) {
                Some(Value::Double(c)) if c.is_finite() => Some(*c),
                _ => None,
            };
            Some(Row::ModelCall(ModelCall {
                key,
                model,
                provider,
                // The conventions count the cache inside the input; the store apart.
                input: (total - cache_read - cache_write).max(0),
                output: int(span, GEN_AI_USAGE_OUTPUT_TOKENS).unwrap_or(0),
                cache_read,
                cache_write,
                reasoning: int(span, GEN_AI_USAGE_REASONING_OUTPUT_TOKENS),
                cost,
                place,
            }))
        }
        OP_EXECUTE_TOOL => Some(Row::ToolCall(ToolCall {
            name: text(span, GEN_AI_TOOL_NAME).unwrap_or_default(),
            failed: !matches!(span.status, crate::assemble::span::Status::Unset),
            place: place(span),
        })),
        _ => None,
    }
}

#[cfg(test)]
impl ModelCall {
    /// A priced call known by `key`, at `place`: 10 tokens in, 5 out, a cent.
    pub(crate) fn sample(place: Place, key: &str) -> ModelCall {
        ModelCall {
            place,
            key: key.to_string(),
            model: "claude-opus-4-7".into(),
            provider: Some("anthropic".into()),
            input: 10,
            output: 5,
            cache_read: 0,
            cache_write: 0,
            reasoning: None,
            cost: Some(0.01),
        }
    }
}
