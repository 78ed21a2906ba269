//! Pi's model calls: `before_provider_request` sends one, the assistant message's first
//! `message_update` is its first streamed chunk, and its `message_end` ends it with Pi's own
//! times, tokens and stop reason (the same message Pi writes to its session file).

use std::borrow::Cow;

use super::payload::Message;
use super::Adapter;
use crate::protocol::{CallSent, Event, Record};
use crate::sources::command_hooks::engine::model_call::{
    error_text, Answer, Cache, ModelCall, Reasoning, Tokens,
};
use crate::sources::command_hooks::engine::records::record;

impl Adapter {
    pub(super) fn on_request(
        &mut self,
        sid: &str,
        at_ms: u64,
        model: String,
        provider: String,
        out: &mut Vec<Record<'static>>,
    ) {
        let turn = self.turn(sid, at_ms, out);
        // A request whose answer never came (Pi retries) is lost, not silently replaced.
        turn.unanswered(sid, at_ms, "Pi sent the request again", out);
        turn.start_model(None, model, provider_name(&provider), None, at_ms);
    }

    /// The response's headers: the message begins (a call whose request the extension did
    /// not see starts at the message's own `timestamp`).
    pub(super) fn on_response(
        &mut self,
        sid: &str,
        at_ms: u64,
        message: Option<&Message>,
        out: &mut Vec<Record<'static>>,
    ) {
        let turn = self.turn(sid, at_ms, out);
        if turn.models.is_empty() {
            turn.start_model(
                None,
                message.and_then(|m| m.model.clone()).unwrap_or_default(),
                provider_name(message.and_then(|m| m.provider.as_deref()).unwrap_or("")),
                None,
                message.and_then(|m| m.timestamp).unwrap_or(at_ms),
            );
        }
    }

    pub(super) fn on_first_chunk(&mut self, sid: &str, at_ms: u64, out: &mut Vec<Record<'static>>) {
        if let Some(start) = self.turn(sid, at_ms, out).models.last_mut() {
            start.first_token_ms.get_or_insert(at_ms);
        }
    }

    pub(super) fn on_message(
        &mut self,
        sid: &str,
        at_ms: u64,
        m: &Message,
        out: &mut Vec<Record<'static>>,
    ) {
        let turn = self.turn(sid, at_ms, out);
        let pending = turn.models.pop();
        // Pi's own times: when it began the request, and how long the request took.
        let started = m
            .timestamp
            .or(pending.as_ref().map(|p| p.started_ms))
            .unwrap_or(at_ms);
        let finished = m
            .duration_ms
            .map_or(at_ms, |d| started.saturating_add(d))
            .max(started);
        let model = m
            .model
            .clone()
            .or_else(|| pending.as_ref().map(|p| p.model.clone()))
            .unwrap_or_default();
        let provider = m.provider.as_deref().map_or_else(
            || {
                pending
                    .as_ref()
                    .map(|p| p.provider.clone().into_owned())
                    .unwrap_or_default()
            },
            |p| provider_name(p).into_owned(),
        );
        let first = pending.and_then(|p| p.first_token_ms);
        let call = call_sent(m, started, finished, model, provider, first);
        out.push(record(sid, Event::CallSent(call)));
    }
}

/// Message `m`, an assistant's, as the model call it answers: from `started` to `finished`
/// (Pi's own times), its first chunk at `first_token_ms` where it was seen. The live route's
/// and the import's alike.
pub(super) fn call_sent(
    m: &Message,
    started: u64,
    finished: u64,
    model: String,
    provider: String,
    first_token_ms: Option<u64>,
) -> CallSent<'static> {
    let u = m.usage.unwrap_or_default();
    let failed = matches!(m.stop_reason.as_deref(), Some("error" | "aborted"));
    let error = failed.then(|| {
        error_text(
            m.error_message
                .as_deref()
                .unwrap_or(match m.stop_reason.as_deref() {
                    Some("aborted") => "the request was aborted",
                    _ => "the request failed",
                }),
        )
    });
    ModelCall {
        id: m.response_id.clone(),
        model,
        provider: (!provider.is_empty()).then_some(Cow::Owned(provider)),
        started_ms: started,
        finished_ms: finished,
        first_token_ms,
        // Pi's terms are the protocol's: input without the cache, output with the reasoning.
        usage: Tokens {
            input: u.input.unwrap_or(0),
            output: u.output.unwrap_or(0),
            cache_read: u.cache_read.unwrap_or(0),
            cache_write: u.cache_write.unwrap_or(0),
            reasoning: u.reasoning.unwrap_or(0),
            ..Tokens::default()
        }
        .usage(Cache::Apart, Reasoning::Within),
        answer: Some(Answer {
            id: m.response_id.clone(),
            model: m.response_model.clone(),
            stop_reason: m.stop_reason.clone(),
            ..Answer::default()
        }),
        error: error.flatten(),
        ..ModelCall::default()
    }
    .call_sent()
}

/// `gen_ai.provider.name` for a Pi provider id: the GenAI conventions' name where there is
/// one, else Pi's own id (a provider of the user's own keeps its name).
pub(super) fn provider_name(id: &str) -> Cow<'static, str> {
    Cow::Borrowed(match id {
        "anthropic" => "anthropic",
        "openai" | "openai-codex" => "openai",
        "google" | "google-gemini-cli" => "gcp.gemini",
        "google-vertex" => "gcp.vertex_ai",
        "amazon-bedrock" => "aws.bedrock",
        "azure-openai-responses" => "azure.ai.openai",
        "mistral" => "mistral_ai",
        "groq" => "groq",
        "deepseek" => "deepseek",
        "xai" => "x_ai",
        "cohere" => "cohere",
        other => return Cow::Owned(other.to_string()),
    })
}
