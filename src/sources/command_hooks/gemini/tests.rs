//! The adapter on payloads shaped as Gemini CLI 0.61.0 sends them (docs/agents/gemini.md).

use crate::sources::command_hooks::engine::AgentRules;
use crate::sources::command_hooks::engine::files::NoTranscripts;
use serde_json::json;

use super::*;
use crate::protocol::Called;

pub(super) const SID: &str = "b0643a34-b48d-44ad-a9f0-ec65e5336d37";

fn at(ms: u64) -> String {
    // 2026-12-01T20:03:39.000Z is 1796155419000.
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_796_155_419_000 + ms);
    humantime::format_rfc3339_millis(t).to_string()
}

pub(super) fn payload(event: &str, ms: u64, extra: serde_json::Value) -> Payload {
    let mut v = json!({"session_id": SID, "hook_event_name": event, "timestamp": at(ms),
        "cwd": "/work/proj", "transcript_path": "/home/u/.gemini/tmp/proj/chats/s.jsonl"});
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    serde_json::from_value(v).unwrap()
}

pub(super) fn model_request() -> serde_json::Value {
    json!({"llm_request": {"model": "gemini-2.5-flash", "messages": [{"role": "user", "content": "run it"}],
        "config": {"temperature": 1, "maxOutputTokens": 8192}}})
}

