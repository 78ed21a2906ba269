//! The recorder's arithmetic on hand-made spans: what each kind of span adds, and where.

use std::sync::Arc;

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::metrics::v1::{metric::Data, AggregationTemporality};
use prost::Message;

use super::*;
use crate::assemble::semconv::*;
use crate::assemble::span::{Attr, SpanId, SpanKind, TraceId};

fn span(attrs: Vec<(&'static str, Value)>, seconds: f64) -> Span {
    Span {
        trace_id: TraceId::from_bytes([1; 16]),
        span_id: SpanId::from_bytes([2; 8]),
        parent_span_id: None,
        name: "x".into(),
        kind: SpanKind::Internal,
        start_ns: 1_000_000_000,
        end_ns: 1_000_000_000 + (seconds * 1e9) as u64,
        attributes: attrs
            .into_iter()
            .map(|(key, value)| Attr { key, value })
            .collect(),
        events: Vec::new(),
        links: Vec::new(),
        status: Status::Unset,
    }
}

fn chat(model: &str, input: i64, output: i64, cost: Option<f64>) -> Span {
    let mut attrs = vec![
        (GEN_AI_OPERATION_NAME, Value::Static(OP_CHAT)),
        (GEN_AI_REQUEST_MODEL, Value::Shared(Arc::from(model))),
        (SESSION_ID, Value::Shared(Arc::from("s1"))),
        (GEN_AI_USAGE_INPUT_TOKENS, Value::Int(input)),
        (GEN_AI_USAGE_OUTPUT_TOKENS, Value::Int(output)),
    ];
    if let Some(c) = cost {
        attrs.push((GEN_AI_USAGE_COST, Value::Double(c)));
    }
    span(attrs, 2.0)
}

fn decode(p: &Batch) -> ExportMetricsServiceRequest {
    ExportMetricsServiceRequest::decode(p.body.clone()).unwrap()
}

#[test]
fn chat_spans_add_tokens_by_type_cost_and_duration_without_session_ids() {
    let mut r = Recorder::new(10);
    r.record(&chat("m", 100, 7, Some(0.25)));
    r.record(&chat("m", 50, 3, None));
    let out = decode(&r.take(20, &ResourceInfo::build(None, &[])).unwrap());
    let metrics = &out.resource_metrics[0].scope_metrics[0].metrics;
    let names: Vec<_> = metrics.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        [
            GEN_AI_CLIENT_TOKEN_USAGE,
            GEN_AI_CLIENT_OPERATION_DURATION,
            ALBEDO_USAGE_COST
        ]
    );
    let Some(Data::Histogram(tokens)) = &metrics[0].data else {
        panic!()
    };
    let mut sums: Vec<(String, f64, u64)> = tokens
        .data_points
        .iter()
        .map(|p| {
            let t = p
                .attributes
                .iter()
                .find(|a| a.key == GEN_AI_TOKEN_TYPE)
                .unwrap();
            assert!(p.attributes.iter().all(|a| a.key != SESSION_ID));
            assert_eq!((p.start_time_unix_nano, p.time_unix_nano), (10, 20));
            (format!("{:?}", t.value), p.sum.unwrap(), p.count)
        })
        .collect();
    sums.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!((sums[0].1, sums[0].2), (150.0, 2), "input");
    assert_eq!((sums[1].1, sums[1].2), (10.0, 2), "output");
    // 50 falls in (16, 64], 100 in (64, 256].
    let input = tokens
        .data_points
        .iter()
        .find(|p| p.sum == Some(150.0))
        .unwrap();
    assert_eq!(input.bucket_counts[3..5], [1, 1]);
    let Some(Data::Sum(cost)) = &metrics[2].data else {
        panic!()
    };
    assert!(cost.is_monotonic);
    assert_eq!(
        cost.aggregation_temporality,
        AggregationTemporality::Delta as i32
    );
    assert_eq!(cost.data_points.len(), 1);
    // The interval is over: nothing is sent twice.
    assert!(r.take(30, &ResourceInfo::build(None, &[])).is_none());
}

