//! Arize Phoenix, a real trace viewer, run as a user runs it (`phoenix serve`, offline): the
//! demo session replayed over OTLP/HTTP and over gRPC, then read back through Phoenix's REST
//! and GraphQL APIs, the ones its UI reads. What it shows is compared with what the exporter
//! assembled from the same lines: the span kinds, the parents, the tokens, the sessions.
//!
//! Needs Phoenix 20.26.1: `PHOENIX_BIN`, or the virtualenv `.ci/run` makes in
//! `${XDG_CACHE_HOME:-~/.cache}/albedo-otel-ci/phoenix-20.26.1`.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::in_process::assemble_lines;
use crate::support::*;
use albedo_otel::assemble::Span;
use serde_json::{json, Value as J};

const VERSION: &str = "20.26.1";

fn phoenix_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PHOENIX_BIN") {
        return Some(p.into());
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let bin = cache.join(format!("albedo-otel-ci/phoenix-{VERSION}/bin/phoenix"));
    bin.is_file().then_some(bin)
}

/// A Phoenix of its own, or `None` (the test is skipped, saying how to install it).
fn phoenix() -> Option<Phoenix> {
    require_tool(
        "Arize Phoenix",
        phoenix_bin(),
        &format!("python3 -m venv ~/.cache/albedo-otel-ci/phoenix-{VERSION} && ~/.cache/albedo-otel-ci/phoenix-{VERSION}/bin/pip install arize-phoenix=={VERSION}"),
    )
    .map(Phoenix::start)
}

/// A Phoenix server of its own: a fresh working folder, two ports picked here, its own
/// telemetry and everything that would reach the network off.
struct Phoenix {
    child: Child,
    http: u16,
    grpc: u16,
    log: PathBuf,
    client: reqwest::blocking::Client,
    /// Its working folder (its database), removed once it is stopped.
    _dir: Scratch,
}

