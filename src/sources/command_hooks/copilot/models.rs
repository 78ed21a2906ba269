//! Copilot's model calls as its session log records them: a `session.usage_record` per call
//! (timed at its end, with its duration and tokens), and the `assistant.message` that is its
//! answer.

use std::borrow::Cow;

use super::payload::UsageRecord;
use crate::protocol::{CallSent, Json};
use crate::sources::command_hooks::engine::model_call::{Answer, Cache, ModelCall, Reasoning, Tokens};

/// An `assistant.message` as an OpenAI chat message: its text and the calls it asked for.
/// Exported only with message capture on, like every message.
pub(super) fn answer_of(data: &serde_json::Value) -> Option<Json<'static>> {
    let calls: Vec<serde_json::Value> = data["toolRequests"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            serde_json::json!({"id": t["toolCallId"], "type": "function", "function": {
                "name": t["name"], "arguments": t["arguments"].to_string()}})
        })
        .collect();
    let content = data["content"].as_str().filter(|c| !c.is_empty());
    if content.is_none() && calls.is_empty() {
        return None;
    }
    let mut message = serde_json::json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        message["tool_calls"] = serde_json::Value::Array(calls);
    }
    Json::of(&message).ok()
}

pub(super) fn call_sent(u: UsageRecord, end_ms: u64) -> CallSent<'static> {
    let started = end_ms.saturating_sub(u.duration.unwrap_or(0.0).max(0.0) as u64);
    let model = u.model.unwrap_or_default();
    let provider = match u.provider_type.as_deref() {
        Some("anthropic") => "anthropic",
        Some("azure") => "azure.ai.openai",
        Some("openai") => "openai",
        _ => "github_copilot",
    };
    ModelCall {
        id: u.api_call_id.clone(),
        model,
        provider: Some(Cow::Borrowed(provider)),
        started_ms: started,
        finished_ms: end_ms,
        first_token_ms: u
            .time_to_first_token_ms
            .map(|t| started.saturating_add(t.max(0.0) as u64)),
        // Copilot counts the cache reads inside the input, as OpenAI's API does.
        usage: Tokens {
            input: u.input_tokens.unwrap_or(0),
            cache_read: u.cache_read_tokens.unwrap_or(0),
            output: u.output_tokens.unwrap_or(0),
            cache_write: u.cache_write_tokens.unwrap_or(0),
            ..Tokens::default()
        }
        .usage(Cache::ReadsWithin, Reasoning::Within),
        answer: Some(Answer {
            id: u.api_call_id,
            stop_reason: u.finish_reason,
            ..Answer::default()
        }),
        ..ModelCall::default()
    }
    .call_sent()
}
