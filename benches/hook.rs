//! In-process hook cost: how long `SessionHandle::hook(&event)` takes to answer `proceed`,
//! as `cargo bench --bench hook` (or `scripts/bench`) measures it.
//!
//! The hook is what the agent waits on, so its cost is measured per call, not per batch: each
//! call is timed on its own, and the table gives the median and the 99th percentile. Three
//! states of the exporter behind it:
//! - **idle**: one event every 20 µs, a collector up; the worker has time to spare.
//! - **saturated**: after every timed call, eight more from the same thread without a pause;
//!   the queue stays full and the worker runs flat out.
//! - **collector down**: as idle, but the endpoint refuses connections, so the delivery
//!   thread is retrying and spooling to disk all along.
//!
//! Criterion runs the same loops for its own estimate of the mean; the percentile table is
//! printed afterwards. `BENCH_HOOK_SAMPLES` sets the timed calls per state (default 200,000);
//! `BENCH_HOOK_ONLY=idle` (or `saturated`, `collector down`) measures one state.

mod common;

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use serde_json::value::RawValue;

use albedo_otel::config::{OtlpOverrides, Protocol};
use albedo_otel::host::{HookEvent, Observed, SessionHandle, SessionMeta, TraceExporter};
use albedo_otel::pipeline::{PipelineConfig, PipelineGuard, SpoolConfig};
use albedo_otel::protocol::{Call, Called, Json};

const PACE: Duration = Duration::from_micros(20);
const FLOOD: usize = 8;

#[derive(Clone, Copy, PartialEq)]
enum Load {
    Paced,
    Flood,
}

struct State {
    name: &'static str,
    load: Load,
    session: SessionHandle,
    flood: SessionHandle,
    events: Vec<HookEvent>,
    exporter: TraceExporter,
    guard: Option<PipelineGuard>,
    _spool: TempDir,
}

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn json(text: &str) -> Json<'static> {
    Json(Cow::Owned(RawValue::from_string(text.to_string()).unwrap()))
}

/// One turn's hook events, the sizes of a typical coding-agent turn: a prompt, a shell call
/// with its arguments, its result with some output, and the stop.
fn turn_events() -> Vec<HookEvent> {
    let call = Call {
        id: Cow::Owned("toolu_01XFDUDYJgAACzvnptvVoYEL".into()),
        name: Cow::Owned("run".into()),
        arguments: Some(json(
            r#"{"command":"cargo test --workspace --locked -- --nocapture 2>&1 | tail -n 40","timeout_ms":120000,"cwd":"/home/dev/project"}"#,
        )),
        within: None,
    };
    let output = format!(
        r#"{{"exit_code":0,"timed_out":false,"stdout":"{}"}}"#,
        "test result: ok. 51 passed; 0 failed\\n".repeat(12)
    );
    vec![
        HookEvent::Prompted {
            text: "Run the test suite and fix whatever fails, then summarise what changed.".into(),
        },
        HookEvent::Calling {
            call: Arc::new(call.clone()),
        },
        HookEvent::Called(Arc::new(Called {
            call,
            output: Some(json(&output)),
            started_ms: 1_796_300_000_000,
            finished_ms: 1_796_300_004_250,
            refused: false,
            failed: false,
        })),
        HookEvent::Stopping {
            reply: "All 51 tests pass; I fixed the off-by-one in the line reader.".into(),
            held: 0,
        },
    ]
}

fn start(name: &'static str, load: Load, endpoint: String) -> State {
    let spool = TempDir(std::env::temp_dir().join(format!(
        "albedo-otel-hook-bench-{}-{}",
        std::process::id(),
        name.replace(' ', "-")
    )));
    let settings = albedo_otel::config::resolve_otlp(
        &OtlpOverrides {
            endpoint: Some(endpoint),
            protocol: Some(Protocol::Grpc),
            ..OtlpOverrides::default()
        },
        &|_| None,
    )
    .unwrap();
    let config = PipelineConfig {
        spool: Some(SpoolConfig {
            root: spool.0.clone(),
            max_bytes: 256 << 20,
        }),
        ..PipelineConfig::default()
    };
    let (exporter, guard) = TraceExporter::start(config, settings).unwrap();
    let session = exporter.session("bench-timed", SessionMeta::default());
    let flood = exporter.session("bench-flood", SessionMeta::default());
    State {
        name,
        load,
        session,
        flood,
        events: turn_events(),
        exporter,
        guard: Some(guard),
        _spool: spool,
    }
}

