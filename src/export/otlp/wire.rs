//! The protobuf bytes of an `ExportTraceServiceRequest`, written straight from our spans.
//!
//! Going through the generated message structs first would copy every name, key and value into
//! a `String` of its own only to copy it again into the buffer; the profile of the export
//! thread was mostly that. This writes the same bytes, field for field in prost's order
//! (ascending tags) and with its rules (proto3 defaults left out, oneof members always
//! written), from borrowed data. `tests` hold it to prost's own encoding of `encode::request`, byte for byte.

use prost::encoding::{encode_key, encode_varint, encoded_len_varint, key_len, WireType};

use crate::assemble::span::{Attr, Span, SpanEvent, SpanKind, Status, Value};

/// W3C trace flags: sampled. OTLP span flags: the parent's is-remote is known, and false.
const FLAGS: u32 = 0x01 | 0x100;

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

/// The string of a value, borrowed.
fn text(v: &Value) -> Option<&str> {
    match v {
        Value::Str(s) => Some(s),
        Value::Shared(s) => Some(s),
        Value::Static(s) => Some(s),
        _ => None,
    }
}

fn any_value_len(v: &Value) -> usize {
    // Members of a oneof are written even when they hold the default.
    match v {
        Value::Int(i) => key_len(3) + encoded_len_varint(*i as u64),
        Value::Bool(_) => key_len(2) + 1,
        Value::StrList(list) => {
            let inner: usize = list
                .iter()
                .map(|s| len_field(1, len_field(1, s.len())))
                .sum();
            len_field(5, inner)
        }
        other => len_field(1, text(other).map_or(0, str::len)),
    }
}

fn put_any_value(v: &Value, buf: &mut Vec<u8>) {
    match v {
        Value::Int(i) => {
            encode_key(3, WireType::Varint, buf);
            encode_varint(*i as u64, buf);
        }
        Value::Bool(b) => {
            encode_key(2, WireType::Varint, buf);
            buf.push(u8::from(*b));
        }
        Value::StrList(list) => {
            let inner: usize = list
                .iter()
                .map(|s| len_field(1, len_field(1, s.len())))
                .sum();
            put_len(5, inner, buf);
            for s in list.iter() {
                put_len(1, len_field(1, s.len()), buf);
                put_len(1, s.len(), buf);
                buf.extend_from_slice(s.as_bytes());
            }
        }
        other => {
            let s = text(other).unwrap_or("");
            put_len(1, s.len(), buf);
            buf.extend_from_slice(s.as_bytes());
        }
    }
}

fn key_value_len(a: &Attr) -> usize {
    str_field(1, a.key) + len_field(2, any_value_len(&a.value))
}

fn attributes_len(tag: u32, attrs: &[Attr]) -> usize {
    attrs.iter().map(|a| len_field(tag, key_value_len(a))).sum()
}

fn put_attributes(tag: u32, attrs: &[Attr], buf: &mut Vec<u8>) {
    for a in attrs {
        put_len(tag, key_value_len(a), buf);
        put_bytes(1, a.key.as_bytes(), buf);
        put_len(2, any_value_len(&a.value), buf);
        put_any_value(&a.value, buf);
    }
}

fn event_len(e: &SpanEvent) -> usize {
    (if e.time_ns != 0 { key_len(1) + 8 } else { 0 })
        + str_field(2, e.name)
        + attributes_len(3, &e.attributes)
}

fn link_len() -> usize {
    len_field(1, 16) + len_field(2, 8) + key_len(6) + 4
}

