//! Latencies a user notices, as `cargo bench --bench latency` (or `scripts/bench`) measures
//! them on the real binary:
//!
//! 1. **Latency to the wire** at low load: a whole turn is written to `albedo-otel run`, one
//!    every ~1.2 s, and the time until the receiver has its spans is taken. It should be about
//!    the batch delay (`OTEL_BSP_SCHEDULE_DELAY`, 1 s by default), never more: measured at the
//!    default and at 100 ms.
//! 2. **Command hook**: the wall time of one hook process with a Claude Code payload on
//!    stdin, run as `install` writes it (`albedo-otel-hook --config FILE --hook-dir DIR`,
//!    no `OTEL_*` in its environment) and as `albedo-otel hook`, `BENCH_HOOK_RUNS` runs each
//!    (default 200), each small-hook run paired with a `/bin/true` run just before it, with
//!    the collector up and with it down. The ratio is the median of the pairs' ratios.
//! 3. **Startup**: from spawning `albedo-otel run` to its `ready:` line, after which it takes
//!    events (the reader starts right after); `albedo-otel --version` for the floor.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use albedo_otel::sources::command_hooks::daemon;
use common::{exe, Running, Sink};
use serde_json::json;

fn main() {
    if std::env::var("BENCH_ROLE").as_deref() == Ok("sink") {
        common::sink();
        return;
    }
    let runs: usize = std::env::var("BENCH_HOOK_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let sink = Sink::start();
    let mut rows = Vec::new();
    rows.push(wire_latency(&sink, None, 10));
    rows.push(wire_latency(&sink, Some(100), 10));
    rows.extend(command_hook(&sink, runs));
    rows.extend(startup(&sink, 30));
    println!();
    println!("| figure | median | p99 | max | samples | target |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            r.name,
            ms(r.median),
            ms(r.p99),
            ms(r.max),
            r.samples,
            r.target
        );
    }
}

