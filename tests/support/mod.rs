//! Test support: the real OTLP receiver (`receiver`), and helpers
//! that turn what it received into span trees a test can compare.
#![allow(dead_code)]

pub mod agent_run;
pub mod agent_trace;
pub mod anthropic;
pub mod ccusage;
pub mod cline;
pub mod exporter;
pub mod gemini_api;
pub mod hooks;
pub mod in_process;
pub mod kimi_api;
pub mod mlflow;
mod mock_server;
pub mod openai_chat;
pub mod openai_responses;
pub mod opencode_export;
pub mod otlp_json;
pub mod prometheus;
mod receiver;
mod receiver_metrics;
pub mod scale;
mod scratch;
pub mod stack;
pub mod team;
pub mod traces;

pub use receiver::*;
pub use scratch::*;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::trace::v1::Span;

pub fn span_count(r: &ExportTraceServiceRequest) -> usize {
    r.resource_spans
        .iter()
        .flat_map(|rs| &rs.scope_spans)
        .map(|ss| ss.spans.len())
        .sum()
}

/// A received span with its resource and scope.
#[derive(Clone, Debug)]
pub struct FlatSpan {
    pub resource: BTreeMap<String, String>,
    pub scope: String,
    pub span: Span,
}

pub fn any_to_string(v: &Option<AnyValue>) -> String {
    match v.as_ref().and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        Some(any_value::Value::ArrayValue(a)) => format!(
            "[{}]",
            a.values
                .iter()
                .map(|v| any_to_string(&Some(v.clone())))
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => format!("{other:?}"),
    }
}

fn kv_map(kvs: &[KeyValue]) -> BTreeMap<String, String> {
    kvs.iter()
        .map(|kv| (kv.key.clone(), any_to_string(&kv.value)))
        .collect()
}

pub fn flatten(requests: &[Received]) -> Vec<FlatSpan> {
    let mut out = Vec::new();
    for r in requests {
        for rs in &r.request.resource_spans {
            let resource = rs
                .resource
                .as_ref()
                .map(|r| kv_map(&r.attributes))
                .unwrap_or_default();
            for ss in &rs.scope_spans {
                let scope = ss
                    .scope
                    .as_ref()
                    .map(|s| s.name.clone())
                    .unwrap_or_default();
                for s in &ss.spans {
                    out.push(FlatSpan {
                        resource: resource.clone(),
                        scope: scope.clone(),
                        span: s.clone(),
                    });
                }
            }
        }
    }
    out
}

impl FlatSpan {
    pub fn attr(&self, key: &str) -> Option<String> {
        self.span
            .attributes
            .iter()
            .find(|kv| kv.key == key)
            .map(|kv| any_to_string(&kv.value))
    }

    pub fn attrs(&self) -> BTreeMap<String, String> {
        kv_map(&self.span.attributes)
    }
}

/// Checks what must hold for every trace: unique ids, parents that exist in the same trace,
/// the session id on every span. Returns how many roots (spans without a parent) there are.
pub fn check_invariants(spans: &[FlatSpan]) -> usize {
    let ids: HashSet<(Vec<u8>, Vec<u8>)> = spans
        .iter()
        .map(|s| (s.span.trace_id.clone(), s.span.span_id.clone()))
        .collect();
    assert_eq!(ids.len(), spans.len(), "every span arrives exactly once");
    let mut roots = 0;
    let mut trace_session: HashMap<Vec<u8>, String> = HashMap::new();
    for s in spans {
        assert_eq!(s.span.trace_id.len(), 16, "{}", s.span.name);
        assert_eq!(s.span.span_id.len(), 8, "{}", s.span.name);
        assert!(
            s.span.end_time_unix_nano >= s.span.start_time_unix_nano,
            "{}",
            s.span.name
        );
        if s.span.parent_span_id.is_empty() {
            roots += 1;
        } else {
            assert!(
                ids.contains(&(s.span.trace_id.clone(), s.span.parent_span_id.clone())),
                "{} has a dangling parent",
                s.span.name
            );
        }
        let sid = s
            .attr("session.id")
            .unwrap_or_else(|| panic!("{} has no session.id", s.span.name));
        assert!(
            s.attr("gen_ai.conversation.id").is_some(),
            "{} has no gen_ai.conversation.id",
            s.span.name
        );
        // A viewer that groups by session files a trace under the session.id it reads
        // first, so one trace must carry one session.id, sub-agents' spans included.
        let first = trace_session
            .entry(s.span.trace_id.clone())
            .or_insert_with(|| sid.clone());
        assert_eq!(
            *first, sid,
            "{}: two session.id values in one trace",
            s.span.name
        );
    }
    roots
}

