//! The scale tier of deploy/scale/ as local processes, for tests/deploy/stack_scale.rs: a gateway
//! collector in front of two sampler collectors, each sampler sending what it keeps to a Jaeger
//! of its own, so that where a trace went shows; turns of known kinds; and what the sampling
//! policy keeps of them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use super::otlp_json::JsonSpan;
use super::poll_until;
use super::stack::{free_port, metric_sum, Collector, Jaeger, Tools};
use super::traces::{send_with, traces_of};
use super::{scratch, Scratch};

pub const SLOW_MS: u64 = 150_000;

/// Sessions whose turns are, in turn: fast and ok; slow (a 150 s call) and ok; fast with a
/// call that timed out, an error.
pub fn sessions(count: usize, prefix: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for s in 0..count {
        let sid = format!("{prefix}-{s:03}");
        let mut t = 1_796_100_000_000 + s as u64 * 1_000;
        lines.push(json!({"v":1,"kind":"session","session":sid,"at_ms":t,"agent":"albedo","model":"claude-sonnet-4-5","workspace":"/home/dev/p"}).to_string());
        for k in 0..3 {
            let (slow, fails) = match (s + k) % 3 {
                0 => (false, false),
                1 => (true, false),
                _ => (false, true),
            };
            t += 1_000;
            lines.push(
                json!({"v":1,"kind":"prompted","session":sid,"at_ms":t,"text":format!("turn {k}")})
                    .to_string(),
            );
            lines.push(json!({"v":1,"kind":"call_sent","session":sid,"id":format!("m{k}"),
                "request":{"model":"claude-sonnet-4-5","provider":"anthropic","max_tokens":1024},
                "response":{"id":format!("msg{k}"),"model":"claude-sonnet-4-5","stop_reason":"tool_use"},
                "usage":{"input_tokens":100,"output_tokens":20},"started_ms":t + 10,"finished_ms":t + 1_010}).to_string());
            let call = json!({"id":format!("c{k}"),"name":"run","arguments":{"command":"cargo test"},"within":null});
            let (start, end) = (t + 1_020, t + 1_020 + if slow { SLOW_MS } else { 500 });
            lines.push(
                json!({"v":1,"kind":"calling","session":sid,"at_ms":start,"call":call}).to_string(),
            );
            lines.push(json!({"v":1,"kind":"called","session":sid,"call":call,
                "output":{"exit_code":if fails { 124 } else { 0 },"timed_out":fails},"started_ms":start,"finished_ms":end}).to_string());
            t = end + 10;
            lines.push(
                json!({"v":1,"kind":"turn_ended","session":sid,"at_ms":t,"reason":"end_turn"})
                    .to_string(),
            );
        }
    }
    lines
}

/// What the sampler policy keeps of each trace: an error anywhere, or longer than 120 s from
/// its first start to its last end (the `latency` policy's own measure).
pub fn kept_by_policy(
    spans: &BTreeMap<String, JsonSpan>,
) -> (BTreeSet<String>, BTreeMap<&'static str, usize>) {
    let mut by_trace: BTreeMap<&str, Vec<&JsonSpan>> = BTreeMap::new();
    for s in spans.values() {
        by_trace.entry(&s.trace).or_default().push(s);
    }
    let mut kept = BTreeSet::new();
    let mut classes = BTreeMap::new();
    for (trace, spans) in by_trace {
        let error = spans.iter().any(|s| s.status.0 == 2);
        let first = spans.iter().map(|s| s.start_ns).min().unwrap();
        let last = spans.iter().map(|s| s.end_ns).max().unwrap();
        let slow = (last - first) / 1_000_000 > 120_000;
        *classes
            .entry(match (error, slow) {
                (true, _) => "error",
                (false, true) => "slow ok",
                (false, false) => "fast ok",
            })
            .or_default() += 1;
        if error || slow {
            kept.insert(trace.to_string());
        }
    }
    (kept, classes)
}

pub struct Tier {
    pub jaegers: [Jaeger; 2],
    pub samplers: [Collector; 2],
    pub gateway: Collector,
    /// Removed once the programs above are stopped (fields drop in order).
    pub dir: Scratch,
}

pub fn sampler(
    tools: &Tools,
    jaeger: &Jaeger,
    dir: &Path,
    name: &str,
    port: u16,
    wait: &str,
) -> Collector {
    let env = [
        ("SAMPLER_TRACES_ENDPOINT", jaeger.otlp_endpoint()),
        ("SAMPLER_DECISION_WAIT", wait.to_string()),
        ("SAMPLER_KEEP_PERCENT", "0".to_string()),
        // No Prometheus here: the span metrics' exporter retries against a closed port.
        (
            "SAMPLER_METRICS_ENDPOINT",
            format!("http://127.0.0.1:{}/api/v1/otlp", free_port()),
        ),
    ];
    Collector::start_on(
        tools,
        "deploy/scale/sampler-collector.yaml",
        &env,
        dir,
        name,
        port,
    )
}

/// Two Jaegers, a sampler in front of each, and the gateway on `gateway_config`, its metrics
/// going nowhere.
pub fn tier(
    tools: &Tools,
    what: &str,
    wait: &str,
    gateway_config: impl FnOnce(&Path) -> String,
) -> Tier {
    // No Prometheus: the gateway's metrics exporter retries against a closed port.
    let metrics = format!("http://127.0.0.1:{}/api/v1/otlp", free_port());
    tier_with_metrics(tools, what, wait, gateway_config, &metrics)
}

