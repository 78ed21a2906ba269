//! Memory, as `cargo bench --bench memory` (or `scripts/bench`) measures it, on the real binary:
//!
//! 1. **Open sessions**: 10,000 sessions each with an open turn and three calls still running
//!    (50,000 events, nothing finished), then stdin closes and every turn is ended and sent.
//!    Peak resident memory while they are open, and over the whole run.
//! 2. **Collector outage**: a steady stream (`BENCH_OUTAGE_RATE` events/s, default 2,000) for
//!    `BENCH_OUTAGE_SECS` (default 120) while nothing listens at the endpoint; resident memory
//!    is sampled every few seconds, and the spool's size is read at the end. Then a collector
//!    comes up at that address, and the bench waits until every span made so far arrived.
//! 3. **Collector down, no spool**: a large stream written as fast as the exporter takes it,
//!    with `--no-spool` and nothing at the endpoint, for `BENCH_DOWN_SECS` (default 20), then
//!    SIGTERM. Batches waiting for a retry hold their place among the exports in flight, so
//!    the input waits (back-pressure) instead of piling up in memory; the file, console and
//!    host exporters, which have no spool, are in the same case.

mod common;

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use albedo_otel::testing::{generate, GenConfig};
use common::{env_num, mib_after, number_before, rss_kib, Running, Sink};

fn main() {
    if std::env::var("BENCH_ROLE").as_deref() == Ok("sink") {
        common::sink();
        return;
    }
    let sessions = env_num("BENCH_OPEN_SESSIONS", 10_000);
    let outage_secs = env_num("BENCH_OUTAGE_SECS", 120);
    let rate = env_num("BENCH_OUTAGE_RATE", 2_000);
    let down_secs = env_num("BENCH_DOWN_SECS", 20);

    let mut rows = Vec::new();
    // A scenario whose count or length is 0 is left out.
    if sessions > 0 {
        rows.extend(open_sessions(sessions));
    }
    if outage_secs > 0 {
        rows.extend(outage(Duration::from_secs(outage_secs), rate));
    }
    if down_secs > 0 {
        rows.extend(down_without_spool(Duration::from_secs(down_secs)));
    }
    println!();
    println!("| scenario | figure | value | target |");
    println!("| --- | --- | --- | --- |");
    for (scenario, figure, value, target) in rows {
        println!("| {scenario} | {figure} | {value} | {target} |");
    }
}

type Row = (String, &'static str, String, &'static str);

fn spool_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "albedo-otel-memory-bench-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// 10,000 sessions, each: `session`, `prompted`, three `calling` that never finish.
fn open_sessions(n: u64) -> Vec<Row> {
    let sink = Sink::start();
    let spool = spool_dir("open");
    let endpoint = format!("http://127.0.0.1:{}", sink.grpc);
    let mut run = Running::start(
        &["--protocol", "grpc", "--endpoint", &endpoint],
        &[("ALBEDO_OTEL_SPOOL_DIR", spool.to_str().unwrap())],
    );
    run.wait_log("ready:", Duration::from_secs(30));
    let (baseline, _) = rss_kib(run.child.id()).unwrap();
    let t = 1_796_300_000_000u64;
    let mut text = String::new();
    for s in 0..n {
        let sid = format!("open-{s:05}-9f0c2a7e-5b1d-4c3e-8a2f");
        let _ = writeln!(
            text,
            r#"{{"v":1,"kind":"session","session":"{sid}","at_ms":{t},"agent":"albedo","model":"claude-sonnet-4-5","workspace":"/home/dev/projects/service-{s}"}}"#
        );
        let _ = writeln!(
            text,
            r#"{{"v":1,"kind":"prompted","session":"{sid}","at_ms":{},"text":"Find why the integration tests for the billing service time out on CI, fix it, and add a regression test."}}"#,
            t + 1
        );
        for c in 0..3 {
            let _ = writeln!(
                text,
                r#"{{"v":1,"kind":"calling","session":"{sid}","at_ms":{},"call":{{"id":"toolu_{s:05}_{c}_01XFDUDYJgAACzvnptvVoYEL","name":"run","arguments":{{"command":"cargo test -p billing --test integration -- --nocapture","timeout_ms":600000}},"within":null}}}}"#,
                t + 10 + c
            );
        }
    }
    run.write(&text);
    let events = n * 5;
    run.wait_events(events, Duration::from_secs(120));
    let (open_rss, open_peak) = rss_kib(run.child.id()).unwrap();
    let done = run.close();
    let spans = number_before(&done, " spans");
    let delivered = number_before(&done, " delivered");
    assert_eq!(spans, n * 4, "{done}");
    assert_eq!(delivered, spans, "{done}");
    sink.wait_for(spans, Duration::from_secs(60));
    let whole_peak = mib_after(&done, "peak ");
    let _ = std::fs::remove_dir_all(&spool);
    let name = format!("{n} open sessions (open turn + 3 running calls each)");
    vec![
        (name.clone(), "resident at start", mib(baseline), ""),
        (
            name.clone(),
            "peak resident, all open",
            mib(open_peak.max(open_rss)),
            "≤ 64 MiB",
        ),
        (
            name,
            "peak resident, whole run (then all closed and sent)",
            format!("{whole_peak:.1} MiB ({spans} spans delivered)"),
            "≤ 64 MiB",
        ),
    ]
}

