//! The names on the spans: today's GenAI conventions, OpenInference beside them, and no name
//! of those namespaces that the checked list in `semconv.rs` lacks.

use std::collections::BTreeSet;

use serde_json::{json, Value as J};

use super::*;
use crate::assemble::policy::ContentPolicy;
use crate::assemble::semconv::*;
use crate::assemble::span::Value;

fn capture() -> AssembleConfig {
    AssembleConfig {
        policy: {
            let d = ContentPolicy::default();
            ContentPolicy::new(true, true, d.max_value_len, d.scrubber)
        },
        ..AssembleConfig::default()
    }
}

const CHAT: &str = r#"{"v":1,"kind":"call_sent","session":"s","id":"m1","request":{"model":"gemini-2.5-pro","max_tokens":100},"response":{"id":"r1","stop_reason":"end_turn"},"usage":{"input_tokens":10,"output_tokens":7,"cache_read_tokens":100,"cache_write_tokens":20,"reasoning_tokens":3},"started_ms":1000,"finished_ms":2000,"first_token_ms":1250}"#;

#[test]
fn a_model_call_carries_cache_write_reasoning_and_time_to_first_chunk() {
    let out = run(&[CHAT]);
    let chat = by_name(&out, "chat gemini-2.5-pro");
    assert_eq!(
        int_attr(chat, GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS),
        Some(20)
    );
    assert_eq!(
        int_attr(chat, GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS),
        Some(20),
        "the old name stays beside the new for its deprecation period"
    );
    assert_eq!(
        int_attr(chat, GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS),
        Some(100)
    );
    assert_eq!(int_attr(chat, GEN_AI_USAGE_INPUT_TOKENS), Some(130));
    assert_eq!(
        int_attr(chat, GEN_AI_USAGE_REASONING_OUTPUT_TOKENS),
        Some(3)
    );
    assert_eq!(int_attr(chat, LLM_TOKEN_COUNT_REASONING), Some(3));
    assert_eq!(
        chat.attr(GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK),
        Some(&Value::Double(0.25)),
        "seconds, as a double"
    );
    assert_eq!(str_attr(chat, GEN_AI_PROVIDER_NAME), Some("gcp.gemini"));
    assert_eq!(
        str_attr(chat, LLM_PROVIDER),
        Some("google"),
        "OpenInference's value"
    );
    assert_eq!(chat.events[0].name, "albedo.first_token");
    assert_eq!(
        chat.attr(GEN_AI_INPUT_MESSAGES),
        None,
        "messages only when opted in"
    );
}

