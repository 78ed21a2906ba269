//! The adapter on payloads shaped as Gemini CLI 0.61.0 sends them (docs/agents/gemini-cli.md).

use serde_json::json;

use super::*;

const SID: &str = "b0643a34-b48d-44ad-a9f0-ec65e5336d37";

fn at(ms: u64) -> String {
    // 2026-12-01T20:03:39.000Z is 1796155419000.
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_796_155_419_000 + ms);
    humantime::format_rfc3339_millis(t).to_string()
}

fn payload(event: &str, ms: u64, extra: serde_json::Value) -> Payload {
    let mut v = json!({"session_id": SID, "hook_event_name": event, "timestamp": at(ms),
        "cwd": "/work/proj", "transcript_path": "/home/u/.gemini/tmp/proj/chats/s.jsonl"});
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    serde_json::from_value(v).unwrap()
}

fn model_request() -> serde_json::Value {
    json!({"llm_request": {"model": "gemini-2.5-flash", "messages": [{"role": "user", "content": "run it"}],
        "config": {"temperature": 1, "maxOutputTokens": 8192}}})
}

fn chunk(text: &str, last: bool) -> serde_json::Value {
    let mut r = json!({"text": text, "candidates": [{"content": {"role": "model", "parts": [text]}, "index": 0}]});
    if last {
        r["candidates"][0]["finishReason"] = json!("STOP");
        r["usageMetadata"] =
            json!({"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 113});
    }
    let mut v = model_request();
    v["llm_response"] = r;
    v
}

fn run(payloads: &[Payload]) -> Vec<Record<'static>> {
    let mut a = Adapter::new();
    let mut out = Vec::new();
    for p in payloads {
        a.push(0, p, &mut out);
    }
    out
}

fn turn(tool_end: bool) -> Vec<Payload> {
    let shell =
        json!({"tool_name": "run_shell_command", "tool_input": {"command": "sleep 1; echo hi"}});
    let mut after = shell.clone();
    after["tool_response"] = json!({"llmContent": "Output: hi", "returnDisplay": "hi"});
    let mut v = vec![
        payload("SessionStart", 0, json!({"source": "startup"})),
        payload("BeforeAgent", 150, json!({"prompt": "run the command"})),
        payload("PreCompress", 160, json!({"trigger": "auto"})),
        payload("BeforeModel", 170, model_request()),
        payload("BeforeToolSelection", 171, model_request()),
        payload("AfterModel", 400, chunk("I'll run it.", true)),
        payload("BeforeTool", 410, shell),
    ];
    if tool_end {
        v.push(payload("AfterTool", 1_630, after));
    }
    v.extend([
        payload("BeforeModel", 1_700, model_request()),
        payload("AfterModel", 1_800, chunk("The command ", false)),
        payload("AfterModel", 1_900, chunk("printed hi.", true)),
        payload(
            "AfterAgent",
            1_910,
            json!({"prompt": "run the command", "prompt_response": "…"}),
        ),
        payload("SessionEnd", 1_950, json!({"reason": "exit"})),
    ]);
    v
}

const T0: u64 = 1_796_155_419_000;

#[test]
fn a_turn_with_a_shell_call_gets_its_times_from_the_payloads() {
    let out = run(&turn(true));
    let kinds: Vec<&str> = out.iter().map(|r| r.event.kind().as_str()).collect();
    assert_eq!(
        kinds,
        [
            "session",
            "prompted",
            "call_sent",
            "calling",
            "called",
            "call_sent",
            "turn_ended",
            "closed"
        ]
    );
    let Event::Prompted { at_ms, .. } = &out[1].event else {
        panic!()
    };
    assert_eq!(*at_ms, T0 + 150);
    let Event::CallSent(first) = &out[2].event else {
        panic!()
    };
    assert_eq!((first.started_ms, first.finished_ms), (T0 + 170, T0 + 400));
    assert_eq!(first.request.model, "gemini-2.5-flash");
    assert_eq!(first.request.provider.as_deref(), Some("gcp.gemini"));
    assert_eq!(first.request.max_tokens, Some(8192));
    assert_eq!(
        (first.usage.input_tokens, first.usage.output_tokens),
        (100, 10)
    );
    let Event::Called(call) = &out[4].event else {
        panic!()
    };
    assert_eq!((call.started_ms, call.finished_ms), (T0 + 410, T0 + 1_630));
    assert_eq!(call.call.id, "call-1");
    assert!(!call.refused && !call.failed);
    // A streamed answer is one model call: its first chunk is its first token.
    let Event::CallSent(second) = &out[5].event else {
        panic!()
    };
    assert_eq!(
        (second.started_ms, second.finished_ms, second.first_token_ms),
        (T0 + 1_700, T0 + 1_900, Some(T0 + 1_800))
    );
    assert_eq!(second.id.as_deref(), Some("model-2"));
}

#[test]
fn a_call_a_hook_denied_ends_refused_at_the_next_model_call() {
    let out = run(&turn(false));
    let refused: Vec<&Called> = out
        .iter()
        .filter_map(|r| match &r.event {
            Event::Called(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(refused.len(), 1);
    assert!(refused[0].refused);
    assert_eq!(
        (refused[0].started_ms, refused[0].finished_ms),
        (T0 + 410, T0 + 1_700)
    );
}

#[test]
fn a_tool_that_could_not_run_is_failed_and_a_session_killed_mid_turn_is_closed() {
    let mut v = turn(true);
    v[7] = payload(
        "AfterTool",
        1_630,
        json!({"tool_name": "run_shell_command", "tool_response": {"error": "spawn failed"}}),
    );
    v.truncate(9);
    let mut a = Adapter::new();
    let mut out = Vec::new();
    for p in &v {
        a.push(0, p, &mut out);
    }
    assert!(out
        .iter()
        .any(|r| matches!(&r.event, Event::Called(c) if c.failed)));
    assert!(!a.at_rest(SID));
    a.abandon(SID, T0 + 9_000, &mut out);
    assert!(matches!(out.last().unwrap().event, Event::Closed { at_ms } if at_ms == T0 + 9_000));
    assert!(a.at_rest(SID));
}

#[test]
fn a_payload_without_a_readable_time_takes_the_time_it_was_received() {
    let mut p = payload("BeforeAgent", 0, json!({"prompt": "x"}));
    p.timestamp = Some("yesterday".into());
    let mut out = Vec::new();
    Adapter::new().push(42, &p, &mut out);
    assert!(matches!(out[1].event, Event::Prompted { at_ms: 42, .. }));
}
