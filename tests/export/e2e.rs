//! End to end: the real binary, stdin to a real OTLP receiver on loopback, over gRPC and HTTP.
//! What arrived is decoded and compared as span trees, ids, exact timestamps and attributes.

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::*;

const SHOW: &[&str] = &[
    "session.id",
    "gen_ai.conversation.id",
    "gen_ai.tool.call.id",
    "process.exit.code",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "albedo.turn.number",
    "albedo.unfinished",
    "albedo.synthesized",
];

/// The demo session as a user sees it in Jaeger: two turns, a cell with nested calls,
/// parallel calls, a sub-agent under its `agents.spawn` call, a refused call. Times are the
/// fixture's milliseconds, exactly, in nanoseconds.
const DEMO_TREE: &str = "\
invoke_agent albedo 1796000000010000000..1796000018020000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a albedo.turn.number=1
  chat claude-sonnet-4-5 1796000000020000000..1796000002400000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a gen_ai.usage.input_tokens=15340 gen_ai.usage.output_tokens=210
  execute_tool code 1796000002410000000..1796000006300000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a gen_ai.tool.call.id=c1
    execute_tool run 1796000002450000000..1796000006100000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a gen_ai.tool.call.id=c1a process.exit.code=101
    execute_tool files.edit 1796000006200000000..1796000006230000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a gen_ai.tool.call.id=c1b
  chat claude-sonnet-4-5 1796000006310000000..1796000008900000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a gen_ai.usage.input_tokens=15600 gen_ai.usage.output_tokens=180
  execute_tool run 1796000008910000000..1796000015200000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a gen_ai.tool.call.id=c2 process.exit.code=0
  execute_tool web_search 1796000008920000000..1796000009600000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a gen_ai.tool.call.id=c3
  chat claude-sonnet-4-5 1796000015210000000..1796000017000000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a gen_ai.usage.input_tokens=17600 gen_ai.usage.output_tokens=95
  chat claude-sonnet-4-5 1796000017100000000..1796000018000000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a gen_ai.usage.input_tokens=17850 gen_ai.usage.output_tokens=40
invoke_agent albedo 1796000060000000000..1796000066920000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a albedo.turn.number=2
  chat claude-sonnet-4-5 1796000060010000000..1796000061400000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a gen_ai.usage.input_tokens=18100 gen_ai.usage.output_tokens=120
  execute_tool code 1796000061500000000..1796000064400000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a gen_ai.tool.call.id=c4
    execute_tool agents.spawn 1796000061600000000..1796000064300000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a gen_ai.tool.call.id=c4a
      invoke_agent helper 1796000061800000000..1796000064220000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a-helper albedo.turn.number=1
        chat claude-haiku-4-5 1796000061810000000..1796000063000000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a-helper gen_ai.usage.input_tokens=900 gen_ai.usage.output_tokens=150
        execute_tool files.write 1796000063010000000..1796000063040000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a-helper gen_ai.tool.call.id=k1
        chat claude-haiku-4-5 1796000063050000000..1796000064200000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a-helper gen_ai.usage.input_tokens=1100 gen_ai.usage.output_tokens=60
  chat claude-sonnet-4-5 1796000064410000000..1796000065600000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a gen_ai.usage.input_tokens=18400 gen_ai.usage.output_tokens=70
  execute_tool run 1796000065610000000..1796000065612000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a gen_ai.tool.call.id=c5 ERROR(refused by a hook: blocked by policy: force-push is not allowed)
  chat claude-sonnet-4-5 1796000065620000000..1796000066900000000 session.id=demo-7f3a gen_ai.conversation.id=demo-7f3a gen_ai.usage.input_tokens=18700 gen_ai.usage.output_tokens=85
";

fn by_name<'a>(spans: &'a [FlatSpan], name: &str) -> Vec<&'a FlatSpan> {
    spans.iter().filter(|s| s.span.name == name).collect()
}

