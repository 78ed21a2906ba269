//! GenAI metrics, derived from the finished spans on their way to export, so that every route
//! (a stream, the hook daemon, a replay, an in-process host) gets them with no change to its
//! source, and a metric can never disagree with the spans it was counted from.
//!
//! Each `chat` span adds its input and output tokens to `gen_ai.client.token.usage`, its
//! duration to `gen_ai.client.operation.duration` and its `gen_ai.usage.cost` to
//! `albedo.usage.cost`; each `execute_tool` and `invoke_agent` span its duration to its own
//! histogram. Points carry the span's model, provider, tool, agent, error, user and repository
//! ([`names::POINT_KEYS`]), never a session, trace or call id.
//!
//! Temporality is delta: each export holds what was recorded since the last one, its points
//! starting where the last export ended (the first at the recorder's start). The exporter is
//! short-lived (the daemon exits when idle, `run` lasts one session), and deltas from one
//! process after another add up to the true totals in any backend that sums them (a
//! collector's `deltatocumulative` processor, then Prometheus), whatever the processes'
//! resource; cumulative points from processes that share a resource would instead look like
//! one counter that keeps resetting, and add up only if every process had an identity of its
//! own, one more set of series per process.

mod encode;
mod labels;
pub mod names;

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use crate::assemble::semconv::{
    GEN_AI_USAGE_COST, GEN_AI_USAGE_INPUT_TOKENS, GEN_AI_USAGE_OUTPUT_TOKENS, OP_CHAT,
    OP_EXECUTE_TOOL, OP_INVOKE_AGENT,
};
use crate::assemble::span::{Span, Status, Value};
use crate::export::otlp::OtlpSettings;
use crate::export::{Batch, ResourceInfo};
use labels::{slot, Labels, Text, ERROR_SLOT};
use names::*;

/// Where and how often metrics go.
#[derive(Debug, Clone)]
pub struct MetricsConfig {
    /// The traces' settings (headers, TLS, compression, timeout, protocol), with the metrics
    /// endpoint.
    pub otlp: OtlpSettings,
    /// `OTEL_METRIC_EXPORT_INTERVAL`.
    pub interval: Duration,
}

/// Series kept per export interval, at most; points for any other go to one overflow series
/// (`otel.metric.overflow=true`), so a flood of new model or tool names costs bounded memory.
const MAX_SERIES: usize = 2000;

/// The instruments, in the order an export lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Instrument {
    TokenUsage,
    OperationDuration,
    InvokeAgent,
    ExecuteTool,
    Cost,
}

/// The spans a series counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Kind {
    Chat,
    Tool,
    Agent,
}

impl Kind {
    /// The histogram a span's duration goes to.
    fn duration(self) -> Instrument {
        match self {
            Kind::Chat => Instrument::OperationDuration,
            Kind::Tool => Instrument::ExecuteTool,
            Kind::Agent => Instrument::InvokeAgent,
        }
    }
}

#[derive(Debug, Clone)]
struct Histogram {
    count: u64,
    sum: f64,
    min: f64,
    max: f64,
    /// One more than the boundaries: the last counts values above the highest.
    buckets: Vec<u64>,
}

impl Histogram {
    fn new(bounds: &[f64]) -> Self {
        Histogram {
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            buckets: vec![0; bounds.len() + 1],
        }
    }

    fn add(&mut self, bounds: &[f64], v: f64) {
        self.count += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        // OTLP buckets are upper-inclusive: (bounds[i-1], bounds[i]].
        let i = bounds.partition_point(|b| *b < v);
        self.buckets[i] += 1;
    }

    fn merge(&mut self, other: &Histogram) {
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a += b;
        }
    }
}

/// What one series counted in an interval: its spans' durations, and for model calls their
/// tokens and cost. One lookup per span, whatever it adds to.
#[derive(Debug, Clone, Default)]
struct Row {
    duration: Option<Histogram>,
    input: Option<Histogram>,
    output: Option<Histogram>,
    cost: Option<f64>,
}

fn add(h: &mut Option<Histogram>, bounds: &[f64], v: f64) {
    h.get_or_insert_with(|| Histogram::new(bounds))
        .add(bounds, v);
}

fn merge(h: &mut Option<Histogram>, other: Option<Histogram>) {
    match (h.as_mut(), other) {
        (Some(a), Some(b)) => a.merge(&b),
        (None, b) => *h = b,
        (_, None) => {}
    }
}

impl Row {
    fn merge(&mut self, other: Row) {
        merge(&mut self.duration, other.duration);
        merge(&mut self.input, other.input);
        merge(&mut self.output, other.output);
        if let Some(c) = other.cost {
            self.cost = Some(self.cost.unwrap_or(0.0) + c);
        }
    }
}

