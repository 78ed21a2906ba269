//! Cline's payloads and messages file, as the real CLI wrote them (docs/agents/cline.md),
//! to records.

use super::*;
use crate::protocol::Usage;
use crate::sources::command_hooks::engine::AgentRules;

/// The messages file, as `files` reads it.
struct File(String);

impl Transcripts for File {
    fn read_from(&mut self, _: &str, offset: u64) -> Vec<u8> {
        self.0.as_bytes()[(offset as usize).min(self.0.len())..].to_vec()
    }
}

fn payload(name: &str, at: &str, extra: serde_json::Value) -> Payload {
    let mut p = serde_json::json!({"timestamp": at, "sessionContext": {"rootSessionId": "s1"},
        "agent_id": "a1", "parent_agent_id": null, "hookName": name, "workspaceRoots": ["/w"]});
    p.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let env = |k: &str| (k == "HOME").then(|| "/h".to_string());
    let journaled = journaled(&p.to_string(), &env).unwrap();
    serde_json::from_str(&journaled).unwrap()
}

const MESSAGES: &str = r#"{
  "version": 1,
  "updated_at": "2026-12-03T15:49:09.808Z",
  "agent": "lead",
  "sessionId": "s1",
  "messages": [
    {
      "id": "u1",
      "role": "user",
      "content": [{"type": "text", "text": "<user_input mode=\"act\">run it</user_input>"}],
      "ts": 1796312947308
    },
    {
      "id": "msg_a",
      "role": "assistant",
      "content": [{"type": "tool_use", "id": "call_1", "name": "run_commands", "input": {"commands": ["sleep 1"]}}],
      "ts": 1796312947350,
      "modelInfo": {"id": "test-model", "provider": "openai-compatible"},
      "metrics": {"inputTokens": 1017, "outputTokens": 21, "cacheReadTokens": 100, "cacheWriteTokens": 0}
    },
    {
      "id": "r1",
      "role": "user",
      "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "hi"}],
      "ts": 1796312948409
    },
    {
      "id": "msg_b",
      "role": "assistant",
      "content": [{"type": "text", "text": "The command ran."}],
      "ts": 1796312948452,
      "modelInfo": {"id": "test-model", "provider": "openai-compatible"},
      "metrics": {"inputTokens": 2017, "outputTokens": 22, "cacheReadTokens": 200, "cacheWriteTokens": 0}
    }
  ],
  "system_prompt": "You are Cline."
}"#;

