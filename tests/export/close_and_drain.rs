//! The close and the drain, against the real exporter: SIGTERM while a collector accepts
//! connections and never answers (every unanswered batch spooled before the deadline, or
//! counted exactly without a spool), and a spooled backlog drained with several exports in
//! flight, answered out of order, alone and beside live turns. Each test prints a row of the
//! fault table: `cargo test --test close_and_drain -- --nocapture 2>&1 | grep '^| '`.

use std::time::Duration;

use crate::support::exporter::*;
use crate::support::*;

/// SIGTERM while every export waits on a collector that never answers: the exports were
/// waiting for their 10 s request timeout past the 5 s flush deadline, and every span was
/// counted as lost although a spool was there. Now each unanswered batch is spooled before
/// the deadline, the summary says so with nothing lost, and the next run delivers exactly
/// those spans, once.
fn sigterm_against_a_collector_that_never_answers(protocol: &str) {
    let (lines, _) = stream(40);
    let silent = Silent::start();
    let endpoint = format!("http://127.0.0.1:{}", silent.port);
    let spool = scratch("spool");
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
    assert_each_once(
        &format!("SIGTERM, collector never answers ({protocol}): the next run delivers the spool"),
        spans,
        &[&rx],
        0,
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
    let spool = scratch("spool");
    let mut exporter = Exporter::start(&args, &spool);
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
    let spool = scratch("spool");
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
    let want = expected.spans() + if live { fresh_expected.spans() } else { 0 };
    assert_each_once(
        &format!(
            "spool drained with 4 in flight, out of order{}",
            if live { ", live turns beside it" } else { "" }
        ),
        want,
        &[&rx],
        0,
    );
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
