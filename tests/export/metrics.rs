//! GenAI metrics as a user sees them: the real binary replays the demo session to the test
//! receiver, over gRPC and HTTP, and what the metrics say must be what the spans say.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::*;
use opentelemetry_proto::tonic::metrics::v1::metric::Data;

/// What the chat spans say: input and output tokens, and cost.
pub(crate) fn span_totals(spans: &[FlatSpan]) -> (f64, f64, f64) {
    let num = |s: &FlatSpan, k: &str| s.attr(k).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    let chats: Vec<_> = spans
        .iter()
        .filter(|s| s.attr("gen_ai.operation.name").as_deref() == Some("chat"))
        .collect();
    assert!(!chats.is_empty(), "the demo has model calls");
    (
        chats
            .iter()
            .map(|s| num(s, "gen_ai.usage.input_tokens"))
            .sum(),
        chats
            .iter()
            .map(|s| num(s, "gen_ai.usage.output_tokens"))
            .sum(),
        chats.iter().map(|s| num(s, "gen_ai.usage.cost")).sum(),
    )
}

/// Every metric point received, by metric name: (attributes, sum, start time).
/// One point: its attributes, its value (a histogram's sum) and its start time.
type Point = (BTreeMap<String, String>, f64, u64);

fn points(r: &Receiver) -> BTreeMap<String, Vec<Point>> {
    let mut out: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for req in r.metrics() {
        for rm in &req.request.resource_metrics {
            let resource: Vec<_> = rm.resource.iter().flat_map(|r| &r.attributes).collect();
            assert!(
                resource.iter().any(|a| a.key == "service.name"),
                "metrics carry the resource"
            );
            for m in rm.scope_metrics.iter().flat_map(|s| &s.metrics) {
                let attrs = |kvs: &[opentelemetry_proto::tonic::common::v1::KeyValue]| {
                    kvs.iter()
                        .map(|kv| (kv.key.clone(), any_to_string(&kv.value)))
                        .collect::<BTreeMap<_, _>>()
                };
                let list = out.entry(m.name.clone()).or_default();
                match &m.data {
                    Some(Data::Histogram(h)) => {
                        assert_eq!(h.aggregation_temporality, 1, "{} is delta", m.name);
                        for p in &h.data_points {
                            list.push((
                                attrs(&p.attributes),
                                p.sum.unwrap(),
                                p.start_time_unix_nano,
                            ));
                        }
                    }
                    Some(Data::Sum(s)) => {
                        assert_eq!(s.aggregation_temporality, 1, "{} is delta", m.name);
                        assert!(s.is_monotonic);
                        for p in &s.data_points {
                            let v = match p.value {
                                Some(opentelemetry_proto::tonic::metrics::v1::number_data_point::Value::AsDouble(d)) => d,
                                Some(opentelemetry_proto::tonic::metrics::v1::number_data_point::Value::AsInt(i)) => i as f64,
                                None => 0.0,
                            };
                            list.push((attrs(&p.attributes), v, p.start_time_unix_nano));
                        }
                    }
                    other => panic!("{}: unexpected {other:?}", m.name),
                }
            }
        }
    }
    out
}

/// What the metrics say: input tokens, output tokens, cost.
pub(crate) fn metric_totals(r: &Receiver) -> (f64, f64, f64) {
    let p = points(r);
    let tokens = |kind: &str| -> f64 {
        p.get("gen_ai.client.token.usage")
            .into_iter()
            .flatten()
            .filter(|(a, _, _)| a.get("gen_ai.token.type").map(String::as_str) == Some(kind))
            .map(|(_, v, _)| v)
            .sum()
    };
    let cost = p
        .get("albedo.usage.cost")
        .into_iter()
        .flatten()
        .map(|(_, v, _)| v)
        .sum();
    (tokens("input"), tokens("output"), cost)
}

fn assert_same_totals(spans: (f64, f64, f64), metrics: (f64, f64, f64), what: &str) {
    assert_eq!(spans.0, metrics.0, "{what}: input tokens");
    assert_eq!(spans.1, metrics.1, "{what}: output tokens");
    assert!(spans.2 > 0.0, "{what}: the demo's calls are priced");
    assert!(
        (spans.2 - metrics.2).abs() < 0.005,
        "{what}: cost {} by the spans, {} by the metrics",
        spans.2,
        metrics.2
    );
}