/// Replays the demo through `run` with only the endpoint and protocol set, and checks the trees.
fn demo_arrives_whole(protocol: &str, extra_env: &[(&str, &str)]) -> Vec<Received> {
    let rx = Receiver::start();
    let url = rx.url(protocol);
    let mut env = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", url.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol),
    ];
    env.extend_from_slice(extra_env);
    let out = run_binary(&["run"], &env, &demo_session());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(out.stdout.is_empty(), "stdout belongs to protocols");
    assert!(stderr.contains("21 spans, 21 delivered"), "{stderr}");

    let spans = rx.spans();
    assert_eq!(spans.len(), 21);
    assert_eq!(check_invariants(&spans), 2, "one root per top-level turn");
    assert_eq!(render_trees(&spans, SHOW), DEMO_TREE);

    for s in &spans {
        assert_eq!(
            s.resource.get("service.name").map(String::as_str),
            Some("albedo")
        );
        assert_eq!(
            s.resource.get("telemetry.sdk.language").map(String::as_str),
            Some("rust")
        );
        assert_eq!(s.scope, "albedo-otel");
        assert_eq!(s.span.flags & 0xff, 1, "sampled");
    }
    // One trace per turn; the sub-agent's turn is in its parent's trace.
    let roots: Vec<_> = spans
        .iter()
        .filter(|s| s.span.parent_span_id.is_empty())
        .collect();
    assert_ne!(roots[0].span.trace_id, roots[1].span.trace_id);
    let helper = by_name(&spans, "invoke_agent helper")[0];
    let spawn = by_name(&spans, "execute_tool agents.spawn")[0];
    assert_eq!(helper.span.trace_id, spawn.span.trace_id);
    assert_eq!(helper.span.parent_span_id, spawn.span.span_id);
    assert_eq!(
        helper.attr("albedo.parent.session").as_deref(),
        Some("demo-7f3a")
    );
    assert_eq!(helper.attr("gen_ai.agent.name").as_deref(), Some("helper"));

    // Turn roots: name, operation, totals, the link to the previous turn, stops as events.
    let turns = by_name(&spans, "invoke_agent albedo");
    let (t1, t2) = if turns[0].attr("albedo.turn.number").as_deref() == Some("1") {
        (turns[0], turns[1])
    } else {
        (turns[1], turns[0])
    };
    let a1 = t1.attrs();
    assert_eq!(a1["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(a1["gen_ai.agent.name"], "albedo");
    assert_eq!(a1["openinference.span.kind"], "AGENT");
    assert_eq!(a1["albedo.turn.tool_calls"], "5");
    assert_eq!(a1["albedo.turn.model_calls"], "4");
    assert_eq!(a1["albedo.turn.input_tokens"], "66390");
    assert_eq!(a1["albedo.turn.output_tokens"], "525");
    assert_eq!(a1["albedo.turn.reason"], "end_turn");
    assert!(!a1.contains_key("input.value"), "prompts need an opt-in");
    assert_eq!(t1.span.links.len(), 0);
    assert_eq!(t2.span.links.len(), 1);
    assert_eq!(t2.span.links[0].trace_id, t1.span.trace_id);
    assert_eq!(t2.span.links[0].span_id, t1.span.span_id);
    let stops: Vec<_> = t1
        .span
        .events
        .iter()
        .map(|e| (e.name.as_str(), e.time_unix_nano))
        .collect();
    assert_eq!(
        stops,
        [
            ("albedo.stopping", 1796000017010000000),
            ("albedo.stopping", 1796000018010000000)
        ]
    );
    assert_eq!(
        any_to_string(&t1.span.events[1].attributes[0].value),
        "1",
        "held"
    );

    // A model call.
    let chat = spans
        .iter()
        .find(|s| s.attr("gen_ai.response.id").as_deref() == Some("msg_m1"))
        .unwrap();
    let c = chat.attrs();
    assert_eq!(chat.span.kind, 3, "CLIENT");
    assert_eq!(c["gen_ai.operation.name"], "chat");
    assert_eq!(c["gen_ai.provider.name"], "anthropic");
    assert_eq!(c["gen_ai.request.model"], "claude-sonnet-4-5");
    assert_eq!(c["gen_ai.response.model"], "claude-sonnet-4-5-20250929");
    assert_eq!(c["gen_ai.response.finish_reasons"], "[tool_use]");
    assert_eq!(
        c["gen_ai.usage.input_tokens"], "15340",
        "1840 + 12000 cached + 1500 written"
    );
    assert_eq!(c["gen_ai.usage.cache_read.input_tokens"], "12000");
    assert_eq!(c["gen_ai.usage.cache_write.input_tokens"], "1500");
    assert_eq!(
        c["gen_ai.usage.cache_creation.input_tokens"], "1500",
        "the old name, during its deprecation period"
    );
    assert_eq!(c["gen_ai.response.time_to_first_chunk"], "0.88", "seconds");
    assert_eq!(c["llm.token_count.prompt"], "15340");
    assert_eq!(c["llm.token_count.total"], "15550");
    assert_eq!(c["openinference.span.kind"], "LLM");
    assert_eq!(chat.span.events[0].name, "albedo.first_token");
    assert_eq!(chat.span.events[0].time_unix_nano, 1796000000900000000);

    // Tool calls: content under the policy, exit codes, the refusal.
    let run = spans
        .iter()
        .find(|s| s.attr("gen_ai.tool.call.id").as_deref() == Some("c1a"))
        .unwrap();
    let r = run.attrs();
    assert_eq!(run.span.kind, 1, "INTERNAL");
    assert_eq!(r["gen_ai.operation.name"], "execute_tool");
    assert_eq!(r["gen_ai.tool.name"], "run");
    assert_eq!(r["tool.name"], "run");
    assert_eq!(r["openinference.span.kind"], "TOOL");
    assert_eq!(r["input.value"], r#"{"command":"cargo test parser"}"#);
    assert_eq!(
        r["gen_ai.tool.call.arguments"],
        r#"{"command":"cargo test parser"}"#
    );
    assert_eq!(r["output.value"], r#"{"exit_code":101,"timed_out":false}"#);
    assert_eq!(r["albedo.tool.within"], "c1");
    assert_eq!(r["albedo.tool.timed_out"], "false");
    assert!(run.span.status.is_none());
    let refused = spans
        .iter()
        .find(|s| s.attr("gen_ai.tool.call.id").as_deref() == Some("c5"))
        .unwrap();
    assert_eq!(refused.attr("albedo.tool.refused").as_deref(), Some("true"));
    assert_eq!(refused.attr("error.type").as_deref(), Some("refused"));
    rx.requests()
}

#[test]
fn demo_session_over_grpc() {
    let requests = demo_arrives_whole("grpc", &[]);
    assert!(requests.iter().all(|r| r.via == "grpc" && !r.gzip));
}

#[test]
fn demo_session_over_http_protobuf() {
    let requests = demo_arrives_whole("http/protobuf", &[]);
    assert!(requests.iter().all(|r| r.via == "http/protobuf" && !r.gzip));
}

#[test]
fn demo_session_over_http_json_gzipped_with_headers() {
    let requests = demo_arrives_whole(
        "http/json",
        &[
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "x-api-key=k%3D1,x-tenant=acme",
            ),
        ],
    );
    for r in &requests {
        assert_eq!(r.via, "http/json");
        assert!(r.gzip);
        let h: HashMap<_, _> = r.headers.iter().cloned().collect();
        assert_eq!(h["x-api-key"], "k=1");
        assert_eq!(h["x-tenant"], "acme");
    }
}

#[test]
fn demo_session_over_grpc_gzipped_with_headers() {
    let requests = demo_arrives_whole(
        "grpc",
        &[
            ("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip"),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-api-key=abc"),
        ],
    );
    for r in &requests {
        assert!(r.gzip);
        assert!(r
            .headers
            .contains(&("x-api-key".to_string(), "abc".to_string())));
    }
}

fn run_ok(args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> String {
    let out = run_binary(args, env, stdin);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    stderr
}

#[test]
fn bad_lines_are_named_and_skipped_and_out_of_order_input_leaves_no_hole() {
    let rx = Receiver::start();
    let input = std::fs::read(repo_file("tests/fixtures/out_of_order.ndjson")).unwrap();
    let stderr = run_ok(
        &["run"],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &rx.http_url())],
        &input,
    );
    for expected in [
        "stdin:1: line skipped: not a JSON object",
        "stdin:2: line skipped: not valid UTF-8 (first bad byte at offset 59)",
        "stdin:3: line skipped: unknown kind `teleported`",
        "stdin:4: line skipped: missing field `finished_ms` (required for kind `called`)",
        "stdin:5: line skipped: field `at_ms`: invalid type: string \"soon\", expected u64 (column 54)",
        "stdin:8: session ooo: call `a2` is within `ghost`, which was never seen",
        "stdin:9: session ooo: `a3` finished before it started",
        "10 spans, 10 delivered; 5 bad lines skipped",
    ] {
        assert!(stderr.contains(expected), "missing {expected:?} in:\n{stderr}");
    }
    let spans = rx.spans();
    assert_eq!(check_invariants(&spans), 3);
    assert_eq!(
        render_trees(&spans, &["gen_ai.tool.call.id", "albedo.unfinished", "albedo.synthesized", "albedo.timing.clamped", "albedo.turn.prompted"]),
        "\
invoke_agent albedo 1796100000100000000..1796100001000000000 albedo.turn.prompted=false
  execute_tool run 1796100000100000000..1796100000200000000 gen_ai.tool.call.id=a1
  execute_tool 1796100000300000000..1796100000350000000 gen_ai.tool.call.id=ghost albedo.unfinished=true albedo.synthesized=true
    execute_tool files.edit 1796100000300000000..1796100000350000000 gen_ai.tool.call.id=a2
  execute_tool run 1796100000500000000..1796100000500000000 gen_ai.tool.call.id=a3 albedo.timing.clamped=true
  execute_tool run 1796100000600000000..1796100001000000000 gen_ai.tool.call.id=a4 albedo.unfinished=true
invoke_agent albedo 1796100002000000000..1796100003000000000 albedo.unfinished=true albedo.turn.prompted=true
  chat claude-haiku-4-5 1796100002010000000..1796100002500000000 ERROR(Overloaded)
invoke_agent albedo 1796100004000000000..1796100009001000000 albedo.unfinished=true albedo.turn.prompted=true
  execute_tool run 1796100004001000000..1796100009001000000 gen_ai.tool.call.id=b1 ERROR(`run` timed out)
"
    );
    let chat = spans
        .iter()
        .find(|s| s.span.name.starts_with("chat"))
        .unwrap();
    assert_eq!(chat.attr("error.type").as_deref(), Some("overloaded_error"));
}

#[test]
fn hundreds_of_interleaved_sessions_arrive_complete() {
    use albedo_otel::testing::{generate, GenConfig};
    let (lines, expected) = generate(&GenConfig {
        sessions: 300,
        ..GenConfig::default()
    });
    let input = lines.join("\n") + "\n";
    let rx = Receiver::start();
    let stderr = run_ok(
        &["run"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &rx.grpc_url()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ],
        input.as_bytes(),
    );
    let spans = rx.spans();
    assert_eq!(spans.len() as u64, expected.spans(), "{stderr}");
    let count = |op: &str| {
        spans
            .iter()
            .filter(|s| s.attr("gen_ai.operation.name").as_deref() == Some(op))
            .count() as u64
    };
    assert_eq!(count("execute_tool"), expected.tool_spans);
    assert_eq!(count("chat"), expected.chat_spans);
    assert_eq!(count("invoke_agent"), expected.turns);
    let roots = check_invariants(&spans);
    let child_turns = spans
        .iter()
        .filter(|s| s.attr("albedo.parent.session").is_some())
        .count() as u64;
    assert!(child_turns > 0, "the stream has sub-agents");
    assert_eq!(
        roots as u64,
        expected.turns - child_turns,
        "child turns nest, all others are roots"
    );
    // Nested calls really nest: every call with a `within` hangs under that call's span.
    let by_id: HashMap<(Vec<u8>, Vec<u8>), &FlatSpan> = spans
        .iter()
        .map(|s| ((s.span.trace_id.clone(), s.span.span_id.clone()), s))
        .collect();
    let mut nested = 0;
    for s in &spans {
        if let Some(within) = s.attr("albedo.tool.within") {
            let parent = by_id[&(s.span.trace_id.clone(), s.span.parent_span_id.clone())];
            assert_eq!(parent.attr("gen_ai.tool.call.id"), Some(within));
            assert_eq!(parent.attr("session.id"), s.attr("session.id"));
            nested += 1;
        }
    }
    assert!(nested > 100, "{nested}");
}

#[test]
fn resource_comes_from_the_standard_variables() {
    let rx = Receiver::start();
    run_ok(
        &["run"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &rx.http_url()),
            ("OTEL_SERVICE_NAME", "my-agents"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "deployment.environment.name=test,host.name=box-1",
            ),
        ],
        &demo_session(),
    );
    let spans = rx.spans();
    let r = &spans[0].resource;
    assert_eq!(r["service.name"], "my-agents");
    assert_eq!(r["deployment.environment.name"], "test");
    assert_eq!(r["host.name"], "box-1");
    assert_eq!(r["telemetry.distro.name"], "albedo-otel");

    let rx = Receiver::start();
    run_ok(
        &["run", "--service-name", "from-flag"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &rx.http_url()),
            ("OTEL_SERVICE_NAME", "from-env"),
        ],
        &demo_session(),
    );
    assert_eq!(
        rx.spans()[0].resource["service.name"],
        "from-flag",
        "flags win"
    );
}