#[test]
fn tool_and_turn_durations_go_to_their_own_histograms_and_other_spans_to_none() {
    let mut r = Recorder::new(0);
    r.record(&span(
        vec![
            (GEN_AI_OPERATION_NAME, Value::Static(OP_EXECUTE_TOOL)),
            (GEN_AI_TOOL_NAME, Value::Static("run")),
            (GEN_AI_TOOL_CALL_ID, Value::Str("c1".into())),
            (ERROR_TYPE, Value::Static("tool_error")),
        ],
        0.05,
    ));
    r.record(&span(
        vec![(GEN_AI_OPERATION_NAME, Value::Static(OP_INVOKE_AGENT))],
        3.0,
    ));
    r.record(&span(
        vec![(GEN_AI_OPERATION_NAME, Value::Static("other"))],
        1.0,
    ));
    let out = decode(&r.take(1, &ResourceInfo::build(None, &[])).unwrap());
    let metrics = &out.resource_metrics[0].scope_metrics[0].metrics;
    let names: Vec<_> = metrics.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        [GEN_AI_INVOKE_AGENT_DURATION, GEN_AI_EXECUTE_TOOL_DURATION]
    );
    let Some(Data::Histogram(tool)) = &metrics[1].data else {
        panic!()
    };
    let keys: Vec<_> = tool.data_points[0]
        .attributes
        .iter()
        .map(|a| a.key.as_str())
        .collect();
    assert_eq!(keys, [GEN_AI_OPERATION_NAME, GEN_AI_TOOL_NAME, ERROR_TYPE]);
    // 0.05 s is in (0.04, 0.08].
    assert_eq!(tool.data_points[0].bucket_counts[3], 1);
}

#[test]
fn series_past_the_limit_share_one_overflow_series() {
    let mut r = Recorder::new(0);
    for i in 0..MAX_SERIES + 50 {
        r.record(&chat(&format!("model-{i}"), 1, 1, None));
    }
    assert!(r.series.len() <= MAX_SERIES + 3);
    let overflow = r
        .series
        .keys()
        .filter(|(_, l)| l.pairs().any(|(k, _)| k == OTEL_METRIC_OVERFLOW))
        .count();
    assert!(overflow >= 1);
}

#[test]
fn every_point_key_has_its_own_slot() {
    for (i, key) in POINT_KEYS.iter().enumerate() {
        assert_eq!(slot(key), Some(i), "{key}");
    }
    assert_eq!(POINT_KEYS[ERROR_SLOT], ERROR_TYPE);
    assert_eq!(slot(SESSION_ID), None);
}

#[test]
fn the_same_labels_in_another_order_are_one_series() {
    let mut r = Recorder::new(0);
    let a = span(
        vec![
            (GEN_AI_OPERATION_NAME, Value::Static(OP_EXECUTE_TOOL)),
            (GEN_AI_TOOL_NAME, Value::Shared(Arc::from("Bash"))),
            (GEN_AI_AGENT_NAME, Value::Str("claude-code".into())),
        ],
        1.0,
    );
    let b = span(
        vec![
            (GEN_AI_AGENT_NAME, Value::Shared(Arc::from("claude-code"))),
            (GEN_AI_TOOL_NAME, Value::Static("Bash")),
            (GEN_AI_OPERATION_NAME, Value::Static(OP_EXECUTE_TOOL)),
        ],
        3.0,
    );
    r.record(&a);
    r.record(&b);
    let out = decode(&r.take(5, &ResourceInfo::build(None, &[])).unwrap());
    let metrics = &out.resource_metrics[0].scope_metrics[0].metrics;
    let Some(Data::Histogram(h)) = &metrics[0].data else {
        panic!()
    };
    assert_eq!(h.data_points.len(), 1);
    assert_eq!(h.data_points[0].count, 2);
    let keys: Vec<_> = h.data_points[0]
        .attributes
        .iter()
        .map(|a| a.key.as_str())
        .collect();
    assert_eq!(
        keys,
        [GEN_AI_OPERATION_NAME, GEN_AI_TOOL_NAME, GEN_AI_AGENT_NAME]
    );
}