/// A steady stream into an unreachable collector, then the collector comes back.
fn outage(length: Duration, rate: u64) -> Vec<Row> {
    let port = common::free_port();
    let spool = spool_dir("outage");
    let endpoint = format!("http://127.0.0.1:{port}");
    let mut run = Running::start(
        &["--protocol", "grpc", "--endpoint", &endpoint],
        &[
            ("ALBEDO_OTEL_SPOOL_DIR", spool.to_str().unwrap()),
            // Retries of a refused connection would fill the log; the counts are what matter.
            (
                "ALBEDO_OTEL_LOG",
                "info,albedo_otel::pipeline::delivery=error",
            ),
        ],
    );
    run.wait_log("ready:", Duration::from_secs(30));
    let want = rate * length.as_secs();
    // Enough sessions that the stream never runs dry; only the first `want` lines are sent.
    let (lines, _) = generate(&GenConfig {
        sessions: (want / 60).max(10) as usize,
        turns_per_session: 5,
        ..GenConfig::default()
    });
    let lines = &lines[..(want as usize).min(lines.len())];
    let start = Instant::now();
    let mut samples = Vec::new();
    let mut next_sample = start;
    let tick = Duration::from_millis(10);
    let per_tick = (rate / 100).max(1) as usize;
    let mut sent = 0;
    for (i, chunk) in lines.chunks(per_tick).enumerate() {
        let due = start + tick * i as u32;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        run.write(&(chunk.join("\n") + "\n"));
        sent += chunk.len();
        if Instant::now() >= next_sample {
            let (rss, _) = rss_kib(run.child.id()).unwrap();
            samples.push((start.elapsed().as_secs_f64(), rss, dir_bytes(&spool)));
            next_sample += Duration::from_secs(5);
        }
    }
    let during = run.wait_events(sent as u64, Duration::from_secs(60));
    let (rss_end, peak) = rss_kib(run.child.id()).unwrap();
    let spool_bytes = dir_bytes(&spool);
    let spans_so_far = number_before(&during, " spans");

    // The collector comes back where the exporter expects it.
    let back = Instant::now();
    let sink = Sink::start_on(port);
    sink.wait_for(spans_so_far, Duration::from_secs(300));
    let drained = back.elapsed();
    let done = run.close();
    let spans = number_before(&done, " spans");
    sink.wait_for(spans, Duration::from_secs(60));
    let received = sink.count();
    let _ = std::fs::remove_dir_all(&spool);

    println!(
        "outage: resident memory and spool size while the collector was down ({sent} events over {:.0} s):",
        length.as_secs_f64()
    );
    println!("| t (s) | resident | spool |");
    println!("| --- | --- | --- |");
    for (t, rss, bytes) in &samples {
        println!(
            "| {t:.0} | {} | {:.1} MiB |",
            mib(*rss),
            *bytes as f64 / (1 << 20) as f64
        );
    }
    let rss: Vec<u64> = samples.iter().map(|s| s.1).collect();
    // "Flat": what the heap did after the first samples, once the exporter was warm.
    let settled = &rss[rss.len().min(2)..];
    let (lo, hi) = (
        settled.iter().min().copied().unwrap_or(rss_end),
        settled.iter().max().copied().unwrap_or(rss_end),
    );
    let name = format!("{}-s collector outage at {rate} events/s", length.as_secs());
    vec![
        (
            name.clone(),
            "resident from 10 s to the end (min–max)",
            format!("{} – {}", mib(lo), mib(hi)),
            "flat",
        ),
        (name.clone(), "peak resident", mib(peak), "≤ 64 MiB"),
        (
            name.clone(),
            "spool on disk when the collector came back",
            format!(
                "{:.1} MiB ({spans_so_far} spans)",
                spool_bytes as f64 / (1 << 20) as f64
            ),
            "data on disk, not in memory",
        ),
        (
            name,
            "after the collector came back",
            format!(
                "all {spans_so_far} spans delivered in {:.1} s; {received} of {spans} received in all",
                drained.as_secs_f64()
            ),
            "nothing lost",
        ),
    ]
}

