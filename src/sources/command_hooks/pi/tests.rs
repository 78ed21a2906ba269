//! The adapter on events as Pi 1.6.0 sent them to albedo-otel's extension (docs/agents/pi.md;
//! times and tokens from a real run against the scripted server): two turns of one session,
//! the first with a one-second shell call, the second with a call another extension refused.

use serde_json::{json, Value};

use super::*;
use crate::sources::command_hooks::engine::files::NoTranscripts;
use crate::sources::command_hooks::engine::AgentRules;
use crate::assemble::Span;

const SID: &str = "01a23c91-7c32-7760-b819-720c0adda2da";
const T0: u64 = 1_796_312_497_000;

fn event(name: &str, ms: u64, fields: Value) -> Payload {
    let mut e = json!({"session_id": SID, "hook_event_name": name, "at_ms": T0 + ms});
    e.as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    serde_json::from_value(e).unwrap()
}

fn usage(input: u64, output: u64, read: u64) -> Value {
    json!({"input": input, "output": output, "cacheRead": read, "cacheWrite": 0, "reasoning": 0,
        "totalTokens": input + output + read,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})
}

/// One model call: sent at `sent`, first chunk at `chunk`, ended at `end`, as Pi's events say
/// (its message's `timestamp` is 10 ms before the extension saw the request go).
fn model_call(n: u64, sent: u64, chunk: u64, end: u64, tokens: Value, stop: &str) -> Vec<Payload> {
    let pending = json!({"provider": "mock", "model": "mock-model", "stopReason": "pending",
        "timestamp": T0 + sent - 10});
    let done = json!({"provider": "mock", "model": "mock-model", "usage": tokens,
        "stopReason": stop, "timestamp": T0 + sent - 10, "responseId": format!("chatcmpl-{n}"),
        "durationMs": end - sent + 10});
    vec![
        event(
            "before_provider_request",
            sent,
            json!({"provider": "mock", "model": "mock-model"}),
        ),
        // The response's headers, then its first chunk.
        event("message_start", chunk - 3, json!({ "message": pending })),
        event("message_update", chunk, json!({})),
        event("message_end", end, json!({ "message": done })),
    ]
}

fn tool_start(id: &str, ms: u64, command: &str) -> Payload {
    event(
        "tool_execution_start",
        ms,
        json!({"toolCallId": id, "toolName": "bash", "args": {"command": command}}),
    )
}

fn tool_end(id: &str, ms: u64, error: bool, ran: Option<u64>, text: &str) -> Payload {
    let mut fields = json!({"toolCallId": id, "toolName": "bash", "isError": error,
        "content": [{"type": "text", "text": text}]});
    if let Some(ran) = ran {
        fields["durationMs"] = ran.into();
    }
    event("tool_execution_end", ms, fields)
}

fn session() -> Vec<Payload> {
    let mut e = vec![
        event(
            "session_start",
            680,
            json!({"reason": "startup", "cwd": "/tmp/piexp/work"}),
        ),
        event(
            "before_agent_start",
            686,
            json!({"messageType": "user", "prompt": "run the command"}),
        ),
    ];
    e.extend(model_call(1, 753, 800, 810, usage(917, 21, 100), "toolUse"));
    e.push(tool_start("call_1", 811, "sleep 1"));
    e.push(tool_end("call_1", 1_841, false, Some(1_020), "(no output)"));
    e.extend(model_call(
        2,
        1_860,
        1_883,
        1_891,
        usage(1_817, 22, 200),
        "stop",
    ));
    e.push(event("agent_settled", 1_894, json!({"aborted": false})));
    e.push(event("session_shutdown", 1_895, json!({"reason": "quit"})));
    e.push(event(EXITED, 1_900, json!({})));
    // `pi --session`: a new process, the same session.
    e.push(event(
        "session_start",
        14_065,
        json!({"reason": "startup", "cwd": "/tmp/piexp/work"}),
    ));
    e.push(event(
        "before_agent_start",
        14_074,
        json!({"messageType": "user", "prompt": "DENY: push it"}),
    ));
    e.extend(model_call(
        3,
        14_126,
        14_356,
        14_371,
        usage(2_717, 23, 300),
        "toolUse",
    ));
    e.push(tool_start("call_3", 14_371, "git push --force"));
    e.push(tool_end(
        "call_3",
        14_374,
        true,
        None,
        "force-push is not allowed here",
    ));
    e.extend(model_call(
        4,
        14_379,
        14_384,
        14_386,
        usage(3_617, 24, 400),
        "stop",
    ));
    e.push(event("agent_settled", 14_387, json!({"aborted": false})));
    e
}