/// The spans as indented trees, one per root, children by start time: name, exact start and
/// end in ns, and the attributes listed in `show`.
pub fn render_trees(spans: &[FlatSpan], show: &[&str]) -> String {
    let by_id: HashMap<(Vec<u8>, Vec<u8>), &FlatSpan> = spans
        .iter()
        .map(|s| ((s.span.trace_id.clone(), s.span.span_id.clone()), s))
        .collect();
    let mut children: HashMap<(Vec<u8>, Vec<u8>), Vec<&FlatSpan>> = HashMap::new();
    let mut roots = Vec::new();
    for s in spans {
        let parent = (s.span.trace_id.clone(), s.span.parent_span_id.clone());
        if !s.span.parent_span_id.is_empty() && by_id.contains_key(&parent) {
            children.entry(parent).or_default().push(s);
        } else {
            roots.push(s);
        }
    }
    let key = |s: &&FlatSpan| {
        (
            s.span.start_time_unix_nano,
            s.span.name.clone(),
            s.span.span_id.clone(),
        )
    };
    roots.sort_by_key(key);
    for v in children.values_mut() {
        v.sort_by_key(key);
    }
    let mut out = String::new();
    fn walk(
        out: &mut String,
        s: &FlatSpan,
        depth: usize,
        children: &HashMap<(Vec<u8>, Vec<u8>), Vec<&FlatSpan>>,
        show: &[&str],
    ) {
        let mut line = format!(
            "{}{} {}..{}",
            "  ".repeat(depth),
            s.span.name,
            s.span.start_time_unix_nano,
            s.span.end_time_unix_nano
        );
        for k in show {
            if let Some(v) = s.attr(k) {
                line.push_str(&format!(" {k}={v}"));
            }
        }
        if let Some(st) = &s.span.status {
            if st.code == 2 {
                line.push_str(&format!(" ERROR({})", st.message));
            }
        }
        out.push_str(&line);
        out.push('\n');
        if let Some(kids) = children.get(&(s.span.trace_id.clone(), s.span.span_id.clone())) {
            for k in kids {
                walk(out, k, depth + 1, children, show);
            }
        }
    }
    for r in roots {
        walk(&mut out, r, 0, &children, show);
    }
    out
}

/// Runs the built binary with `args`, `stdin` on its standard input and `env` set (and the
/// OTEL variables of the test process cleared).
pub fn run_binary(args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, _) in std::env::vars() {
        if k.starts_with("OTEL_") || k.starts_with("ALBEDO_OTEL") {
            cmd.env_remove(k);
        }
    }
    cmd.env("ALBEDO_OTEL_LOG", "info");
    // Each run gets a spool of its own, unless the test shares one on purpose, and no
    // configuration file but the one a test writes.
    let (spool, config, data) = (scratch("spool"), scratch("config"), scratch("data"));
    cmd.env("ALBEDO_OTEL_SPOOL_DIR", &spool);
    cmd.env("XDG_CONFIG_HOME", &config);
    // And a local store of its own, never the user's.
    cmd.env("XDG_DATA_HOME", &data);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("the binary starts");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

pub fn repo_file(path: &str) -> String {
    format!("{}/{}", env!("CARGO_MANIFEST_DIR"), path)
}

/// The bundled example session the README replays: 21 spans in two traces.
pub fn demo_session() -> Vec<u8> {
    std::fs::read(repo_file("examples/demo-session.ndjson")).unwrap()
}

/// Replays the example session to `endpoint` once, with its metrics, no spool and a 1-s flush
/// deadline: what could not be delivered is reported, not kept.
pub fn replay_once(protocol: &str, endpoint: &str, env: &[(&str, &str)]) -> Output {
    run_binary(
        &[
            "replay",
            "-",
            "--metrics",
            "--no-spool",
            "--flush-timeout",
            "1s",
            "--protocol",
            protocol,
            "--endpoint",
            endpoint,
        ],
        env,
        &demo_session(),
    )
}

