//! The adapter on events shaped as opencode 1.18.33 sends them to its plugins, as
//! albedo-otel's plugin hands them on (docs/agents/opencode.md): two turns of one session, the
//! first with a one-second shell call, the second with a call opencode's permissions refused.

use serde_json::{json, Value};

use super::*;
use crate::sources::command_hooks::engine::files::NoTranscripts;
use crate::sources::command_hooks::engine::AgentRules;
use crate::assemble::Span;

const SID: &str = "ses_dcb32c634ffevJAHQkaOkSkBnm";
const T0: u64 = 1_796_182_194_000;

fn event(name: &str, ms: u64, properties: Value) -> Payload {
    serde_json::from_value(
        json!({"session_id": SID, "hook_event_name": name, "at_ms": T0 + ms,
        "properties": properties}),
    )
    .unwrap()
}

fn prompt(id: &str, ms: u64, text: &str) -> Payload {
    event(
        "chat.message",
        ms,
        json!({"message": {"id": id, "role": "user", "sessionID": SID, "time": {"created": T0 + ms},
            "agent": "build", "model": {"providerID": "mock", "modelID": "mock-model"}}, "text": text}),
    )
}

/// An assistant message: created at `created`, completed at `completed` with `tokens`.
fn message(id: &str, prompt: &str, created: u64, completed: Option<(u64, Value, &str)>) -> Payload {
    let mut info = json!({"id": id, "parentID": prompt, "role": "assistant", "mode": "build",
        "agent": "build", "modelID": "mock-model", "providerID": "mock", "sessionID": SID,
        "cost": 0, "time": {"created": T0 + created},
        "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}});
    let at = match completed {
        Some((done, tokens, finish)) => {
            info["time"]["completed"] = json!(T0 + done);
            info["tokens"] = tokens;
            info["finish"] = json!(finish);
            done
        }
        None => created,
    };
    event(
        "message.updated",
        at,
        json!({"sessionID": SID, "info": info}),
    )
}

fn step_start(message: &str, ms: u64) -> Payload {
    event(
        "message.part.updated",
        ms,
        json!({"sessionID": SID, "time": T0 + ms,
            "part": {"id": format!("prt_s{ms}"), "messageID": message, "type": "step-start"}}),
    )
}

fn tool(message: &str, call: &str, ms: u64, state: Value) -> Payload {
    event(
        "message.part.updated",
        ms,
        json!({"sessionID": SID, "time": T0 + ms, "part": {"id": format!("prt_{call}"),
            "messageID": message, "type": "tool", "tool": "bash", "callID": call, "state": state}}),
    )
}

fn tokens(input: u64, output: u64, reasoning: u64, read: u64) -> Value {
    json!({"total": input + output + reasoning + read, "input": input, "output": output,
        "reasoning": reasoning, "cache": {"read": read, "write": 0}})
}

/// The probe's two turns, as the plugin handed them on (times relative to `T0`).
fn session() -> Vec<Payload> {
    let sleep = json!({"command": "sleep 1", "description": "the test's command"});
    let push = json!({"command": "git push --force", "description": "the test's command"});
    vec![
        event(
            "session.created",
            648,
            json!({"sessionID": SID, "info": {"id": SID,
            "directory": "/tmp/probe/work", "time": {"created": T0 + 635}}}),
        ),
        prompt("msg_u1", 764, "run the command"),
        message("msg_a1", "msg_u1", 2_204, None),
        step_start("msg_a1", 2_518),
        tool(
            "msg_a1",
            "call_2",
            2_534,
            json!({"status": "running", "input": sleep, "time": {"start": T0 + 2_534}}),
        ),
        // opencode repeats a running call's part as its output grows.
        tool(
            "msg_a1",
            "call_2",
            4_192,
            json!({"status": "running", "input": sleep, "time": {"start": T0 + 2_534}}),
        ),
        tool(
            "msg_a1",
            "call_2",
            5_230,
            json!({"status": "completed", "input": sleep, "output": "(no output)",
            "metadata": {"exit": 0}, "time": {"start": T0 + 2_534, "end": T0 + 5_230}}),
        ),
        message(
            "msg_a1",
            "msg_u1",
            2_204,
            Some((5_240, tokens(1_817, 22, 0, 200), "tool-calls")),
        ),
        message(
            "msg_a1",
            "msg_u1",
            2_204,
            Some((5_260, tokens(1_817, 22, 0, 200), "tool-calls")),
        ),
        message("msg_a2", "msg_u1", 5_275, None),
        step_start("msg_a2", 5_367),
        message(
            "msg_a2",
            "msg_u1",
            5_275,
            Some((5_394, tokens(2_717, 18, 5, 300), "stop")),
        ),
        event("session.idle", 5_412, json!({"sessionID": SID})),
        // The second `run --session`, a new process: no `session.created`.
        prompt("msg_u2", 12_507, "DENY: push it"),
        message("msg_a3", "msg_u2", 13_822, None),
        tool(
            "msg_a3",
            "call_4",
            15_075,
            json!({"status": "running", "input": push, "time": {"start": T0 + 15_075}}),
        ),
        tool(
            "msg_a3",
            "call_4",
            15_324,
            json!({"status": "error", "input": push,
            "error": "The user has specified a rule which prevents you from using this specific tool call. Here are some of the relevant rules [...]",
            "time": {"start": T0 + 15_075, "end": T0 + 15_324}}),
        ),
        message(
            "msg_a3",
            "msg_u2",
            13_822,
            Some((15_356, tokens(3_617, 24, 0, 400), "tool-calls")),
        ),
        // The user message's summary, updated after the fact: not a model call.
        event(
            "message.updated",
            15_380,
            json!({"info": {"id": "msg_u2", "role": "user", "time": {"created": T0 + 12_507}}}),
        ),
        message("msg_a4", "msg_u2", 15_362, None),
        message(
            "msg_a4",
            "msg_u2",
            15_362,
            Some((15_497, tokens(4_517, 25, 0, 500), "stop")),
        ),
        event("session.idle", 15_508, json!({"sessionID": SID})),
    ]
}

fn run(payloads: &[Payload]) -> (Adapter, Vec<Record<'static>>) {
    let mut a = Adapter::new();
    let mut out = Vec::new();
    for p in payloads {
        a.take(Box::new(p.clone()), T0, &mut NoTranscripts, &mut out);
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
fn two_turns_with_their_own_times_tokens_and_a_refused_call() {
    let (adapter, records) = run(&session());
    assert_eq!(adapter.open_turns(), 0);
    let kinds: Vec<&str> = records.iter().map(|r| r.event.kind().as_str()).collect();
    assert_eq!(
        kinds,
        [
            "session",
            "prompted",
            "calling",
            "called",
            "call_sent",
            "call_sent",
            "turn_ended",
            "prompted",
            "calling",
            "called",
            "call_sent",
            "call_sent",
            "turn_ended"
        ]
    );
    let Event::Called(sleep) = &records[3].event else {
        panic!()
    };
    assert_eq!(
        (sleep.started_ms, sleep.finished_ms),
        (T0 + 2_534, T0 + 5_230)
    );
    assert_eq!(sleep.call.id, "call_2");
    assert!(!sleep.refused && !sleep.failed);
    let Event::CallSent(first) = &records[4].event else {
        panic!()
    };
    assert_eq!(
        (first.started_ms, first.first_token_ms, first.finished_ms),
        (T0 + 2_204, Some(T0 + 2_518), T0 + 5_240)
    );
    assert_eq!(first.request.provider.as_deref(), Some("mock"));
    assert_eq!(first.request.model, "mock-model");
    // opencode's output leaves the reasoning out; the protocol's counts it in.
    let Event::CallSent(second) = &records[5].event else {
        panic!()
    };
    assert_eq!(
        (
            second.usage.input_tokens,
            second.usage.cache_read_tokens,
            second.usage.output_tokens,
            second.usage.reasoning_tokens
        ),
        (2_717, 300, 23, Some(5))
    );
    let Event::Called(push) = &records[9].event else {
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
        roots.iter().all(|r| r.name == "invoke_agent opencode"),
        "{roots:?}"
    );
    let chats: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("chat "))
        .collect();
    assert_eq!(chats.len(), 4);
    // Input tokens count the cached ones, as the API billed them.
    let inputs: Vec<Option<i64>> = chats
        .iter()
        .map(|c| int(c, "gen_ai.usage.input_tokens"))
        .collect();
    assert_eq!(inputs, [Some(2_017), Some(3_017), Some(4_017), Some(5_017)]);
}

#[test]
fn an_agent_gone_mid_turn_leaves_its_calls_ended_and_the_turn_unfinished() {
    let mut events = session();
    events.truncate(5); // the sleep call is running
    let (mut adapter, mut records) = run(&events);
    assert!(!adapter.at_rest(SID));
    adapter.abandon(SID, T0 + 3_000, &mut NoTranscripts, &mut records);
    let spans = spans(&records);
    let root = spans.iter().find(|s| s.parent_span_id.is_none()).unwrap();
    assert!(root.attr("albedo.unfinished").is_some(), "{root:?}");
    assert!(spans.iter().any(|s| s.name == "execute_tool bash"));
}

#[test]
fn the_next_prompt_ends_a_turn_that_never_went_idle() {
    let mut events = session();
    events.retain(|p| !(p.hook_event_name == "session.idle" && p.at_ms == Some(T0 + 5_412)));
    let (_, records) = run(&events);
    let reasons: Vec<&str> = records
        .iter()
        .filter_map(|r| match &r.event {
            Event::TurnEnded { reason, .. } => reason.as_deref(),
            _ => None,
        })
        .collect();
    assert_eq!(reasons, ["interrupted", "end_turn"]);
    assert_eq!(
        spans(&records)
            .iter()
            .filter(|s| s.parent_span_id.is_none())
            .count(),
        2
    );
}

#[test]
fn late_updates_of_an_older_turn_make_nothing() {
    let mut events = session();
    // msg_a1 completed again, during the second turn.
    let late = message(
        "msg_a1",
        "msg_u1",
        2_204,
        Some((13_900, tokens(1_817, 22, 0, 200), "tool-calls")),
    );
    events.insert(15, late);
    let (_, records) = run(&events);
    let sent = records
        .iter()
        .filter(|r| r.event.kind().as_str() == "call_sent")
        .count();
    assert_eq!(sent, 4);
}

#[test]
fn the_plugin_hands_on_every_event_the_adapter_reads() {
    for e in HOOK_EVENTS {
        assert!(
            PLUGIN.contains(&format!("\"{e}\"")),
            "{e} is not in plugin.js"
        );
    }
    assert_eq!(PLUGIN.matches(PLUGIN_COMMAND_MARK).count(), 2);
}

#[test]
fn the_plugin_file_names_its_command_and_gives_it_back() {
    let command: Vec<String> = [
        "/opt/it's here/albedo-otel-hook",
        "--config",
        "/c d.toml",
        "--agent",
        "opencode",
    ]
    .map(String::from)
    .to_vec();
    let text = plugin(&command);
    assert_eq!(plugin_command(&text), Some(command));
    assert!(text.contains("export const AlbedoOtel"));
    assert_eq!(
        plugin_command("export const Mine = async () => ({});"),
        None
    );
}

#[cfg(feature = "store")]
mod history;
mod subagents;