pub(super) fn chunk(text: &str, last: bool) -> serde_json::Value {
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

pub(super) fn run(payloads: impl IntoIterator<Item = Payload>) -> Vec<Record<'static>> {
    let mut a = Adapter::new();
    let mut out = Vec::new();
    for p in payloads {
        a.take(p, 0, &mut NoTranscripts, &mut out);
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

pub(super) const T0: u64 = 1_796_155_419_000;

#[test]
fn a_turn_with_a_shell_call_gets_its_times_from_the_payloads() {
    let out = run(turn(true));
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
    let out = run(turn(false));
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
    for p in v {
        a.take(p, 0, &mut NoTranscripts, &mut out);
    }
    assert!(out
        .iter()
        .any(|r| matches!(&r.event, Event::Called(c) if c.failed)));
    assert!(!a.at_rest(SID));
    a.abandon(SID, T0 + 9_000, &mut NoTranscripts, &mut out);
    assert!(matches!(out.last().unwrap().event, Event::Closed { at_ms } if at_ms == T0 + 9_000));
    assert!(a.at_rest(SID));
}

#[test]
fn a_payload_without_a_readable_time_takes_the_time_it_was_received() {
    let mut p = payload("BeforeAgent", 0, json!({"prompt": "x"}));
    p.timestamp = Some("yesterday".into());
    let mut out = Vec::new();
    Adapter::new().take(p, 42, &mut NoTranscripts, &mut out);
    assert!(matches!(out[1].event, Event::Prompted { at_ms: 42, .. }));
}

fn called<'a>(out: &'a [Record<'static>]) -> Vec<&'a Called<'static>> {
    out.iter()
        .filter_map(|r| match &r.event {
            Event::Called(c) => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn of_two_calls_to_one_tool_the_denied_one_is_refused_and_the_other_ends_at_its_after_tool() {
    let first =
        json!({"tool_name": "run_shell_command", "tool_input": {"command": "git push --force"}});
    let second = json!({"tool_name": "run_shell_command", "tool_input": {"command": "ls"}});
    let mut second_end = second.clone();
    second_end["tool_response"] = json!({"llmContent": "a b", "returnDisplay": "a b"});
    let out = run([
        payload("BeforeAgent", 0, json!({"prompt": "go"})),
        payload("BeforeModel", 10, model_request()),
        payload("AfterModel", 20, chunk("two calls", true)),
        payload("BeforeTool", 30, first),
        payload("BeforeTool", 40, second),
        payload("AfterTool", 900, second_end),
        payload("BeforeModel", 950, model_request()),
    ]);
    let calls = called(&out);
    assert_eq!(calls.len(), 2);
    let ls = calls.iter().find(|c| !c.refused).unwrap();
    assert_eq!((ls.started_ms, ls.finished_ms), (T0 + 40, T0 + 900));
    assert!(ls.call.arguments.as_ref().unwrap().0.get().contains("ls"));
    let push = calls.iter().find(|c| c.refused).unwrap();
    assert!(push
        .call
        .arguments
        .as_ref()
        .unwrap()
        .0
        .get()
        .contains("git push"));
    assert_eq!(push.finished_ms, T0 + 950);
}

#[test]
fn cached_tokens_are_kept_apart_and_counts_that_cannot_be_read_lose_nothing() {
    let mut last = chunk("done", true);
    last["llm_response"]["usageMetadata"] = json!({"promptTokenCount": 100, "candidatesTokenCount": null, "cachedContentTokenCount": 40, "thoughtsTokenCount": 7});
    let out = run([
        payload("BeforeAgent", 0, json!({"prompt": "go"})),
        payload("BeforeModel", 10, model_request()),
        payload("AfterModel", 20, last),
    ]);
    let Event::CallSent(c) = &out.last().unwrap().event else {
        panic!("{out:?}")
    };
    assert_eq!(
        (
            c.usage.input_tokens,
            c.usage.cache_read_tokens,
            c.usage.output_tokens,
            c.usage.reasoning_tokens
        ),
        (60, 40, 7, Some(7)),
        "the thoughts are output, billed as such"
    );
}

#[test]
fn a_model_call_without_its_last_chunk_is_still_a_call_with_an_error() {
    let mut out = run([
        payload("BeforeAgent", 0, json!({"prompt": "go"})),
        payload("BeforeModel", 10, model_request()),
        payload("AfterModel", 20, chunk("half an ans", false)),
        payload("AfterAgent", 30, json!({})),
    ]);
    assert_eq!(
        out.len(),
        2,
        "the turn's end waits for a blocked stop's continuation"
    );
    // Nothing came within the grace: the turn ends at its AfterAgent.
    let mut a = Adapter::new();
    out.clear();
    for p in [
        payload("BeforeAgent", 0, json!({"prompt": "go"})),
        payload("BeforeModel", 10, model_request()),
        payload("AfterModel", 20, chunk("half an ans", false)),
        payload("AfterAgent", 30, json!({})),
    ] {
        a.take(p, 0, &mut NoTranscripts, &mut out);
    }
    a.tick(T0 + 30 + 15_000, &mut NoTranscripts, &mut out);
    let Event::CallSent(c) = &out[2].event else {
        panic!("{out:?}")
    };
    assert!(c.error.is_some() && c.response.is_none());
    assert_eq!(
        (c.started_ms, c.finished_ms, c.first_token_ms),
        (T0 + 10, T0 + 30, Some(T0 + 20))
    );
    assert!(matches!(out[3].event, Event::TurnEnded { .. }));
}

#[test]
fn a_resumed_session_opens_again_under_its_id() {
    let mut v = turn(true);
    v.extend(turn(true).into_iter().map(|mut p| {
        p.timestamp = p.timestamp.map(|_| at(60_000));
        p
    }));
    let out = run(v);
    let sessions = out
        .iter()
        .filter(|r| matches!(r.event, Event::Session(_)))
        .count();
    let closed = out
        .iter()
        .filter(|r| matches!(r.event, Event::Closed { .. }))
        .count();
    let turns = out
        .iter()
        .filter(|r| matches!(r.event, Event::TurnEnded { .. }))
        .count();
    assert_eq!((sessions, closed, turns), (2, 2, 2));
    assert!(out.iter().all(|r| r.session == SID));
}

#[test]
fn the_journal_keeps_no_history_of_the_conversation() {
    let p = serde_json::to_string(&json!({"session_id": SID, "hook_event_name": "AfterModel",
        "llm_request": {"model": "m", "messages": [{"role": "user", "content": "a long secret history"}]},
        "llm_response": {"text": "answer text", "candidates": [{"content": {"parts": ["answer text"]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 3}}}))
    .unwrap();
    let kept = slim(&p).unwrap();
    assert!(
        !kept.contains("secret") && !kept.contains("answer text"),
        "{kept}"
    );
    let back: Payload = serde_json::from_str(&kept).unwrap();
    assert_eq!(back.finish_reason(), Some("STOP"));
    assert_eq!(back.llm_request.unwrap().model.as_deref(), Some("m"));
    assert!(slim(r#"{"session_id":"s","hook_event_name":"BeforeTool"}"#).is_none());
}
