//! MLflow, a second GenAI trace viewer, run as a user runs it (`mlflow server`, sqlite): the
//! demo session, worked on in a git checkout by a configured user, replayed over OTLP/HTTP
//! into an experiment, then read back through the REST API its trace view reads. What MLflow
//! shows is compared with what the exporter assembled from the same lines: span types, the
//! tree, each model call's tokens (cache reads included), model and cost, the trace's cost,
//! session and user.
//!
//! MLflow reads OpenInference names before GenAI ones and takes a span's token usage from the
//! first convention that has any (src/assemble/semconv.rs says where): a twin missing on the
//! OpenInference side shows here as a missing cache count, a request alias for the model or
//! a different cost.

use std::collections::{BTreeMap, HashMap};

use crate::support::in_process::assemble_lines;
use crate::support::mlflow::{attributes, base64, mlflow, VERSION};
use crate::support::*;
use albedo_otel::assemble::semconv::*;
use albedo_otel::assemble::span::Value;
use albedo_otel::assemble::Span;
use serde_json::Value as J;

const SECRET: &str = "ghp_mlflowsecret42";
const SHA: &str = "89abcdef0123456789abcdef0123456789abcdef";
const USER: &str = "alice@example.com";

/// A checkout on `fix-trim`, its remote's URL holding a token.
fn checkout() -> Scratch {
    git_checkout(
        &format!("https://dev:{SECRET}@github.com/acme/parser.git"),
        "fix-trim",
        SHA,
        None,
    )
}