fn run(payloads: impl IntoIterator<Item = Payload>) -> (Adapter, Vec<Record<'static>>) {
    let mut a = Adapter::new();
    let mut out = Vec::new();
    for p in payloads {
        a.take(p, T0, &mut NoTranscripts, &mut out);
    }
    (a, out)
}

fn spans(records: &[Record<'static>]) -> Vec<Span> {
    crate::testing::assembled(records)
}

fn int(span: &Span, key: &str) -> Option<i64> {
    match span.attr(key)? {
        crate::assemble::span::Value::Int(i) => Some(*i),
        _ => None,
    }
}

#[test]
fn two_turns_with_pi_s_own_times_tokens_and_a_refused_call() {
    let (adapter, records) = run(session());
    assert_eq!(adapter.open_turns(), 0);
    let kinds: Vec<&str> = records.iter().map(|r| r.event.kind().as_str()).collect();
    let turn = [
        "prompted",
        "call_sent",
        "calling",
        "called",
        "call_sent",
        "turn_ended",
    ];
    let mut want = vec!["session"];
    want.extend(turn);
    want.extend(["closed", "session"]);
    want.extend(turn);
    assert_eq!(kinds, want);
    let Event::CallSent(first) = &records[2].event else {
        panic!()
    };
    // Pi's own times: its request began at `timestamp` and took `durationMs`.
    assert_eq!(
        (first.started_ms, first.first_token_ms, first.finished_ms),
        (T0 + 743, Some(T0 + 800), T0 + 810)
    );
    assert_eq!(first.request.provider.as_deref(), Some("mock"));
    assert_eq!(first.request.model, "mock-model");
    assert_eq!(first.id.as_deref(), Some("chatcmpl-1"));
    assert_eq!(
        (
            first.usage.input_tokens,
            first.usage.cache_read_tokens,
            first.usage.output_tokens
        ),
        (917, 100, 21)
    );
    let Event::Called(sleep) = &records[4].event else {
        panic!()
    };
    assert_eq!(
        (sleep.started_ms, sleep.finished_ms),
        (T0 + 811, T0 + 1_841)
    );
    assert!(!sleep.refused && !sleep.failed);
    let Event::Called(push) = &records[12].event else {
        panic!()
    };
    assert!(push.refused && !push.failed, "{push:?}");

    let spans = spans(&records);
    let roots: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_none())
        .collect();
    assert_eq!(roots.len(), 2);
    assert!(
        roots.iter().all(|r| r.name == "invoke_agent pi"),
        "{roots:?}"
    );
    let mut chats: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("chat "))
        .collect();
    chats.sort_by_key(|c| c.start_ns);
    // Input tokens count the cached ones, as the API billed them.
    let inputs: Vec<Option<i64>> = chats
        .iter()
        .map(|c| int(c, "gen_ai.usage.input_tokens"))
        .collect();
    assert_eq!(inputs, [Some(1_017), Some(2_017), Some(3_017), Some(4_017)]);
}

#[test]
fn pi_s_own_errors_of_a_call_that_never_ran_are_failures_not_refusals() {
    for text in [
        "Tool \"nope\" not found",
        "Operation aborted",
        "Validation failed for tool \"bash\":\n- command: missing",
    ] {
        let (_, records) = run([
            event("before_agent_start", 0, json!({"prompt": "x"})),
            tool_start("c", 10, "x"),
            tool_end("c", 20, true, None, text),
        ]);
        let Some(Event::Called(c)) = records.iter().map(|r| &r.event).next_back() else {
            panic!("{records:?}")
        };
        assert!(c.failed && !c.refused, "{text}: {c:?}");
    }
    // A call that ran and failed (a non-zero exit) is a failure too.
    let (_, records) = run([
        event("before_agent_start", 0, json!({"prompt": "x"})),
        tool_start("c", 10, "false"),
        tool_end("c", 20, true, Some(8), "Command exited with code 1"),
    ]);
    let Some(Event::Called(c)) = records.iter().map(|r| &r.event).next_back() else {
        panic!()
    };
    assert!(c.failed && !c.refused);
}