#[test]
fn a_failed_model_call_has_its_error_on_the_duration_and_its_tokens_with_the_rest() {
    let mut r = Recorder::new(0);
    let mut failed = chat("m", 10, 1, Some(0.5));
    failed.status = Status::Error("overloaded".into());
    r.record(&failed);
    r.record(&chat("m", 20, 2, Some(0.25)));
    let out = decode(&r.take(5, &ResourceInfo::build(None, &[])).unwrap());
    let metrics = &out.resource_metrics[0].scope_metrics[0].metrics;
    let by_name = |n: &str| metrics.iter().find(|m| m.name == n).unwrap();
    let has_error = |attrs: &[opentelemetry_proto::tonic::common::v1::KeyValue]| {
        attrs.iter().any(|a| a.key == ERROR_TYPE)
    };
    let Some(Data::Histogram(d)) = &by_name(GEN_AI_CLIENT_OPERATION_DURATION).data else {
        panic!()
    };
    let mut counts: Vec<_> = d
        .data_points
        .iter()
        .map(|p| (has_error(&p.attributes), p.count))
        .collect();
    counts.sort();
    assert_eq!(counts, [(false, 1), (true, 1)]);
    let Some(Data::Histogram(t)) = &by_name(GEN_AI_CLIENT_TOKEN_USAGE).data else {
        panic!()
    };
    assert_eq!(t.data_points.len(), 2, "input and output, one series each");
    assert!(t.data_points.iter().all(|p| !has_error(&p.attributes)));
    let input: f64 = t
        .data_points
        .iter()
        .filter(|p| p.count == 2)
        .map(|p| p.sum.unwrap())
        .sum();
    assert_eq!(input, 30.0 + 3.0, "both calls' tokens, input and output");
    let Some(Data::Sum(c)) = &by_name(ALBEDO_USAGE_COST).data else {
        panic!()
    };
    assert_eq!(c.data_points.len(), 1);
}

/// Turns and tool calls get buckets past the model calls' 81.92 s: a ten-minute turn and a
/// ten-minute test run land in a finite bucket, (327.68, 655.36], so a dashboard's p95 can
/// say ten minutes; a model call keeps the advice's buckets.
#[test]
fn a_ten_minute_turn_lands_in_a_finite_bucket() {
    let mut r = Recorder::new(0);
    r.record(&span(
        vec![(GEN_AI_OPERATION_NAME, Value::Static(OP_INVOKE_AGENT))],
        600.0,
    ));
    r.record(&span(
        vec![
            (GEN_AI_OPERATION_NAME, Value::Static(OP_EXECUTE_TOOL)),
            (GEN_AI_TOOL_NAME, Value::Static("run")),
        ],
        600.0,
    ));
    r.record(&chat("m", 1, 1, None));
    let out = decode(&r.take(1, &ResourceInfo::build(None, &[])).unwrap());
    for m in &out.resource_metrics[0].scope_metrics[0].metrics {
        let Some(Data::Histogram(h)) = &m.data else {
            continue;
        };
        let p = &h.data_points[0];
        assert_eq!(
            p.bucket_counts.len(),
            p.explicit_bounds.len() + 1,
            "{}",
            m.name
        );
        if m.name == GEN_AI_CLIENT_OPERATION_DURATION {
            assert_eq!(p.explicit_bounds.last(), Some(&81.92));
            continue;
        }
        if m.name == GEN_AI_CLIENT_TOKEN_USAGE {
            continue;
        }
        assert!(*p.explicit_bounds.last().unwrap() >= 3600.0, "{}", m.name);
        let i = p.bucket_counts.iter().position(|&c| c == 1).unwrap();
        assert!(
            i < p.explicit_bounds.len(),
            "{}: in the +Inf bucket",
            m.name
        );
        assert_eq!(
            (p.explicit_bounds[i - 1], p.explicit_bounds[i]),
            (327.68, 655.36),
            "{}",
            m.name
        );
    }
}