#[test]
fn token_and_cost_metrics_add_up_to_the_spans_over_grpc_and_http() {
    for protocol in ["grpc", "http/protobuf", "http/json"] {
        let r = Receiver::start();
        let out = replay_once(protocol, &r.url(protocol), &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let spans = r.spans();
        assert_same_totals(span_totals(&spans), metric_totals(&r), protocol);
        let p = points(&r);
        for name in [
            "gen_ai.client.token.usage",
            "gen_ai.client.operation.duration",
            "gen_ai.invoke_agent.duration",
            "gen_ai.execute_tool.duration",
            "albedo.usage.cost",
        ] {
            assert!(
                p.contains_key(name),
                "{protocol}: no {name} in {:?}",
                p.keys()
            );
        }
        // Bounded cardinality: no id of a session, a conversation, a trace or a call.
        for (name, list) in &p {
            for (attrs, _, _) in list {
                for key in attrs.keys() {
                    assert!(
                        !key.contains("session")
                            && !key.contains("conversation")
                            && !key.contains("trace")
                            && !key.ends_with(".id")
                            || key == "user.id",
                        "{protocol}: {name} has {key}"
                    );
                }
            }
        }
        let tool_runs = p["gen_ai.execute_tool.duration"].len();
        assert!(tool_runs >= 1);
        assert!(r
            .metrics()
            .iter()
            .all(|m| m.via.starts_with(protocol.split('/').next().unwrap())));
    }
}

#[test]
fn two_exporters_one_after_the_other_give_totals_that_add_up() {
    let r = Receiver::start();
    let first = replay_once("grpc", &r.grpc_url(), &[]);
    assert!(first.status.success());
    let once = metric_totals(&r);
    // The same session again under other ids, from a second process.
    let again = String::from_utf8(demo_session())
        .unwrap()
        .replace("demo-7f3a", "demo-9c1e");
    let second = run_binary(
        &[
            "replay",
            "-",
            "--metrics",
            "--no-spool",
            "--flush-timeout",
            "1s",
            "--protocol",
            "grpc",
            "--endpoint",
            &r.grpc_url(),
        ],
        &[],
        again.as_bytes(),
    );
    assert!(second.status.success());
    let spans = r.spans();
    let both = metric_totals(&r);
    assert_same_totals(span_totals(&spans), both, "two runs");
    assert_eq!(both.0, once.0 * 2.0);
    assert_eq!(both.1, once.1 * 2.0);
    // Each process's points start at its own start: two intervals, not one counter reset.
    let starts: std::collections::BTreeSet<u64> = points(&r)["gen_ai.client.token.usage"]
        .iter()
        .map(|(_, _, start)| *start)
        .collect();
    assert_eq!(starts.len(), 2, "{starts:?}");
}

#[test]
fn otel_metrics_exporter_none_sends_no_metrics() {
    let r = Receiver::start();
    let out = replay_once(
        "http/protobuf",
        &r.http_url(),
        &[("OTEL_METRICS_EXPORTER", "none")],
    );
    assert!(out.status.success());
    assert_eq!(r.spans().len(), 21);
    assert!(r.metrics().is_empty(), "{:?}", r.metrics().len());
}

/// Feeds the demo to `run` three times under other session ids, 300 ms apart and without
/// its `closed` records (which end `run`), with a batch every 10 ms and metrics every 20 ms: a run that sends
/// metrics several times, not once at the close.
/// `albedo-otel run` to `r` over `protocol`, with a batch every 10 ms and metrics every 20 ms,
/// none of the test's own `OTEL_*` or `ALBEDO_OTEL_*` variables, and its streams piped.
fn run_command(r: &Receiver, protocol: &str, config: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
    cmd.args(["run", "--batch-delay", "10ms"])
        .args(["--protocol", protocol, "--endpoint", &r.url(protocol)])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, _) in std::env::vars() {
        if k.starts_with("OTEL_") || k.starts_with("ALBEDO_OTEL") {
            cmd.env_remove(k);
        }
    }
    cmd.env("XDG_CONFIG_HOME", config)
        .env("ALBEDO_OTEL_LOG", "info")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "20");
    cmd
}

