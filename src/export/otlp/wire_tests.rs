//! `wire` against prost: the same bytes for generated agent streams, for hand-picked edge
//! cases, and for arbitrary spans.

use std::sync::Arc;

use proptest::prelude::*;
use prost::Message;

use super::*;
use crate::assemble::span::{SpanId, SpanLink, TraceId};
use crate::assemble::{AssembleConfig, Assembler, ContentPolicy, Output};
use crate::export::otlp::encode;
use crate::export::ResourceInfo;
use crate::protocol::decode_line;
use crate::testing::{generate, GenConfig};

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
    .expect("lengths agree")
}

#[test]
fn the_same_bytes_as_prost_for_generated_streams() {
    let resource = ResourceInfo::build(Some("wire-test"), &[]);
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

fn bare() -> Span {
    Span {
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
    }
}

#[test]
fn the_same_bytes_as_prost_at_the_edges() {
    let resource = ResourceInfo::build(None, &[]);
    let base = bare();
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
            key: "d",
            value: Value::Double(0.0),
        },
        Attr {
            key: "d2",
            value: Value::Double(-1.25),
        },
        Attr {
            key: "l",
            value: Value::StrList(Arc::from([Arc::from("a"), Arc::from("")])),
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

const KEYS: &[&str] = &["", "k", "gen_ai.usage.input_tokens", "ключ"];
const EVENT_NAMES: &[&str] = &["", "albedo.stopping", "albedo.first_token"];

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<String>().prop_map(Value::Str),
        any::<String>().prop_map(|s| Value::Shared(s.into())),
        prop::sample::select(KEYS).prop_map(Value::Static),
        any::<i64>().prop_map(Value::Int),
        any::<bool>().prop_map(Value::Bool),
        any::<f64>().prop_map(Value::Double),
        prop::collection::vec(any::<String>(), 0..4)
            .prop_map(|v| Value::StrList(v.into_iter().map(Arc::from).collect())),
    ]
}

fn attrs() -> impl Strategy<Value = Vec<Attr>> {
    prop::collection::vec(
        (prop::sample::select(KEYS), value()).prop_map(|(key, value)| Attr { key, value }),
        0..6,
    )
}

fn kind() -> impl Strategy<Value = SpanKind> {
    prop::sample::select(vec![
        SpanKind::Internal,
        SpanKind::Server,
        SpanKind::Client,
        SpanKind::Producer,
        SpanKind::Consumer,
    ])
}

fn span() -> impl Strategy<Value = Span> {
    (
        (any::<u128>(), any::<u64>(), any::<Option<u64>>()),
        (any::<String>(), kind(), any::<u64>(), any::<u64>()),
        attrs(),
        prop::collection::vec(
            (prop::sample::select(EVENT_NAMES), any::<u64>(), attrs()).prop_map(
                |(name, time_ns, attributes)| SpanEvent {
                    name,
                    time_ns,
                    attributes,
                },
            ),
            0..3,
        ),
        prop::collection::vec(
            (any::<u128>(), any::<u64>()).prop_map(|(t, s)| SpanLink {
                trace_id: TraceId::from(t),
                span_id: SpanId::from(s),
            }),
            0..2,
        ),
        prop::option::of(any::<String>()),
    )
        .prop_map(
            |(
                (trace, id, parent),
                (name, kind, start_ns, end_ns),
                attributes,
                events,
                links,
                error,
            )| Span {
                trace_id: TraceId::from(trace),
                span_id: SpanId::from(id),
                parent_span_id: parent.map(SpanId::from),
                name,
                kind,
                start_ns,
                end_ns,
                attributes,
                events,
                links,
                status: error.map_or(Status::Unset, Status::Error),
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any batch of any spans: the bytes prost writes, so also its lengths.
    #[test]
    fn the_same_bytes_and_lengths_as_prost_for_arbitrary_spans(
        spans in prop::collection::vec(span(), 0..5),
        service in prop::option::of("[a-z]{0,12}"),
    ) {
        let resource = ResourceInfo::build(service.as_deref(), &[]);
        let ours = ours(&resource, &spans);
        let theirs = prost_bytes(&resource, &spans);
        prop_assert_eq!(ours.len(), theirs.len());
        prop_assert!(ours == theirs);
        for s in &spans {
            prop_assert_eq!(span_len(s), encode::span(s).encoded_len());
        }
    }
}
