//! Sessions replayed through the stack, and what should come out: the exporter's own spans
//! for an input (its file exporter; ids are derived from the input, so a second run assembles
//! the same ones), and the spans Jaeger gives back for them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::otlp_json::{by_key, spans, spans_of_lines, JsonSpan};
use super::run_binary;
use super::stack::Jaeger;

pub fn write_input(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    let path = dir.join(format!("{name}.ndjson"));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// The spans albedo-otel assembles from `input`, as its file exporter writes them.
pub fn assembled(input: &Path) -> Vec<JsonSpan> {
    let out = input.with_extension("assembled.jsonl");
    let run = run_binary(
        &[
            "replay",
            &input.display().to_string(),
            "--exporter",
            "file",
            "--file",
            &out.display().to_string(),
        ],
        &[],
        b"",
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    spans_of_lines(&std::fs::read_to_string(&out).unwrap())
}

/// Replays `input` to a collector; every span must be delivered.
pub fn send(input: &Path, protocol: &str, endpoint: &str) {
    send_with(input, protocol, endpoint, &[]);
}

/// As [`send`], with more arguments; the GenAI metrics go too (`--metrics`: the stack's
/// dashboards read them).
pub fn send_with(input: &Path, protocol: &str, endpoint: &str, extra: &[&str]) {
    let input = input.display().to_string();
    let mut args = vec![
        "replay",
        &input,
        "--metrics",
        "--no-spool",
        "--protocol",
        protocol,
        "--endpoint",
        endpoint,
    ];
    args.extend_from_slice(extra);
    let run = run_binary(&args, &[], b"");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "replay to {endpoint} over {protocol}:\n{stderr}"
    );
}

pub fn traces_of(spans: &BTreeMap<String, JsonSpan>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in spans.values() {
        out.entry(s.trace.clone())
            .or_default()
            .insert(s.span.clone());
    }
    out
}

/// Waits until Jaeger has stored `spans` spans (by its own counter), then reads each of
/// `traces` back once. A trace is read only when whole: Jaeger v2.12 keeps the warnings its
/// query adds to a span whose parent has not arrived yet (found here: tests/deploy/stack_traces.rs).
pub fn read_back(
    jaeger: &Jaeger,
    traces: &BTreeMap<String, BTreeSet<String>>,
    spans_expected: u64,
    timeout: Duration,
) -> BTreeMap<String, JsonSpan> {
    let deadline = Instant::now() + timeout;
    while jaeger.stored_spans() < spans_expected && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut out = Vec::new();
    for trace in traces.keys() {
        if let Some(doc) = jaeger.trace(trace) {
            out.extend(spans(&doc));
        }
    }
    let read = out.len();
    let by_key = by_key(out);
    assert_eq!(by_key.len(), read, "Jaeger shows a span twice");
    by_key
}