fn run_slowly(r: &Receiver, protocol: &str) -> (std::process::ExitStatus, String) {
    let config = scratch("config");
    let mut cmd = run_command(r, protocol, &config);
    cmd.arg("--no-spool");
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Input waits for `ready`: written before, it would all be read at once.
    let stderr = child.stderr.take().unwrap();
    let (tx, lines) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let mut log = String::new();
    while let Ok(line) = lines.recv_timeout(Duration::from_secs(30)) {
        log.push_str(&line);
        log.push('\n');
        if line.contains("ready") {
            break;
        }
    }
    let demo = String::from_utf8(demo_session()).unwrap();
    for copy in ["a", "b", "c"] {
        let text: String = demo
            .replace("demo-7f3a", &format!("demo-{copy}"))
            .lines()
            .filter(|l| !l.contains(r#""kind":"closed""#))
            .map(|l| format!("{l}\n"))
            .collect();
        // A write fails only if the exporter is gone; its stderr says why.
        if stdin
            .write_all(text.as_bytes())
            .and_then(|()| stdin.flush())
            .is_err()
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    drop(stdin);
    let status = child.wait().unwrap();
    reader.join().unwrap();
    log.extend(lines.try_iter().map(|l| l + "\n"));
    (status, log)
}

#[test]
fn a_collector_without_metrics_gets_every_span_and_one_warning() {
    for protocol in ["http/protobuf", "grpc"] {
        // A collector that takes metrics gets them several times in such a run...
        let r = Receiver::start();
        let (status, stderr) = run_slowly(&r, protocol);
        assert!(status.success(), "{protocol}: {stderr}");
        let spans = r.spans().len();
        assert!(spans >= 3 * 21, "{protocol}: {spans} spans; {stderr}");
        let sent = r.metrics().len();
        assert!(sent >= 3, "{protocol}: metrics sent {sent} times; {stderr}");
        assert_same_totals(span_totals(&r.spans()), metric_totals(&r), protocol);
        // ...and one that takes none is asked once, warned about once, and costs no span.
        let r = Receiver::start();
        r.refuse_metrics();
        let (status, stderr) = run_slowly(&r, protocol);
        assert!(status.success(), "{protocol}: {stderr}");
        assert_eq!(r.spans().len(), spans, "{protocol}: every span, {stderr}");
        let warnings: Vec<_> = stderr
            .lines()
            .filter(|l| l.contains("WARN") && l.contains("metrics"))
            .collect();
        assert_eq!(warnings.len(), 1, "{protocol}: {stderr}");
        assert!(r.metrics().is_empty());
        // Once (twice, had a second export left before the first answer), not per interval.
        let asked = r.metrics_refused();
        assert!((1..=2).contains(&asked), "{protocol}: asked {asked} times");
    }
}

/// The earliest start among a metrics request's points.
fn first_start(
    req: &opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest,
) -> u64 {
    req.resource_metrics
        .iter()
        .flat_map(|rm| &rm.scope_metrics)
        .flat_map(|s| &s.metrics)
        .flat_map(|m| match &m.data {
            Some(Data::Histogram(h)) => h
                .data_points
                .iter()
                .map(|p| p.start_time_unix_nano)
                .collect(),
            Some(Data::Sum(s)) => s
                .data_points
                .iter()
                .map(|p| p.start_time_unix_nano)
                .collect(),
            _ => Vec::new(),
        })
        .min()
        .unwrap_or(u64::MAX)
}

/// A run whose collector is down keeps its metrics in the spool, as it keeps its spans; the
/// next run to the same collector sends them before its own, so deltas arrive in order and the
/// totals add up across the outage.
#[test]
fn metrics_a_down_collector_missed_arrive_with_the_next_run_before_its_own() {
    for protocol in ["grpc", "http/protobuf"] {
        let addr: std::net::SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let endpoint = format!("http://{addr}");
        let spool = scratch("metrics-spool");
        let spool = spool.to_str().unwrap();
        let run = |session: &str| {
            let input = String::from_utf8(demo_session())
                .unwrap()
                .replace("demo-7f3a", session);
            let args = [
                "replay",
                "-",
                "--metrics",
                "--flush-timeout",
                "1s",
                "--protocol",
                protocol,
            ];
            let args = [&args[..], &["--endpoint", &endpoint]].concat();
            run_binary(&args, &[("ALBEDO_OTEL_SPOOL_DIR", spool)], input.as_bytes())
        };
        // Nothing listens: spans and metrics both wait on disk.
        let down = run("demo-down");
        let stderr = String::from_utf8_lossy(&down.stderr);
        assert!(down.status.success(), "{protocol}: {stderr}");
        assert!(
            stderr.contains("metrics were not delivered, and wait in the spool"),
            "{protocol}: {stderr}"
        );
        let status = run_binary(&["status", "--spool-dir", spool], &[], b"");
        let status = String::from_utf8_lossy(&status.stdout);
        assert!(
            status.contains(" metrics exports, "),
            "{protocol}: {status}"
        );

        let r = if protocol == "grpc" {
            Receiver::start_on(Some(addr), None)
        } else {
            Receiver::start_on(None, Some(addr))
        };
        let up = run("demo-up");
        let stderr = String::from_utf8_lossy(&up.stderr);
        assert!(up.status.success(), "{protocol}: {stderr}");
        let spans = r.spans();
        assert_eq!(spans.len(), 42, "{protocol}: both runs' spans; {stderr}");
        assert_same_totals(span_totals(&spans), metric_totals(&r), protocol);
        let requests = r.metrics();
        assert!(
            requests.len() >= 2,
            "{protocol}: {} requests",
            requests.len()
        );
        let starts: Vec<u64> = requests.iter().map(|m| first_start(&m.request)).collect();
        assert!(
            starts.windows(2).all(|w| w[0] <= w[1]),
            "{protocol}: metrics arrived out of order: {starts:?}"
        );
        let status = run_binary(&["status", "--spool-dir", spool], &[], b"");
        let status = String::from_utf8_lossy(&status.stdout);
        assert!(
            status.contains("everything was delivered"),
            "{protocol}: {status}"
        );
    }
}

/// How many turns the metrics counted: the data points of `gen_ai.invoke_agent.duration`.
fn turns_counted(r: &Receiver) -> u64 {
    r.metrics()
        .iter()
        .flat_map(|m| &m.request.resource_metrics)
        .flat_map(|rm| &rm.scope_metrics)
        .flat_map(|s| &s.metrics)
        .filter(|m| m.name == "gen_ai.invoke_agent.duration")
        .map(|m| match &m.data {
            Some(Data::Histogram(h)) => h.data_points.iter().map(|p| p.count).sum(),
            _ => 0,
        })
        .sum()
}

/// A collector that turns metrics away for a while (404: a restart behind an ingress) costs
/// them nothing with a spool: they wait there, backing off, and the first 200 resumes them, so
/// in the end the metrics add up to the spans.
#[test]
fn metrics_turned_away_for_a_while_resume_and_add_up() {
    let r = Receiver::start();
    r.refuse_metrics();
    let spool = scratch("metrics-404");
    let config = scratch("config-404");
    let mut cmd = run_command(&r, "grpc", &config);
    cmd.env("ALBEDO_OTEL_SPOOL_DIR", &*spool);
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let demo = String::from_utf8(demo_session()).unwrap();
    let copy = |name: &str| -> String {
        demo.replace("demo-7f3a", name)
            .lines()
            .filter(|l| !l.contains(r#""kind":"closed""#))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    stdin.write_all(copy("demo-404").as_bytes()).unwrap();
    stdin.flush().unwrap();
    wait_until(Duration::from_secs(20), "metrics to be turned away", || {
        r.metrics_refused() >= 1
    });
    r.accept_metrics();
    stdin.write_all(copy("demo-200").as_bytes()).unwrap();
    stdin.flush().unwrap();
    // The backoff's next try (a second after the 404) finds the collector taking them.
    wait_until(Duration::from_secs(20), "metrics to resume", || {
        !r.metrics().is_empty()
    });
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("takes no OTLP metrics now") && stderr.contains("they wait in the spool"),
        "{stderr}"
    );
    assert!(stderr.contains("metrics are delivered again"), "{stderr}");
    let spans = r.spans();
    assert_eq!(spans.len(), 2 * 21, "{stderr}");
    assert_same_totals(span_totals(&spans), metric_totals(&r), "after a 404");
    let turns = spans
        .iter()
        .filter(|s| s.attr("gen_ai.operation.name").as_deref() == Some("invoke_agent"))
        .count() as u64;
    assert_eq!(turns_counted(&r), turns, "each turn counted once");
}

/// A metrics endpoint that never answers holds up no span and no checkpoint (issue 37.2):
/// across daemons, with the default timeout and with 30 s, each turn arrives once, its resume
/// point is saved, and once the collector takes metrics again each turn is counted once.
#[test]
fn a_silent_metrics_endpoint_costs_no_span_and_exports_no_turn_twice() {
    use crate::support::hooks::Setup;
    for timeout in [None, Some("30000")] {
        let r = Receiver::start();
        r.blackhole_metrics();
        let setup = Setup::new(&r);
        let extra: Vec<(std::ffi::OsString, std::ffi::OsString)> = timeout
            .map(|t| vec![("OTEL_EXPORTER_OTLP_TIMEOUT".into(), t.into())])
            .unwrap_or_default();
        let daemons_done = || {
            setup
                .daemon_log()
                .matches("daemon done (Some(Idle))")
                .count()
        };
        let turn = |n: u32, end: bool| {
            let s = "silent-metrics";
            let hook = |p: String| setup.hook_with(&p, &extra);
            hook(format!(
                r#"{{"session_id":"{s}","hook_event_name":"UserPromptSubmit","prompt":"turn {n}"}}"#
            ));
            hook(format!(
                r#"{{"session_id":"{s}","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t{n}","tool_input":{{}}}}"#
            ));
            hook(format!(
                r#"{{"session_id":"{s}","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t{n}","duration_ms":5}}"#
            ));
            hook(format!(
                r#"{{"session_id":"{s}","hook_event_name":"Stop","stop_hook_active":false}}"#
            ));
            if end {
                hook(format!(
                    r#"{{"session_id":"{s}","hook_event_name":"SessionEnd"}}"#
                ));
            }
        };
        let roots = |r: &Receiver| {
            r.spans()
                .iter()
                .filter(|s| s.attr("gen_ai.operation.name").as_deref() == Some("invoke_agent"))
                .map(|s| s.attr("gen_ai.prompt").unwrap_or_default() + &hex(&s.span.trace_id))
                .collect::<Vec<_>>()
        };
        // Two daemons, one after the other, each with a turn of the same session.
        for n in 1..=2 {
            turn(n, false);
            wait_until(Duration::from_secs(40), "the daemon to go idle", || {
                daemons_done() == n as usize
            });
            assert_eq!(roots(&r).len(), n as usize, "{timeout:?}: {:?}", roots(&r));
            // What it could not send it gave back to the spool as it closed.
            wait_until(
                Duration::from_secs(20),
                "no claim left in the spool",
                || {
                    files_under(&setup.spool)
                        .iter()
                        .all(|f| !f.to_string_lossy().contains(".claimed-"))
                },
            );
        }
        assert!(r.metrics_swallowed() >= 1, "{timeout:?}: metrics were sent");
        assert!(r.metrics().is_empty());
        // The collector takes metrics again: a third daemon sends what the first two kept.
        r.accept_metrics();
        turn(3, true);
        setup.wait_idle();
        let roots = roots(&r);
        let mut unique = roots.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(
            (roots.len(), unique.len()),
            (3, 3),
            "{timeout:?}: each turn's root arrives once: {roots:?}\n{}",
            setup.daemon_log()
        );
        assert_eq!(
            turns_counted(&r),
            3,
            "{timeout:?}: each turn counted once\n{}",
            setup.daemon_log()
        );
    }
}

fn hex(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// Replaying a file twice sends its spans twice with the same ids (a backend keeps them once),
/// but a metric point is a delta: so `replay` sends none unless told (`--metrics`), and two
/// replays of one file count nothing twice (issue 37.12).
#[test]
fn replaying_a_file_twice_counts_nothing_twice() {
    let r = Receiver::start();
    let args = [
        "replay",
        "-",
        "--no-spool",
        "--protocol",
        "grpc",
        "--endpoint",
    ];
    for _ in 0..2 {
        let out = run_binary(
            &[&args[..], &[&r.grpc_url()]].concat(),
            &[],
            &demo_session(),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(
        r.spans().len(),
        2 * 21,
        "the spans go, twice, with their ids"
    );
    assert!(
        r.metrics().is_empty(),
        "{} metrics requests",
        r.metrics().len()
    );
    let once = run_binary(
        &[&args[..], &[&r.grpc_url(), "--metrics"]].concat(),
        &[],
        &demo_session(),
    );
    assert!(once.status.success());
    assert_same_totals(
        span_totals(&r.spans()[..21]),
        metric_totals(&r),
        "--metrics",
    );
}
