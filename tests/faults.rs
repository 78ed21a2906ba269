//! Faults: the real receiver is started, stopped and made to refuse around the real exporter,
//! and every span must arrive exactly once. Each test prints a row of the table in the notes:
//! `cargo test --test faults -- --nocapture 2>&1 | grep '^| '`.
//!
//! Several exports are in flight by default (`--max-concurrent-exports`), so every test here
//! also has batches completing out of order; the `several_in_flight` ones make sure of it
//! with a collector that answers unevenly.

mod support;

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::Duration;

use albedo_otel::testing::{generate, Expected, GenConfig};
use support::*;

/// The exporter as a child process fed line by line, stderr kept in a file.
struct Exporter {
    child: Child,
    stdin: Option<ChildStdin>,
    log: PathBuf,
}

impl Exporter {
    fn start(args: &[&str], spool: &Path) -> Exporter {
        let log = temp_dir("log").join("stderr.log");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
        cmd.args(args)
            .arg("--spool-dir")
            .arg(spool)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            // A config file of the developer's own must not change what is tested.
            .env("XDG_CONFIG_HOME", temp_dir("config"));
        for (k, _) in std::env::vars() {
            if k.starts_with("OTEL_") || k.starts_with("ALBEDO_OTEL") {
                cmd.env_remove(k);
            }
        }
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take();
        Exporter { child, stdin, log }
    }

    fn write(&mut self, lines: &[String]) {
        let stdin = self.stdin.as_mut().unwrap();
        for l in lines {
            writeln!(stdin, "{l}").unwrap();
        }
        stdin.flush().unwrap();
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Closes stdin (EOF) and waits for the exporter to flush and exit.
    fn finish(mut self) -> (ExitStatus, String) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        (status, self.stderr())
    }

    /// SIGTERM, as a host stopping the exporter sends; waits for the exit.
    fn term(mut self) -> (ExitStatus, String) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success());
        let status = self.child.wait().unwrap();
        (status, self.stderr())
    }

    fn kill9(mut self) -> String {
        self.child.kill().unwrap(); // SIGKILL
        self.child.wait().unwrap();
        self.stderr()
    }
}

/// How many spans the assembly emits for these lines, before the end of input.
fn spans_emitted_by(lines: &[String]) -> usize {
    use albedo_otel::assemble::{AssembleConfig, Assembler, Output};
    let mut asm = Assembler::new(AssembleConfig::default());
    let mut out = Output::default();
    for l in lines {
        asm.push(
            &albedo_otel::protocol::decode_line(l.as_bytes()).unwrap(),
            &mut out,
        );
    }
    out.spans.len()
}

/// `run` to `url` over `protocol`, in batches of `batch` spans, then `extra`.
fn run_args<'a>(
    protocol: &'a str,
    url: &'a str,
    batch: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--protocol",
        protocol,
        "--endpoint",
        url,
        "--batch-size",
        batch,
    ];
    args.extend_from_slice(extra);
    args
}

fn stream(sessions: usize) -> (Vec<String>, Expected) {
    stream_seeded(sessions, 11)
}

fn stream_seeded(sessions: usize, seed: u64) -> (Vec<String>, Expected) {
    generate(&GenConfig {
        sessions,
        turns_per_session: 2,
        seed,
        ..GenConfig::default()
    })
}

/// Spans waiting in the spool, by the counts in its file names.
fn spooled_spans(root: &Path) -> u64 {
    fn walk(dir: &Path, total: &mut u64) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, total);
            } else if let Some(name) = p.file_name().and_then(|n| n.to_str()) {
                if let Some(stem) = name.strip_suffix(".otlp") {
                    *total += stem
                        .rsplit('-')
                        .next()
                        .and_then(|n| n.parse::<u64>().ok())
                        .unwrap_or(0);
                }
            }
        }
    }
    let mut total = 0;
    walk(root, &mut total);
    total
}