/// The series of one interval. Hashed with foldhash over the labels' addresses, not
/// SipHash over their texts: this map is touched for every exported span.
type Series = HashMap<(Kind, Labels), Row, foldhash::fast::RandomState>;

/// What was recorded since the last export.
#[derive(Debug)]
pub(crate) struct Recorder {
    start_ns: u64,
    series: Series,
}

impl Recorder {
    pub fn new(now_ns: u64) -> Self {
        Recorder {
            start_ns: now_ns,
            series: Series::default(),
        }
    }

    /// Counts one finished span; spans of other operations are left alone.
    pub fn record(&mut self, span: &Span) {
        let op = span.attributes.iter().find_map(|a| match a.key {
            GEN_AI_OPERATION_NAME => a.value.as_str(),
            _ => None,
        });
        let kind = match op {
            Some(OP_CHAT) => Kind::Chat,
            Some(OP_EXECUTE_TOOL) => Kind::Tool,
            Some(OP_INVOKE_AGENT) => Kind::Agent,
            _ => return,
        };
        let (mut input, mut output, mut cost) = (None, None, None);
        let mut labels = Labels::default();
        for a in &span.attributes {
            match a.key {
                GEN_AI_USAGE_INPUT_TOKENS => input = count(&a.value),
                GEN_AI_USAGE_OUTPUT_TOKENS => output = count(&a.value),
                GEN_AI_USAGE_COST => cost = dollars(&a.value),
                key => {
                    if let Some(i) = slot(key) {
                        if let Some(text) = Text::of(&a.value) {
                            labels.values[i] = Some(text);
                        }
                    }
                }
            }
        }
        let seconds = span.end_ns.saturating_sub(span.start_ns) as f64 / 1e9;
        let error = &mut labels.values[ERROR_SLOT];
        if matches!(span.status, Status::Error(_)) && error.is_none() {
            *error = Some(Text::Static("_OTHER"));
        }
        if kind != Kind::Chat {
            add(
                &mut self.row(kind, labels).duration,
                &LONG_DURATION_BUCKETS,
                seconds,
            );
            return;
        }
        let failed = labels.values[ERROR_SLOT].is_some();
        if failed {
            add(
                &mut self.row(kind, labels.clone()).duration,
                &DURATION_BUCKETS,
                seconds,
            );
            // Tokens and cost are not split by error: a failed call's tokens still count.
            labels.values[ERROR_SLOT] = None;
        }
        // The usual model call: its duration, tokens and cost in one series.
        let row = self.row(kind, labels);
        if !failed {
            add(&mut row.duration, &DURATION_BUCKETS, seconds);
        }
        if let Some(n) = input {
            add(&mut row.input, &TOKEN_BUCKETS, n);
        }
        if let Some(n) = output {
            add(&mut row.output, &TOKEN_BUCKETS, n);
        }
        if let Some(c) = cost {
            row.cost = Some(row.cost.unwrap_or(0.0) + c);
        }
    }

    /// The series for `labels`, or the overflow series once there are too many.
    fn row(&mut self, kind: Kind, labels: Labels) -> &mut Row {
        let mut key = (kind, labels);
        if self.series.len() >= MAX_SERIES && !self.series.contains_key(&key) {
            key = (kind, Labels::overflow());
        }
        self.series.entry(key).or_default()
    }

    /// The points recorded since the last export, as an `ExportMetricsServiceRequest`
    /// (delta, from the last export to `now_ns`); the next interval starts at `now_ns`.
    /// `None` when nothing was recorded.
    pub fn take(&mut self, now_ns: u64, resource: &ResourceInfo) -> Option<Batch> {
        let start = std::mem::replace(&mut self.start_ns, now_ns);
        if self.series.is_empty() {
            return None;
        }
        // Series whose texts are equal but were different strings become one, in a stable
        // order: once an interval, not once a span.
        type ByText = (Kind, Vec<(&'static str, String)>);
        let mut merged: BTreeMap<ByText, (Labels, Row)> = BTreeMap::new();
        for ((kind, labels), row) in std::mem::take(&mut self.series) {
            match merged.entry((kind, labels.by_text())) {
                std::collections::btree_map::Entry::Occupied(mut o) => o.get_mut().1.merge(row),
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert((labels, row));
                }
            }
        }
        let rows = merged
            .into_iter()
            .map(|((kind, _), (labels, row))| (kind, labels, row))
            .collect();
        Some(encode::request(resource, start, now_ns.max(start), rows))
    }
}

fn count(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) if *i >= 0 => Some(*i as f64),
        _ => None,
    }
}

fn dollars(v: &Value) -> Option<f64> {
    match v {
        Value::Double(d) if d.is_finite() && *d >= 0.0 => Some(*d),
        _ => None,
    }
}

/// Wall-clock now, in Unix nanoseconds.
pub(crate) fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests;
