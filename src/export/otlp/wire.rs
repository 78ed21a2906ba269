//! The protobuf bytes of an `ExportTraceServiceRequest`, written straight from our spans.
//!
//! Going through the generated message structs first would copy every name, key and value into
//! a `String` of its own only to copy it again into the buffer; the profile of the export path
//! was mostly that. This writes the same bytes, field for field in prost's order (ascending
//! field numbers) and with its rules (proto3 defaults left out, oneof members always written),
//! from borrowed data. Each message's length is computed before it is written, by a function
//! paired with the writer; the pair is checked after every span, in release builds too, and a
//! disagreement is an error (the caller then sends prost's encoding instead), never a
//! malformed request. `tests` hold it to prost's own bytes, for chosen and for arbitrary spans.

use prost::encoding::{encode_key, encode_varint, encoded_len_varint, key_len, WireType};

use crate::assemble::span::{Attr, Span, SpanEvent, SpanKind, Status, Value};

/// Field numbers, from opentelemetry-proto's `.proto` files, one module per message.
mod field {
    pub mod request {
        pub const RESOURCE_SPANS: u32 = 1;
    }
    pub mod resource_spans {
        pub const RESOURCE: u32 = 1;
        pub const SCOPE_SPANS: u32 = 2;
    }
    pub mod scope_spans {
        pub const SCOPE: u32 = 1;
        pub const SPANS: u32 = 2;
    }
    pub mod span {
        pub const TRACE_ID: u32 = 1;
        pub const SPAN_ID: u32 = 2;
        pub const PARENT_SPAN_ID: u32 = 4;
        pub const NAME: u32 = 5;
        pub const KIND: u32 = 6;
        pub const START_TIME_UNIX_NANO: u32 = 7;
        pub const END_TIME_UNIX_NANO: u32 = 8;
        pub const ATTRIBUTES: u32 = 9;
        pub const EVENTS: u32 = 11;
        pub const LINKS: u32 = 13;
        pub const STATUS: u32 = 15;
        pub const FLAGS: u32 = 16;
    }
    pub mod event {
        pub const TIME_UNIX_NANO: u32 = 1;
        pub const NAME: u32 = 2;
        pub const ATTRIBUTES: u32 = 3;
    }
    pub mod link {
        pub const TRACE_ID: u32 = 1;
        pub const SPAN_ID: u32 = 2;
        pub const FLAGS: u32 = 6;
    }
    pub mod status {
        pub const MESSAGE: u32 = 2;
        pub const CODE: u32 = 3;
        /// `STATUS_CODE_ERROR`.
        pub const CODE_ERROR: u64 = 2;
    }
    pub mod key_value {
        pub const KEY: u32 = 1;
        pub const VALUE: u32 = 2;
    }
    pub mod any_value {
        pub const STRING_VALUE: u32 = 1;
        pub const BOOL_VALUE: u32 = 2;
        pub const INT_VALUE: u32 = 3;
        pub const DOUBLE_VALUE: u32 = 4;
        pub const ARRAY_VALUE: u32 = 5;
    }
    pub mod array_value {
        pub const VALUES: u32 = 1;
    }
}

use field::*;

/// W3C trace flags: sampled. OTLP span flags: the parent's is-remote is known, and false.
const FLAGS: u32 = 0x01 | 0x100;

/// A message's computed length and its written length differed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mismatch;

fn len_field(tag: u32, len: usize) -> usize {
    key_len(tag) + encoded_len_varint(len as u64) + len
}

fn str_field(tag: u32, s: &str) -> usize {
    if s.is_empty() {
        0
    } else {
        len_field(tag, s.len())
    }
}

fn put_len(tag: u32, len: usize, buf: &mut Vec<u8>) {
    encode_key(tag, WireType::LengthDelimited, buf);
    encode_varint(len as u64, buf);
}

fn put_bytes(tag: u32, b: &[u8], buf: &mut Vec<u8>) {
    if !b.is_empty() {
        put_len(tag, b.len(), buf);
        buf.extend_from_slice(b);
    }
}

fn put_fixed64(tag: u32, v: u64, buf: &mut Vec<u8>) {
    if v != 0 {
        encode_key(tag, WireType::SixtyFourBit, buf);
        buf.extend_from_slice(&v.to_le_bytes());
    }
}