/// Everything the receivers got, checked: exactly the expected spans, each once. Prints the
/// table row.
fn assert_exactly_once(fault: &str, expected: &Expected, receivers: &[&Receiver], dropped: u64) {
    let mut all = Vec::new();
    for r in receivers {
        all.extend(r.spans());
    }
    let unique: HashSet<_> = all
        .iter()
        .map(|s| (s.span.trace_id.clone(), s.span.span_id.clone()))
        .collect();
    let duplicates = all.len() - unique.len();
    println!(
        "| {fault} | {} | {} | {duplicates} | {dropped} |",
        expected.spans(),
        unique.len()
    );
    assert_eq!(duplicates, 0, "{fault}: duplicates");
    assert_eq!(
        unique.len() as u64 + dropped,
        expected.spans(),
        "{fault}: spans received"
    );
    if dropped == 0 {
        check_invariants(&all);
    }
}

#[test]
fn the_collector_is_down_at_start_and_comes_up_five_seconds_later() {
    let (lines, expected) = stream(30);
    let port = free_port();
    let spool = temp_dir("spool");
    let endpoint = format!("http://127.0.0.1:{port}");
    let mut exporter = Exporter::start(
        &[
            "run",
            "--protocol",
            "grpc",
            "--endpoint",
            &endpoint,
            "--batch-delay",
            "100ms",
        ],
        &spool,
    );
    let half = lines.len() / 2;
    exporter.write(&lines[..half]);
    wait_until(Duration::from_secs(20), "spans to be spooled", || {
        spooled_spans(&spool) > 0
    });
    std::thread::sleep(Duration::from_secs(5)); // the outage itself
    let rx = Receiver::start_on(Some(format!("127.0.0.1:{port}").parse().unwrap()), None);
    exporter.write(&lines[half..]);
    let (status, stderr) = exporter.finish();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("could not reach the collector"), "{stderr}");
    assert_exactly_once(
        "collector down at start, up 5 s later (gRPC)",
        &expected,
        &[&rx],
        0,
    );
    assert_eq!(spooled_spans(&spool), 0, "the spool is empty again");
}

#[test]
fn the_collector_is_killed_and_restarted_mid_session() {
    let (lines, expected) = stream(30);
    let rx1 = Receiver::start();
    let http = rx1.http;
    let spool = temp_dir("spool");
    let endpoint = rx1.http_url();
    let mut exporter = Exporter::start(
        &["run", "--endpoint", &endpoint, "--batch-delay", "100ms"],
        &spool,
    );
    let third = lines.len() / 3;
    exporter.write(&lines[..third]);
    // Wait for exactly what these lines complete (the assembly is deterministic, so it can be
    // counted here); nothing else is pending, so stopping the collector then loses nothing.
    let completed = spans_emitted_by(&lines[..third]);
    assert!(completed > 0);
    assert_eq!(
        rx1.wait_for_spans(completed, Duration::from_secs(20)).len(),
        completed
    );
    let first = rx1.spans();
    rx1.stop();
    exporter.write(&lines[third..2 * third]);
    wait_until(Duration::from_secs(20), "spans to be spooled", || {
        spooled_spans(&spool) > 0
    });
    let rx2 = Receiver::start_on(None, Some(http));
    exporter.write(&lines[2 * third..]);
    let (status, stderr) = exporter.finish();
    assert!(status.success(), "{stderr}");
    let mut all = first;
    all.extend(rx2.spans());
    let unique: HashSet<_> = all
        .iter()
        .map(|s| (s.span.trace_id.clone(), s.span.span_id.clone()))
        .collect();
    println!(
        "| collector killed and restarted mid-session (HTTP) | {} | {} | {} | 0 |",
        expected.spans(),
        unique.len(),
        all.len() - unique.len()
    );
    assert_eq!(all.len(), unique.len(), "no duplicates");
    assert_eq!(all.len() as u64, expected.spans(), "{stderr}");
    check_invariants(&all);
}

