//! End to end: the real binary, stdin to a real OTLP receiver on loopback, over gRPC and HTTP.
//! What arrived is decoded and compared as span trees, ids, exact timestamps and attributes.

mod support;

use std::collections::HashMap;

use support::*;

const SHOW: &[&str] = &[
    "session.id",
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
invoke_agent albedo 1796000000010000000..1796000018020000000 session.id=demo-7f3a albedo.turn.number=1
  chat claude-sonnet-4-5 1796000000020000000..1796000002400000000 session.id=demo-7f3a gen_ai.usage.input_tokens=15340 gen_ai.usage.output_tokens=210
  execute_tool code 1796000002410000000..1796000006300000000 session.id=demo-7f3a gen_ai.tool.call.id=c1
    execute_tool run 1796000002450000000..1796000006100000000 session.id=demo-7f3a gen_ai.tool.call.id=c1a process.exit.code=101
    execute_tool files.edit 1796000006200000000..1796000006230000000 session.id=demo-7f3a gen_ai.tool.call.id=c1b
  chat claude-sonnet-4-5 1796000006310000000..1796000008900000000 session.id=demo-7f3a gen_ai.usage.input_tokens=15600 gen_ai.usage.output_tokens=180
  execute_tool run 1796000008910000000..1796000015200000000 session.id=demo-7f3a gen_ai.tool.call.id=c2 process.exit.code=0
  execute_tool web_search 1796000008920000000..1796000009600000000 session.id=demo-7f3a gen_ai.tool.call.id=c3
  chat claude-sonnet-4-5 1796000015210000000..1796000017000000000 session.id=demo-7f3a gen_ai.usage.input_tokens=17600 gen_ai.usage.output_tokens=95
  chat claude-sonnet-4-5 1796000017100000000..1796000018000000000 session.id=demo-7f3a gen_ai.usage.input_tokens=17850 gen_ai.usage.output_tokens=40
invoke_agent albedo 1796000060000000000..1796000066920000000 session.id=demo-7f3a albedo.turn.number=2
  chat claude-sonnet-4-5 1796000060010000000..1796000061400000000 session.id=demo-7f3a gen_ai.usage.input_tokens=18100 gen_ai.usage.output_tokens=120
  execute_tool code 1796000061500000000..1796000064400000000 session.id=demo-7f3a gen_ai.tool.call.id=c4
    execute_tool agents.spawn 1796000061600000000..1796000064300000000 session.id=demo-7f3a gen_ai.tool.call.id=c4a
      invoke_agent helper 1796000061800000000..1796000064220000000 session.id=demo-7f3a-helper albedo.turn.number=1
        chat claude-haiku-4-5 1796000061810000000..1796000063000000000 session.id=demo-7f3a-helper gen_ai.usage.input_tokens=900 gen_ai.usage.output_tokens=150
        execute_tool files.write 1796000063010000000..1796000063040000000 session.id=demo-7f3a-helper gen_ai.tool.call.id=k1
        chat claude-haiku-4-5 1796000063050000000..1796000064200000000 session.id=demo-7f3a-helper gen_ai.usage.input_tokens=1100 gen_ai.usage.output_tokens=60
  chat claude-sonnet-4-5 1796000064410000000..1796000065600000000 session.id=demo-7f3a gen_ai.usage.input_tokens=18400 gen_ai.usage.output_tokens=70
  execute_tool run 1796000065610000000..1796000065612000000 session.id=demo-7f3a gen_ai.tool.call.id=c5 ERROR(refused by a hook: blocked by policy: force-push is not allowed)
  chat claude-sonnet-4-5 1796000065620000000..1796000066900000000 session.id=demo-7f3a gen_ai.usage.input_tokens=18700 gen_ai.usage.output_tokens=85
";

fn demo() -> Vec<u8> {
    std::fs::read(repo_file("examples/demo-session.ndjson")).unwrap()
}

fn by_name<'a>(spans: &'a [FlatSpan], name: &str) -> Vec<&'a FlatSpan> {
    spans.iter().filter(|s| s.span.name == name).collect()
}

/// Replays the demo through `run` with only the endpoint and protocol set, and checks the trees.
fn demo_arrives_whole(protocol: &str, extra_env: &[(&str, &str)]) -> Vec<Received> {
    let rx = Receiver::start();
    let url = if protocol == "grpc" { rx.grpc_url() } else { rx.http_url() };
    let mut env = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", url.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol),
    ];
    env.extend_from_slice(extra_env);
    let out = run_binary(&["run"], &env, &demo());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(out.stdout.is_empty(), "stdout belongs to protocols");
    assert!(stderr.contains("21 spans, 21 delivered"), "{stderr}");

    let spans = rx.spans();
    assert_eq!(spans.len(), 21);
    assert_eq!(check_invariants(&spans), 2, "one root per top-level turn");
    assert_eq!(render_trees(&spans, SHOW), DEMO_TREE);

    for s in &spans {
        assert_eq!(s.resource.get("service.name").map(String::as_str), Some("albedo"));
        assert_eq!(s.resource.get("telemetry.sdk.language").map(String::as_str), Some("rust"));
        assert_eq!(s.scope, "albedo-otel");
        assert_eq!(s.span.flags & 0xff, 1, "sampled");
    }
    // One trace per turn; the sub-agent's turn is in its parent's trace.
    let roots: Vec<_> = spans.iter().filter(|s| s.span.parent_span_id.is_empty()).collect();
    assert_ne!(roots[0].span.trace_id, roots[1].span.trace_id);
    let helper = by_name(&spans, "invoke_agent helper")[0];
    let spawn = by_name(&spans, "execute_tool agents.spawn")[0];
    assert_eq!(helper.span.trace_id, spawn.span.trace_id);
    assert_eq!(helper.span.parent_span_id, spawn.span.span_id);
    assert_eq!(helper.attr("albedo.parent.session").as_deref(), Some("demo-7f3a"));
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
    let stops: Vec<_> = t1.span.events.iter().map(|e| (e.name.as_str(), e.time_unix_nano)).collect();
    assert_eq!(
        stops,
        [("albedo.stopping", 1796000017010000000), ("albedo.stopping", 1796000018010000000)]
    );
    assert_eq!(any_to_string(&t1.span.events[1].attributes[0].value), "1", "held");

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
    assert_eq!(c["gen_ai.usage.input_tokens"], "15340", "1840 + 12000 cached + 1500 written");
    assert_eq!(c["gen_ai.usage.cache_read.input_tokens"], "12000");
    assert_eq!(c["gen_ai.usage.cache_creation.input_tokens"], "1500");
    assert_eq!(c["llm.token_count.prompt"], "15340");
    assert_eq!(c["llm.token_count.total"], "15550");
    assert_eq!(c["openinference.span.kind"], "LLM");
    assert_eq!(chat.span.events[0].name, "gen_ai.first_token");
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
    assert_eq!(r["gen_ai.tool.call.arguments"], r#"{"command":"cargo test parser"}"#);
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
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=k%3D1,x-tenant=acme"),
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
        assert!(r.headers.contains(&("x-api-key".to_string(), "abc".to_string())));
    }
}
