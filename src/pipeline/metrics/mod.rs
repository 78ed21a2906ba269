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
pub mod names;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::assemble::semconv::{
    GEN_AI_USAGE_COST, GEN_AI_USAGE_INPUT_TOKENS, GEN_AI_USAGE_OUTPUT_TOKENS, OP_CHAT,
    OP_EXECUTE_TOOL, OP_INVOKE_AGENT,
};
use crate::assemble::span::{Span, Status, Value};
use crate::export::otlp::OtlpSettings;
use crate::export::{Payload, ResourceInfo};
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Instrument {
    TokenUsage,
    OperationDuration,
    InvokeAgent,
    ExecuteTool,
    Cost,
}

/// A label's text: a span's own shared string (names are interned by the assembly, so this
/// is a reference count, not a copy) or a constant.
#[derive(Debug, Clone)]
enum Text {
    Static(&'static str),
    Shared(Arc<str>),
}

impl Text {
    fn as_str(&self) -> &str {
        match self {
            Text::Static(s) => s,
            Text::Shared(s) => s,
        }
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}
impl Eq for Text {}
impl std::hash::Hash for Text {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}
impl PartialOrd for Text {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Text {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

/// A point's attributes: one slot per [`POINT_KEYS`] entry, in that order whatever the
/// span's, so equal label sets are one series; then the token type, then the overflow mark.
/// Filled without allocating: this runs for every exported span.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Labels {
    values: [Option<Text>; POINT_KEYS.len()],
    token_type: Option<&'static str>,
    overflow: bool,
}

impl Labels {
    /// The series every point past the limit goes to.
    fn overflow() -> Labels {
        Labels {
            overflow: true,
            ..Labels::default()
        }
    }

    /// The (key, value) pairs, in order.
    fn pairs(&self) -> impl Iterator<Item = (&'static str, &str)> + '_ {
        POINT_KEYS
            .iter()
            .zip(&self.values)
            .filter_map(|(k, v)| Some((*k, v.as_ref()?.as_str())))
            .chain(self.token_type.map(|t| (GEN_AI_TOKEN_TYPE, t)))
            .chain(self.overflow.then_some((OTEL_METRIC_OVERFLOW, "true")))
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
}

#[derive(Debug, Clone)]
enum Aggregate {
    Histogram(Histogram),
    Sum(f64),
}

/// What was recorded since the last export.
#[derive(Debug)]
pub(crate) struct Recorder {
    start_ns: u64,
    series: Series,
}

/// The series of one interval. Hashed with foldhash, not SipHash: the keys are our own
/// spans' names, and this map is touched for every exported span.
type Series = HashMap<(Instrument, Labels), Aggregate, foldhash::fast::RandomState>;

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
        let instrument = match op {
            Some(OP_CHAT) => Instrument::OperationDuration,
            Some(OP_EXECUTE_TOOL) => Instrument::ExecuteTool,
            Some(OP_INVOKE_AGENT) => Instrument::InvokeAgent,
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
                        if let Some(text) = label(&a.value) {
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
        if instrument != Instrument::OperationDuration {
            self.histogram(instrument, labels, seconds);
            return;
        }
        self.histogram(instrument, labels.clone(), seconds);
        // Tokens and cost are not split by error: a failed call's tokens still count.
        labels.values[ERROR_SLOT] = None;
        if let Some(c) = cost {
            self.sum(Instrument::Cost, labels.clone(), c);
        }
        for (kind, n) in [(TOKEN_TYPE_INPUT, input), (TOKEN_TYPE_OUTPUT, output)] {
            if let Some(n) = n {
                let mut l = labels.clone();
                l.token_type = Some(kind);
                self.histogram(Instrument::TokenUsage, l, n);
            }
        }
    }

    /// The series for `labels`, or the overflow series once there are too many.
    fn entry(&mut self, instrument: Instrument, labels: Labels) -> &mut Aggregate {
        let mut key = (instrument, labels);
        if self.series.len() >= MAX_SERIES && !self.series.contains_key(&key) {
            key = (instrument, Labels::overflow());
        }
        self.series.entry(key).or_insert_with(|| fresh(instrument))
    }

    fn histogram(&mut self, instrument: Instrument, labels: Labels, v: f64) {
        if let Aggregate::Histogram(h) = self.entry(instrument, labels) {
            h.add(bounds(instrument), v);
        }
    }

    fn sum(&mut self, instrument: Instrument, labels: Labels, v: f64) {
        if let Aggregate::Sum(s) = self.entry(instrument, labels) {
            *s += v;
        }
    }

    /// The points recorded since the last export, as an `ExportMetricsServiceRequest`
    /// (delta, from the last export to `now_ns`); the next interval starts at `now_ns`.
    /// `None` when nothing was recorded.
    pub fn take(&mut self, now_ns: u64, resource: &ResourceInfo) -> Option<Payload> {
        let start = std::mem::replace(&mut self.start_ns, now_ns);
        if self.series.is_empty() {
            return None;
        }
        let series = std::mem::take(&mut self.series);
        Some(encode::request(resource, start, now_ns.max(start), series))
    }
}

fn fresh(instrument: Instrument) -> Aggregate {
    match instrument {
        Instrument::Cost => Aggregate::Sum(0.0),
        other => Aggregate::Histogram(Histogram::new(bounds(other))),
    }
}

fn bounds(instrument: Instrument) -> &'static [f64] {
    match instrument {
        Instrument::TokenUsage => &TOKEN_BUCKETS,
        _ => &DURATION_BUCKETS,
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

/// A label's text; shared strings (most of them) are shared, not copied.
fn label(v: &Value) -> Option<Text> {
    match v {
        Value::Shared(s) => Some(Text::Shared(s.clone())),
        Value::Static(s) => Some(Text::Static(s)),
        Value::Str(s) => Some(Text::Shared(Arc::from(s.as_str()))),
        _ => None,
    }
}

/// Where `key` goes in [`Labels::values`]: its place in [`POINT_KEYS`]. A `match`, not a
/// search of the list, since every attribute of every exported span asks.
fn slot(key: &str) -> Option<usize> {
    Some(match key {
        GEN_AI_OPERATION_NAME => 0,
        GEN_AI_PROVIDER_NAME => 1,
        GEN_AI_REQUEST_MODEL => 2,
        GEN_AI_RESPONSE_MODEL => 3,
        GEN_AI_TOOL_NAME => 4,
        GEN_AI_AGENT_NAME => 5,
        ERROR_TYPE => ERROR_SLOT,
        USER_ID => 7,
        VCS_REPOSITORY_URL_FULL => 8,
        _ => return None,
    })
}

const ERROR_SLOT: usize = 6;

/// Wall-clock now, in Unix nanoseconds.
pub(crate) fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests;