#[test]
fn sigterm_flushes_open_turns_before_exit() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let rx = Receiver::start();
    let mut child = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
        .args([
            "run",
            "--batch-size",
            "1",
            "--protocol",
            "grpc",
            "--endpoint",
            &rx.grpc_url(),
        ])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Session `open` starts a turn and a call and never finishes them; then session `done`
    // completes a turn. Lines are assembled in order, so once `done`'s root has arrived,
    // `open`'s lines are in, and only a flush can deliver them.
    for line in [
        r#"{"v":1,"kind":"prompted","session":"open","at_ms":1796200000000,"text":"x"}"#,
        r#"{"v":1,"kind":"calling","session":"open","at_ms":1796200000100,"call":{"id":"long","name":"run","arguments":{"command":"sleep 600"}}}"#,
        r#"{"v":1,"kind":"prompted","session":"done","at_ms":1796200000000,"text":"x"}"#,
        r#"{"v":1,"kind":"turn_ended","session":"done","at_ms":1796200000500}"#,
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    let first = rx.wait_for_spans(1, Duration::from_secs(30));
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].attr("session.id").as_deref(), Some("done"));
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("SIGTERM: flushing and exiting"), "{stderr}");
    let spans = rx.spans();
    assert_eq!(spans.len(), 3, "{stderr}");
    check_invariants(&spans);
    let long = spans
        .iter()
        .find(|s| s.attr("gen_ai.tool.call.id").as_deref() == Some("long"))
        .unwrap();
    assert_eq!(long.attr("albedo.unfinished").as_deref(), Some("true"));
}