/// A copy of `e` with payloads of its own, as a host's next event would have.
fn fresh(e: &HookEvent) -> HookEvent {
    match e {
        HookEvent::Prompted { text } => HookEvent::Prompted {
            text: Arc::from(&**text),
        },
        HookEvent::Calling { call } => HookEvent::Calling {
            call: Arc::new((**call).clone()),
        },
        HookEvent::Called(c) => HookEvent::Called(Arc::new((**c).clone())),
        HookEvent::Stopping { reply, held } => HookEvent::Stopping {
            reply: Arc::from(&**reply),
            held: *held,
        },
    }
}

fn spin_until(t: Instant) {
    while Instant::now() < t {
        std::hint::spin_loop();
    }
}

impl State {
    /// Makes `n` timed hook calls and hands each one's nanoseconds to `record`.
    fn run(&self, n: u64, timer: &quanta::Clock, mut record: impl FnMut(u64)) {
        let turn_ended = Observed::TurnEnded { reason: None };
        let mut next = Instant::now();
        for i in 0..n as usize {
            // A host makes each event afresh, then calls the hook: so does this loop (untimed).
            let event = fresh(&self.events[i % self.events.len()]);
            if self.load == Load::Paced {
                next += PACE;
                spin_until(next);
            }
            let t0 = timer.raw();
            let verdict = self.session.hook(&event);
            let t1 = timer.raw();
            std::hint::black_box(verdict);
            record(timer.delta_as_nanos(t0, t1));
            if i % self.events.len() == self.events.len() - 1 {
                self.session.observe(&turn_ended);
            }
            if self.load == Load::Flood {
                for _ in 0..FLOOD {
                    std::hint::black_box(self.flood.hook(&event));
                }
            }
        }
    }
}

/// What two back-to-back reads of the cycle counter cost: every timed call includes it once.
fn timer_floor(timer: &quanta::Clock) -> u64 {
    let mut v: Vec<u64> = (0..100_000)
        .map(|_| {
            let t0 = timer.raw();
            let t1 = timer.raw();
            timer.delta_as_nanos(t0, t1)
        })
        .collect();
    v.sort_unstable();
    v[v.len() / 2]
}

fn main() {
    if std::env::var("BENCH_ROLE").as_deref() == Ok("sink") {
        common::sink();
        return;
    }
    // Quiet: a refused connection would otherwise warn on every retry of the "down" state.
    let sink = common::Sink::start();
    let down = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down_port = down.local_addr().unwrap().port();
    drop(down); // nothing listens there now
    let samples: usize = std::env::var("BENCH_HOOK_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000);
    // The flood last: what it leaves behind (a backlog for the sink, memory to give back)
    // must not land in another state's figures.
    let states = [
        (
            "idle",
            Load::Paced,
            format!("http://127.0.0.1:{}", sink.grpc),
        ),
        (
            "collector down",
            Load::Paced,
            format!("http://127.0.0.1:{down_port}"),
        ),
        (
            "saturated",
            Load::Flood,
            format!("http://127.0.0.1:{}", sink.grpc),
        ),
    ];

    let mut c = Criterion::default()
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500))
        .configure_from_args();
    let mut rows = Vec::new();
    let timer = quanta::Clock::new();
    let only = std::env::var("BENCH_HOOK_ONLY").ok();
    for (name, load, endpoint) in states {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let mut state = start(name, load, endpoint);
        c.bench_function(&format!("hook/{name}"), |b| {
            b.iter_custom(|iters| {
                let mut total = 0;
                state.run(iters, &timer, |ns| total += ns);
                Duration::from_nanos(total)
            })
        });
        let mut v = Vec::with_capacity(samples);
        state.run(samples as u64, &timer, |ns| v.push(ns));
        v.sort_unstable();
        let pct = |p: f64| v[((v.len() as f64 * p) as usize).min(v.len() - 1)];
        let stats = state.exporter.stats();
        let summary = state
            .guard
            .take()
            .unwrap()
            .close_within(Duration::from_secs(2));
        rows.push((
            state.name,
            pct(0.5),
            pct(0.99),
            pct(0.999),
            *v.last().unwrap(),
            stats.dropped_events.max(summary.dropped_events),
        ));
    }
    c.final_summary();

    let floor = timer_floor(&timer);
    println!();
    println!("hook(&event) in ns, {samples} timed calls per state, each timed alone with the CPU's cycle counter (a read pair costs {floor} ns, included)");
    println!("| exporter | median | p99 | p99.9 | max | events dropped (counted) |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for (name, p50, p99, p999, max, dropped) in rows {
        println!("| {name} | {p50} | {p99} | {p999} | {max} | {dropped} |");
    }
}