impl Phoenix {
    fn start(bin: PathBuf) -> Phoenix {
        let dir = scratch("phoenix");
        let (http, grpc) = (free_port(), free_port());
        let log = dir.join("phoenix.log");
        let child = Command::new(bin)
            .arg("serve")
            .env("PHOENIX_WORKING_DIR", &dir)
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", http.to_string())
            .env("PHOENIX_GRPC_PORT", grpc.to_string())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .env("PHOENIX_ALLOW_EXTERNAL_RESOURCES", "false")
            .env("PHOENIX_DISABLE_AGENT_ASSISTANT", "true")
            .env("PHOENIX_ENABLE_MCP_SERVER", "false")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("phoenix starts");
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let mut p = Phoenix {
            child,
            http,
            grpc,
            log,
            client,
            _dir: dir,
        };
        // Ready when OTLP/HTTP takes an empty request (a valid, empty export) and the gRPC
        // port accepts; a fresh database takes Phoenix several seconds.
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let http_ok = p
                .client
                .post(p.url("/v1/traces"))
                .header("content-type", "application/x-protobuf")
                .body(Vec::new())
                .send()
                .is_ok_and(|r| r.status().is_success());
            if http_ok && std::net::TcpStream::connect(("127.0.0.1", grpc)).is_ok() {
                break;
            }
            if let Ok(Some(status)) = p.child.try_wait() {
                panic!("phoenix exited ({status}): {}", p.log_text());
            }
            assert!(
                Instant::now() < deadline,
                "phoenix not ready: {}",
                p.log_text()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        p
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.http)
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn graphql(&self, query: &str, variables: J) -> J {
        let out: J = self
            .client
            .post(self.url("/graphql"))
            .header("content-type", "application/json")
            .body(json!({"query": query, "variables": variables}).to_string())
            .send()
            .and_then(|r| r.error_for_status())
            .and_then(|r| r.text())
            .map(|t| serde_json::from_str(&t).unwrap())
            .unwrap_or_else(|e| panic!("graphql: {e}"));
        assert!(out.get("errors").is_none(), "graphql errors: {out}");
        out["data"].clone()
    }

    /// Every span of `project` through the REST API, once at least `n` are stored (Phoenix
    /// answers the export before it writes).
    fn spans(&self, project: &str, n: usize) -> Vec<J> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let got: Vec<J> = self
                .client
                .get(self.url(&format!("/v1/projects/{project}/spans?limit=1000")))
                .send()
                .ok()
                .filter(|r| r.status().is_success())
                .and_then(|r| r.text().ok())
                .and_then(|t| serde_json::from_str::<J>(&t).ok())
                .and_then(|v| v["data"].as_array().cloned())
                .unwrap_or_default();
            if got.len() >= n || Instant::now() > deadline {
                return got;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The demo with its session ids renamed, so that each replay into the same Phoenix has ids
/// of its own (Phoenix keeps the first span with an id, across projects).
fn demo(prefix: &str, drop_call: Option<&str>) -> Vec<String> {
    String::from_utf8(demo_session())
        .unwrap()
        .lines()
        .filter(|l| drop_call.is_none_or(|id| !l.contains(&format!(r#""id":"{id}""#))))
        .map(|l| l.replace("\"demo-7f3a", &format!("\"{prefix}-7f3a")))
        .collect()
}

/// The demo's first model call with the messages a host would send and get back.
fn with_messages(lines: Vec<String>) -> Vec<String> {
    lines
        .into_iter()
        .map(|l| {
            let mut v: J = serde_json::from_str(&l).unwrap();
            if v["kind"] == "call_sent" && v["id"] == "m1" {
                v["request"]["system"] = json!("You are albedo, a coding agent.");
                v["request"]["messages"] = json!([
                    {"role": "user", "content": "Fix the failing test in parser.rs and run the suite."}
                ]);
                v["response"]["content"] = json!([
                    {"type": "text", "text": "Let me run the parser tests first."},
                    {"type": "tool_use", "id": "c1", "name": "code", "input": {"code": "run('cargo test parser')"}}
                ]);
            }
            v.to_string()
        })
        .collect()
}

/// An id as Phoenix's APIs spell it: lowercase hex.
fn hex(id: &[u8]) -> String {
    id.iter().map(|x| format!("{x:02x}")).collect()
}

fn replay(p: &Phoenix, protocol: &str, project: &str, lines: &[String], capture: bool) {
    let endpoint = if protocol == "grpc" {
        format!("http://127.0.0.1:{}", p.grpc)
    } else {
        format!("http://127.0.0.1:{}", p.http)
    };
    let mut args = vec![
        "replay",
        "-",
        "--no-spool",
        "--protocol",
        protocol,
        "--endpoint",
        &endpoint,
    ];
    if capture {
        args.push("--capture-messages");
    }
    let attrs = format!("openinference.project.name={project}");
    let out = run_binary(
        &args,
        &[("OTEL_RESOURCE_ATTRIBUTES", &attrs)],
        (lines.join("\n") + "\n").as_bytes(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
}

const TRACE: &str = "query ($name: String!, $traceId: ID!) { getProjectByName(name: $name) {
  trace(traceId: $traceId) { traceId session { sessionId }
    spans(first: 1000) { edges { node { spanId parentId name spanKind statusCode
      tokenCountPrompt tokenCountCompletion attributes } } } } } }";

const SESSIONS: &str = "query ($name: String!) { getProjectByName(name: $name) {
  sessions(first: 50) { edges { node { sessionId numTraces
    traces(first: 100) { edges { node { traceId } } } } } } } }";

/// Checks one project against the spans the exporter assembled; returns Phoenix's GraphQL
/// spans by id, for more checks.
fn check_project(
    p: &Phoenix,
    project: &str,
    expected: &[Span],
    session: &str,
) -> HashMap<String, J> {
    let rest = p.spans(project, expected.len());
    assert_eq!(rest.len(), expected.len(), "{project}: every span stored");
    let want: HashMap<String, &Span> = expected
        .iter()
        .map(|s| (hex(&s.span_id.to_bytes()), s))
        .collect();
    // One trace per turn: the roots are the turns of the top session.
    let mut traces: BTreeMap<String, usize> = BTreeMap::new();
    for s in &rest {
        *traces
            .entry(s["context"]["trace_id"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    let roots = expected
        .iter()
        .filter(|s| s.parent_span_id.is_none())
        .count();
    assert_eq!(traces.len(), roots, "{project}: one trace per turn");
    let mut seen = HashMap::new();
    for trace_id in traces.keys() {
        let t = &p.graphql(TRACE, json!({"name": project, "traceId": trace_id}))
            ["getProjectByName"]["trace"];
        assert_eq!(
            t["session"]["sessionId"], session,
            "{project}: trace {trace_id} filed under the session"
        );
        for e in t["spans"]["edges"].as_array().unwrap() {
            let n = &e["node"];
            let id = n["spanId"].as_str().unwrap().to_string();
            let ours = want
                .get(&id)
                .unwrap_or_else(|| panic!("{project}: unknown span {id}"));
            let kind = ours
                .attr("openinference.span.kind")
                .and_then(|v| v.as_str())
                .unwrap();
            assert_eq!(
                n["spanKind"].as_str().unwrap().to_uppercase(),
                kind,
                "{project}: kind of {}",
                ours.name
            );
            let parent = ours.parent_span_id.map(|p| hex(&p.to_bytes()));
            assert_eq!(
                n["parentId"].as_str().map(str::to_string),
                parent,
                "{project}: parent of {}",
                ours.name
            );
            assert_eq!(n["name"], ours.name.as_str());
            let status = if matches!(ours.status, albedo_otel::assemble::span::Status::Error(_)) {
                "ERROR"
            } else {
                "UNSET"
            };
            assert_eq!(
                n["statusCode"], status,
                "{project}: status of {}",
                ours.name
            );
            if kind == "LLM" {
                let tokens = |k: &str| match ours.attr(k) {
                    Some(albedo_otel::assemble::span::Value::Int(i)) => *i as f64,
                    other => panic!("{k}: {other:?}"),
                };
                assert_eq!(
                    n["tokenCountPrompt"].as_f64(),
                    Some(tokens("llm.token_count.prompt"))
                );
                assert_eq!(
                    n["tokenCountCompletion"].as_f64(),
                    Some(tokens("llm.token_count.completion"))
                );
            }
            seen.insert(id, n.clone());
        }
    }
    assert_eq!(
        seen.len(),
        expected.len(),
        "{project}: every span in a trace"
    );
    // One session, holding every turn of it, the sub-agent's included; none for the child.
    let sessions =
        &p.graphql(SESSIONS, json!({"name": project}))["getProjectByName"]["sessions"]["edges"];
    let listed: Vec<(String, u64)> = sessions
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["node"]["sessionId"].as_str().unwrap().to_string(),
                e["node"]["numTraces"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [(session.to_string(), roots as u64)],
        "{project}: sessions"
    );
    seen
}

#[test]
fn phoenix_shows_turns_tools_model_calls_sessions_and_messages() {
    let Some(p) = phoenix() else { return };

    // Without the turn's first model call (m5), the sub-agent's spans are the first of that
    // trace Phoenix reads: the trace must still be filed under the parent's session.
    for (protocol, prefix) in [("http/protobuf", "http"), ("grpc", "grpc")] {
        let lines = demo(prefix, Some("m5"));
        let expected = assemble_lines(&lines, false);
        replay(&p, protocol, &format!("albedo-{prefix}"), &lines, false);
        let spans = check_project(
            &p,
            &format!("albedo-{prefix}"),
            &expected,
            &format!("{prefix}-7f3a"),
        );
        let refused: Vec<_> = spans
            .values()
            .filter(|s| s["statusCode"] == "ERROR")
            .collect();
        assert_eq!(refused.len(), 1, "{protocol}: the refused call");
        assert_eq!(refused[0]["name"], "execute_tool run");
    }

    // With message capture: Phoenix parses the messages as messages.
    let lines = with_messages(demo("msgs", None));
    let expected = assemble_lines(&lines, true);
    replay(&p, "http/protobuf", "albedo-msgs", &lines, true);
    let spans = check_project(&p, "albedo-msgs", &expected, "msgs-7f3a");
    let m1 = expected
        .iter()
        .find(|s| s.attr("gen_ai.response.id").and_then(|v| v.as_str()) == Some("msg_m1"))
        .unwrap();
    let id = hex(&m1.span_id.to_bytes());
    let attrs: J = serde_json::from_str(spans[&id]["attributes"].as_str().unwrap()).unwrap();
    let input = &attrs["llm"]["input_messages"];
    assert_eq!(input[0]["message"]["role"], "system", "{attrs}");
    assert_eq!(
        input[0]["message"]["content"],
        "You are albedo, a coding agent."
    );
    assert_eq!(input[1]["message"]["role"], "user");
    let output = &attrs["llm"]["output_messages"][0]["message"];
    assert_eq!(output["role"], "assistant");
    assert_eq!(output["content"], "Let me run the parser tests first.");
    assert_eq!(
        output["tool_calls"][0]["tool_call"]["function"]["name"],
        "code"
    );
    assert_eq!(output["tool_calls"][0]["tool_call"]["id"], "c1");
    println!(
        "phoenix {VERSION}: 3 replays checked ({} log bytes)",
        p.log_text().len()
    );
}

const LLM_SPANS: &str = "query ($name: String!, $traceId: ID!) { getProjectByName(name: $name) {
  trace(traceId: $traceId) { spans(first: 1000) { edges { node { spanId name spanKind
    startTime attributes } } } } } }";

/// A recorded Claude Code session played through the real hooks into Phoenix, messages on:
/// each model call is a chat in Phoenix, the second one showing the prompt, the first call's
/// tool calls, and their results as tool messages answering them by id.
#[test]
fn phoenix_shows_a_claude_code_exchange_as_a_chat() {
    let Some(p) = phoenix() else { return };
    let project = "claude-code-msgs";
    let setup = crate::support::hooks::Setup::to(&format!("http://127.0.0.1:{}", p.grpc));
    let extra: Vec<(std::ffi::OsString, std::ffi::OsString)> = [
        ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true"),
        ("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "65536"),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            "openinference.project.name=claude-code-msgs",
        ),
    ]
    .iter()
    .map(|(k, v)| (k.into(), v.into()))
    .collect();
    for payload in crate::support::hooks::recorded("multi_tool") {
        setup.hook_with(&payload, &extra);
    }
    setup.wait_idle();
    // One turn: the agent, four tool calls, four model calls.
    let rest = p.spans(project, 9);
    assert_eq!(rest.len(), 9, "{:#?}\n{}", rest, setup.daemon_log());
    let trace_id = rest[0]["context"]["trace_id"].as_str().unwrap().to_string();
    let t = &p.graphql(LLM_SPANS, json!({"name": project, "traceId": trace_id}))
        ["getProjectByName"]["trace"];
    let mut llm: Vec<&J> = t["spans"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["node"])
        .filter(|n| {
            n["spanKind"]
                .as_str()
                .is_some_and(|k| k.eq_ignore_ascii_case("llm"))
        })
        .collect();
    llm.sort_by_key(|n| n["startTime"].as_str().unwrap_or("").to_string());
    assert_eq!(llm.len(), 4, "four model calls");
    let attrs = |n: &J| -> J { serde_json::from_str(n["attributes"].as_str().unwrap()).unwrap() };
    let first = attrs(llm[0]);
    let input = first["llm"]["input_messages"].as_array().unwrap().clone();
    let roles = |input: &[J]| -> Vec<String> {
        input
            .iter()
            .map(|m| m["message"]["role"].as_str().unwrap().to_string())
            .collect()
    };
    // The system prompt, as OpenInference writes it: the first message.
    assert_eq!(roles(&input), ["system", "user"], "{first}");
    assert!(input[0]["message"]["content"]
        .as_str()
        .unwrap()
        .starts_with("You are a Claude agent"));
    assert_eq!(
        input[1]["message"]["content"],
        "please say hello and fix notes.txt"
    );
    let asked: Vec<String> = first["llm"]["output_messages"][0]["message"]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tool_call"]["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(asked, ["toolu_01Mockmain0001", "toolu_01Mockmain0002"]);
    let second = attrs(llm[1]);
    let input = second["llm"]["input_messages"].as_array().unwrap();
    assert_eq!(
        roles(input),
        ["system", "user", "assistant", "tool", "tool"],
        "{second}"
    );
    let sent_calls: Vec<&str> = input[2]["message"]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tool_call"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(sent_calls, asked);
    let answered: Vec<&str> = input[3..]
        .iter()
        .map(|m| m["message"]["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(answered, ["toolu_01Mockmain0002", "toolu_01Mockmain0001"]);
    assert_eq!(input[4]["message"]["content"], "hello");
    println!(
        "phoenix {VERSION}: the Claude Code exchange is a chat of {} messages",
        input.len()
    );
}
