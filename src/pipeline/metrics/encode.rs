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

use super::names::*;
use super::{bounds, Aggregate, Instrument, Labels, Series};
use crate::export::{Payload, ResourceInfo};

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

fn attributes(labels: &Labels) -> Vec<KeyValue> {
    labels
        .pairs()
        .map(|(k, v)| KeyValue {
            key: k.to_string(),
            key_strindex: 0,
            value: Some(AnyValue {
                value: Some(any_value::Value::StringValue(v.to_string())),
            }),
        })
        .collect()
}

/// The request, with `start_ns..now_ns` on every point.
pub(super) fn request(
    resource: &ResourceInfo,
    start_ns: u64,
    now_ns: u64,
    series: Series,
) -> Payload {
    let mut by_instrument: BTreeMap<Instrument, Vec<(Labels, Aggregate)>> = BTreeMap::new();
    let mut points = 0u64;
    for ((instrument, labels), aggregate) in series {
        by_instrument
            .entry(instrument)
            .or_default()
            .push((labels, aggregate));
        points += 1;
    }
    let metrics = by_instrument
        .into_iter()
        .map(|(instrument, mut series)| {
            series.sort_by(|a, b| a.0.cmp(&b.0));
            let (name, unit, description) = describe(instrument);
            let data = match instrument {
                Instrument::Cost => Data::Sum(Sum {
                    data_points: series
                        .into_iter()
                        .filter_map(|(labels, a)| match a {
                            Aggregate::Sum(v) => Some(NumberDataPoint {
                                attributes: attributes(&labels),
                                start_time_unix_nano: start_ns,
                                time_unix_nano: now_ns,
                                value: Some(number_data_point::Value::AsDouble(v)),
                                ..Default::default()
                            }),
                            Aggregate::Histogram(_) => None,
                        })
                        .collect(),
                    aggregation_temporality: DELTA,
                    is_monotonic: true,
                }),
                other => Data::Histogram(ProtoHistogram {
                    data_points: series
                        .into_iter()
                        .filter_map(|(labels, a)| match a {
                            Aggregate::Histogram(h) => Some(HistogramDataPoint {
                                attributes: attributes(&labels),
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
                            Aggregate::Sum(_) => None,
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
    Payload {
        body: request.encode_to_vec().into(),
        spans: points,
    }
}