fn put_fixed32(tag: u32, v: u32, buf: &mut Vec<u8>) {
    if v != 0 {
        encode_key(tag, WireType::ThirtyTwoBit, buf);
        buf.extend_from_slice(&v.to_le_bytes());
    }
}

fn put_varint(tag: u32, v: u64, buf: &mut Vec<u8>) {
    if v != 0 {
        encode_key(tag, WireType::Varint, buf);
        encode_varint(v, buf);
    }
}

fn string_list_len(list: &[std::sync::Arc<str>]) -> usize {
    // ArrayValue { values: [AnyValue { string_value }] }
    list.iter()
        .map(|s| {
            len_field(
                array_value::VALUES,
                len_field(any_value::STRING_VALUE, s.len()),
            )
        })
        .sum()
}

fn any_value_len(v: &Value) -> usize {
    // Members of a oneof are written even when they hold the default.
    match v {
        Value::Int(i) => key_len(any_value::INT_VALUE) + encoded_len_varint(*i as u64),
        Value::Bool(_) => key_len(any_value::BOOL_VALUE) + 1,
        Value::Double(_) => key_len(any_value::DOUBLE_VALUE) + 8,
        Value::StrList(list) => len_field(any_value::ARRAY_VALUE, string_list_len(list)),
        other => len_field(any_value::STRING_VALUE, other.as_str().map_or(0, str::len)),
    }
}

fn put_any_value(v: &Value, buf: &mut Vec<u8>) {
    match v {
        Value::Int(i) => {
            encode_key(any_value::INT_VALUE, WireType::Varint, buf);
            encode_varint(*i as u64, buf);
        }
        Value::Bool(b) => {
            encode_key(any_value::BOOL_VALUE, WireType::Varint, buf);
            buf.push(u8::from(*b));
        }
        Value::Double(d) => {
            encode_key(any_value::DOUBLE_VALUE, WireType::SixtyFourBit, buf);
            buf.extend_from_slice(&d.to_le_bytes());
        }
        Value::StrList(list) => {
            put_len(any_value::ARRAY_VALUE, string_list_len(list), buf);
            for s in list.iter() {
                put_len(
                    array_value::VALUES,
                    len_field(any_value::STRING_VALUE, s.len()),
                    buf,
                );
                put_len(any_value::STRING_VALUE, s.len(), buf);
                buf.extend_from_slice(s.as_bytes());
            }
        }
        other => {
            let s = other.as_str().unwrap_or("");
            put_len(any_value::STRING_VALUE, s.len(), buf);
            buf.extend_from_slice(s.as_bytes());
        }
    }
}

fn key_value_len(a: &Attr) -> usize {
    str_field(key_value::KEY, a.key) + len_field(key_value::VALUE, any_value_len(&a.value))
}

fn attributes_len(tag: u32, attrs: &[Attr]) -> usize {
    attrs.iter().map(|a| len_field(tag, key_value_len(a))).sum()
}

fn put_attributes(tag: u32, attrs: &[Attr], buf: &mut Vec<u8>) {
    for a in attrs {
        put_len(tag, key_value_len(a), buf);
        put_bytes(key_value::KEY, a.key.as_bytes(), buf);
        put_len(key_value::VALUE, any_value_len(&a.value), buf);
        put_any_value(&a.value, buf);
    }
}

fn event_len(e: &SpanEvent) -> usize {
    (if e.time_ns != 0 {
        key_len(event::TIME_UNIX_NANO) + 8
    } else {
        0
    }) + str_field(event::NAME, e.name)
        + attributes_len(event::ATTRIBUTES, &e.attributes)
}

fn link_len() -> usize {
    len_field(link::TRACE_ID, 16) + len_field(link::SPAN_ID, 8) + key_len(link::FLAGS) + 4
}

fn status_len(message: &str) -> usize {
    str_field(status::MESSAGE, message)
        + key_len(status::CODE)
        + encoded_len_varint(status::CODE_ERROR)
}

fn kind_number(k: &SpanKind) -> u64 {
    match k {
        SpanKind::Internal => 1,
        SpanKind::Server => 2,
        SpanKind::Client => 3,
        SpanKind::Producer => 4,
        SpanKind::Consumer => 5,
    }
}

