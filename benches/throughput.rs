//! Pipeline throughput, as `cargo bench --bench throughput` (or `scripts/bench`) prints it:
//! NDJSON on the real binary's stdin to spans acknowledged by a local OTLP receiver, over gRPC
//! and HTTP/protobuf; and, in the same run, the OTel SDK's own `BatchSpanProcessor` with
//! `opentelemetry-otlp` sending pre-built spans of the same shape to the same receiver.
//!
//! The receiver (a sink that counts spans) is another process on core 1; the exporter under
//! test runs on core 0 (`taskset`), so "events/s" is what one core does.
//!
//! Roles, chosen by `BENCH_ROLE`: unset drives the run; `sink` serves OTLP and counts;
//! `sdk` runs the SDK baseline.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

mod common;
use common::{cpu_seconds, exe, metered, taskset, Sink};

use albedo_otel::assemble::{AssembleConfig, Assembler, Output, Span};
use albedo_otel::protocol::decode_line;
use albedo_otel::testing::{generate, GenConfig};

fn main() {
    match std::env::var("BENCH_ROLE").as_deref() {
        Ok("sink") => common::sink(),
        Ok("sdk") => sdk(),
        _ => drive(),
    }
}

// ---------------------------------------------------------------- the SDK baseline

fn spans_of(stream: &Path) -> Vec<Span> {
    let text = std::fs::read_to_string(stream).unwrap();
    let mut asm = Assembler::new(AssembleConfig::default());
    let mut out = Output::default();
    for l in text.lines() {
        asm.push(&decode_line(l.as_bytes()).unwrap(), &mut out);
    }
    asm.finish(&mut out);
    out.spans
}

fn to_span_data(s: &Span) -> opentelemetry_sdk::trace::SpanData {
    use albedo_otel::assemble::span::{Status, Value};
    use opentelemetry::trace::{SpanContext, TraceFlags, TraceState};
    use opentelemetry::{Array, KeyValue, StringValue};
    use std::borrow::Cow;
    let attrs = s
        .attributes
        .iter()
        .map(|a| {
            let v: opentelemetry::Value = match &a.value {
                Value::Str(x) => x.clone().into(),
                Value::Shared(x) => x.to_string().into(),
                Value::Static(x) => (*x).into(),
                Value::Int(i) => (*i).into(),
                Value::Double(d) => (*d).into(),
                Value::Bool(b) => (*b).into(),
                Value::StrList(l) => opentelemetry::Value::Array(Array::String(
                    l.iter().map(|x| StringValue::from(x.clone())).collect(),
                )),
            };
            KeyValue::new(a.key, v)
        })
        .collect();
    let ctx = |t, sp| SpanContext::new(t, sp, TraceFlags::SAMPLED, false, TraceState::default());
    let mut events = opentelemetry_sdk::trace::SpanEvents::default();
    for e in &s.events {
        events.events.push(opentelemetry::trace::Event::new(
            e.name,
            std::time::UNIX_EPOCH + Duration::from_nanos(e.time_ns),
            Vec::new(),
            0,
        ));
    }
    let mut links = opentelemetry_sdk::trace::SpanLinks::default();
    for l in &s.links {
        links.links.push(opentelemetry::trace::Link::new(
            ctx(l.trace_id, l.span_id),
            Vec::new(),
            0,
        ));
    }
    opentelemetry_sdk::trace::SpanData {
        span_context: ctx(s.trace_id, s.span_id),
        parent_span_id: s
            .parent_span_id
            .unwrap_or(opentelemetry::trace::SpanId::INVALID),
        parent_span_is_remote: false,
        span_kind: s.kind.clone(),
        name: Cow::Owned(s.name.clone()),
        start_time: std::time::UNIX_EPOCH + Duration::from_nanos(s.start_ns),
        end_time: std::time::UNIX_EPOCH + Duration::from_nanos(s.end_ns),
        attributes: attrs,
        dropped_attributes_count: 0,
        events,
        links,
        status: match &s.status {
            Status::Unset => opentelemetry::trace::Status::Unset,
            Status::Error(m) => opentelemetry::trace::Status::error(m.clone()),
        },
        instrumentation_scope: opentelemetry::InstrumentationScope::builder("albedo-otel").build(),
    }
}

