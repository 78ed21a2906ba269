//! The adapter on hook payloads and a session log shaped as Copilot CLI 1.0.102 writes them.

use crate::sources::command_hooks::engine::AgentRules;
use serde_json::json;

use super::*;

const SID: &str = "88a9b10a-ab5f-4059-8d4d-f598e265cf8e";
const T0: u64 = 1_796_157_322_000;

fn iso(ms: u64) -> String {
    humantime::format_rfc3339_millis(
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(T0 + ms),
    )
    .to_string()
}

fn hook(event: &str, ms: u64, extra: serde_json::Value) -> Payload {
    let mut v =
        json!({"hook_event_name": event, "session_id": SID, "timestamp": iso(ms), "cwd": "/work"});
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    serde_json::from_value(v).unwrap()
}

struct Log(String);

impl Transcripts for Log {
    fn read_from(&mut self, _: &str, offset: u64) -> Vec<u8> {
        self.0.as_bytes()[offset as usize..].to_vec()
    }
}

fn line(kind: &str, ms: u64, data: serde_json::Value) -> String {
    json!({"type": kind, "data": data, "id": "x", "timestamp": iso(ms)}).to_string() + "\n"
}

fn log() -> Log {
    let usage = |n: u64, at: u64, dur: u64| {
        line(
            "session.usage_record",
            at,
            json!({"usage": {"model": "gpt-4.1", "inputTokens": 1000 * n, "outputTokens": 20,
            "cacheReadTokens": 100, "duration": dur, "timeToFirstTokenMs": 5, "apiCallId": format!("chatcmpl-{n}"),
            "finishReason": "stop", "providerType": "openai"}}),
        )
    };
    Log([
        // Turn 1.
        usage(1, 400, 300),
        line("tool.execution_start", 410, json!({"toolCallId": "call_1", "toolName": "bash", "arguments": {"command": "sleep 1"}})),
        line("tool.execution_complete", 1_420, json!({"toolCallId": "call_1", "success": true, "result": {"content": "hi"}})),
        usage(2, 1_800, 300),
        // Turn 2, resumed: a denied call, and the call of a sub-agent whose start is not in
        // the log (it is left out).
        usage(3, 10_400, 300),
        line("tool.execution_start", 10_410, json!({"toolCallId": "call_3", "toolName": "bash", "arguments": {"command": "git push --force"}})),
        line("tool.execution_complete", 10_420, json!({"toolCallId": "call_3", "success": false, "error": {"message": "Denied", "code": "denied"}})),
        json!({"type": "session.usage_record", "agentId": "child", "timestamp": iso(10_500), "data": {"usage": {"inputTokens": 9}}}).to_string() + "\n",
        usage(4, 10_800, 300),
    ]
    .concat())
}

#[test]
fn each_turn_takes_its_own_calls_from_the_log_once_its_stop_is_old_enough() {
    let (mut a, mut logs, mut out) = (Adapter::new(), log(), Vec::new());
    let stop = json!({"transcript_path": "/x/events.jsonl", "stop_reason": "end_turn"});
    for p in [
        hook("SessionStart", 0, json!({})),
        hook("UserPromptSubmit", 100, json!({"prompt": "run it"})),
        hook("Stop", 1_900, stop.clone()),
        hook("SessionEnd", 1_950, json!({"reason": "complete"})),
    ] {
        a.take(p, 0, &mut logs, &mut out);
    }
    assert_eq!(
        out.len(),
        2,
        "nothing of the turn before the log is due: {out:?}"
    );
    a.tick(T0 + 1_900 + LOG_GRACE_MS, &mut logs, &mut out);
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
    let Event::CallSent(c) = &out[2].event else {
        panic!()
    };
    assert_eq!(
        (c.started_ms, c.finished_ms, c.first_token_ms),
        (T0 + 100, T0 + 400, Some(T0 + 105))
    );
    assert_eq!(
        (c.usage.input_tokens, c.usage.cache_read_tokens),
        (900, 100)
    );

    // The resumed process: the log now holds both turns; the second takes only its own.
    let mut out = Vec::new();
    for p in [
        hook("SessionStart", 10_000, json!({"source": "resume"})),
        hook("UserPromptSubmit", 10_100, json!({"prompt": "push"})),
        hook("Stop", 10_900, stop),
    ] {
        a.take(p, 0, &mut logs, &mut out);
    }
    a.abandon(SID, T0 + 11_000, &mut logs, &mut out);
    assert_eq!(call_ids(&out), ["chatcmpl-3", "chatcmpl-4"]);
    let denied = out
        .iter()
        .find_map(|r| match &r.event {
            Event::Called(c) => Some(c),
            _ => None,
        })
        .unwrap();
    assert!(denied.refused && !denied.failed);
}

