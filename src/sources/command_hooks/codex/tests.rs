//! The adapter on payloads shaped as Codex CLI 0.171.0 sends them.

use serde_json::json;

use super::*;
use crate::sources::command_hooks::engine::AgentRules;
use crate::sources::command_hooks::engine::files::NoTranscripts;

const SID: &str = "01a23350-4fdb-7bd1-93aa-7a10c99c8824";

fn payload(event: &str, extra: serde_json::Value) -> Payload {
    let mut v = json!({"session_id": SID, "hook_event_name": event, "cwd": "/work/ws", "model": "gpt-5",
        "transcript_path": "/home/u/.codex/sessions/2026/12/01/rollout-x.jsonl"});
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    Payload::parse(&v.to_string()).unwrap()
}

fn model(event: &str, request: &str, extra: serde_json::Value) -> Payload {
    let mut v = json!({"kind": "sampling", "request_id": request, "attempt_number": 1, "thread_id": SID, "turn_id": "t1"});
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    payload(event, v)
}

#[test]
fn a_turn_gets_its_model_calls_from_the_model_hooks_and_its_calls_from_claude_codes_pairing() {
    let mut a = Adapter::new(1_000);
    let mut out = Vec::new();
    let usage = json!({"token_usage": {"input_tokens": 1001, "cached_input_tokens": 201, "cache_write_input_tokens": 0,
        "output_tokens": 51, "reasoning_output_tokens": 11, "total_tokens": 1052}, "status": "completed", "response_id": "resp_1"});
    for (at, p) in [
        (100, payload("SessionStart", json!({"source": "startup"}))),
        (
            200,
            payload(
                "UserPromptSubmit",
                json!({"turn_id": "t1", "prompt": "run the command"}),
            ),
        ),
        (300, model("PreModelRequest", "r1", json!({}))),
        (
            500,
            payload(
                "PreToolUse",
                json!({"tool_name": "Bash", "tool_input": {"command": "sleep 1"}, "tool_use_id": "call_1"}),
            ),
        ),
        (520, model("PostModelRequest", "r1", usage.clone())),
        (
            1_600,
            payload(
                "PostToolUse",
                json!({"tool_name": "Bash", "tool_input": {"command": "sleep 1"}, "tool_response": "", "tool_use_id": "call_1"}),
            ),
        ),
        (1_700, model("PreModelRequest", "r2", json!({}))),
        (
            1_900,
            model(
                "PostModelRequest",
                "r2",
                json!({"status": "failed", "error": "bad gateway", "token_usage": null}),
            ),
        ),
        (
            2_000,
            payload("Stop", json!({"last_assistant_message": "done"})),
        ),
        (2_100, payload("SessionEnd", json!({"reason": "other"}))),
    ] {
        a.take(p, at, &mut NoTranscripts, &mut out);
    }
    let kinds: Vec<&str> = out.iter().map(|r| r.event.kind().as_str()).collect();
    assert_eq!(
        kinds,
        [
            "session",
            "prompted",
            "calling",
            "call_sent",
            "called",
            "call_sent",
            "stopping",
            "turn_ended",
            "closed"
        ]
    );
    let Event::Session(s) = &out[0].event else {
        panic!()
    };
    assert_eq!(s.agent.as_deref(), Some("codex"));
    let Event::CallSent(first) = &out[3].event else {
        panic!()
    };
    assert_eq!((first.started_ms, first.finished_ms), (300, 520));
    assert_eq!(first.request.model, "gpt-5");
    assert_eq!(first.request.provider.as_deref(), Some("openai"));
    assert_eq!(
        (
            first.usage.input_tokens,
            first.usage.cache_read_tokens,
            first.usage.output_tokens,
            first.usage.reasoning_tokens
        ),
        (800, 201, 51, Some(11))
    );
    let Event::CallSent(failed) = &out[5].event else {
        panic!()
    };
    assert!(failed.error.is_some() && failed.response.is_none());
    let Event::Called(call) = &out[4].event else {
        panic!()
    };
    assert_eq!((call.started_ms, call.finished_ms), (500, 1_600));
}