#[test]
fn tool_spans_say_their_type_their_agent_and_for_shell_commands_the_program() {
    let out = run(&[
        r#"{"v":1,"kind":"session","session":"s","at_ms":1,"agent":"coder"}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"a","name":"run","arguments":{"command":"RUST_LOG=1 ~/.cargo/bin/cargo test"}},"output":{"exit_code":101,"timed_out":false},"started_ms":2,"finished_ms":3}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"b","name":"mcp.call","arguments":{"server":"gh"}},"output":"{}","started_ms":4,"finished_ms":5}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"c","name":"Bash","arguments":{"command":"grep -q x notes.txt || exit 3"}},"output":"Exit code 3","failed":true,"started_ms":6,"finished_ms":7}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"d","name":"Bash","arguments":{"command":"ls"}},"output":{"stdout":"a","interrupted":false},"started_ms":8,"finished_ms":9}"#,
        r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":10}"#,
    ]);
    let run_span = by_name(&out, "execute_tool run");
    assert_eq!(str_attr(run_span, GEN_AI_TOOL_TYPE), Some("function"));
    assert_eq!(str_attr(run_span, GEN_AI_AGENT_NAME), Some("coder"));
    assert_eq!(int_attr(run_span, PROCESS_EXIT_CODE), Some(101));
    assert_eq!(str_attr(run_span, PROCESS_EXECUTABLE_NAME), Some("cargo"));
    assert_eq!(
        str_attr(run_span, TOOL_PARAMETERS),
        Some(r#"{"command":"RUST_LOG=1 ~/.cargo/bin/cargo test"}"#)
    );
    let mcp = by_name(&out, "execute_tool mcp.call");
    assert_eq!(str_attr(mcp, GEN_AI_TOOL_TYPE), Some("extension"));
    assert_eq!(mcp.attr(PROCESS_EXIT_CODE), None);
    let bash: Vec<_> = out
        .spans
        .iter()
        .filter(|s| s.name == "execute_tool Bash")
        .collect();
    assert_eq!(
        int_attr(bash[0], PROCESS_EXIT_CODE),
        Some(3),
        "from Claude Code's `Exit code 3`"
    );
    assert_eq!(str_attr(bash[0], PROCESS_EXECUTABLE_NAME), Some("grep"));
    assert_eq!(
        int_attr(bash[1], PROCESS_EXIT_CODE),
        Some(0),
        "a Bash success exits 0"
    );
    assert_eq!(str_attr(bash[1], PROCESS_EXECUTABLE_NAME), Some("ls"));
}

#[test]
fn without_tool_content_the_program_is_not_named() {
    let mut config = AssembleConfig::default();
    config.policy.capture_tool_content = false;
    let out = run_with(
        config,
        &[
            r#"{"v":1,"kind":"called","session":"s","call":{"id":"a","name":"run","arguments":{"command":"deploy --token abc"}},"output":{"exit_code":0},"started_ms":2,"finished_ms":3}"#,
        ],
    );
    let span = by_name(&out, "execute_tool run");
    assert_eq!(int_attr(span, PROCESS_EXIT_CODE), Some(0));
    assert_eq!(span.attr(PROCESS_EXECUTABLE_NAME), None);
    assert_eq!(span.attr(TOOL_PARAMETERS), None);
}

#[test]
fn the_executable_is_the_first_word_that_is_not_an_assignment() {
    use crate::assemble::spans::executable;
    assert_eq!(executable("ls -la"), Some("ls"));
    assert_eq!(
        executable("PATH=/x:/y A_1=2 /usr/bin/env python3 x.py"),
        Some("env")
    );
    assert_eq!(executable("(cd src && make)"), Some("cd"));
    assert_eq!(executable("  "), None);
}

#[test]
fn with_capture_a_model_call_has_its_messages_in_both_forms_and_the_turn_its_output() {
    let sent = json!({"v":1,"kind":"call_sent","session":"s","id":"m1",
        "request":{"model":"claude-x","provider":"anthropic","system":"You are albedo.","messages":[
            {"role":"user","content":"Run the tests."},
            {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"run","input":{"command":"cargo test"}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}
        ]},
        "response":{"stop_reason":"tool_use","content":[{"type":"text","text":"Again."},{"type":"tool_use","id":"t2","name":"run","input":{"command":"cargo test -q"}}]},
        "usage":{"input_tokens":1,"output_tokens":1},"started_ms":10,"finished_ms":20});
    let sent = sent.to_string();
    let out = run_with(
        capture(),
        &[
            r#"{"v":1,"kind":"prompted","session":"s","at_ms":1,"text":"Run the tests."}"#,
            &sent,
            r#"{"v":1,"kind":"stopping","session":"s","at_ms":30,"reply":"All green.","held":0}"#,
            r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":40}"#,
        ],
    );
    let chat = by_name(&out, "chat claude-x");
    let parse = |k: &str| serde_json::from_str::<J>(str_attr(chat, k).unwrap()).unwrap();
    assert_eq!(
        parse(GEN_AI_SYSTEM_INSTRUCTIONS),
        json!([{"type":"text","content":"You are albedo."}])
    );
    let input = parse(GEN_AI_INPUT_MESSAGES);
    assert_eq!(input.as_array().unwrap().len(), 3);
    assert_eq!(
        input[2],
        json!({"role":"tool","parts":[{"type":"tool_call_response","id":"t1","response":"ok"}]})
    );
    let output = parse(GEN_AI_OUTPUT_MESSAGES);
    assert_eq!(output[0]["finish_reason"], "tool_call");
    assert_eq!(output[0]["parts"][1]["name"], "run");
    // OpenInference: the system message first, then one message per message or result.
    let flat = |k: &str| str_attr(chat, k);
    assert_eq!(flat("llm.input_messages.0.message.role"), Some("system"));
    assert_eq!(
        flat("llm.input_messages.0.message.content"),
        Some("You are albedo.")
    );
    assert_eq!(
        flat("llm.input_messages.1.message.content"),
        Some("Run the tests.")
    );
    assert_eq!(
        flat("llm.input_messages.2.message.tool_calls.0.tool_call.function.name"),
        Some("run")
    );
    assert_eq!(
        flat("llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments"),
        Some(r#"{"command":"cargo test"}"#)
    );
    assert_eq!(flat("llm.input_messages.3.message.role"), Some("tool"));
    assert_eq!(
        flat("llm.input_messages.3.message.tool_call_id"),
        Some("t1")
    );
    assert_eq!(
        flat("llm.output_messages.0.message.role"),
        Some("assistant")
    );
    assert_eq!(
        flat("llm.output_messages.0.message.content"),
        Some("Again.")
    );
    assert_eq!(
        flat("llm.output_messages.0.message.tool_calls.0.tool_call.id"),
        Some("t2")
    );
    assert_eq!(
        chat.attr(INPUT_VALUE),
        None,
        "no raw blob beside the messages"
    );
    let root = by_name(&out, "invoke_agent albedo");
    assert_eq!(str_attr(root, INPUT_VALUE), Some("Run the tests."));
    assert_eq!(str_attr(root, OUTPUT_VALUE), Some("All green."));
    assert_eq!(str_attr(root, AGENT_NAME), Some("albedo"));
}

/// Everything the assembly can emit, over streams that reach every kind of span: the
/// generator's (sub-agents, cells, refusals, model calls), with and without capture, and
/// the messages above.
fn emitted_names() -> BTreeSet<String> {
    let (lines, _) = crate::testing::generate(&crate::testing::GenConfig {
        sessions: 40,
        turns_per_session: 3,
        child_every: 4,
        ..crate::testing::GenConfig::default()
    });
    let mut extra: Vec<String> = lines.clone();
    extra.push(CHAT.to_string());
    extra.push(json!({"v":1,"kind":"call_sent","session":"s","request":{"model":"gpt-5","system":[{"type":"text","text":"x"}],"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}]},"response":{"content":{"role":"assistant","content":"x","tool_calls":[{"id":"d","function":{"name":"g","arguments":"{}"}}]}},"error":{"type":"overloaded","message":"busy"},"usage":{"input_tokens":1,"output_tokens":1},"started_ms":5,"finished_ms":6}).to_string());
    let mut names = BTreeSet::new();
    for config in [AssembleConfig::default(), capture()] {
        let refs: Vec<&str> = extra.iter().map(String::as_str).collect();
        let out = run_with(config, &refs);
        for s in &out.spans {
            names.extend(s.attributes.iter().map(|a| a.key.to_string()));
            for e in &s.events {
                names.insert(e.name.to_string());
                names.extend(e.attributes.iter().map(|a| a.key.to_string()));
            }
        }
    }
    names
}

#[test]
fn every_convention_name_emitted_is_one_checked_against_the_conventions() {
    let checked: BTreeSet<&str> = CHECKED.iter().map(|(n, _)| *n).collect();
    let names = emitted_names();
    assert!(
        names.contains("llm.input_messages.0.message.role"),
        "the streams reach messages"
    );
    let unchecked: Vec<&String> = names
        .iter()
        .filter(|n| {
            ["gen_ai.", "llm.", "openinference."]
                .iter()
                .any(|p| n.starts_with(p))
        })
        .filter(|n| !checked.contains(pattern(n).as_str()))
        .collect();
    assert!(
        unchecked.is_empty(),
        "emitted but not checked against the conventions: {unchecked:?}"
    );
    // And every name at all is one the dashboards' checks know.
    let listed: BTreeSet<String> = ALL
        .iter()
        .map(|n| n.to_string())
        .chain(checked.iter().map(|n| n.to_string()))
        .collect();
    let unknown: Vec<&String> = names
        .iter()
        .filter(|n| {
            !listed.contains(&pattern(n))
                && !n.starts_with("albedo.stop")
                && *n != EVENT_FIRST_TOKEN
        })
        .collect();
    assert!(
        unknown.is_empty(),
        "emitted but not in semconv::ALL: {unknown:?}"
    );
}

#[test]
fn the_check_would_catch_an_unchecked_name() {
    let checked: BTreeSet<&str> = CHECKED.iter().map(|(n, _)| *n).collect();
    assert!(!checked.contains(pattern("gen_ai.usage.cache_writes.input_tokens").as_str()));
    assert!(!checked.contains(pattern("llm.input_messages.0.message.contents").as_str()));
    assert_eq!(
        pattern("llm.input_messages.12.message.tool_calls.3.tool_call.id"),
        "llm.input_messages.{i}.message.tool_calls.{k}.tool_call.id"
    );
}

#[test]
fn a_model_call_names_its_agent_so_cost_splits_by_agent_without_a_join() {
    let out = run(&[
        r#"{"v":1,"kind":"session","session":"s","at_ms":1,"agent":"coder"}"#,
        CHAT,
    ]);
    let chat = by_name(&out, "chat gemini-2.5-pro");
    assert_eq!(str_attr(chat, GEN_AI_AGENT_NAME), Some("coder"));
}
