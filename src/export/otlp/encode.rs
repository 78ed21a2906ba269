//! Spans to the generated OTLP messages (prost's structs), and OTLP/JSON.
//!
//! The bytes every exporter receives are written by `wire`, straight from our spans; this is
//! the slow, obviously right way to the same request, kept for what it is good at: the
//! reference `wire` is tested against, the fallback should `wire` ever miscount, and the
//! messages that OTLP/JSON is serialized from. One request carries one resource and one
//! scope; the spans of a batch all share them.

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, ArrayValue, KeyValue};
use opentelemetry_proto::tonic::trace::v1::{
    span::{Event, Link, SpanKind as ProtoKind},
    status::StatusCode,
    ResourceSpans, ScopeSpans, Span as ProtoSpan, Status as ProtoStatus,
};

use crate::assemble::span::{Attr, Span, SpanKind, Status, Value};
use crate::export::{ExportError, ResourceInfo};

/// W3C trace flags: sampled. Every span we assemble is recorded and exported.
const SAMPLED: u32 = 0x01;
/// OTLP span flags: "has is-remote" set, "is remote" clear: our parents are all local.
const PARENT_IS_LOCAL: u32 = 0x100;

fn value(v: &Value) -> AnyValue {
    let value = match v {
        Value::Str(s) => any_value::Value::StringValue(s.clone()),
        Value::Shared(s) => any_value::Value::StringValue(s.to_string()),
        Value::Static(s) => any_value::Value::StringValue((*s).to_string()),
        Value::Int(i) => any_value::Value::IntValue(*i),
        Value::Double(d) => any_value::Value::DoubleValue(*d),
        Value::Bool(b) => any_value::Value::BoolValue(*b),
        Value::StrList(l) => any_value::Value::ArrayValue(ArrayValue {
            values: l
                .iter()
                .map(|s| AnyValue {
                    value: Some(any_value::Value::StringValue(s.to_string())),
                })
                .collect(),
        }),
    };
    AnyValue { value: Some(value) }
}

fn attributes(attrs: &[Attr]) -> Vec<KeyValue> {
    attrs
        .iter()
        .map(|a| KeyValue {
            key: a.key.to_string(),
            key_strindex: 0,
            value: Some(value(&a.value)),
        })
        .collect()
}

fn kind(k: &SpanKind) -> i32 {
    (match k {
        SpanKind::Client => ProtoKind::Client,
        SpanKind::Server => ProtoKind::Server,
        SpanKind::Producer => ProtoKind::Producer,
        SpanKind::Consumer => ProtoKind::Consumer,
        SpanKind::Internal => ProtoKind::Internal,
    }) as i32
}

/// One span in OTLP form.
pub fn span(s: &Span) -> ProtoSpan {
    ProtoSpan {
        trace_id: s.trace_id.to_bytes().to_vec(),
        span_id: s.span_id.to_bytes().to_vec(),
        trace_state: String::new(),
        parent_span_id: s
            .parent_span_id
            .map(|p| p.to_bytes().to_vec())
            .unwrap_or_default(),
        flags: SAMPLED | PARENT_IS_LOCAL,
        name: s.name.clone(),
        kind: kind(&s.kind),
        start_time_unix_nano: s.start_ns,
        end_time_unix_nano: s.end_ns,
        attributes: attributes(&s.attributes),
        dropped_attributes_count: 0,
        events: s
            .events
            .iter()
            .map(|e| Event {
                time_unix_nano: e.time_ns,
                name: e.name.to_string(),
                attributes: attributes(&e.attributes),
                dropped_attributes_count: 0,
            })
            .collect(),
        dropped_events_count: 0,
        links: s
            .links
            .iter()
            .map(|l| Link {
                trace_id: l.trace_id.to_bytes().to_vec(),
                span_id: l.span_id.to_bytes().to_vec(),
                trace_state: String::new(),
                attributes: Vec::new(),
                dropped_attributes_count: 0,
                flags: SAMPLED | PARENT_IS_LOCAL,
            })
            .collect(),
        dropped_links_count: 0,
        status: match &s.status {
            Status::Unset => None,
            Status::Error(message) => Some(ProtoStatus {
                message: message.clone(),
                code: StatusCode::Error as i32,
            }),
        },
    }
}

/// The request for one batch.
pub fn request(resource: &ResourceInfo, spans: &[Span]) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(resource.resource.clone()),
            scope_spans: vec![ScopeSpans {
                scope: Some(resource.scope.clone()),
                spans: spans.iter().map(span).collect(),
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
    }
}

/// The request as OTLP/JSON (one line, as the Collector's `otlpjsonfile` receiver reads).
pub fn json_bytes(request: &ExportTraceServiceRequest) -> Result<Vec<u8>, ExportError> {
    serde_json::to_vec(request).map_err(|e| ExportError::BadBatch(e.to_string()))
}