/// The SDK path: pre-built spans through a `BatchSpanProcessor` into `opentelemetry-otlp`.
/// Prints the seconds from the first `on_end` until the sink has every span.
fn sdk() {
    use opentelemetry_otlp::{Protocol, WithExportConfig};
    use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SpanProcessor};
    let stream = PathBuf::from(std::env::var("BENCH_STREAM").unwrap());
    let protocol = std::env::var("BENCH_PROTOCOL").unwrap();
    let endpoint = std::env::var("BENCH_ENDPOINT").unwrap();
    let sink_http: u16 = std::env::var("BENCH_SINK_HTTP").unwrap().parse().unwrap();
    // reqwest is built without a default crypto provider in this workspace (see Cargo.toml).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let spans: Vec<_> = spans_of(&stream).iter().map(to_span_data).collect();
    let total = spans.len();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let _guard = rt.enter();
    let exporter = if protocol == "grpc" {
        opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(endpoint)
            .build()
            .unwrap()
    } else {
        opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{endpoint}/v1/traces"))
            .build()
            .unwrap()
    };
    // A queue that holds the whole burst: the default 2048 would drop most of it, silently.
    let config = BatchConfigBuilder::default()
        .with_max_queue_size(total + 1)
        .with_max_export_batch_size(512)
        .with_scheduled_delay(Duration::from_millis(1000))
        .build();
    let bsp = BatchSpanProcessor::builder(exporter)
        .with_batch_config(config)
        .build();
    let sink = Sink {
        child: Command::new("true").spawn().unwrap(),
        grpc: 0,
        http: sink_http,
    };
    let before = sink.count();
    let cpu0 = cpu_seconds("self", false);
    let start = Instant::now();
    for s in spans {
        bsp.on_end(s);
    }
    let _ = bsp.force_flush();
    let done = sink.wait_for(before + total as u64, Duration::from_secs(300));
    // CPU of the timed part only: building the SpanData above is not the SDK's cost.
    println!(
        "{} {}",
        (done - start).as_secs_f64(),
        cpu_seconds("self", false) - cpu0
    );
    let _ = bsp.shutdown();
}

// ---------------------------------------------------------------- the driver

struct Row {
    path: String,
    protocol: &'static str,
    seconds: f64,
    events: u64,
    spans: u64,
    /// CPU seconds the exporter process used (user + system), from the kernel's accounting.
    cpu: f64,
    /// CPU seconds the receiver used over the same run: if it nears `seconds`, it was the limit.
    sink_cpu: f64,
}

fn ours(sink: &Sink, stream: &Path, protocol: &'static str, events: u64, spans: u64) -> Row {
    let endpoint = if protocol == "grpc" {
        format!("http://127.0.0.1:{}", sink.grpc)
    } else {
        format!("http://127.0.0.1:{}", sink.http)
    };
    let spool =
        std::env::temp_dir().join(format!("albedo-otel-bench-spool-{}", std::process::id()));
    let before = sink.count();
    let ((seconds, ()), cpu, sink_cpu) = metered(sink, || {
        let start = Instant::now();
        let out = taskset("0", &exe())
            .args(["run", "--protocol", protocol, "--endpoint", &endpoint])
            .env("ALBEDO_OTEL_SPOOL_DIR", &spool)
            .env("ALBEDO_OTEL_LOG", "warn")
            .stdin(std::fs::File::open(stream).unwrap())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let done = sink.wait_for(before + spans, Duration::from_secs(300));
        ((done - start).as_secs_f64(), ())
    });
    Row {
        path: "albedo-otel run (NDJSON on stdin)".into(),
        protocol,
        seconds,
        events,
        spans,
        cpu,
        sink_cpu,
    }
}