/// The demo session (a turn, then one that spawns a sub-agent; model calls with cache reads
/// and writes on priced models), worked on in `workspace`.
fn demo(workspace: &std::path::Path) -> Vec<String> {
    let w = serde_json::to_string(workspace.to_str().unwrap()).unwrap();
    String::from_utf8(demo_session())
        .unwrap()
        .lines()
        .map(|l| {
            // The demo dates Haiku 4.5 like Sonnet 4.5; its real snapshot is 20251001, the
            // one price tables know. MLflow prices the model that answered.
            l.replace(r#""/home/dev/parser""#, &w)
                .replace("claude-haiku-4-5-20250929", "claude-haiku-4-5-20251001")
        })
        .collect()
}

fn int(s: &Span, key: &str) -> i64 {
    match s.attr(key) {
        Some(Value::Int(i)) => *i,
        other => panic!("{}: {key} is {other:?}", s.name),
    }
}

fn double(s: &Span, key: &str) -> f64 {
    match s.attr(key) {
        Some(Value::Double(d)) => *d,
        other => panic!("{}: {key} is {other:?}", s.name),
    }
}

/// A JSON-encoded trace metadata value (`mlflow.trace.cost`, `mlflow.trace.tokenUsage`).
fn metadata_json(info: &J, key: &str) -> J {
    let raw = info["trace_metadata"][key]
        .as_str()
        .unwrap_or_else(|| panic!("no {key} in {info}"));
    serde_json::from_str(raw).unwrap()
}

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// No MLflow needed: on every span, a GenAI name MLflow or Phoenix reads comes with its
/// OpenInference twin and the same value, and the other way round (but for a turn's prompt
/// and reply, which are OpenInference's `input.value` and `output.value` only); `session.id`
/// is on every span.
#[test]
fn every_name_mlflow_or_phoenix_reads_has_its_twin_with_the_same_value() {
    let lines = demo(std::path::Path::new("/home/dev/parser"));
    let spans = assemble_lines(&lines, true);
    let mut pairs = 0;
    for s in &spans {
        let op = s.attr(GEN_AI_OPERATION_NAME).and_then(|v| v.as_str());
        assert!(s.attr(SESSION_ID).is_some(), "{}: no session.id", s.name);
        for (genai, oi) in TWINS {
            let root_content =
                op == Some(OP_INVOKE_AGENT) && [INPUT_VALUE, OUTPUT_VALUE].contains(oi);
            match (s.attr(genai), s.attr(oi)) {
                (Some(g), Some(o)) => {
                    let same = match (g.as_str(), o.as_str()) {
                        (Some(g), Some(o)) => g == o,
                        _ => g == o,
                    };
                    assert!(same, "{}: {genai} = {g:?} but {oi} = {o:?}", s.name);
                    pairs += 1;
                }
                (Some(g), None) => panic!("{}: {genai} = {g:?} without {oi}", s.name),
                (None, Some(o)) if !root_content => {
                    panic!("{}: {oi} = {o:?} without {genai}", s.name)
                }
                _ => {}
            }
        }
    }
    // The demo reaches them: tokens and cost on each model call, names and content on tools.
    assert!(pairs > 100, "{pairs} pairs checked");
}

#[test]
fn base64_spells_ids_as_protobuf_json_does() {
    assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    assert_eq!(base64(b"fo"), "Zm8=");
    assert_eq!(
        base64(&[0x8f, 0x2a, 0xae, 0x25, 0xae, 0x65, 0x4d, 0x7d]),
        "jyquJa5lTX0="
    );
}

#[test]
fn mlflow_shows_agents_model_calls_tools_tokens_cost_session_and_user() {
    let Some(m) = mlflow() else { return };
    let experiment = m.create_experiment("albedo");
    let repo = checkout();
    let lines = demo(&repo);
    let expected = assemble_lines(&lines, false);
    let headers = format!("x-mlflow-experiment-id={experiment}");
    let home = scratch("mlflow-home");
    let out = run_binary(
        &[
            "replay",
            "-",
            "--no-spool",
            "--flush-timeout",
            "120s",
            "--protocol",
            "http/protobuf",
            "--endpoint",
            &m.endpoint(),
        ],
        &[
            ("OTEL_EXPORTER_OTLP_HEADERS", &headers),
            ("ALBEDO_OTEL_USER_ID", USER),
            ("HOME", home.to_str().unwrap()),
        ],
        (lines.join("\n") + "\n").as_bytes(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("{} delivered", expected.len())),
        "{stderr}"
    );

    let want: HashMap<String, &Span> = expected
        .iter()
        .map(|s| (base64(&s.span_id.to_bytes()), s))
        .collect();
    let roots = expected
        .iter()
        .filter(|s| s.parent_span_id.is_none())
        .count();
    let traces = m.traces(&experiment, roots);
    assert_eq!(traces.len(), roots, "one trace per turn: {traces:#?}");

    let mut seen = 0;
    let mut types: BTreeMap<String, usize> = BTreeMap::new();
    for info in &traces {
        let trace_id = info["trace_id"].as_str().unwrap();
        // Session and user, as the trace list shows them: the top session's id (the
        // sub-agent's turn is in its parent's trace), and the configured user.
        assert_eq!(
            info["trace_metadata"]["mlflow.trace.session"], "demo-7f3a",
            "{info}"
        );
        assert_eq!(info["trace_metadata"]["mlflow.trace.user"], USER, "{info}");
        let trace = m.trace(trace_id);
        let text = trace.to_string();
        assert!(!text.contains(SECRET), "the remote's token reached MLflow");
        let spans = trace["spans"].as_array().unwrap();
        let (mut cost, mut cache_read, mut cache_write) = (0.0, 0, 0);
        for s in spans {
            let id = s["span_id"].as_str().unwrap();
            let ours = want
                .get(id)
                .unwrap_or_else(|| panic!("unknown span {id}: {s}"));
            let attrs = attributes(s);
            let a = |key: &str| -> &J {
                attrs
                    .get(key)
                    .unwrap_or_else(|| panic!("{}: no {key} in MLflow: {attrs:#?}", ours.name))
            };
            assert_eq!(s["name"], ours.name.as_str());
            assert_eq!(
                s["parent_span_id"].as_str().map(str::to_string),
                ours.parent_span_id.map(|p| base64(&p.to_bytes())),
                "parent of {}",
                ours.name
            );
            let op = ours
                .attr("gen_ai.operation.name")
                .unwrap()
                .as_str()
                .unwrap();
            let span_type = a("mlflow.spanType").as_str().unwrap().to_string();
            let wanted_type = match op {
                "invoke_agent" => "AGENT",
                "chat" => "LLM",
                "execute_tool" => "TOOL",
                other => panic!("operation {other}"),
            };
            assert_eq!(span_type, wanted_type, "type of {}", ours.name);
            *types.entry(span_type).or_default() += 1;
            if op == "invoke_agent" || op == "chat" {
                // Who and where, on the turn and on each model call.
                assert_eq!(a("user.id"), USER, "{}", ours.name);
                assert_eq!(
                    a("vcs.repository.url.full"),
                    "https://github.com/acme/parser",
                    "{}",
                    ours.name
                );
                assert_eq!(a("vcs.ref.head.name"), "fix-trim");
                assert_eq!(a("vcs.ref.head.revision"), SHA);
            }
            if op != "chat" {
                continue;
            }
            let usage = a("mlflow.chat.tokenUsage");
            let name = &ours.name;
            assert_eq!(
                usage["input_tokens"],
                int(ours, "gen_ai.usage.input_tokens"),
                "{name}: {usage}"
            );
            assert_eq!(
                usage["output_tokens"],
                int(ours, "gen_ai.usage.output_tokens"),
                "{name}: {usage}"
            );
            assert_eq!(
                usage["cache_read_input_tokens"],
                int(ours, "gen_ai.usage.cache_read.input_tokens"),
                "{name}: {usage}"
            );
            assert_eq!(
                usage["cache_creation_input_tokens"],
                int(ours, "gen_ai.usage.cache_write.input_tokens"),
                "{name}: {usage}"
            );
            cache_read += int(ours, "gen_ai.usage.cache_read.input_tokens");
            cache_write += int(ours, "gen_ai.usage.cache_write.input_tokens");
            // The model that answered, not the alias asked for: MLflow prices that one.
            let model = ours
                .attr("gen_ai.response.model")
                .unwrap()
                .as_str()
                .unwrap();
            assert_eq!(a("mlflow.llm.model"), model, "{name}");
            assert_eq!(a("mlflow.llm.provider"), "anthropic", "{name}");
            // MLflow prices the call from its own table; it must agree with ours.
            let priced = a("mlflow.llm.cost")["total_cost"].as_f64().unwrap();
            let ours_cost = double(ours, "gen_ai.usage.cost");
            assert!(near(priced, ours_cost), "{name}: {priced} != {ours_cost}");
            cost += ours_cost;
        }
        // The trace's cost and tokens, as its list shows them: its model calls' sums.
        let trace_cost = metadata_json(info, "mlflow.trace.cost")["total_cost"]
            .as_f64()
            .unwrap();
        assert!(near(trace_cost, cost), "{trace_id}: {trace_cost} != {cost}");
        let usage = metadata_json(info, "mlflow.trace.tokenUsage");
        assert_eq!(usage["cache_read_input_tokens"], cache_read, "{usage}");
        assert_eq!(usage["cache_creation_input_tokens"], cache_write, "{usage}");
        seen += spans.len();
    }
    assert_eq!(seen, expected.len(), "every span in a trace");
    let chats = expected
        .iter()
        .filter(|s| s.attr("gen_ai.operation.name").and_then(|v| v.as_str()) == Some("chat"))
        .count();
    assert_eq!(types.get("LLM"), Some(&chats), "{types:?}");
    assert_eq!(
        types.get("AGENT"),
        Some(&3),
        "two turns and a sub-agent's: {types:?}"
    );
    println!(
        "mlflow {VERSION}: {} traces, {} spans checked ({types:?})",
        traces.len(),
        expected.len()
    );
}