#[test]
fn without_a_collector_replay_says_so_and_fails() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = run_binary(
        &["replay", "-", "--flush-timeout", "1s", "--no-spool"],
        &[(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            &format!("http://127.0.0.1:{port}"),
        )],
        &demo_session(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "could not reach the collector at http://127.0.0.1:{port}/v1/traces"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("21 NOT delivered"), "{stderr}");
    assert!(stderr.contains("is a collector listening?"), "{stderr}");
}

#[test]
fn bad_settings_are_clear_errors() {
    let out = run_binary(
        &["run"],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4317")],
        b"",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("OTEL_EXPORTER_OTLP_ENDPOINT=\"localhost:4317\": no scheme; write it as http://localhost:4317"), "{stderr}");
}

#[test]
fn a_reader_that_closes_our_stderr_costs_log_lines_not_spans() {
    // A BEAM port after `port_close`, or an agent that stops reading: the log has nowhere to
    // go, and the exporter must still deliver everything and exit 0.
    let rx = Receiver::start();
    let mut child = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
        .args(["run", "--protocol", "grpc", "--endpoint", &rx.grpc_url()])
        .env("ALBEDO_OTEL_SPOOL_DIR", temp_dir("closed-stderr-spool"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut first).unwrap();
    assert!(first.contains("ready:"), "{first}");
    drop(stderr);
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, &demo_session()).unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "the final log line must not kill it"
    );
    assert_eq!(rx.wait_for_spans(21, Duration::from_secs(10)).len(), 21);
}