#[test]
fn a_turn_has_its_tool_call_and_its_model_calls_from_the_messages_file() {
    let mut a = Adapter::new();
    let mut files = File(MESSAGES.to_string());
    let mut out = Vec::new();
    let call = serde_json::json!({"id": "call_1", "name": "run_commands", "input": {"commands": ["sleep 1"]}});
    let mut result = call.clone();
    result["output"] = serde_json::json!([{"result": "hi\n", "success": true}]);
    result["startedAt"] = "2026-12-03T15:49:07.390Z".into();
    result["endedAt"] = "2026-12-03T15:49:08.405Z".into();
    for p in [
        payload(
            "agent_start",
            "2026-12-03T15:49:07.308Z",
            serde_json::json!({}),
        ),
        payload(
            "tool_call",
            "2026-12-03T15:49:07.352Z",
            serde_json::json!({"tool_call": call}),
        ),
        payload(
            "tool_result",
            "2026-12-03T15:49:08.406Z",
            serde_json::json!({"tool_result": result}),
        ),
        payload(
            "agent_end",
            "2026-12-03T15:49:08.461Z",
            serde_json::json!({}),
        ),
    ] {
        assert_eq!(
            p.messages_path.as_deref(),
            Some("/h/.cline/data/sessions/s1/s1.messages.json")
        );
        AgentRules::take(&mut a, p, 0, &mut files, &mut out);
    }
    assert_eq!(a.open_turns(), 1, "the end waits for the messages file");
    a.tick(1796312948461 + READ_GRACE_MS, &mut files, &mut out);
    assert_eq!(a.open_turns(), 0);
    let called = out.iter().find_map(|r| match &r.event {
        Event::Called(c) => Some(c),
        _ => None,
    });
    let called = called.expect("the tool call");
    assert_eq!(
        (called.started_ms, called.finished_ms),
        (1796312947390, 1796312948405)
    );
    let calls: Vec<(u64, u64, Usage)> = out
        .iter()
        .filter_map(|r| match &r.event {
            Event::CallSent(c) => Some((c.started_ms, c.finished_ms, c.usage)),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!((calls[0].0, calls[0].1), (1796312947308, 1796312947350));
    assert_eq!((calls[1].0, calls[1].1), (1796312948409, 1796312948452));
    assert_eq!(
        (calls[0].2.input_tokens, calls[0].2.cache_read_tokens),
        (917, 100)
    );
    assert_eq!(calls[1].2.total_input(), 2017);
    assert!(matches!(out.last().unwrap().event, Event::TurnEnded { .. }));
}

#[test]
fn a_call_a_hook_cancelled_is_refused_and_the_turn_ends_with_the_session() {
    let mut a = Adapter::new();
    let mut files = File(String::new());
    let mut out = Vec::new();
    let call = serde_json::json!({"id": "call_3", "name": "run_commands", "input": {"commands": ["git push --force"]}});
    for p in [
        payload(
            "agent_start",
            "2026-12-03T15:50:22.668Z",
            serde_json::json!({}),
        ),
        payload(
            "tool_call",
            "2026-12-03T15:50:22.700Z",
            serde_json::json!({"tool_call": call}),
        ),
        payload(
            "session_shutdown",
            "2026-12-03T15:50:22.749Z",
            serde_json::json!({}),
        ),
    ] {
        AgentRules::take(&mut a, p, 0, &mut files, &mut out);
    }
    a.tick(1796313022749 + READ_GRACE_MS, &mut files, &mut out);
    let refused = out
        .iter()
        .any(|r| matches!(&r.event, Event::Called(c) if c.refused));
    assert!(refused, "{out:?}");
    assert!(matches!(out.last().unwrap().event, Event::Closed { .. }));
    assert_eq!(a.kept(), 0);
}

#[test]
fn a_read_goes_on_from_the_last_message_taken_and_a_rewritten_file_from_its_start() {
    let mut files = File(MESSAGES.to_string());
    let first = models::read("/m", None, None, 0, 1796312947400, &mut files);
    assert_eq!(first.calls.len(), 1);
    let rest = models::read(
        "/m",
        Some(&first.cursor),
        first.last_ts,
        0,
        u64::MAX,
        &mut files,
    );
    assert_eq!(rest.calls.len(), 1);
    assert_eq!(rest.calls[0].started_ms, 1796312948409);
    // The same offset in another file: read from its start, the turn's earlier calls left out.
    let mut other = File(MESSAGES.replace("\n    ", "\n      "));
    let again = models::read(
        "/m",
        Some(&first.cursor),
        first.last_ts,
        1796312948000,
        u64::MAX,
        &mut other,
    );
    assert_eq!(again.calls.len(), 1);
}

/// Issue 37: under Anthropic's provider Cline's `inputTokens` holds the cache writes as well as
/// the reads (the AI SDK's Anthropic usage: `input_tokens` 12, `cache_creation_input_tokens`
/// 3000, `cache_read_input_tokens` 9000, `output_tokens` 150, as Cline 3.0.65 writes it).
/// Neither is counted twice.
#[test]
fn under_anthropic_the_input_holds_cache_writes_too_and_they_are_taken_out() {
    let anthropic = MESSAGES
        .replace(
            r#""metrics": {"inputTokens": 1017, "outputTokens": 21, "cacheReadTokens": 100, "cacheWriteTokens": 0}"#,
            r#""metrics": {"inputTokens": 12012, "outputTokens": 150, "cacheReadTokens": 9000, "cacheWriteTokens": 3000}"#,
        )
        .replace(
            r#"{"id": "test-model", "provider": "openai-compatible"}"#,
            r#"{"id": "claude-sonnet-4-5", "provider": "anthropic"}"#,
        );
    let mut files = File(anthropic);
    let read = models::read("/m", None, None, 0, u64::MAX, &mut files);
    let u = read.calls[0].usage;
    assert_eq!(
        (
            u.input_tokens,
            u.cache_read_tokens,
            u.cache_write_tokens,
            u.output_tokens
        ),
        (12, 9000, 3000, 150)
    );
    assert_eq!(u.total_input(), 12012, "as Anthropic billed it");
    assert_eq!(read.calls[1].usage.total_input(), 2017);
}

/// Messages files by path, as `files` reads them (a missing one reads empty).
struct Files(Vec<(String, String)>);

impl Transcripts for Files {
    fn read_from(&mut self, path: &str, offset: u64) -> Vec<u8> {
        let text = self.0.iter().find(|(p, _)| p == path).map(|f| f.1.as_str());
        let text = text.unwrap_or_default();
        text.as_bytes()[(offset as usize).min(text.len())..].to_vec()
    }
}

/// A messages file: `(role, ts, text or tool call, tokens in and out)` a message.
fn file(agent: &str, messages: &[(&str, u64, &str, (u64, u64))]) -> String {
    let messages: Vec<serde_json::Value> = messages
        .iter()
        .enumerate()
        .map(|(i, (role, ts, text, (input, output)))| {
            let mut m = serde_json::json!({"id": format!("m{i}"), "role": role, "ts": ts,
                "content": [{"type": "text", "text": text}]});
            if *role == "assistant" {
                m["modelInfo"] =
                    serde_json::json!({"id": "gpt-4.1", "provider": "openai-compatible"});
                m["metrics"] = serde_json::json!({"inputTokens": input, "outputTokens": output,
                    "cacheReadTokens": 0, "cacheWriteTokens": 0});
            }
            m
        })
        .collect();
    let f = serde_json::json!({"version": 1, "agent": agent, "sessionId": "s1",
        "origin": {"source": "cli", "mode": agent}, "messages": messages});
    serde_json::to_string_pretty(&f).unwrap()
}

/// The spans right under `parent`.
fn under<'a>(
    spans: &'a [crate::assemble::Span],
    parent: &crate::assemble::Span,
) -> Vec<&'a crate::assemble::Span> {
    spans
        .iter()
        .filter(|s| s.parent_span_id == Some(parent.span_id) && s.trace_id == parent.trace_id)
        .collect()
}

mod history;
mod subagents;
