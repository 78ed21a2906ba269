//! The adapter on payloads and transcript lines shaped as Qwen Code 0.24.4 writes them
//! (docs/agents/qwen-code.md).

use serde_json::json;

use super::*;
use crate::sources::command_hooks::engine::AgentRules;
use crate::protocol::{CallSent, Called};
use crate::sources::command_hooks::engine::files::Transcripts;

const SID: &str = "2889d010-17de-4ea4-bcc4-2965603b41eb";
const T0: u64 = 1_796_312_474_000;

fn at(ms: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(T0 + ms);
    humantime::format_rfc3339_millis(t).to_string()
}

fn payload(event: &str, ms: u64, extra: serde_json::Value) -> Payload {
    let mut v = json!({"session_id": SID, "hook_event_name": event, "timestamp": at(ms),
        "cwd": "/work", "permission_mode": "yolo",
        "transcript_path": "/home/u/.qwen/projects/-work/chats/s.jsonl"});
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    serde_json::from_value(v).unwrap()
}

/// The transcript, as the CLI appends to it.
#[derive(Default)]
struct Transcript(String);

impl Transcript {
    /// A model call that ended at `end`, `n`-th of the scripted API's answers.
    fn call(&mut self, end: u64, n: u64, subagent: Option<&str>) {
        let mut e = json!({"event.name": "qwen-code.api_response", "event.timestamp": at(end),
            "response_id": format!("chatcmpl-{n}"), "model": "qwen3-coder-plus",
            "status_code": 200, "duration_ms": 400, "ttft_ms": 300,
            "input_token_count": 1000 * n + 17, "output_token_count": 20 + n,
            "cached_content_token_count": 100 * n, "thoughts_token_count": 0,
            "prompt_id": format!("{SID}########1"), "auth_type": "openai"});
        if let Some(a) = subagent {
            e["subagent_id"] = a.into();
            e["subagent_name"] = a.split('-').take(4).collect::<Vec<_>>().join("-").into();
        }
        let line = json!({"type": "system", "subtype": "ui_telemetry", "sessionId": SID,
            "systemPayload": {"uiEvent": e}});
        self.0.push_str(&format!("{line}\n"));
    }
}

impl Transcripts for Transcript {
    fn read_from(&mut self, _: &str, offset: u64) -> Vec<u8> {
        self.0.as_bytes()[(offset as usize).min(self.0.len())..].to_vec()
    }
}

fn sent<'a>(out: &'a [Record<'static>]) -> Vec<(&'a str, &'a CallSent<'static>)> {
    out.iter()
        .filter_map(|r| match &r.event {
            Event::CallSent(c) => Some((r.session.as_ref(), c)),
            _ => None,
        })
        .collect()
}

fn called<'a>(out: &'a [Record<'static>]) -> Vec<(&'a str, &'a Called<'static>)> {
    out.iter()
        .filter_map(|r| match &r.event {
            Event::Called(c) => Some((r.session.as_ref(), c)),
            _ => None,
        })
        .collect()
}