#[test]
fn an_exporter_killed_while_the_collector_is_down_has_its_spool_delivered_by_the_next() {
    let (lines, expected) = stream(30);
    let port = free_port();
    let spool = temp_dir("spool");
    let endpoint = format!("http://127.0.0.1:{port}");
    let args = [
        "run",
        "--protocol",
        "grpc",
        "--endpoint",
        &endpoint,
        "--batch-delay",
        "100ms",
    ];
    let mut first = Exporter::start(&args, &spool);
    first.write(&lines);
    // Every turn in the stream is complete, so every span reaches the spool; then SIGKILL.
    wait_until(Duration::from_secs(30), "every span to be spooled", || {
        spooled_spans(&spool) == expected.spans()
    });
    let stderr = first.kill9();
    assert!(stderr.contains("keeping batches in the spool"), "{stderr}");

    let rx = Receiver::start_on(Some(format!("127.0.0.1:{port}").parse().unwrap()), None);
    let second = Exporter::start(&args, &spool);
    let (status, stderr) = second.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{} spans from earlier runs wait in the spool",
            expected.spans()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{} delivered from the spool", expected.spans())),
        "{stderr}"
    );
    assert_exactly_once(
        "exporter SIGKILLed while collector down, restarted",
        &expected,
        &[&rx],
        0,
    );
    assert_eq!(spooled_spans(&spool), 0);
}

fn refused_first(protocol: &str, refusals: u64) {
    let (lines, expected) = stream(20);
    let rx = Receiver::start();
    rx.refuse_next(refusals);
    let url = rx.url(protocol);
    let spool = temp_dir("spool");
    let mut exporter = Exporter::start(&run_args(protocol, &url, "64", &[]), &spool);
    exporter.write(&lines);
    // The session goes on while the collector refuses, then recovers: the spool drains.
    wait_until(Duration::from_secs(30), "the refusals", || {
        rx.refused() == refusals
    });
    rx.wait_for_spans(expected.spans() as usize, Duration::from_secs(60));
    let (status, stderr) = exporter.finish();
    assert!(status.success(), "{stderr}");
    assert_eq!(rx.refused(), refusals);
    let answer = if protocol == "grpc" {
        "UNAVAILABLE"
    } else {
        "503"
    };
    assert_exactly_once(
        &format!("first {refusals} requests answered {answer} ({protocol})"),
        &expected,
        &[&rx],
        0,
    );
}

#[test]
fn a_grpc_collector_that_answers_unavailable_at_first_gets_everything_once() {
    refused_first("grpc", 5);
}

#[test]
fn an_http_collector_that_answers_503_at_first_gets_everything_once() {
    refused_first("http/protobuf", 5);
}

