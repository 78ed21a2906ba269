//! Faults: the real receiver is started, stopped and made to refuse around the real exporter,
//! and every span must arrive exactly once. Each test prints a row of the table in the notes:
//! `cargo test --test faults -- --nocapture 2>&1 | grep '^| '`.
//!
//! Several exports are in flight by default (`--max-concurrent-exports`), so every test here
//! also has batches completing out of order; the `several_in_flight` ones make sure of it
//! with a collector that answers unevenly.

use std::collections::HashSet;
use std::time::Duration;

use crate::support::exporter::*;
use crate::support::*;

#[test]
fn the_collector_is_down_at_start_and_comes_up_five_seconds_later() {
    let (lines, expected) = stream(30);
    let port = free_port();
    let spool = scratch("spool");
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
    let spool = scratch("spool");
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
    let spool = scratch("spool");
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
    let spool = scratch("spool");
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
    let spool = scratch("spool");
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

/// Four exports in flight to a collector that answers out of order and refuses one request
/// in four (up to six times): every span arrives once, and the summary accounts for all of them.
fn several_in_flight_out_of_order(protocol: &str, spool: bool) {
    let (lines, expected) = stream(20);
    let rx = Receiver::start();
    rx.answer_unevenly(Duration::from_millis(15));
    rx.refuse_spread(4, 6);
    let url = rx.url(protocol);
    let spool_dir = scratch("spool");
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
    let spool = scratch("spool");
    let mut exporter = Exporter::start(&args, &spool);
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