/// Finds an external program a test needs. Without it the test is skipped with a message,
/// unless `ALBEDO_OTEL_REQUIRE_TOOLS=1` (set by `.ci/run`), which makes a missing tool a failure.
pub fn require_tool(
    name: &str,
    found: Option<std::path::PathBuf>,
    install: &str,
) -> Option<std::path::PathBuf> {
    if let Some(p) = found {
        return Some(p);
    }
    if std::env::var("ALBEDO_OTEL_REQUIRE_TOOLS").as_deref() == Ok("1") {
        panic!("{name} is required (ALBEDO_OTEL_REQUIRE_TOOLS=1) but was not found; {install}");
    }
    eprintln!("SKIPPED: {name} not found; {install}");
    None
}

/// `name` on PATH.
pub fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// A port that was free a moment ago, for programs that cannot report the one they bound.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something accepts connections on `port`, or panics after `timeout`.
pub fn wait_for_port(port: u16, timeout: Duration, what: &str) {
    let deadline = Instant::now() + timeout;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{what} did not listen on port {port} within {timeout:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Compares two sets of received spans field by field, matched by (trace id, span id).
pub fn assert_same_spans(expected: &[FlatSpan], got: &[FlatSpan]) {
    assert_eq!(got.len(), expected.len(), "span count");
    let index: HashMap<(Vec<u8>, Vec<u8>), &FlatSpan> = got
        .iter()
        .map(|s| ((s.span.trace_id.clone(), s.span.span_id.clone()), s))
        .collect();
    for e in expected {
        let g = index
            .get(&(e.span.trace_id.clone(), e.span.span_id.clone()))
            .unwrap_or_else(|| panic!("{} missing", e.span.name));
        let (es, gs) = (&e.span, &g.span);
        assert_eq!(gs.name, es.name);
        assert_eq!(gs.parent_span_id, es.parent_span_id, "{}", es.name);
        assert_eq!(gs.kind, es.kind, "{}", es.name);
        assert_eq!(
            (gs.start_time_unix_nano, gs.end_time_unix_nano),
            (es.start_time_unix_nano, es.end_time_unix_nano),
            "{}",
            es.name
        );
        assert_eq!(g.attrs(), e.attrs(), "{}", es.name);
        assert_eq!(gs.events, es.events, "{}", es.name);
        assert_eq!(gs.links.len(), es.links.len(), "{}", es.name);
        for (gl, el) in gs.links.iter().zip(&es.links) {
            assert_eq!(
                (&gl.trace_id, &gl.span_id),
                (&el.trace_id, &el.span_id),
                "{}",
                es.name
            );
        }
        assert_eq!(gs.status, es.status, "{}", es.name);
        for (k, v) in &e.resource {
            assert_eq!(g.resource.get(k), Some(v), "resource attribute {k}");
        }
        assert_eq!(g.scope, e.scope);
    }
}

/// Every file below `dir`, not following links.
pub fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => found.push(e.path()),
                _ => {}
            }
        }
    }
    found
}

/// Every file below `dir` (not following links) whose bytes contain `needle`.
pub fn files_containing(dir: &std::path::Path, needle: &str) -> Vec<std::path::PathBuf> {
    files_under(dir)
        .into_iter()
        .filter(|p| {
            let bytes = std::fs::read(p).unwrap_or_default();
            bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
        })
        .collect()
}

/// The permission bits of `path` (Unix).
#[cfg(unix)]
pub fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Polls `condition` until it holds, or panics after `timeout` naming `what`. For state another
/// thread or process changes and no event announces.
pub fn wait_until(timeout: Duration, what: &str, condition: impl FnMut() -> bool) {
    assert!(
        poll_until(timeout, Duration::from_millis(5), condition),
        "timed out after {timeout:?} waiting for {what}"
    );
}

/// Polls `condition` every `every` until it holds (true) or `timeout` passes (false): for a
/// condition that is costly to ask, such as another program's metrics.
pub fn poll_until(timeout: Duration, every: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while !condition() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(every);
    }
    true
}