/// The encoded length of one `Span` message.
fn span_len(s: &Span) -> usize {
    let mut n = len_field(span::TRACE_ID, 16) + len_field(span::SPAN_ID, 8);
    if s.parent_span_id.is_some() {
        n += len_field(span::PARENT_SPAN_ID, 8);
    }
    n += key_len(span::FLAGS) + 4;
    n += str_field(span::NAME, &s.name);
    n += key_len(span::KIND) + encoded_len_varint(kind_number(&s.kind));
    if s.start_ns != 0 {
        n += key_len(span::START_TIME_UNIX_NANO) + 8;
    }
    if s.end_ns != 0 {
        n += key_len(span::END_TIME_UNIX_NANO) + 8;
    }
    n += attributes_len(span::ATTRIBUTES, &s.attributes);
    n += s
        .events
        .iter()
        .map(|e| len_field(span::EVENTS, event_len(e)))
        .sum::<usize>();
    n += s.links.len() * len_field(span::LINKS, link_len());
    if let Status::Error(m) = &s.status {
        n += len_field(span::STATUS, status_len(m));
    }
    n
}

/// Writes one `Span` message's fields (without its own tag and length).
fn put_span(s: &Span, buf: &mut Vec<u8>) {
    put_bytes(span::TRACE_ID, &s.trace_id.to_bytes(), buf);
    put_bytes(span::SPAN_ID, &s.span_id.to_bytes(), buf);
    if let Some(p) = s.parent_span_id {
        put_bytes(span::PARENT_SPAN_ID, &p.to_bytes(), buf);
    }
    put_bytes(span::NAME, s.name.as_bytes(), buf);
    put_varint(span::KIND, kind_number(&s.kind), buf);
    put_fixed64(span::START_TIME_UNIX_NANO, s.start_ns, buf);
    put_fixed64(span::END_TIME_UNIX_NANO, s.end_ns, buf);
    put_attributes(span::ATTRIBUTES, &s.attributes, buf);
    for e in &s.events {
        put_len(span::EVENTS, event_len(e), buf);
        put_fixed64(event::TIME_UNIX_NANO, e.time_ns, buf);
        put_bytes(event::NAME, e.name.as_bytes(), buf);
        put_attributes(event::ATTRIBUTES, &e.attributes, buf);
    }
    for l in &s.links {
        put_len(span::LINKS, link_len(), buf);
        put_bytes(link::TRACE_ID, &l.trace_id.to_bytes(), buf);
        put_bytes(link::SPAN_ID, &l.span_id.to_bytes(), buf);
        put_fixed32(link::FLAGS, FLAGS, buf);
    }
    if let Status::Error(m) = &s.status {
        put_len(span::STATUS, status_len(m), buf);
        put_bytes(status::MESSAGE, m.as_bytes(), buf);
        put_varint(status::CODE, status::CODE_ERROR, buf);
    }
    put_fixed32(span::FLAGS, FLAGS, buf);
}

/// The request for `spans`, given the encoded `Resource` and `InstrumentationScope` messages.
pub(super) fn request(resource: &[u8], scope: &[u8], spans: &[Span]) -> Result<Vec<u8>, Mismatch> {
    let lens: Vec<usize> = spans.iter().map(span_len).collect();
    let spans_len: usize = lens.iter().map(|l| len_field(scope_spans::SPANS, *l)).sum();
    let scope_spans_len = len_field(scope_spans::SCOPE, scope.len()) + spans_len;
    let resource_spans_len = len_field(resource_spans::RESOURCE, resource.len())
        + len_field(resource_spans::SCOPE_SPANS, scope_spans_len);
    let total = len_field(request::RESOURCE_SPANS, resource_spans_len);
    let mut buf = Vec::with_capacity(total);
    put_len(request::RESOURCE_SPANS, resource_spans_len, &mut buf);
    put_len(resource_spans::RESOURCE, resource.len(), &mut buf);
    buf.extend_from_slice(resource);
    put_len(resource_spans::SCOPE_SPANS, scope_spans_len, &mut buf);
    put_len(scope_spans::SCOPE, scope.len(), &mut buf);
    buf.extend_from_slice(scope);
    for (s, len) in spans.iter().zip(lens) {
        put_len(scope_spans::SPANS, len, &mut buf);
        let before = buf.len();
        put_span(s, &mut buf);
        // The length prefix above was `len`: a span of any other size would shift every
        // byte after it, and the collector would drop the whole request.
        if buf.len() - before != len {
            return Err(Mismatch);
        }
    }
    if buf.len() != total {
        return Err(Mismatch);
    }
    Ok(buf)
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