#[test]
fn a_full_spool_drops_the_oldest_counts_it_and_keeps_running() {
    let (lines, expected) = stream(30);
    let port = free_port();
    let spool = temp_dir("spool");
    let endpoint = format!("http://127.0.0.1:{port}");
    // Room for a few batches only.
    let args = [
        "run",
        "--protocol",
        "grpc",
        "--endpoint",
        &endpoint,
        "--batch-size",
        "32",
        "--spool-max-bytes",
        "40000",
    ];
    let mut first = Exporter::start(&args, &spool);
    first.write(&lines);
    let (status, stderr) = first.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("is full; its oldest batches are being dropped"),
        "{stderr}"
    );
    let summary = stderr
        .lines()
        .find(|l| l.contains("done:"))
        .unwrap()
        .to_string();
    let dropped: u64 = summary
        .split("; ")
        .find_map(|p| p.strip_suffix(" dropped from a full spool"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no drop count in {summary}"));
    assert!(dropped > 0);
    assert_eq!(
        spooled_spans(&spool) + dropped,
        expected.spans(),
        "{summary}"
    );

    let rx = Receiver::start_on(Some(format!("127.0.0.1:{port}").parse().unwrap()), None);
    let (status, stderr) = Exporter::start(&args, &spool).finish();
    assert!(status.success(), "{stderr}");
    assert_exactly_once(
        "spool full (cap 40 kB) while collector down",
        &expected,
        &[&rx],
        dropped,
    );
}

/// The counts in the exporter's closing summary (`done: … N delivered …`).
fn summary_count(stderr: &str, suffix: &str) -> u64 {
    let summary = stderr.lines().find(|l| l.contains("done:")).unwrap_or("");
    summary
        .split([',', ';', ':'])
        .find_map(|part| part.trim().strip_suffix(suffix))
        .and_then(|n| n.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Four exports in flight to a collector that answers out of order and refuses one request
/// in four (up to six times): every span arrives once, and the summary accounts for all of them.
fn several_in_flight_out_of_order(protocol: &str, spool: bool) {
    let (lines, expected) = stream(20);
    let rx = Receiver::start();
    rx.answer_unevenly(Duration::from_millis(15));
    rx.refuse_spread(4, 6);
    let url = rx.url(protocol);
    let spool_dir = temp_dir("spool");
    let mut args = run_args(protocol, &url, "16", &["--max-concurrent-exports", "4"]);
    if !spool {
        args.push("--no-spool");
    }
    let mut exporter = Exporter::start(&args, &spool_dir);
    exporter.write(&lines);
    let (status, stderr) = exporter.finish();
    assert!(status.success(), "{stderr}");
    // With a spool, a refusal sends later batches to disk until a probe gets through, so
    // fewer requests are made, and fewer of them refused.
    assert!((1..=6).contains(&rx.refused()), "{stderr}");
    assert!(
        rx.most_open() >= 2,
        "exports overlapped: {}",
        rx.most_open()
    );
    assert!(rx.overtaken() > 0, "some answers came out of order");
    assert_exactly_once(
        &format!(
            "4 in flight, answered out of order, {} refusals ({protocol}, {})",
            rx.refused(),
            if spool { "spool" } else { "no spool" }
        ),
        &expected,
        &[&rx],
        0,
    );
    let delivered = summary_count(&stderr, " delivered");
    let from_spool = summary_count(&stderr, " delivered from the spool");
    assert_eq!(delivered + from_spool, expected.spans(), "{stderr}");
    assert_eq!(spool, from_spool > 0, "{stderr}");
    assert!(!stderr.contains("NOT delivered"), "{stderr}");
    assert_eq!(spooled_spans(&spool_dir), 0);
}

#[test]
fn several_in_flight_out_of_order_with_refusals_grpc_spool() {
    several_in_flight_out_of_order("grpc", true);
}

#[test]
fn several_in_flight_out_of_order_with_refusals_http_spool() {
    several_in_flight_out_of_order("http/protobuf", true);
}

#[test]
fn several_in_flight_out_of_order_with_refusals_grpc_retries() {
    several_in_flight_out_of_order("grpc", false);
}

#[test]
fn several_in_flight_out_of_order_with_refusals_http_retries() {
    several_in_flight_out_of_order("http/protobuf", false);
}

/// No spool, and a collector that never takes anything: with four exports in flight, every
/// span is still counted as not delivered, once.
#[test]
fn several_in_flight_that_all_fail_are_all_counted() {
    let (lines, expected) = stream(10);
    let rx = Receiver::start();
    rx.answer_unevenly(Duration::from_millis(10));
    rx.refuse_next(u64::MAX);
    let url = rx.grpc_url();
    let args = run_args(
        "grpc",
        &url,
        "16",
        &[
            "--max-concurrent-exports",
            "4",
            "--no-spool",
            "--flush-timeout",
            "2s",
        ],
    );
    let mut exporter = Exporter::start(&args, &temp_dir("spool"));
    exporter.write(&lines);
    let (status, stderr) = exporter.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        rx.most_open() >= 2,
        "exports overlapped: {}",
        rx.most_open()
    );
    assert!(rx.spans().is_empty());
    let lost = summary_count(&stderr, " NOT delivered");
    println!(
        "| 4 in flight, every request refused, no spool | {} | 0 | 0 | {lost} |",
        expected.spans()
    );
    assert_eq!(lost, expected.spans(), "{stderr}");
    assert_eq!(summary_count(&stderr, " delivered"), 0, "{stderr}");
}

/// A collector that accepts connections, reads whatever is sent, and never answers.
struct Silent {
    port: u16,
    received: std::sync::Arc<std::sync::atomic::AtomicU64>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Silent {
    fn start() -> Silent {
        use std::sync::atomic::Ordering::Relaxed;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let thread = {
            let (received, stop) = (received.clone(), stop.clone());
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Relaxed) {
                        return;
                    }
                    let Ok(mut conn) = conn else { continue };
                    let received = received.clone();
                    std::thread::spawn(move || {
                        use std::io::Read;
                        let mut buf = [0u8; 64 << 10];
                        while let Ok(n) = conn.read(&mut buf) {
                            if n == 0 {
                                return;
                            }
                            received.fetch_add(n as u64, Relaxed);
                        }
                    });
                }
            })
        };
        Silent {
            port,
            received,
            stop,
            thread: Some(thread),
        }
    }

    fn received(&self) -> u64 {
        self.received.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Stops listening, so that the port can be taken by a real receiver.
    fn stop(mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

/// SIGTERM while every export waits on a collector that never answers: the exports were
/// waiting for their 10 s request timeout past the 5 s flush deadline, and every span was
/// counted as lost although a spool was there. Now each unanswered batch is spooled before
/// the deadline, the summary says so with nothing lost, and the next run delivers exactly
/// those spans, once.
fn sigterm_against_a_collector_that_never_answers(protocol: &str) {
    let (lines, _) = stream(40);
    let silent = Silent::start();
    let endpoint = format!("http://127.0.0.1:{}", silent.port);
    let spool = temp_dir("spool");
    let args = run_args(protocol, &endpoint, "32", &["--batch-delay", "50ms"]);
    let mut exporter = Exporter::start(&args, &spool);
    exporter.write(&lines);
    wait_until(Duration::from_secs(20), "exports to be in flight", || {
        silent.received() > 16 << 10
    });
    let (status, stderr) = exporter.term();
    let spans = summary_count(&stderr, " spans");
    let spooled = summary_count(&stderr, " spooled to send later");
    println!(
        "| SIGTERM, collector never answers ({protocol}, spool) | {spans} | 0 | 0 | {} |",
        summary_count(&stderr, " NOT delivered")
    );
    assert!(spans > 0, "{stderr}");
    assert_eq!(spooled, spans, "every unanswered span is spooled: {stderr}");
    assert!(!stderr.contains("NOT delivered"), "{stderr}");
    assert!(!stderr.contains("still in flight"), "{stderr}");
    assert!(
        !stderr.contains("neither delivered nor spooled"),
        "{stderr}"
    );
    assert_eq!(spooled_spans(&spool), spans, "the spool holds them");
    assert!(status.success(), "{stderr}");

    silent.stop();
    let addr = format!("127.0.0.1:{}", endpoint.rsplit(':').next().unwrap());
    let rx = if protocol == "grpc" {
        Receiver::start_on(Some(addr.parse().unwrap()), None)
    } else {
        Receiver::start_on(None, Some(addr.parse().unwrap()))
    };
    let (status, stderr) = Exporter::start(&args, &spool).finish();
    assert!(status.success(), "{stderr}");
    let got = rx.spans();
    let unique: HashSet<_> = got
        .iter()
        .map(|s| (s.span.trace_id.clone(), s.span.span_id.clone()))
        .collect();
    assert_eq!(got.len(), unique.len(), "no span twice");
    assert_eq!(
        got.len() as u64,
        spans,
        "the next run delivered them: {stderr}"
    );
    assert_eq!(spooled_spans(&spool), 0);
}

#[test]
fn sigterm_against_a_grpc_collector_that_never_answers_spools_everything() {
    sigterm_against_a_collector_that_never_answers("grpc");
}

#[test]
fn sigterm_against_an_http_collector_that_never_answers_spools_everything() {
    sigterm_against_a_collector_that_never_answers("http/protobuf");
}

/// The same without a spool: what was unanswered at the deadline is counted as not
/// delivered, exactly, and nothing is left "in flight" for the summary to guess at.
#[test]
fn sigterm_without_a_spool_counts_the_unanswered_exactly() {
    let (lines, _) = stream(40);
    let silent = Silent::start();
    let endpoint = format!("http://127.0.0.1:{}", silent.port);
    let args = run_args(
        "grpc",
        &endpoint,
        "32",
        &["--batch-delay", "50ms", "--no-spool"],
    );
    let mut exporter = Exporter::start(&args, &temp_dir("spool"));
    exporter.write(&lines);
    wait_until(Duration::from_secs(20), "exports to be in flight", || {
        silent.received() > 16 << 10
    });
    let (status, stderr) = exporter.term();
    let spans = summary_count(&stderr, " spans");
    assert!(spans > 0, "{stderr}");
    assert_eq!(summary_count(&stderr, " NOT delivered"), spans, "{stderr}");
    assert!(!stderr.contains("still in flight"), "{stderr}");
    assert!(
        stderr.contains("unanswered at the flush deadline"),
        "{stderr}"
    );
    assert!(status.success(), "`run` exits 0 whatever it lost: {stderr}");
}

/// A backlog spooled while the collector was down, then a collector that answers unevenly
/// (so answers come out of order): the spool drains with several batches in flight (it used
/// to send one per round trip), and live turns written meanwhile go out beside it. Every span
/// of both arrives, once.
fn drain(live: bool) {
    let (backlog, expected) = stream(40);
    let port = free_port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let spool = temp_dir("spool");
    let args = run_args("grpc", &endpoint, "16", &["--max-concurrent-exports", "4"]);
    let mut first = Exporter::start(&args, &spool);
    first.write(&backlog);
    let (status, stderr) = first.finish();
    assert!(status.success(), "{stderr}");
    assert_eq!(spooled_spans(&spool), expected.spans(), "{stderr}");

    let rx = Receiver::start_on(Some(format!("127.0.0.1:{port}").parse().unwrap()), None);
    rx.answer_unevenly(Duration::from_millis(15));
    let mut second = Exporter::start(&args, &spool);
    let (fresh, fresh_expected) = stream_seeded(20, 23);
    if live {
        second.write(&fresh);
    }
    let (status, stderr) = second.finish();
    assert!(status.success(), "{stderr}");
    let from_spool = summary_count(&stderr, " delivered from the spool");
    assert_eq!(from_spool, expected.spans(), "{stderr}");
    assert!(
        rx.most_open() >= 2,
        "the drain overlapped: {}",
        rx.most_open()
    );
    assert!(rx.overtaken() > 0, "some answers came out of order");
    let got = rx.spans();
    let unique: HashSet<_> = got
        .iter()
        .map(|s| (s.span.trace_id.clone(), s.span.span_id.clone()))
        .collect();
    let want = expected.spans() + if live { fresh_expected.spans() } else { 0 };
    println!(
        "| spool drained with 4 in flight, out of order{} | {want} | {} | {} | 0 |",
        if live { ", live turns beside it" } else { "" },
        unique.len(),
        got.len() - unique.len()
    );
    assert_eq!(got.len(), unique.len(), "no span twice");
    assert_eq!(unique.len() as u64, want, "every span: {stderr}");
    check_invariants(&got);
    assert_eq!(spooled_spans(&spool), 0);
}

#[test]
fn a_spooled_backlog_drains_with_several_in_flight_and_loses_nothing() {
    drain(false);
}

#[test]
fn a_spooled_backlog_drains_beside_live_turns_and_loses_nothing() {
    drain(true);
}