#[test]
fn a_call_another_hook_denied_ends_refused_when_the_model_is_asked_again() {
    let mut a = Adapter::new(1_000);
    let mut out = Vec::new();
    for (at, p) in [
        (
            100,
            payload(
                "UserPromptSubmit",
                json!({"turn_id": "t1", "prompt": "push"}),
            ),
        ),
        (
            200,
            payload(
                "PreToolUse",
                json!({"tool_name": "Bash", "tool_input": {"command": "git push --force"}, "tool_use_id": "call_1"}),
            ),
        ),
        (300, model("PreModelRequest", "r2", json!({}))),
    ] {
        a.take(p, at, &mut NoTranscripts, &mut out);
    }
    let refused: Vec<_> = out
        .iter()
        .filter_map(|r| match &r.event {
            Event::Called(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(refused.len(), 1);
    assert!(refused[0].refused);
    assert_eq!((refused[0].started_ms, refused[0].finished_ms), (200, 300));
}

#[test]
fn a_sub_agents_prompt_is_not_the_parents_next_turn_and_an_interrupt_ends_what_ran() {
    let mut a = Adapter::new(1_000);
    let mut out = Vec::new();
    for (at, p) in [
        (
            100,
            payload(
                "UserPromptSubmit",
                json!({"turn_id": "t1", "prompt": "spawn a helper"}),
            ),
        ),
        (
            200,
            payload(
                "SubagentStart",
                json!({"turn_id": "c1", "agent_id": "child", "agent_type": "default"}),
            ),
        ),
        (
            300,
            payload(
                "UserPromptSubmit",
                json!({"turn_id": "c1", "prompt": "SUBTASK", "agent_id": "child"}),
            ),
        ),
        (400, model("PreModelRequest", "r1", json!({}))),
        (
            500,
            payload(
                "PreToolUse",
                json!({"tool_name": "Bash", "tool_input": {"command": "sleep 9"}, "tool_use_id": "call_9"}),
            ),
        ),
        (600, payload("Interrupt", json!({"turn_id": "t1"}))),
    ] {
        a.take(p, at, &mut NoTranscripts, &mut out);
    }
    // The parent has one turn; the sub-agent's opened its own session.
    let prompts = out
        .iter()
        .filter(|r| r.session == SID && matches!(r.event, Event::Prompted { .. }))
        .count();
    assert_eq!(prompts, 1, "{out:?}");
    let failed = out.iter().find_map(|r| match &r.event {
        Event::Called(c) => Some(c),
        _ => None,
    });
    assert!(
        failed.is_some_and(|c| c.failed && !c.refused && c.finished_ms == 600),
        "{out:?}"
    );
    assert!(out.iter().any(
        |r| matches!(&r.event, Event::CallSent(c) if c.error.is_some() && c.finished_ms == 600)
    ));
}

/// `spawn_agent`'s `PostToolUse` and the sub-agent's `SubagentStart` run at once: either can
/// reach the journal first.
#[test]
fn a_sub_agent_opens_under_its_spawn_agent_call_whichever_hook_comes_first() {
    // Codex 0.171.0 hands `spawn_agent`'s answer on as the model got it: a JSON text.
    let answer = json!({"agent_id": "019b-child", "nickname": "Faraday"}).to_string();
    let spawn = json!({"tool_name": "spawn_agent", "tool_use_id": "call_1",
        "tool_input": {"message": "SUBTASK list the files", "agent_type": "default"}});
    let mut done = spawn.clone();
    done["tool_response"] = json!(answer);
    let start = json!({"turn_id": "c1", "agent_id": "019b-child", "agent_type": "default"});
    for answer_first in [true, false] {
        let mut a = Adapter::new(1_000);
        let mut out = Vec::new();
        let mut hooks = vec![
            (
                100,
                payload(
                    "UserPromptSubmit",
                    json!({"turn_id": "t1", "prompt": "DELEGATE"}),
                ),
            ),
            // An earlier call still running: the oldest open call is not the one that
            // started the sub-agent.
            (
                150,
                payload(
                    "PreToolUse",
                    json!({"tool_name": "Bash", "tool_input": {"command": "sleep 9"}, "tool_use_id": "call_0"}),
                ),
            ),
            (200, payload("PreToolUse", spawn.clone())),
            (300, payload("PostToolUse", done.clone())),
            (400, payload("SubagentStart", start.clone())),
        ];
        if !answer_first {
            hooks.swap(3, 4);
        }
        for (at, p) in hooks {
            a.take(p, at, &mut NoTranscripts, &mut out);
        }
        let child = out
            .iter()
            .find_map(|r| match &r.event {
                Event::Session(s) if r.session != SID => Some((r.session.clone(), s)),
                _ => None,
            })
            .expect("the sub-agent's session opens");
        assert_eq!(child.0, format!("{SID}/agent-019b-child"));
        let parent = child.1.parent.as_ref().expect("it has a parent call");
        assert_eq!(
            (&*parent.session, &*parent.call),
            (SID, "call_1"),
            "answer first: {answer_first}"
        );
        let prompt = out.iter().find_map(|r| match &r.event {
            Event::Prompted { text, .. } if r.session == child.0 => Some(text.to_string()),
            _ => None,
        });
        assert_eq!(prompt.as_deref(), Some("SUBTASK list the files"));
    }
}

/// A `spawn_agent` call another hook denied gets no answer: once its thread asks its model
/// again, a later sub-agent whose `SubagentStart` comes before its own call's answer does not
/// take the denied call.
#[test]
fn a_denied_spawn_agent_call_is_not_taken_by_a_later_sub_agent() {
    let spawn = |id: &str| {
        json!({"tool_name": "spawn_agent", "tool_use_id": id,
            "tool_input": {"message": format!("SUBTASK {id}"), "agent_type": "default"}})
    };
    let mut a = Adapter::new(1_000);
    let mut out = Vec::new();
    for (at, p) in [
        (
            100,
            payload(
                "UserPromptSubmit",
                json!({"turn_id": "t1", "prompt": "DELEGATE"}),
            ),
        ),
        (200, payload("PreToolUse", spawn("call_1"))),
        (300, model("PreModelRequest", "r2", json!({}))),
        (400, payload("PreToolUse", spawn("call_2"))),
        (
            500,
            payload(
                "SubagentStart",
                json!({"turn_id": "c1", "agent_id": "kid", "agent_type": "default"}),
            ),
        ),
    ] {
        a.take(p, at, &mut NoTranscripts, &mut out);
    }
    let parent = out.iter().find_map(|r| match &r.event {
        Event::Session(s) if r.session != SID => s.parent.clone(),
        _ => None,
    });
    assert_eq!(
        parent.map(|p| p.call.to_string()).as_deref(),
        Some("call_2"),
        "{out:?}"
    );
}

/// A `Stop` that another hook blocks is followed by a model request, not always a tool call:
/// the turn goes on, and one turn ends at the last `Stop`.
#[test]
fn a_blocked_stop_continued_by_a_model_request_stays_one_turn() {
    let mut a = Adapter::new(1_000);
    let mut out = Vec::new();
    let usage = json!({"token_usage": {"input_tokens": 10, "cached_input_tokens": 0, "cache_write_input_tokens": 0,
        "output_tokens": 5, "reasoning_output_tokens": 0, "total_tokens": 15}, "status": "completed"});
    a.take(payload("UserPromptSubmit", json!({"prompt": "go"})), 100, &mut NoTranscripts, &mut out);
    a.take(model("PreModelRequest", "r1", json!({})), 200, &mut NoTranscripts, &mut out);
    a.take(model("PostModelRequest", "r1", usage.clone()), 300, &mut NoTranscripts, &mut out);
    a.take(payload("Stop", json!({"last_assistant_message": "first"})), 400, &mut NoTranscripts, &mut out);
    a.take(model("PreModelRequest", "r2", json!({})), 500, &mut NoTranscripts, &mut out);
    // Long past the grace of the first Stop: it was held, nothing ends.
    AgentRules::tick(&mut a, 5_000, &mut NoTranscripts, &mut out);
    a.take(model("PostModelRequest", "r2", usage), 5_100, &mut NoTranscripts, &mut out);
    a.take(payload("Stop", json!({"last_assistant_message": "second"})), 5_200, &mut NoTranscripts, &mut out);
    AgentRules::tick(&mut a, 20_000, &mut NoTranscripts, &mut out);
    let ends: Vec<u64> = out
        .iter()
        .filter_map(|r| match r.event {
            crate::protocol::Event::TurnEnded { at_ms, .. } => Some(at_ms),
            _ => None,
        })
        .collect();
    assert_eq!(ends, [5_200], "one turn, ended at the last Stop");
    let prompts = out
        .iter()
        .filter(|r| r.event.kind().as_str() == "prompted")
        .count();
    assert_eq!(prompts, 1);
}