fn sdk_row(sink: &Sink, stream: &Path, protocol: &'static str, events: u64, spans: u64) -> Row {
    let endpoint = if protocol == "grpc" {
        format!("http://127.0.0.1:{}", sink.grpc)
    } else {
        format!("http://127.0.0.1:{}", sink.http)
    };
    let (out, _, sink_cpu) = metered(sink, || {
        taskset("0", &std::env::current_exe().unwrap())
            .env("BENCH_ROLE", "sdk")
            .env("BENCH_STREAM", stream)
            .env("BENCH_PROTOCOL", protocol)
            .env("BENCH_ENDPOINT", endpoint)
            .env("BENCH_SINK_HTTP", sink.http.to_string())
            .output()
            .unwrap()
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    let mut printed = printed
        .split_whitespace()
        .map(|x| x.parse::<f64>().unwrap());
    let (seconds, cpu) = (printed.next().unwrap(), printed.next().unwrap());
    Row {
        path: "SDK BatchSpanProcessor + opentelemetry-otlp (pre-built spans)".into(),
        protocol,
        seconds,
        events,
        spans,
        cpu,
        sink_cpu,
    }
}

fn drive() {
    let sessions: usize = std::env::var("BENCH_SESSIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let (lines, expected) = generate(&GenConfig {
        sessions,
        turns_per_session: 5,
        ..GenConfig::default()
    });
    let stream =
        std::env::temp_dir().join(format!("albedo-otel-bench-{}.ndjson", std::process::id()));
    std::fs::write(&stream, lines.join("\n") + "\n").unwrap();
    let size = std::fs::metadata(&stream).unwrap().len();
    println!(
        "stream: {} sessions, {} events, {} spans, {:.1} MiB; exporter on core 0, receiver on core 1; best of {rounds}",
        expected.sessions,
        expected.events,
        expected.spans(),
        size as f64 / (1 << 20) as f64
    );
    let sink = Sink::start();
    let mut table = Vec::new();
    for protocol in ["grpc", "http/protobuf"] {
        let best = |f: &dyn Fn() -> Row| {
            (0..rounds)
                .map(|_| f())
                .min_by(|a, b| a.seconds.total_cmp(&b.seconds))
                .unwrap()
        };
        let sdk = best(&|| sdk_row(&sink, &stream, protocol, expected.events, expected.spans()));
        let us = best(&|| ours(&sink, &stream, protocol, expected.events, expected.spans()));
        table.push((us, sdk));
    }
    println!(
        "| path | protocol | wall s | events/s | spans/s | ratio | exporter CPU s | events per CPU-s | receiver CPU s |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (us, sdk) in &table {
        let sdk_spans = sdk.spans as f64 / sdk.seconds;
        let ratio = us.events as f64 / us.seconds / sdk_spans;
        for (r, ours) in [(us, true), (sdk, false)] {
            let per = |x: f64| format!("{:.0}", x);
            println!(
                "| {} | {} | {:.3} | {} | {:.0} | {} | {:.2} | {} | {:.2} |",
                r.path,
                r.protocol,
                r.seconds,
                if ours {
                    per(r.events as f64 / r.seconds)
                } else {
                    "n/a".into()
                },
                r.spans as f64 / r.seconds,
                if ours {
                    format!("{ratio:.2}")
                } else {
                    "1 (baseline)".into()
                },
                r.cpu,
                if ours {
                    per(r.events as f64 / r.cpu)
                } else {
                    "n/a".into()
                },
                r.sink_cpu,
            );
        }
    }
    println!("ratio = our events/s ÷ the SDK's spans/s, in the same run, to the same receiver.");
    let _ = std::fs::remove_file(&stream);
}