#[test]
fn pi_gone_mid_call_leaves_the_turn_unfinished_with_what_it_had() {
    let mut events = vec![event("before_agent_start", 0, json!({"prompt": "wait"}))];
    events.extend(model_call(1, 10, 20, 30, usage(917, 21, 100), "toolUse"));
    events.push(tool_start("call_1", 31, "sleep 600"));
    // Pi is killed; its hook's input closes, and the hook says so.
    events.push(event(EXITED, 5_000, json!({})));
    let (adapter, records) = run(events);
    assert_eq!(adapter.open_turns(), 0);
    assert_eq!(adapter.sessions.len(), 0, "the session is forgotten");
    let spans = spans(&records);
    let root = spans.iter().find(|s| s.parent_span_id.is_none()).unwrap();
    let unfinished = |s: &Span| s.attr("albedo.unfinished").is_some();
    assert!(unfinished(root), "{root:?}");
    let call = spans
        .iter()
        .find(|s| s.name == "execute_tool bash")
        .unwrap();
    assert!(unfinished(call));
    assert_eq!(call.end_ns, (T0 + 5_000) * 1_000_000);
    assert_eq!(
        spans.iter().filter(|s| s.name.starts_with("chat ")).count(),
        1
    );
}

#[test]
fn a_request_unanswered_when_pi_is_gone_goes_out_as_an_error() {
    let mut events = vec![event("before_agent_start", 0, json!({"prompt": "x"}))];
    events.extend(
        // Sent, the response's headers, its first chunk; no end.
        model_call(1, 10, 20, 30, usage(1, 1, 0), "toolUse")
            .into_iter()
            .take(3),
    );
    events.push(event(EXITED, 900, json!({})));
    let (_, records) = run(events);
    let Some(Event::CallSent(c)) = records
        .iter()
        .map(|r| &r.event)
        .find(|e| matches!(e, Event::CallSent(_)))
    else {
        panic!("{records:?}")
    };
    assert!(c.error.is_some());
    assert_eq!(
        (c.started_ms, c.first_token_ms, c.finished_ms),
        (T0 + 10, Some(T0 + 20), T0 + 900)
    );
}

#[test]
fn the_next_prompt_ends_a_turn_that_never_settled() {
    let (_, records) = run([
        event("before_agent_start", 0, json!({"prompt": "one"})),
        event("before_agent_start", 500, json!({"prompt": "two"})),
        event("agent_settled", 600, json!({"aborted": true})),
    ]);
    let reasons: Vec<Option<&str>> = records
        .iter()
        .filter_map(|r| match &r.event {
            Event::TurnEnded { reason, .. } => Some(reason.as_deref()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons, [Some("interrupted"), Some("interrupted")]);
}

#[test]
fn the_extension_hands_on_every_event_the_adapter_reads() {
    for name in HOOK_EVENTS {
        assert!(
            EXTENSION.contains(&format!("on(\"{name}\"")),
            "{name} is not subscribed"
        );
    }
}

#[test]
fn the_extension_file_names_its_command_and_gives_it_back() {
    let command = vec![
        "/opt/albedo otel/albedo-otel-hook".to_string(),
        "--agent".into(),
        "pi".into(),
        "--config".into(),
        "/home/u/.config/albedo-otel/config.toml".into(),
    ];
    let text = extension(&command);
    assert_eq!(extension_command(&text), Some(command));
    assert_eq!(extension_command("export default function (pi) {}"), None);
    // opencode's plugin, with the same mark, is not ours.
    let theirs = crate::sources::command_hooks::opencode::plugin(&["x".to_string()]);
    assert_eq!(extension_command(&theirs), None);
}