fn status_len(message: &str) -> usize {
    // code = 2 (ERROR)
    str_field(2, message) + key_len(3) + 1
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
pub fn span_len(s: &Span) -> usize {
    let mut n = len_field(1, 16) + len_field(2, 8);
    if s.parent_span_id.is_some() {
        n += len_field(4, 8);
    }
    n += key_len(16) + 4;
    n += str_field(5, &s.name);
    n += key_len(6) + encoded_len_varint(kind_number(&s.kind));
    if s.start_ns != 0 {
        n += key_len(7) + 8;
    }
    if s.end_ns != 0 {
        n += key_len(8) + 8;
    }
    n += attributes_len(9, &s.attributes);
    n += s
        .events
        .iter()
        .map(|e| len_field(11, event_len(e)))
        .sum::<usize>();
    n += s.links.len() * len_field(13, link_len());
    if let Status::Error(m) = &s.status {
        n += len_field(15, status_len(m));
    }
    n
}

/// Writes one `Span` message's fields (without its own tag and length).
pub fn put_span(s: &Span, buf: &mut Vec<u8>) {
    put_bytes(1, &s.trace_id.to_bytes(), buf);
    put_bytes(2, &s.span_id.to_bytes(), buf);
    if let Some(p) = s.parent_span_id {
        put_bytes(4, &p.to_bytes(), buf);
    }
    put_bytes(5, s.name.as_bytes(), buf);
    put_varint(6, kind_number(&s.kind), buf);
    put_fixed64(7, s.start_ns, buf);
    put_fixed64(8, s.end_ns, buf);
    put_attributes(9, &s.attributes, buf);
    for e in &s.events {
        put_len(11, event_len(e), buf);
        put_fixed64(1, e.time_ns, buf);
        put_bytes(2, e.name.as_bytes(), buf);
        put_attributes(3, &e.attributes, buf);
    }
    for l in &s.links {
        put_len(13, link_len(), buf);
        put_bytes(1, &l.trace_id.to_bytes(), buf);
        put_bytes(2, &l.span_id.to_bytes(), buf);
        put_fixed32(6, FLAGS, buf);
    }
    if let Status::Error(m) = &s.status {
        put_len(15, status_len(m), buf);
        put_bytes(2, m.as_bytes(), buf);
        put_varint(3, 2, buf);
    }
    put_fixed32(16, FLAGS, buf);
}

/// The request for `spans`, given the encoded `Resource` and `InstrumentationScope` messages.
pub fn request(resource: &[u8], scope: &[u8], spans: &[Span]) -> Vec<u8> {
    let lens: Vec<usize> = spans.iter().map(span_len).collect();
    let spans_len: usize = lens.iter().map(|l| len_field(2, *l)).sum();
    let scope_spans_len = len_field(1, scope.len()) + spans_len;
    let resource_spans_len = len_field(1, resource.len()) + len_field(2, scope_spans_len);
    let mut buf = Vec::with_capacity(len_field(1, resource_spans_len));
    put_len(1, resource_spans_len, &mut buf);
    put_len(1, resource.len(), &mut buf);
    buf.extend_from_slice(resource);
    put_len(2, scope_spans_len, &mut buf);
    put_len(1, scope.len(), &mut buf);
    buf.extend_from_slice(scope);
    for (s, len) in spans.iter().zip(lens) {
        put_len(2, len, &mut buf);
        let before = buf.len();
        put_span(s, &mut buf);
        debug_assert_eq!(buf.len() - before, len, "span_len and put_span disagree");
    }
    buf
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;
    use crate::assemble::span::{SpanId, SpanLink, TraceId};
    use crate::assemble::{AssembleConfig, Assembler, ContentPolicy, Output};
    use crate::export::otlp::encode;
    use crate::export::ResourceInfo;
    use crate::generate::{generate, GenConfig};
    use crate::ingest::decode_line;

    fn prost_bytes(resource: &ResourceInfo, spans: &[Span]) -> Vec<u8> {
        encode::request(resource, spans).encode_to_vec()
    }

    /// Equal bytes, or where they first differ (the whole buffers are too long to print).
    fn same(a: &[u8], b: &[u8]) {
        if a != b {
            let at = a
                .iter()
                .zip(b)
                .position(|(x, y)| x != y)
                .unwrap_or(a.len().min(b.len()));
            panic!(
                "lengths {} and {}; first difference at {at}: {:?} vs {:?}",
                a.len(),
                b.len(),
                &a[at.saturating_sub(8)..(at + 8).min(a.len())],
                &b[at.saturating_sub(8)..(at + 8).min(b.len())]
            );
        }
    }

    fn ours(resource: &ResourceInfo, spans: &[Span]) -> Vec<u8> {
        request(
            &resource.resource.encode_to_vec(),
            &resource.scope.encode_to_vec(),
            spans,
        )
    }

    #[test]
    fn the_same_bytes_as_prost_for_generated_streams() {
        let resource = ResourceInfo::detect(Some("wire-test"));
        let (lines, _) = generate(&GenConfig {
            sessions: 40,
            ..GenConfig::default()
        });
        let mut policy = ContentPolicy::default();
        policy.capture_messages = true;
        let mut asm = Assembler::new(AssembleConfig {
            policy,
            ..AssembleConfig::default()
        });
        let mut out = Output::default();
        for l in &lines {
            asm.push(&decode_line(l.as_bytes()).unwrap(), &mut out);
        }
        asm.finish(&mut out);
        assert!(out.spans.len() > 1000);
        for chunk in out.spans.chunks(100) {
            same(&ours(&resource, chunk), &prost_bytes(&resource, chunk));
        }
    }

    #[test]
    fn the_same_bytes_as_prost_at_the_edges() {
        let resource = ResourceInfo::detect(None);
        let base = Span {
            trace_id: TraceId::from(7u128),
            span_id: SpanId::from(9u64),
            parent_span_id: None,
            name: String::new(),
            kind: SpanKind::Internal,
            start_ns: 0,
            end_ns: 0,
            attributes: Vec::new(),
            events: Vec::new(),
            links: Vec::new(),
            status: Status::Unset,
        };
        let mut full = base.clone();
        full.name = "é ünïcode".into();
        full.kind = SpanKind::Client;
        full.parent_span_id = Some(SpanId::from(u64::MAX));
        full.start_ns = u64::MAX;
        full.end_ns = 1;
        full.attributes = vec![
            Attr {
                key: "s",
                value: Value::Str(String::new()),
            },
            Attr {
                key: "i",
                value: Value::Int(-1),
            },
            Attr {
                key: "z",
                value: Value::Int(0),
            },
            Attr {
                key: "b",
                value: Value::Bool(false),
            },
            Attr {
                key: "l",
                value: Value::StrList(std::sync::Arc::from([
                    std::sync::Arc::from("a"),
                    std::sync::Arc::from(""),
                ])),
            },
            Attr {
                key: "big",
                value: Value::Str("x".repeat(70_000)),
            },
        ];
        full.events = vec![SpanEvent {
            name: "e",
            time_ns: 0,
            attributes: full.attributes.clone(),
        }];
        full.links = vec![SpanLink {
            trace_id: TraceId::from(1u128),
            span_id: SpanId::from(2u64),
        }];
        full.status = Status::Error(String::new());
        for spans in [vec![], vec![base.clone()], vec![full.clone(), base]] {
            same(&ours(&resource, &spans), &prost_bytes(&resource, &spans));
        }
    }
}