/// A stream written as fast as the exporter takes it into a collector that is down, without
/// a spool; SIGTERM after `length`.
fn down_without_spool(length: Duration) -> Vec<Row> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    let endpoint = format!("http://127.0.0.1:{}", common::free_port());
    let mut run = Running::start(
        &["--protocol", "grpc", "--endpoint", &endpoint, "--no-spool"],
        &[(
            "ALBEDO_OTEL_LOG",
            "info,albedo_otel::pipeline::delivery=off",
        )],
    );
    run.wait_log("ready:", Duration::from_secs(30));
    let (lines, _) = generate(&GenConfig {
        sessions: 6_000,
        turns_per_session: 5,
        ..GenConfig::default()
    });
    let total: usize = lines.iter().map(|l| l.len() + 1).sum();
    let written = std::sync::Arc::new(AtomicU64::new(0));
    let mut stdin = run.stdin.take().unwrap();
    let writer = {
        let written = written.clone();
        std::thread::spawn(move || {
            for chunk in lines.chunks(500) {
                let text = chunk.join("\n") + "\n";
                if stdin.write_all(text.as_bytes()).is_err() {
                    return;
                }
                written.fetch_add(text.len() as u64, Relaxed);
            }
        })
    };
    let start = Instant::now();
    let mut peak = 0;
    // Until the time is up, or the exporter took the whole stream and exited at its end (as
    // it did when nothing held the input back).
    while start.elapsed() < length {
        std::thread::sleep(Duration::from_millis(250));
        match rss_kib(run.child.id()) {
            Some((rss, hwm)) => peak = peak.max(rss).max(hwm),
            None => break,
        }
    }
    let taken = written.load(Relaxed);
    if rss_kib(run.child.id()).is_some() {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &run.child.id().to_string()])
            .status();
    }
    let (_, done) = run.wait_log("done:", Duration::from_secs(120));
    assert!(run.child.wait().unwrap().success(), "{done}");
    writer.join().unwrap();
    let spans = number_before(&done, " spans");
    let lost = number_before(&done, " NOT delivered");
    assert_eq!(lost, spans, "every span counted: {done}");
    let name = format!(
        "collector down, no spool, {}-s stream of {:.0} MiB",
        length.as_secs(),
        total as f64 / (1 << 20) as f64
    );
    vec![
        (
            name.clone(),
            "peak resident while the collector was down",
            mib(peak),
            "≤ 64 MiB",
        ),
        (
            name.clone(),
            "peak resident, whole run (the close included)",
            format!("{:.1} MiB", mib_after(&done, "peak ")),
            "≤ 64 MiB",
        ),
        (
            name,
            "input taken before the SIGTERM",
            format!(
                "{:.1} MiB; {spans} spans by the end, all counted as not delivered",
                taken as f64 / (1 << 20) as f64
            ),
            "bounded, nothing uncounted",
        ),
    ]
}