/// [`tier`], with the gateway sending albedo-otel's metrics to `metrics` (Prometheus' OTLP
/// receiver, without its `/v1/metrics`).
pub fn tier_with_metrics(
    tools: &Tools,
    what: &str,
    wait: &str,
    gateway_config: impl FnOnce(&Path) -> String,
    metrics: &str,
) -> Tier {
    let dir = scratch(what);
    let jaegers = [
        Jaeger::start(tools, &dir, "jaeger-1"),
        Jaeger::start(tools, &dir, "jaeger-2"),
    ];
    let samplers = [
        sampler(tools, &jaegers[0], &dir, "sampler-1", free_port(), wait),
        sampler(tools, &jaegers[1], &dir, "sampler-2", free_port(), wait),
    ];
    let env = [
        (
            "GATEWAY_SAMPLER_1",
            format!("127.0.0.1:{}", samplers[0].grpc),
        ),
        (
            "GATEWAY_SAMPLER_2",
            format!("127.0.0.1:{}", samplers[1].grpc),
        ),
        ("GATEWAY_METRICS_ENDPOINT", metrics.to_string()),
    ];
    let gateway = Collector::start(tools, &gateway_config(&dir), &env, &dir, "gateway");
    Tier {
        jaegers,
        samplers,
        gateway,
        dir,
    }
}

pub const GATEWAY: &str = "deploy/scale/gateway-collector.yaml";

pub fn counter(c: &Collector, metric: &str, with: &[&str]) -> u64 {
    metric_sum(&c.telemetry(), metric, with) as u64
}

/// Traces a sampler has seen, and decided on, by its own counters.
pub fn received(c: &Collector) -> u64 {
    counter(
        c,
        "otelcol_processor_tail_sampling_new_trace_id_received",
        &[],
    )
}
pub fn decided(c: &Collector) -> u64 {
    counter(
        c,
        "otelcol_processor_tail_sampling_global_count_traces_sampled",
        &[],
    )
}
pub fn sampled(c: &Collector) -> u64 {
    counter(
        c,
        "otelcol_processor_tail_sampling_global_count_traces_sampled",
        &[r#"sampled="true""#],
    )
}

/// Waits on other programs' metrics, asked every 100 ms.
pub fn wait_for(timeout: Duration, what: &str, done: impl FnMut() -> bool) {
    let polled = poll_until(timeout, Duration::from_millis(100), done);
    assert!(polled, "timed out after {timeout:?} waiting for {what}");
}

/// The traces Jaeger `i` shows, each with its spans, once it shows as many whole traces as
/// its sampler kept (by the sampler's count), or after `timeout`: then what is missing or
/// partial is reported by the caller.
pub fn shown(
    tier: &Tier,
    i: usize,
    traces: &BTreeMap<String, BTreeSet<String>>,
    timeout: Duration,
) -> BTreeMap<String, BTreeSet<String>> {
    let deadline = Instant::now() + timeout;
    loop {
        let kept = sampled(&tier.samplers[i]);
        let got = tier.jaegers[i].all_traces();
        let whole = got.iter().all(|(t, s)| traces.get(t) == Some(s));
        if (got.len() as u64 >= kept && whole) || Instant::now() >= deadline {
            return got;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub struct Outcome {
    pub problems: Vec<String>,
    pub split: usize,
    pub routed: [u64; 2],
}

/// Sends `input` through the gateway, waits for every decision, and compares what each Jaeger
/// shows with what the policy keeps of `spans`.
pub fn run(
    tier: &Tier,
    input: &Path,
    spans: &BTreeMap<String, JsonSpan>,
    send_args: &[&str],
) -> Outcome {
    let traces = traces_of(spans);
    let (kept, _) = kept_by_policy(spans);
    send_with(
        input,
        "grpc",
        &format!("http://127.0.0.1:{}", tier.gateway.grpc),
        send_args,
    );
    let what = format!("the samplers to decide on the {} traces sent", traces.len());
    wait_for(Duration::from_secs(60), &what, || {
        let [a, b] = &tier.samplers;
        let seen = received(a) + received(b);
        seen >= traces.len() as u64 && decided(a) + decided(b) >= seen
    });
    let routed = [received(&tier.samplers[0]), received(&tier.samplers[1])];
    let shown = [0, 1].map(|i| shown(tier, i, &traces, Duration::from_secs(10)));
    let mut problems = Vec::new();
    let split = shown[0]
        .keys()
        .filter(|t| shown[1].contains_key(*t))
        .count();
    for (trace, want) in &traces {
        let got: BTreeSet<&String> = shown.iter().flat_map(|s| s.get(trace)).flatten().collect();
        let whole = got.len() == want.len() && shown.iter().any(|s| s.get(trace) == Some(want));
        match (kept.contains(trace), got.is_empty()) {
            (true, true) => {
                problems.push(format!("{trace}: the policy keeps it; it never arrived"))
            }
            (false, false) => problems.push(format!("{trace}: a fast ok turn, kept")),
            (true, false) if !whole => problems.push(format!(
                "{trace}: not whole through one sampler: {} and {} of its {} spans",
                shown[0].get(trace).map_or(0, |s| s.len()),
                shown[1].get(trace).map_or(0, |s| s.len()),
                want.len()
            )),
            _ => {}
        }
    }
    Outcome {
        problems,
        split,
        routed,
    }
}