struct Row {
    name: String,
    median: Duration,
    p99: Duration,
    max: Duration,
    samples: usize,
    target: &'static str,
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn row(name: String, mut v: Vec<Duration>, target: &'static str) -> Row {
    v.sort_unstable();
    let at = |p: f64| v[((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1];
    Row {
        name,
        median: at(0.5),
        p99: at(0.99),
        max: *v.last().unwrap(),
        samples: v.len(),
        target,
    }
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "albedo-otel-latency-bench-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// One turn (prompt, a tool call, its end) every ~1.2 s; the time from writing its last line
/// to the receiver having its two spans.
fn wire_latency(sink: &Sink, delay_ms: Option<u64>, turns: u64) -> Row {
    let spool = temp("wire");
    let endpoint = format!("http://127.0.0.1:{}", sink.grpc);
    let mut env = vec![("ALBEDO_OTEL_SPOOL_DIR", spool.to_str().unwrap().to_string())];
    if let Some(d) = delay_ms {
        env.push(("OTEL_BSP_SCHEDULE_DELAY", d.to_string()));
    }
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut run = Running::start(&["--protocol", "grpc", "--endpoint", &endpoint], &env);
    run.wait_log("ready:", Duration::from_secs(30));
    let mut took = Vec::new();
    for i in 0..turns {
        let t = 1_796_300_000_000 + i * 10_000;
        let sid = format!("wire-{}-{i}", delay_ms.unwrap_or(1000));
        let before = sink.count();
        let text = format!(
            concat!(
                r#"{{"v":1,"kind":"prompted","session":"{sid}","at_ms":{t0},"text":"go"}}"#,
                "\n",
                r#"{{"v":1,"kind":"called","session":"{sid}","call":{{"id":"c{i}","name":"run","arguments":{{"command":"ls"}},"within":null}},"output":{{"exit_code":0,"timed_out":false}},"started_ms":{t1},"finished_ms":{t2}}}"#,
                "\n",
                r#"{{"v":1,"kind":"turn_ended","session":"{sid}","at_ms":{t3}}}"#,
                "\n"
            ),
            sid = sid,
            i = i,
            t0 = t,
            t1 = t + 5,
            t2 = t + 50,
            t3 = t + 60
        );
        let sent = Instant::now();
        run.write(&text);
        run.stdin.as_mut().unwrap().flush().unwrap();
        let arrived = sink.wait_for(before + 2, Duration::from_secs(30));
        took.push(arrived - sent);
        std::thread::sleep(Duration::from_millis(200));
    }
    run.close();
    let _ = std::fs::remove_dir_all(&spool);
    let delay = delay_ms.unwrap_or(1000);
    let name = format!("event to span received, batch delay {delay} ms");
    row(
        name,
        took,
        if delay_ms.is_none() {
            "≈ batch delay (1 s), bounded"
        } else {
            "≈ batch delay, bounded"
        },
    )
}

/// Claude Code payloads for one session: a prompt, tool calls before and after, the stop.
fn claude_code_payloads(n: usize, session: &str) -> Vec<String> {
    let transcript = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code/multi_tool/transcript.jsonl");
    let base = |event: &str| {
        json!({
            "session_id": session,
            "transcript_path": transcript,
            "cwd": "/home/dev/demo",
            "permission_mode": "default",
            "hook_event_name": event,
        })
    };
    let mut out = Vec::with_capacity(n);
    let mut p = base("UserPromptSubmit");
    p["prompt"] = json!("Read notes.txt, fix the typo in it, and run the tests.");
    out.push(p.to_string());
    let mut i = 0;
    while out.len() + 1 < n {
        let id = format!("toolu_bench{i:06}");
        let mut pre = base("PreToolUse");
        pre["tool_name"] = json!("Read");
        pre["tool_input"] = json!({"file_path": "/home/dev/demo/notes.txt"});
        pre["tool_use_id"] = json!(id);
        out.push(pre.to_string());
        if out.len() + 1 < n {
            let mut post = base("PostToolUse");
            post["tool_name"] = json!("Read");
            post["tool_input"] = json!({"file_path": "/home/dev/demo/notes.txt"});
            post["tool_response"] = json!({"type": "text", "file": {"filePath": "/home/dev/demo/notes.txt", "content": "helo world\n", "numLines": 2, "startLine": 1, "totalLines": 2}});
            post["tool_use_id"] = json!(id);
            post["duration_ms"] = json!(14);
            out.push(post.to_string());
        }
        i += 1;
    }
    let mut stop = base("Stop");
    stop["stop_hook_active"] = json!(false);
    stop["last_assistant_message"] = json!("Fixed the typo; the tests pass.");
    out.push(stop.to_string());
    out
}

fn timed_run(cmd: &mut Command, stdin: &[u8]) -> Duration {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // /bin/true may exit before reading: a broken pipe is fine.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    let out = child.wait_with_output().unwrap();
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

/// The command as `install` writes it, `<hook> --config FILE --hook-dir DIR`, in the
/// environment Claude Code gives it (its own, minus every `OTEL_*`); the settings are in the
/// file.
fn installed_hook(small: bool, config: &Path, hook_dir: &Path) -> Command {
    let mut cmd = if small {
        Command::new(exe().with_file_name("albedo-otel-hook"))
    } else {
        let mut c = Command::new(exe());
        c.arg("hook");
        c
    };
    for (k, _) in std::env::vars() {
        if k.starts_with("OTEL_") || k.starts_with("ALBEDO_OTEL") {
            cmd.env_remove(k);
        }
    }
    cmd.arg("--config")
        .arg(config)
        .arg("--hook-dir")
        .arg(hook_dir);
    cmd
}

fn command_hook(sink: &Sink, runs: usize) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    for (state, endpoint) in [
        ("collector up", format!("http://127.0.0.1:{}", sink.grpc)),
        (
            "collector down",
            format!("http://127.0.0.1:{}", common::free_port()),
        ),
    ] {
        let hook_dir = temp("hooks");
        let spool = temp("hook-spool");
        let config = hook_dir.with_extension("toml");
        std::fs::write(
            &config,
            format!(
                "[otlp]\nendpoint = \"{endpoint}\"\nprotocol = \"grpc\"\n\n\
                 [spool]\ndir = {spool:?}\n\n[hooks]\nidle_exit = \"2s\"\n"
            ),
        )
        .unwrap();
        let session = format!("bench-{}", state.replace(' ', "-"));
        let payloads = claude_code_payloads(2 * runs + 1, &session);
        // The first hook of a session starts the background daemon: timed on its own.
        let first = timed_run(
            &mut installed_hook(true, &config, &hook_dir),
            payloads[0].as_bytes(),
        );
        let mut truth = Vec::with_capacity(runs);
        let (mut small, mut full) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
        let mut pair_ratio = Vec::with_capacity(runs);
        for pair in payloads[1..].chunks(2) {
            // Pair by pair, so that a slow patch of the machine slows both.
            let t = timed_run(&mut Command::new("/bin/true"), pair[0].as_bytes());
            let h = timed_run(
                &mut installed_hook(true, &config, &hook_dir),
                pair[0].as_bytes(),
            );
            truth.push(t);
            small.push(h);
            pair_ratio.push(h.as_secs_f64() / t.as_secs_f64());
            if let Some(p) = pair.get(1) {
                full.push(timed_run(
                    &mut installed_hook(false, &config, &hook_dir),
                    p.as_bytes(),
                ));
            }
        }
        let median_ratio = {
            let mut r = pair_ratio;
            r.sort_by(f64::total_cmp);
            r[r.len() / 2]
        };
        ratios.push(format!(
            "ratio {state}: `albedo-otel-hook` / `/bin/true`, median of {} pairs: {median_ratio:.2}× (target ≤ 1.3×)",
            truth.len()
        ));
        rows.push(row(
            format!("`albedo-otel-hook --config F --hook-dir D` (installed), {state}"),
            small,
            "≤ 1.3× `/bin/true`, pair by pair",
        ));
        rows.push(row(
            format!("`/bin/true`, same payloads, paired with the row above, {state}"),
            truth,
            "",
        ));
        rows.push(row(
            format!("`albedo-otel hook --config F --hook-dir D`, {state}"),
            full,
            "median ≤ 3 ms, p99 ≤ 10 ms",
        ));
        rows.push(row(
            format!("first hook of a session (starts the daemon), {state}"),
            vec![first],
            "",
        ));
        // The daemon's delivery is not what is measured here (the journal keeps the events
        // anyway): stop it now, and wait for it to exit before its folders go.
        if let Some(pid) = daemon::pid(&hook_dir) {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
        let until = Instant::now() + Duration::from_secs(10);
        while daemon::running(&hook_dir) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = std::fs::remove_dir_all(&hook_dir);
        let _ = std::fs::remove_dir_all(&spool);
        let _ = std::fs::remove_file(&config);
    }
    for r in ratios {
        println!("{r}");
    }
    rows
}

fn startup(sink: &Sink, n: usize) -> Vec<Row> {
    let spool = temp("startup");
    let endpoint = format!("http://127.0.0.1:{}", sink.grpc);
    let mut ready = Vec::with_capacity(n);
    let mut version = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        let run = Running::start(
            &["--protocol", "grpc", "--endpoint", &endpoint],
            &[("ALBEDO_OTEL_SPOOL_DIR", spool.to_str().unwrap())],
        );
        let (at, _) = run.wait_log("ready:", Duration::from_secs(30));
        ready.push(at - start);
        run.close();
        version.push(timed_run(Command::new(exe()).arg("--version"), b""));
    }
    let _ = std::fs::remove_dir_all(&spool);
    vec![
        row(
            "startup: spawn to `ready:` (accepting events)".into(),
            ready,
            "",
        ),
        row("floor: `albedo-otel --version`".into(), version, ""),
    ]
}