fn kinds(out: &[Record<'static>], session: &str) -> Vec<&'static str> {
    out.iter()
        .filter(|r| r.session == session)
        .map(|r| match r.event {
            Event::Session(_) => "session",
            Event::Prompted { .. } => "prompted",
            Event::Calling { .. } => "calling",
            Event::Called(_) => "called",
            Event::Stopping { .. } => "stopping",
            Event::CallSent(_) => "call_sent",
            Event::TurnEnded { .. } => "turn_ended",
            Event::Closed { .. } => "closed",
        })
        .collect()
}

/// One turn: a shell call, the continuation prompt Qwen sends with its result, the answer.
fn one_turn(a: &mut Adapter, t: &mut Transcript, out: &mut Vec<Record<'static>>) {
    let shell = json!({"command": "sleep 1; echo hi"});
    let pid = format!("{SID}########1");
    a.take(payload("SessionStart", 0, json!({"source": "startup"})), 0, t, out);
    let prompt = json!({"prompt": "<system-reminder>…</system-reminder>\n\nrun it",
        "submitted_prompt": "run it", "prompt_id": pid});
    a.take(payload("UserPromptSubmit", 100, prompt), 0, t, out);
    t.call(1_000, 1, None);
    let pre = json!({"tool_name": "run_shell_command", "tool_input": shell,
        "tool_use_id": "toolu_1", "tool_call_id": "call_1", "prompt_id": pid});
    a.take(payload("PreToolUse", 1_100, pre.clone()), 0, t, out);
    let mut post = pre;
    post["tool_response"] = json!({"llmContent": "hi", "returnDisplay": "hi"});
    a.take(payload("PostToolUse", 2_150, post), 0, t, out);
    let again = json!({"prompt": "", "prompt_id": pid});
    a.take(payload("UserPromptSubmit", 2_200, again), 0, t, out);
    t.call(2_700, 2, None);
    let stop =
        json!({"stop_hook_active": false, "last_assistant_message": "done", "prompt_id": pid});
    a.take(payload("Stop", 2_800, stop), 0, t, out);
}

#[test]
fn a_continuation_prompt_stays_in_its_turn_and_calls_come_from_the_transcript() {
    let (mut a, mut t, mut out) = (Adapter::new(1_000), Transcript::default(), Vec::new());
    one_turn(&mut a, &mut t, &mut out);
    a.tick(T0 + 3_900, &mut t, &mut out);
    assert_eq!(
        kinds(&out, SID),
        [
            "session",
            "prompted",
            "call_sent",
            "calling",
            "called",
            "call_sent",
            "stopping",
            "turn_ended"
        ]
    );
    let calls = sent(&out);
    let (_, first) = calls[0];
    // The input Qwen counts includes the cached tokens; the protocol's does not.
    assert_eq!(first.usage.input_tokens, 917);
    assert_eq!(first.usage.cache_read_tokens, 100);
    assert_eq!(first.usage.output_tokens, 21);
    assert_eq!(
        (first.started_ms, first.finished_ms),
        (T0 + 600, T0 + 1_000)
    );
    assert_eq!(first.first_token_ms, Some(T0 + 900));
    let ran = called(&out);
    assert_eq!(
        (ran[0].1.started_ms, ran[0].1.finished_ms),
        (T0 + 1_100, T0 + 2_150)
    );
    // The prompt is what the user typed, not the CLI's reminders.
    assert!(out.iter().any(|r| matches!(&r.event,
        Event::Prompted { text, .. } if text == "run it")));
    assert!(a.at_rest(SID));
}

#[test]
fn a_call_a_hook_denied_ends_refused_at_its_batch() {
    let (mut a, mut t, mut out) = (Adapter::new(1_000), Transcript::default(), Vec::new());
    let push = json!({"command": "git push --force origin main"});
    let prompt = json!({"prompt": "push", "submitted_prompt": "push", "prompt_id": "p1"});
    a.take(payload("UserPromptSubmit", 0, prompt), 0, &mut t, &mut out);
    let pre = json!({"tool_name": "run_shell_command", "tool_input": push,
        "tool_use_id": "toolu_9", "tool_call_id": "call_6", "prompt_id": "p1"});
    a.take(payload("PreToolUse", 500, pre), 0, &mut t, &mut out);
    // The batch names the call by the provider's id only.
    let batch = json!({"prompt_id": "p1", "tool_calls": [{"tool_name": "run_shell_command",
        "tool_input": push, "tool_use_id": "call_6", "tool_call_id": "call_6", "status": "error",
        "tool_response": {"error": "no force pushes", "error_type": "execution_denied",
            "execution_status": "not_started"}}]});
    a.take(payload("PostToolBatch", 530, batch), 0, &mut t, &mut out);
    let ended = called(&out);
    assert_eq!(ended.len(), 1);
    assert!(ended[0].1.refused && !ended[0].1.failed);
    assert_eq!(ended[0].1.call.id, "toolu_9");
}

#[test]
fn background_calls_after_the_stop_stay_in_the_turn_under_a_background_call() {
    let (mut a, mut t, mut out) = (Adapter::new(1_000), Transcript::default(), Vec::new());
    one_turn(&mut a, &mut t, &mut out);
    let memory = "managed-auto-memory-extractor-dd76589b";
    t.call(3_300, 3, Some(memory));
    // Its denied call fires a batch in the parent's session, with nothing pending.
    let batch = json!({"tool_calls": [{"tool_name": "run_shell_command",
        "tool_use_id": "call_9", "tool_call_id": "call_9", "status": "error"}]});
    a.take(payload("PostToolBatch", 3_350, batch), 0, &mut t, &mut out);
    t.call(3_500, 4, Some(memory));
    a.tick(T0 + 3_900, &mut t, &mut out);
    let child = crate::sources::command_hooks::engine::session_key::sub_agent(SID, memory);
    // One turn, ended once, at its Stop.
    let top = kinds(&out, SID);
    assert_eq!(
        top.iter().filter(|k| **k == "prompted").count(),
        1,
        "{top:?}"
    );
    assert_eq!(top.last(), Some(&"turn_ended"));
    assert!(out.iter().any(|r| r.session == SID
        && matches!(r.event, Event::TurnEnded { at_ms, .. } if at_ms == T0 + 2_800)));
    assert_eq!(
        kinds(&out, &child),
        [
            "session",
            "prompted",
            "call_sent",
            "call_sent",
            "turn_ended",
            "closed"
        ]
    );
    let info = out.iter().find_map(|r| match &r.event {
        Event::Session(i) if r.session == child => Some(i),
        _ => None,
    });
    let info = info.unwrap();
    assert_eq!(info.agent.as_deref(), Some("managed-auto-memory-extractor"));
    let parent = info.parent.as_ref().unwrap();
    assert_eq!(parent.session, SID);
    let bg = called(&out)
        .into_iter()
        .find(|(_, c)| c.call.id == parent.call)
        .unwrap();
    assert_eq!(bg.1.call.name, transcript::BACKGROUND_TOOL);
    assert_eq!(
        (bg.1.started_ms, bg.1.finished_ms),
        (T0 + 2_900, T0 + 3_500)
    );
}

#[test]
fn a_sub_agent_opens_under_the_agent_call_whose_id_it_carries() {
    let (mut a, mut t, mut out) = (Adapter::new(1_000), Transcript::default(), Vec::new());
    let prompt = json!({"prompt": "go", "submitted_prompt": "go", "prompt_id": "p1"});
    a.take(payload("UserPromptSubmit", 0, prompt), 0, &mut t, &mut out);
    let input = json!({"description": "d", "prompt": "run the command",
        "subagent_type": "general-purpose", "run_in_background": false});
    let pre = json!({"tool_name": "agent", "tool_input": input, "tool_use_id": "toolu_a",
        "tool_call_id": "call_1__qwen_dup_2"});
    a.take(payload("PreToolUse", 100, pre.clone()), 0, &mut t, &mut out);
    let agent = "general-purpose-call_1__qwen_dup_2";
    let start = json!({"agent_id": agent, "agent_type": "general-purpose"});
    a.take(payload("SubagentStart", 150, start), 0, &mut t, &mut out);
    t.call(600, 1, Some(agent));
    let shell = json!({"tool_name": "run_shell_command", "tool_input": {"command": "sleep 1"},
        "tool_use_id": "toolu_s", "tool_call_id": "call_2", "agent_id": agent});
    a.take(payload("PreToolUse", 700, shell.clone()), 0, &mut t, &mut out);
    a.take(payload("PostToolUse", 1_750, shell), 0, &mut t, &mut out);
    let stop = json!({"agent_id": agent, "agent_type": "general-purpose",
        "last_assistant_message": "done"});
    a.take(payload("SubagentStop", 1_900, stop), 0, &mut t, &mut out);
    let child = crate::sources::command_hooks::engine::session_key::sub_agent(SID, agent);
    assert_eq!(
        kinds(&out, &child),
        [
            "session",
            "prompted",
            "call_sent",
            "calling",
            "called",
            "stopping",
            "turn_ended",
            "closed"
        ]
    );
    let parent = out.iter().find_map(|r| match &r.event {
        Event::Session(i) if r.session == child => i.parent.clone(),
        _ => None,
    });
    assert_eq!(parent.unwrap().call, "toolu_a");
    assert!(a.at_rest(SID) || a.open_turns() == 1);
}

/// A sub-agent that stops with a call of its own still pending ends it in its own session, at
/// its stop, before it closes: not at its parent's turn end, after its session was closed.
#[test]
fn a_sub_agent_s_pending_call_ends_with_the_sub_agent() {
    let (mut a, mut t, mut out) = (Adapter::new(1_000), Transcript::default(), Vec::new());
    let prompt = json!({"prompt": "go", "submitted_prompt": "go", "prompt_id": "p1"});
    a.take(payload("UserPromptSubmit", 0, prompt), 0, &mut t, &mut out);
    let pre = json!({"tool_name": "agent", "tool_input": {"prompt": "look"},
        "tool_use_id": "toolu_a", "tool_call_id": "call_1"});
    a.take(payload("PreToolUse", 100, pre), 0, &mut t, &mut out);
    let agent = "general-purpose-call_1";
    let start = json!({"agent_id": agent, "agent_type": "general-purpose"});
    a.take(payload("SubagentStart", 150, start), 0, &mut t, &mut out);
    let shell = json!({"tool_name": "run_shell_command", "tool_input": {"command": "sleep 9"},
        "tool_use_id": "toolu_s", "tool_call_id": "call_2", "agent_id": agent});
    a.take(payload("PreToolUse", 700, shell), 0, &mut t, &mut out);
    let stop = json!({"agent_id": agent, "agent_type": "general-purpose"});
    a.take(payload("SubagentStop", 1_900, stop), 0, &mut t, &mut out);
    let child = crate::sources::command_hooks::engine::session_key::sub_agent(SID, agent);
    assert_eq!(
        kinds(&out, &child),
        [
            "session",
            "prompted",
            "calling",
            "called",
            "turn_ended",
            "closed"
        ]
    );
    let (session, shell) = called(&out)
        .into_iter()
        .find(|(_, c)| c.call.id == "toolu_s")
        .unwrap();
    assert_eq!(session, child);
    assert_eq!(
        (shell.started_ms, shell.finished_ms),
        (T0 + 700, T0 + 1_900)
    );
    assert!(shell.failed, "cut short by its sub-agent's end");
}

#[test]
fn a_killed_agent_is_closed_no_earlier_than_its_last_payload() {
    let (mut a, mut t, mut out) = (Adapter::new(1_000), Transcript::default(), Vec::new());
    let prompt = json!({"prompt": "wait", "submitted_prompt": "wait", "prompt_id": "p1"});
    a.take(payload("UserPromptSubmit", 0, prompt), 0, &mut t, &mut out);
    t.call(900, 1, None);
    let pre = json!({"tool_name": "run_shell_command", "tool_input": {"command": "sleep 30"},
        "tool_use_id": "toolu_1", "tool_call_id": "call_1"});
    a.take(payload("PreToolUse", 1_000, pre), 0, &mut t, &mut out);
    // The daemon last saw the agent alive before that payload's time.
    a.abandon(SID, T0 + 500, &mut t, &mut out);
    assert_eq!(
        kinds(&out, SID),
        ["session", "prompted", "call_sent", "calling", "closed"]
    );
    assert!(matches!(out.last().unwrap().event, Event::Closed { at_ms } if at_ms == T0 + 1_000));
    assert!(a.sessions.is_empty());
}

#[test]
fn a_call_the_cli_refused_before_any_hook_is_a_refused_call() {
    let (mut a, mut t, mut out) = (Adapter::new(1_000), Transcript::default(), Vec::new());
    let prompt = json!({"prompt": "wait", "submitted_prompt": "wait", "prompt_id": "p1"});
    a.take(payload("UserPromptSubmit", 0, prompt), 0, &mut t, &mut out);
    // Qwen 0.24.4 blocks a standalone `sleep 30` itself: no PreToolUse, only the batch.
    let batch = json!({"prompt_id": "p1", "tool_calls": [{"tool_name": "run_shell_command",
        "tool_input": {"command": "sleep 30"}, "tool_use_id": "call_3", "tool_call_id": "call_3",
        "status": "error", "tool_response": {"error": "Blocked: standalone sleep 30."}}]});
    a.take(payload("PostToolBatch", 900, batch.clone()), 0, &mut t, &mut out);
    // Twice is still one call.
    a.take(payload("PostToolBatch", 950, batch), 0, &mut t, &mut out);
    let ended = called(&out);
    assert_eq!(ended.len(), 1);
    assert!(ended[0].1.refused);
    assert_eq!(ended[0].1.call.name, "run_shell_command");
}

/// Issue 37: signed in with a Gemini key, Qwen's `output_token_count` is Gemini's
/// `candidatesTokenCount`, which leaves the thoughts out (`promptTokenCount` 5120,
/// `candidatesTokenCount` 48, `cachedContentTokenCount` 4096, `thoughtsTokenCount` 310,
/// `totalTokenCount` 5478: the shape Qwen 0.24.4's `ApiResponseEvent` makes of it, read from
/// the package, not recorded from a run). The call's output holds them, as the protocol
/// counts it; through OpenAI's API it already did.
#[test]
fn signed_in_with_gemini_the_output_gets_its_thoughts() {
    let (mut a, mut t, mut out) = (Adapter::new(1_000), Transcript::default(), Vec::new());
    let pid = format!("{SID}########1");
    a.take(payload("SessionStart", 0, json!({"source": "startup"})), 0, &mut t, &mut out);
    let prompt = json!({"prompt": "why", "submitted_prompt": "why", "prompt_id": pid});
    a.take(payload("UserPromptSubmit", 100, prompt), 0, &mut t, &mut out);
    for (n, auth, output) in [(1, "gemini", 48), (2, "openai", 358)] {
        let e = json!({"event.name": "qwen-code.api_response", "event.timestamp": at(900 + n),
            "response_id": format!("r{n}"), "model": "gemini-2.5-pro", "status_code": 200,
            "duration_ms": 400, "input_token_count": 5120, "output_token_count": output,
            "cached_content_token_count": 4096, "thoughts_token_count": 310,
            "total_token_count": 5478, "prompt_id": pid, "auth_type": auth});
        let line = json!({"type": "system", "subtype": "ui_telemetry", "sessionId": SID,
            "systemPayload": {"uiEvent": e}});
        t.0.push_str(&format!("{line}\n"));
    }
    let stop = json!({"stop_hook_active": false, "last_assistant_message": "so", "prompt_id": pid});
    a.take(payload("Stop", 1_000, stop), 0, &mut t, &mut out);
    let calls = sent(&out);
    assert_eq!(calls.len(), 2, "{out:?}");
    for (_, c) in calls {
        let u = c.usage;
        assert_eq!(
            (
                u.input_tokens,
                u.cache_read_tokens,
                u.output_tokens,
                u.reasoning_tokens
            ),
            (1024, 4096, 358, Some(310)),
            "{:?}",
            c.request.provider
        );
    }
}
