//! Provider-shaped messages in, the conventions' schema out.

use serde_json::{json, Value as J};

use super::*;

fn policy(limit: usize) -> ContentPolicy {
    let d = ContentPolicy::default();
    ContentPolicy::new(true, true, limit, d.scrubber)
}

fn as_json(messages: &[Message], finish: Option<&str>) -> J {
    serde_json::from_str(&fit(messages, finish, usize::MAX).json).unwrap()
}

#[test]
fn anthropic_messages_become_roles_and_parts_with_tool_results_as_tool_messages() {
    let raw = json!([
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I should run ls."},
            {"type": "text", "text": "Listing."},
            {"type": "tool_use", "id": "toolu_01", "name": "run", "input": {"command": "ls"}}
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": [{"type": "text", "text": "README.md"}]}
        ]},
        {"role": "user", "content": [{"type": "image", "source": {"type": "base64", "data": "AAAA"}}]}
    ]);
    let got = as_json(&input(&raw.to_string()), None);
    assert_eq!(
        got,
        json!([
            {"role": "user", "parts": [{"type": "text", "content": "List the files."}]},
            {"role": "assistant", "parts": [
                {"type": "reasoning", "content": "I should run ls."},
                {"type": "text", "content": "Listing."},
                {"type": "tool_call", "id": "toolu_01", "name": "run", "arguments": {"command": "ls"}}
            ]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "toolu_01", "response": "README.md"}]},
            {"role": "user", "parts": [{"type": "image"}]}
        ])
    );
}

#[test]
fn openai_messages_become_the_same_shape() {
    let raw = json!([
        {"role": "system", "content": "You are albedo."},
        {"role": "user", "content": [{"type": "text", "text": "Run the tests."}]},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "run", "arguments": "{\"command\":\"cargo test\"}"}}
        ]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"}
    ]);
    let got = as_json(&input(&raw.to_string()), None);
    assert_eq!(
        got,
        json!([
            {"role": "system", "parts": [{"type": "text", "content": "You are albedo."}]},
            {"role": "user", "parts": [{"type": "text", "content": "Run the tests."}]},
            {"role": "assistant", "parts": [
                {"type": "tool_call", "id": "call_1", "name": "run", "arguments": {"command": "cargo test"}}
            ]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1", "response": "ok"}]}
        ])
    );
}

#[test]
fn output_blocks_and_openai_completions_become_assistant_messages_with_a_finish_reason() {
    let blocks = json!([
        {"type": "text", "text": "Running it."},
        {"type": "tool_use", "id": "t2", "name": "run", "input": {"command": "cargo test"}}
    ]);
    assert_eq!(
        as_json(
            &output(&blocks.to_string()),
            Some(finish_reason("tool_use"))
        ),
        json!([{"role": "assistant", "finish_reason": "tool_call", "parts": [
            {"type": "text", "content": "Running it."},
            {"type": "tool_call", "id": "t2", "name": "run", "arguments": {"command": "cargo test"}}
        ]}])
    );
    let completion = json!({"choices": [{"message": {"role": "assistant", "content": "Done."}}]});
    assert_eq!(
        as_json(
            &output(&completion.to_string()),
            Some(finish_reason("stop"))
        ),
        json!([{"role": "assistant", "finish_reason": "stop", "parts": [{"type": "text", "content": "Done."}]}])
    );
    assert_eq!(finish_reason("end_turn"), "stop");
    assert_eq!(finish_reason("max_tokens"), "length");
    assert_eq!(finish_reason("something_new"), "something_new");
}

#[test]
fn system_instructions_are_parts() {
    assert_eq!(
        system("\"Be brief.\""),
        vec![Part::Text("Be brief.".into())]
    );
    let blocks = json!([{"type": "text", "text": "A"}, {"type": "text", "text": "B"}]);
    assert_eq!(
        system(&blocks.to_string()),
        vec![Part::Text("A".into()), Part::Text("B".into())]
    );
}

#[test]
fn every_string_is_scrubbed_including_inside_tool_arguments() {
    let secret = "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    let raw = json!([
        {"role": "user", "content": format!("my key is {secret}")},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t", "name": "run", "input": {"env": {"KEY": secret}}}
        ]}
    ]);
    let cleaned = clean(input(&raw.to_string()), &policy(4096));
    let text = fit(&cleaned, None, 4096).json;
    assert!(!text.contains("sk-ant"), "{text}");
    assert!(text.contains("[REDACTED"), "{text}");
    // Still the schema, still JSON.
    let v: J = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v[1]["parts"][0]["arguments"]["env"]["KEY"]
            .as_str()
            .map(|s| s.starts_with("[REDACTED")),
        Some(true)
    );
}

#[test]
fn a_long_conversation_keeps_its_newest_messages_within_the_limit() {
    let raw: Vec<J> = (0..50)
        .map(|i| json!({"role": if i % 2 == 0 {"user"} else {"assistant"}, "content": format!("message number {i} {}", "x".repeat(40))}))
        .collect();
    let msgs = clean(input(&J::Array(raw).to_string()), &policy(1000));
    let fitted = fit(&msgs, None, 1000);
    assert!(fitted.json.len() <= 1000, "{}", fitted.json.len());
    let v: J = serde_json::from_str(&fitted.json).unwrap();
    let kept = v.as_array().unwrap();
    assert_eq!(kept.len() + fitted.dropped, 50);
    assert!(fitted.dropped > 0);
    assert_eq!(fitted.first, fitted.dropped);
    assert!(kept.last().unwrap()["parts"][0]["content"]
        .as_str()
        .unwrap()
        .starts_with("message number 49 "));
}

#[test]
fn one_message_longer_than_the_limit_is_cut_inside_and_stays_valid() {
    let raw = json!([{"role": "user", "content": [
        {"type": "text", "text": "a".repeat(3000)},
        {"type": "tool_result", "tool_use_id": "t1", "content": "b".repeat(3000)}
    ]}]);
    let msgs = input(&raw.to_string());
    let fitted = fit(&msgs, None, 500);
    assert!(fitted.json.len() <= 500, "{}", fitted.json.len());
    let v: J = serde_json::from_str(&fitted.json).unwrap();
    assert_eq!(v[0]["role"], "user");
    assert_eq!(v[0]["parts"][1]["type"], "tool_call_response");
    assert_eq!(v[0]["parts"][1]["id"], "t1");
    assert!(v[0]["parts"][0]["content"].as_str().unwrap().ends_with('…'));
}

#[test]
fn not_messages_at_all_gives_nothing_and_no_panic() {
    for raw in [
        "",
        "null",
        "42",
        "{\"x\":1}",
        "[1,2,[3]]",
        "[{\"role\":7}]",
        "{\"choices\":5}",
    ] {
        let _ = input(raw);
        let _ = output(raw);
        let _ = system(raw);
    }
    assert!(input("42").is_empty());
}