/// The ids of the model calls in `out`, in order.
fn call_ids<'a>(out: &'a [Record<'static>]) -> Vec<&'a str> {
    out.iter()
        .filter_map(|r| match &r.event {
            Event::CallSent(c) => c.id.as_deref(),
            _ => None,
        })
        .collect()
}

/// A log that grows between reads, and remembers where each read began.
struct Growing {
    text: String,
    reads: Vec<u64>,
}

impl Transcripts for Growing {
    fn read_from(&mut self, _: &str, offset: u64) -> Vec<u8> {
        self.reads.push(offset);
        let from = (offset as usize).min(self.text.len());
        self.text.as_bytes()[from..].to_vec()
    }
}

/// One turn of the session, `at` ms in: its prompt 100 ms in, its `Stop` 900 ms later (1,900
/// for the first, whose session starts at 0), and the log read once the `Stop` is old enough.
fn turn(
    a: &mut Adapter,
    logs: &mut Growing,
    out: &mut Vec<Record<'static>>,
    at: u64,
    prompt: &str,
) {
    let stop = json!({"transcript_path": "/x/events.jsonl", "stop_reason": "end_turn"});
    let end = if at == 0 { 1_900 } else { at + 900 };
    let mut hooks = Vec::new();
    if at == 0 {
        hooks.push(hook("SessionStart", 0, json!({})));
    }
    hooks.push(hook(
        "UserPromptSubmit",
        at + 100,
        json!({ "prompt": prompt }),
    ));
    hooks.push(hook("Stop", end, stop));
    for p in hooks {
        a.take(p, 0, logs, out);
    }
    a.tick(T0 + end + LOG_GRACE_MS, logs, out);
}

#[test]
fn a_sub_agent_in_the_log_opens_under_its_task_call_and_closes_before_the_call_ends() {
    let child = |kind: &str, ms: u64, data: serde_json::Value| {
        json!({"type": kind, "agentId": "5569dbe4", "data": data, "id": "x", "timestamp": iso(ms)})
            .to_string()
            + "\n"
    };
    let mut logs = Log([
        line("tool.execution_start", 200, json!({"toolCallId": "call_1", "toolName": "task", "arguments": {"prompt": "run it"}})),
        child("subagent.started", 210, json!({"toolCallId": "call_1", "agentName": "general-purpose", "model": "gpt-4.1"})),
        child("user.message", 220, json!({"content": "run it"})),
        child("session.usage_record", 300, json!({"usage": {"model": "gpt-4.1", "inputTokens": 2017, "outputTokens": 22, "duration": 50}})),
        child("tool.execution_start", 310, json!({"toolCallId": "call_2", "toolName": "bash", "parentToolCallId": "call_1"})),
        child("tool.execution_complete", 1_310, json!({"toolCallId": "call_2", "success": true, "result": {"content": "hi"}})),
        // Copilot completes the task call just before it says the sub-agent completed.
        line("tool.execution_complete", 1_330, json!({"toolCallId": "call_1", "success": true, "result": {"content": "done"}})),
        child("subagent.completed", 1_331, json!({"toolCallId": "call_1"})),
    ]
    .concat());
    let (mut a, mut out) = (Adapter::new(), Vec::new());
    let stop = json!({"transcript_path": "/x/events.jsonl", "stop_reason": "end_turn"});
    for p in [
        hook("UserPromptSubmit", 100, json!({"prompt": "delegate"})),
        // The sub-agent's own hooks (under its own id) are left to the log.
        hook(
            "UserPromptSubmit",
            215,
            json!({"session_id": "5569dbe4", "agent_id": "5569dbe4", "prompt": "run it"}),
        ),
        hook("Stop", 1_400, stop),
    ] {
        a.take(p, 0, &mut logs, &mut out);
    }
    a.tick(T0 + 10_000, &mut logs, &mut out);
    let sub = format!("{SID}/agent-5569dbe4");
    let opened = out
        .iter()
        .position(|r| r.session == sub && matches!(r.event, Event::Session(_)));
    let Some(Event::Session(info)) = opened.map(|i| &out[i].event) else {
        panic!("the sub-agent opens: {out:?}")
    };
    let parent = info.parent.as_ref().expect("under its call");
    assert_eq!((&*parent.session, &*parent.call), (SID, "call_1"));
    assert_eq!(info.agent.as_deref(), Some("general-purpose"));
    // Its model call and its shell call are its own, and it closes before its task call ends.
    let of_sub = |f: fn(&Event) -> bool| {
        out.iter()
            .filter(|r| r.session == sub && f(&r.event))
            .count()
    };
    assert_eq!(
        of_sub(|e| matches!(e, Event::CallSent(c) if c.usage.input_tokens == 2017)),
        1,
        "{out:?}"
    );
    assert_eq!(
        of_sub(|e| matches!(e, Event::Called(c) if c.call.id == "call_2")),
        1,
        "{out:?}"
    );
    assert_eq!(
        of_sub(|e| matches!(e, Event::Prompted { .. })),
        1,
        "{out:?}"
    );
    let closed = out
        .iter()
        .position(|r| r.session == sub && matches!(r.event, Event::Closed { .. }));
    let task_done = out
        .iter()
        .position(|r| matches!(&r.event, Event::Called(c) if c.call.id == "call_1"));
    assert!(closed.is_some() && closed < task_done, "{out:?}");
    assert_eq!(
        out.iter()
            .filter(|r| r.session == SID && matches!(r.event, Event::Prompted { .. }))
            .count(),
        1
    );
}

#[test]
fn a_model_calls_answer_goes_with_it_its_text_and_the_calls_it_asked_for() {
    let mut logs = Log([
        line("session.usage_record", 400, json!({"usage": {"model": "gpt-4.1", "inputTokens": 1017,
            "outputTokens": 21, "duration": 300, "apiCallId": "chatcmpl-1"}})),
        line("assistant.message", 405, json!({"apiCallId": "chatcmpl-1", "content": "I'll run it.",
            "toolRequests": [{"toolCallId": "call_1", "name": "bash", "arguments": {"command": "sleep 1"}}]})),
        line("tool.execution_start", 410, json!({"toolCallId": "call_1", "toolName": "bash"})),
        line("tool.execution_complete", 1_420, json!({"toolCallId": "call_1", "success": true})),
        // The last call's answer is not in the log yet: the call goes out without it.
        line("session.usage_record", 1_800, json!({"usage": {"model": "gpt-4.1", "inputTokens": 2017,
            "outputTokens": 22, "duration": 300, "apiCallId": "chatcmpl-2"}})),
    ]
    .concat());
    let (mut a, mut out) = (Adapter::new(), Vec::new());
    let stop = json!({"transcript_path": "/x/events.jsonl", "stop_reason": "end_turn"});
    for p in [
        hook("UserPromptSubmit", 100, json!({"prompt": "run it"})),
        hook("Stop", 1_900, stop),
    ] {
        a.take(p, 0, &mut logs, &mut out);
    }
    a.tick(T0 + 10_000, &mut logs, &mut out);
    let calls: Vec<&CallSent> = out
        .iter()
        .filter_map(|r| match &r.event {
            Event::CallSent(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2, "{out:?}");
    let answer: serde_json::Value = serde_json::from_str(
        calls[0]
            .response
            .as_ref()
            .unwrap()
            .content
            .as_ref()
            .unwrap()
            .get(),
    )
    .unwrap();
    assert_eq!(answer["content"], "I'll run it.");
    assert_eq!(answer["tool_calls"][0]["id"], "call_1");
    assert_eq!(
        answer["tool_calls"][0]["function"]["arguments"],
        r#"{"command":"sleep 1"}"#
    );
    assert!(calls[1].response.as_ref().unwrap().content.is_none());
    // The model call still comes before the call it asked for.
    let sent = out
        .iter()
        .position(|r| matches!(r.event, Event::CallSent(_)));
    let calling = out
        .iter()
        .position(|r| matches!(r.event, Event::Calling { .. }));
    assert!(sent < calling, "{out:?}");
}

#[test]
fn the_hook_names_the_log_on_a_prompt_so_a_turn_killed_before_its_stop_reads_it() {
    let env = |k: &str| (k == "HOME").then(|| "/home/u".to_string());
    let prompt =
        json!({"hook_event_name": "UserPromptSubmit", "session_id": SID, "prompt": "run it"});
    let kept = with_log(&prompt.to_string(), &env).expect("a prompt gets the log's path");
    let p: Payload = serde_json::from_str(&kept).unwrap();
    let log = format!("/home/u/.copilot/session-state/{SID}/events.jsonl");
    assert_eq!(p.transcript_path.as_deref(), Some(log.as_str()));
    let copilot_home = |k: &str| (k == "COPILOT_HOME").then(|| "/c".to_string());
    let kept = with_log(&prompt.to_string(), &copilot_home).unwrap();
    assert!(
        kept.contains(&format!("/c/session-state/{SID}/events.jsonl")),
        "{kept}"
    );
    // Other events, and ids that would name another folder, are kept as they came.
    let stop = json!({"hook_event_name": "Stop", "session_id": SID});
    assert!(with_log(&stop.to_string(), &env).is_none());
    let odd = json!({"hook_event_name": "UserPromptSubmit", "session_id": "../x"});
    assert!(with_log(&odd.to_string(), &env).is_none());

    // The adapter reads that log when the turn is given up on with no `Stop`.
    let mut logs = Log(line(
        "tool.execution_start",
        400,
        json!({"toolCallId": "call_1", "toolName": "bash", "arguments": {"command": "sleep 30"}}),
    ));
    let (mut a, mut out) = (Adapter::new(), Vec::new());
    let mut p = hook("UserPromptSubmit", 100, json!({"prompt": "run it"}));
    p.transcript_path = Some(log);
    a.take(p, 0, &mut logs, &mut out);
    a.abandon(SID, T0 + 5_000, &mut logs, &mut out);
    assert!(
        out.iter()
            .any(|r| matches!(&r.event, Event::Calling { call, .. } if call.id == "call_1")),
        "{out:?}"
    );
    // The turn did not end: the close marks it unfinished.
    assert!(
        !out.iter()
            .any(|r| matches!(&r.event, Event::TurnEnded { .. })),
        "{out:?}"
    );
    assert!(matches!(
        out.last().map(|r| &r.event),
        Some(Event::Closed { .. })
    ));
}

#[test]
fn a_sub_agents_hook_names_its_parent_and_no_other_payload_does() {
    let child = json!({"hook_event_name": "Stop", "session_id": "kid", "agent_id": "kid",
        "parent_agent_id": SID});
    assert_eq!(sub_agents_parent(&child.to_string()).as_deref(), Some(SID));
    for other in [
        json!({"hook_event_name": "Stop", "session_id": SID}),
        json!({"hook_event_name": "Stop", "session_id": "kid", "parent_agent_id": ""}),
        json!({"hook_event_name": "Stop", "session_id": "kid", "parent_agent_id": 7}),
    ] {
        assert_eq!(sub_agents_parent(&other.to_string()), None, "{other}");
    }
}

/// Copilot's hooks say nothing of its calls, so the daemon may last have seen it alive before
/// the call its log holds began: the log's events say it was alive then, and the killed turn
/// keeps the call, closed no earlier than the log's last word.
#[test]
fn a_call_logged_after_the_agent_was_last_seen_stays_in_its_killed_turn() {
    let log = format!("/home/u/.copilot/session-state/{SID}/events.jsonl");
    let mut logs = Log(line(
        "tool.execution_start",
        400,
        json!({"toolCallId": "call_1", "toolName": "bash", "arguments": {"command": "sleep 30"}}),
    ));
    let (mut a, mut out) = (Adapter::new(), Vec::new());
    let mut p = hook("UserPromptSubmit", 100, json!({"prompt": "run it"}));
    p.transcript_path = Some(log);
    a.take(p, T0 + 100, &mut logs, &mut out);
    // Last seen at +200 ms, by the prompt's hook; the call began at +400 ms.
    a.abandon(SID, T0 + 200, &mut logs, &mut out);
    assert!(
        out.iter()
            .any(|r| matches!(&r.event, Event::Calling { call, .. } if call.id == "call_1")),
        "the call is kept: {out:?}"
    );
    assert!(
        matches!(out.last().map(|r| &r.event), Some(Event::Closed { at_ms }) if *at_ms == T0 + 400),
        "closed when the log last said anything: {out:?}"
    );
}

mod blocked;
mod resume;
