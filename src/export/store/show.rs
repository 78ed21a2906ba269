//! One session's or trace's rows as spans again, for `show` to draw as the console exporter
//! does: each turn with its model calls (model, tokens, cost) and tool calls (name, failed),
//! nested as they were. What the store never keeps (prompts, arguments, outputs) is not
//! there. Pure.

use std::collections::HashMap;

use opentelemetry::trace::{SpanId, SpanKind, TraceId};

use super::read::Rows;
use super::rows::Place;
use crate::assemble::semconv::*;
use crate::assemble::span::{Attr, Span, Status, Value};

/// The spans of each trace in `rows`, oldest trace first.
pub fn traces(rows: &Rows) -> Vec<Vec<Span>> {
    // Each call counts in the turn it nests under most closely.
    let turn_ids: HashMap<&str, usize> = rows
        .turns
        .iter()
        .enumerate()
        .map(|(i, t)| (t.place.span_id.as_str(), i))
        .collect();
    let parents: HashMap<&str, Option<&str>> = places(rows)
        .map(|p| (p.span_id.as_str(), p.parent_span_id.as_deref()))
        .collect();
    let turn_of = |p: &Place| -> Option<usize> {
        let mut at = p.parent_span_id.as_deref();
        for _ in 0..64 {
            let id = at?;
            if let Some(&i) = turn_ids.get(id) {
                return Some(i);
            }
            at = parents.get(id).copied().flatten();
        }
        None
    };
    let mut totals = vec![Totals::default(); rows.turns.len()];
    for c in &rows.model_calls {
        if let Some(t) = turn_of(&c.place).map(|i| &mut totals[i]) {
            t.model_calls += 1;
            t.input += c.input + c.cache_read + c.cache_write;
            t.output += c.output;
            t.cost = match (t.cost, c.cost) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            };
        }
    }
    for c in &rows.tool_calls {
        if let Some(i) = turn_of(&c.place) {
            totals[i].tool_calls += 1;
        }
    }
    let mut by_trace: HashMap<&str, Vec<Span>> = HashMap::new();
    for (t, total) in rows.turns.iter().zip(&totals) {
        let mut attributes = vec![
            op(OP_INVOKE_AGENT),
            attr(GEN_AI_AGENT_NAME, Value::Str(t.place.agent.clone())),
            attr(SESSION_ID, Value::Str(t.place.session.clone())),
            attr(ALBEDO_TURN_TOOL_CALLS, Value::Int(total.tool_calls)),
            attr(ALBEDO_TURN_MODEL_CALLS, Value::Int(total.model_calls)),
            attr(ALBEDO_TURN_INPUT_TOKENS, Value::Int(total.input)),
            attr(ALBEDO_TURN_OUTPUT_TOKENS, Value::Int(total.output)),
        ];
        attributes.extend(t.number.map(|n| attr(ALBEDO_TURN_NUMBER, Value::Int(n))));
        attributes.extend(total.cost.map(|c| attr(ALBEDO_TURN_COST, Value::Double(c))));
        let name = format!("invoke_agent {}", t.place.agent);
        push(
            &mut by_trace,
            span(&t.place, name, SpanKind::Internal, attributes, false),
        );
    }
    for c in &rows.model_calls {
        let mut attributes = vec![
            op(OP_CHAT),
            attr(SESSION_ID, Value::Str(c.place.session.clone())),
            attr(GEN_AI_RESPONSE_MODEL, Value::Str(c.model.clone())),
            // The conventions count the cache inside the input.
            attr(
                GEN_AI_USAGE_INPUT_TOKENS,
                Value::Int(c.input + c.cache_read + c.cache_write),
            ),
            attr(
                GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
                Value::Int(c.cache_read),
            ),
            attr(GEN_AI_USAGE_OUTPUT_TOKENS, Value::Int(c.output)),
        ];
        attributes.extend(c.cost.map(|v| attr(GEN_AI_USAGE_COST, Value::Double(v))));
        let name = format!("chat {}", c.model);
        push(
            &mut by_trace,
            span(&c.place, name, SpanKind::Client, attributes, false),
        );
    }
    for c in &rows.tool_calls {
        let attributes = vec![
            op(OP_EXECUTE_TOOL),
            attr(SESSION_ID, Value::Str(c.place.session.clone())),
            attr(GEN_AI_TOOL_NAME, Value::Str(c.name.clone())),
        ];
        let name = format!("execute_tool {}", c.name);
        push(
            &mut by_trace,
            span(&c.place, name, SpanKind::Internal, attributes, c.failed),
        );
    }
    let mut traces: Vec<Vec<Span>> = by_trace.into_values().collect();
    traces.sort_by_key(|t| t.iter().map(|s| s.start_ns).min());
    traces
}

#[derive(Debug, Default, Clone)]
struct Totals {
    tool_calls: i64,
    model_calls: i64,
    input: i64,
    output: i64,
    cost: Option<f64>,
}

fn places(rows: &Rows) -> impl Iterator<Item = &Place> {
    (rows.turns.iter().map(|t| &t.place))
        .chain(rows.model_calls.iter().map(|c| &c.place))
        .chain(rows.tool_calls.iter().map(|c| &c.place))
}

fn attr(key: &'static str, value: Value) -> Attr {
    Attr { key, value }
}

fn op(name: &'static str) -> Attr {
    attr(GEN_AI_OPERATION_NAME, Value::Static(name))
}

fn push<'a>(traces: &mut HashMap<&'a str, Vec<Span>>, s: (&'a str, Span)) {
    traces.entry(s.0).or_default().push(s.1);
}

/// The span a row was, by its place; ids the store holds in another form are none.
fn span(
    p: &Place,
    name: String,
    kind: SpanKind,
    attributes: Vec<Attr>,
    failed: bool,
) -> (&str, Span) {
    let id = |hex: &str| SpanId::from_hex(hex).unwrap_or(SpanId::INVALID);
    let span = Span {
        trace_id: TraceId::from_hex(&p.trace_id).unwrap_or(TraceId::INVALID),
        span_id: id(&p.span_id),
        parent_span_id: p.parent_span_id.as_deref().map(id),
        name,
        kind,
        start_ns: p.started_ns.max(0) as u64,
        end_ns: p.ended_ns.max(0) as u64,
        attributes,
        events: Vec::new(),
        links: Vec::new(),
        status: if failed {
            Status::Error("failed".into())
        } else {
            Status::Unset
        },
    };
    (p.trace_id.as_str(), span)
}
