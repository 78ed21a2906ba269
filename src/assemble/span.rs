//! A finished span, as the assembly produces it and the exporters encode it.
//!
//! This is deliberately smaller than the SDK's `SpanData`: ids, times and parents are known up
//! front (they come from recorded events, not from a live clock), attribute keys are static
//! semantic-convention names, and string values can share one allocation (the session id is on
//! every span).

use std::sync::Arc;

pub use opentelemetry::trace::{SpanId, SpanKind, TraceId};

/// A span that has ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub trace_id: TraceId,
    pub span_id: SpanId,
    pub parent_span_id: Option<SpanId>,
    pub name: String,
    pub kind: SpanKind,
    pub start_ns: u64,
    pub end_ns: u64,
    pub attributes: Vec<Attr>,
    pub events: Vec<SpanEvent>,
    pub links: Vec<SpanLink>,
    pub status: Status,
}

/// One attribute: a semantic-convention key and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Attr {
    pub key: &'static str,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(String),
    /// A string shared by many spans (the session id).
    Shared(Arc<str>),
    Static(&'static str),
    Int(i64),
    /// A measure in seconds (`gen_ai.response.time_to_first_chunk`).
    Double(f64),
    Bool(bool),
    StrList(Arc<[Arc<str>]>),
}

impl Value {
    /// The value as text, if it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            Value::Shared(s) => Some(s),
            Value::Static(s) => Some(s),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SpanEvent {
    pub name: &'static str,
    pub time_ns: u64,
    pub attributes: Vec<Attr>,
}

/// A link to a span in another (or the same) trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpanLink {
    pub trace_id: TraceId,
    pub span_id: SpanId,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub enum Status {
    #[default]
    Unset,
    Error(String),
}

impl Span {
    /// The value of attribute `key`, if the span has it.
    pub fn attr(&self, key: &str) -> Option<&Value> {
        self.attributes
            .iter()
            .find(|a| a.key == key)
            .map(|a| &a.value)
    }

    pub(crate) fn push(&mut self, key: &'static str, value: Value) {
        self.attributes.push(Attr { key, value });
    }
}

/// Milliseconds since the Unix epoch to nanoseconds. Decoded times are below the year 2100, so
/// this cannot overflow; it saturates all the same.
pub fn ms_to_ns(ms: u64) -> u64 {
    ms.saturating_mul(1_000_000)
}
