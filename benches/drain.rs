//! The spool draining after an outage, as `cargo bench --bench drain` (or `scripts/bench`)
//! measures it, on the real binary:
//!
//! 1. A backlog: `BENCH_DRAIN_SPANS` spans (default 200,000) are spooled by `albedo-otel run`
//!    while nothing listens at the endpoint.
//! 2. The collector comes back `BENCH_DRAIN_DELAY_MS` away (default 50 ms: every answer is
//!    held that long), and a new `run` on the same spool drains it while live turns are
//!    written at `BENCH_DRAIN_LIVE_RATE` events/s (default 2,000). The drain rate is the
//!    backlog over the time from `ready:` until the status says it all came from the spool;
//!    the live figure is how many live spans were delivered by then, of those made, and the
//!    exporter's CPU over that time says whether it waited or spun.
//!
//! Every span of both must arrive at the end.

mod common;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use albedo_otel::testing::{generate, GenConfig};
use common::{env_num, number_before, Running, Sink};

fn main() {
    if std::env::var("BENCH_ROLE").as_deref() == Ok("sink") {
        common::sink();
        return;
    }
    let want = env_num("BENCH_DRAIN_SPANS", 200_000);
    let delay = Duration::from_millis(env_num("BENCH_DRAIN_DELAY_MS", 50));
    let live_rate = env_num("BENCH_DRAIN_LIVE_RATE", 2_000);

    let port = common::free_port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let spool =
        std::env::temp_dir().join(format!("albedo-otel-drain-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&spool);
    let spool_env = [
        ("ALBEDO_OTEL_SPOOL_DIR", spool.to_str().unwrap()),
        // Refused connections while the collector is down would fill the log.
        (
            "ALBEDO_OTEL_LOG",
            "info,albedo_otel::pipeline::delivery=error",
        ),
    ];
    let args = ["--protocol", "grpc", "--endpoint", endpoint.as_str()];

    // The backlog, made while nothing listens.
    let config = |sessions| GenConfig {
        sessions,
        turns_per_session: 5,
        seed: 5,
        ..GenConfig::default()
    };
    // Enough sessions for `want` spans, by the spans a sample of them makes.
    let per_session = generate(&config(100)).1.spans().max(1) as f64 / 100.0;
    // A little over: sessions differ in size.
    let sessions = ((want as f64 * 1.02 / per_session).ceil() as usize).max(10);
    let (lines, expected) = generate(&config(sessions));
    let mut down = Running::start(&args, &spool_env);
    down.wait_log("ready:", Duration::from_secs(30));
    down.write(&(lines.join("\n") + "\n"));
    let done = down.close();
    let backlog = number_before(&done, " spooled to send later");
    assert_eq!(backlog, expected.spans(), "{done}");

    // The collector is back, far away; a new run drains while live turns flow.
    let sink = Sink::start_far_on(port, delay);
    let mut run = Running::start(&args, &spool_env);
    let (ready, _) = run.wait_log("ready:", Duration::from_secs(30));
    let (live_lines, _) = generate(&GenConfig {
        sessions: 2_000,
        turns_per_session: 5,
        seed: 9,
        ..GenConfig::default()
    });
    let stop = Arc::new(AtomicBool::new(false));
    let mut stdin = run.stdin.take().unwrap();
    let writer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let per_tick = (live_rate / 100).max(1) as usize;
            let start = Instant::now();
            let mut sent = 0;
            for (i, chunk) in live_lines.chunks(per_tick).enumerate() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                if let Some(wait) = (start + Duration::from_millis(10) * i as u32)
                    .checked_duration_since(Instant::now())
                {
                    std::thread::sleep(wait);
                }
                if stdin
                    .write_all((chunk.join("\n") + "\n").as_bytes())
                    .is_err()
                {
                    break;
                }
                sent += chunk.len();
            }
            (stdin, sent)
        })
    };
    let status = run.wait_from_spool(backlog, Duration::from_secs(600));
    let drained = ready.elapsed();
    // CPU the exporter spent from its start to the end of the drain: a loop that spun while
    // the exports were out would show here as about one core for the whole drain.
    let cpu = common::cpu_seconds(&run.child.id().to_string(), false);
    stop.store(true, Ordering::Relaxed);
    let live_delivered = number_before(&status, " delivered");
    let live_made = number_before(&status, " spans");
    let (stdin, _sent) = writer.join().unwrap();
    drop(stdin);
    let done = run.close();
    let total = number_before(&done, " spans") + backlog;
    sink.wait_for(total, Duration::from_secs(120));
    let _ = std::fs::remove_dir_all(&spool);

    let rate = backlog as f64 / drained.as_secs_f64();
    println!();
    println!("| scenario | figure | value | target |");
    println!("| --- | --- | --- | --- |");
    let name = format!(
        "{backlog}-span backlog, collector {} ms away, live turns at {live_rate} events/s",
        delay.as_millis()
    );
    println!(
        "| {name} | drain rate | {rate:.0} spans/s ({backlog} spans in {:.2} s) | ≥ 50,000 spans/s |",
        drained.as_secs_f64()
    );
    println!(
        "| {name} | live spans delivered while it drained | {live_delivered} of {live_made} made | live traffic keeps flowing |"
    );
    println!(
        "| {name} | exporter CPU, start to drained | {cpu:.2} s over {:.2} s ({:.0}% of a core) | not busy-waiting |",
        drained.as_secs_f64(),
        100.0 * cpu / drained.as_secs_f64()
    );
    println!(
        "| {name} | received in all | {} of {total} | nothing lost |",
        sink.count()
    );
}
