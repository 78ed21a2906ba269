//! One interval's series as an OTLP `ExportMetricsServiceRequest`, through prost's generated
//! messages: a request per interval (a minute, or one per process) is too rare for the
//! hand-written span encoder's care to pay.

use std::collections::BTreeMap;

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::{
    metric::Data, number_data_point, AggregationTemporality, Histogram as ProtoHistogram,
    HistogramDataPoint, Metric, NumberDataPoint, ResourceMetrics, ScopeMetrics, Sum,
};
use prost::Message;

use super::labels::Labels;
use super::names::*;
use super::{Histogram, Instrument, Kind, Row};
use crate::export::{Batch, ResourceInfo};

const DELTA: i32 = AggregationTemporality::Delta as i32;

fn describe(i: Instrument) -> (&'static str, &'static str, &'static str) {
    match i {
        Instrument::TokenUsage => (
            GEN_AI_CLIENT_TOKEN_USAGE,
            UNIT_TOKEN,
            "Number of input and output tokens used.",
        ),
        Instrument::OperationDuration => (
            GEN_AI_CLIENT_OPERATION_DURATION,
            UNIT_SECONDS,
            "GenAI operation duration.",
        ),
        Instrument::InvokeAgent => (
            GEN_AI_INVOKE_AGENT_DURATION,
            UNIT_SECONDS,
            "The end-to-end duration of a single agent invocation.",
        ),
        Instrument::ExecuteTool => (
            GEN_AI_EXECUTE_TOOL_DURATION,
            UNIT_SECONDS,
            "The duration of a single tool execution.",
        ),
        Instrument::Cost => (
            ALBEDO_USAGE_COST,
            UNIT_USD,
            "What the priced model calls cost, at list prices, in US dollars.",
        ),
    }
}

fn attribute(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        key_strindex: 0,
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(value.to_string())),
        }),
    }
}

fn attributes(labels: &Labels) -> Vec<KeyValue> {
    labels.pairs().map(|(k, v)| attribute(k, v)).collect()
}

enum Point {
    Histogram(Vec<KeyValue>, Histogram),
    Sum(Vec<KeyValue>, f64),
}

/// The request, with `start_ns..now_ns` on every point; `rows` in the order their points
/// are listed.
pub(super) fn request(
    resource: &ResourceInfo,
    start_ns: u64,
    now_ns: u64,
    rows: Vec<(Kind, Labels, Row)>,
) -> Batch {
    let mut by_instrument: BTreeMap<Instrument, Vec<Point>> = BTreeMap::new();
    let mut points = 0u64;
    let mut put = |instrument, point| {
        by_instrument.entry(instrument).or_default().push(point);
        points += 1;
    };
    for (kind, labels, row) in rows {
        let attrs = attributes(&labels);
        if let Some(h) = row.duration {
            put(kind.duration(), Point::Histogram(attrs.clone(), h));
        }
        for (token_type, h) in [
            (TOKEN_TYPE_INPUT, row.input),
            (TOKEN_TYPE_OUTPUT, row.output),
        ] {
            if let Some(h) = h {
                let mut a = attrs.clone();
                a.push(attribute(GEN_AI_TOKEN_TYPE, token_type));
                put(Instrument::TokenUsage, Point::Histogram(a, h));
            }
        }
        if let Some(c) = row.cost {
            put(Instrument::Cost, Point::Sum(attrs, c));
        }
    }
    let metrics = by_instrument
        .into_iter()
        .map(|(instrument, series)| {
            let (name, unit, description) = describe(instrument);
            let data = match instrument {
                Instrument::Cost => Data::Sum(Sum {
                    data_points: series
                        .into_iter()
                        .filter_map(|p| match p {
                            Point::Sum(attributes, v) => Some(NumberDataPoint {
                                attributes,
                                start_time_unix_nano: start_ns,
                                time_unix_nano: now_ns,
                                value: Some(number_data_point::Value::AsDouble(v)),
                                ..Default::default()
                            }),
                            Point::Histogram(..) => None,
                        })
                        .collect(),
                    aggregation_temporality: DELTA,
                    is_monotonic: true,
                }),
                other => Data::Histogram(ProtoHistogram {
                    data_points: series
                        .into_iter()
                        .filter_map(|p| match p {
                            Point::Histogram(attributes, h) => Some(HistogramDataPoint {
                                attributes,
                                start_time_unix_nano: start_ns,
                                time_unix_nano: now_ns,
                                count: h.count,
                                sum: Some(h.sum),
                                bucket_counts: h.buckets,
                                explicit_bounds: bounds(other).to_vec(),
                                min: Some(h.min),
                                max: Some(h.max),
                                ..Default::default()
                            }),
                            Point::Sum(..) => None,
                        })
                        .collect(),
                    aggregation_temporality: DELTA,
                }),
            };
            Metric {
                name: name.into(),
                description: description.into(),
                unit: unit.into(),
                metadata: Vec::new(),
                data: Some(data),
            }
        })
        .collect();
    let request = ExportMetricsServiceRequest {
        resource_metrics: vec![ResourceMetrics {
            resource: Some(resource.resource.clone()),
            scope_metrics: vec![ScopeMetrics {
                scope: Some(resource.scope.clone()),
                metrics,
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
    };
    Batch {
        body: request.encode_to_vec().into(),
        spans: points,
    }
}

/// The bucket boundaries of a histogram instrument.
fn bounds(instrument: Instrument) -> &'static [f64] {
    match instrument {
        Instrument::TokenUsage => &TOKEN_BUCKETS,
        Instrument::InvokeAgent | Instrument::ExecuteTool => &LONG_DURATION_BUCKETS,
        _ => &DURATION_BUCKETS,
    }
}
