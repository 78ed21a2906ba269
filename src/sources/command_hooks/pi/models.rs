//! Pi's model calls: `before_provider_request` sends one, the assistant message's first
//! `message_update` is its first streamed chunk, and its `message_end` ends it with Pi's own
//! times, tokens and stop reason (the same message Pi writes to its session file).

use std::borrow::Cow;

use super::payload::Message;
use super::{Adapter, ModelStart, Turn};
use crate::protocol::{CallSent, Event, Json, Record, Request, Response, Usage};
use crate::sources::command_hooks::records::{record, Unanswered};

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
        unanswered(sid, turn, at_ms, "Pi sent the request again", out);
        turn.model = Some(ModelStart {
            at_ms,
            model,
            provider: provider_name(&provider).to_string(),
            first_chunk_ms: None,
        });
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
        turn.model.get_or_insert_with(|| ModelStart {
            at_ms: message.and_then(|m| m.timestamp).unwrap_or(at_ms),
            model: message.and_then(|m| m.model.clone()).unwrap_or_default(),
            provider: provider_name(message.and_then(|m| m.provider.as_deref()).unwrap_or(""))
                .to_string(),
            first_chunk_ms: None,
        });
    }

    pub(super) fn on_first_chunk(&mut self, sid: &str, at_ms: u64, out: &mut Vec<Record<'static>>) {
        if let Some(start) = self.turn(sid, at_ms, out).model.as_mut() {
            start.first_chunk_ms.get_or_insert(at_ms);
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
        let pending = turn.model.take();
        // Pi's own times: when it began the request, and how long the request took.
        let started = m
            .timestamp
            .or(pending.as_ref().map(|p| p.at_ms))
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
                    .map(|p| p.provider.clone())
                    .unwrap_or_default()
            },
            |p| provider_name(p).to_string(),
        );
        let u = m.usage.unwrap_or_default();
        let reasoning = u.reasoning.unwrap_or(0);
        let failed = matches!(m.stop_reason.as_deref(), Some("error" | "aborted"));
        let error = failed.then(|| {
            let why = m
                .error_message
                .as_deref()
                .unwrap_or(match m.stop_reason.as_deref() {
                    Some("aborted") => "the request was aborted",
                    _ => "the request failed",
                });
            Json::of(why).ok()
        });
        out.push(record(
            sid,
            Event::CallSent(CallSent {
                id: m.response_id.clone().map(Cow::Owned),
                request: Request {
                    model: Cow::Owned(model.clone()),
                    provider: (!provider.is_empty()).then_some(Cow::Owned(provider)),
                    max_tokens: None,
                    messages: None,
                    system: None,
                },
                response: Some(Response {
                    id: m.response_id.clone().map(Cow::Owned),
                    model: Some(Cow::Owned(m.response_model.clone().unwrap_or(model))),
                    stop_reason: m.stop_reason.clone().map(Cow::Owned),
                    content: None,
                }),
                // Pi's terms are the protocol's: input without the cache, output with the
                // reasoning.
                usage: Usage {
                    input_tokens: u.input.unwrap_or(0),
                    output_tokens: u.output.unwrap_or(0),
                    cache_read_tokens: u.cache_read.unwrap_or(0),
                    cache_write_tokens: u.cache_write.unwrap_or(0),
                    reasoning_tokens: (reasoning > 0).then_some(reasoning),
                },
                started_ms: started,
                finished_ms: finished,
                first_token_ms: pending
                    .and_then(|p| p.first_chunk_ms)
                    .map(|f| f.clamp(started, finished)),
                error: error.flatten(),
            }),
        ));
    }
}

/// The turn's model call still waiting for its answer, out as an error ending at `at_ms`.
pub(super) fn unanswered(
    sid: &str,
    turn: &mut Turn,
    at_ms: u64,
    why: &'static str,
    out: &mut Vec<Record<'static>>,
) {
    let Some(m) = turn.model.take() else { return };
    let call = Unanswered {
        id: format!("{sid}:{}", m.at_ms),
        model: m.model,
        provider: "pi",
        max_tokens: None,
        started_ms: m.at_ms,
        first_token_ms: m.first_chunk_ms,
    };
    let mut r = call.record(sid, at_ms, why);
    if let Event::CallSent(c) = &mut r.event {
        c.request.provider = (!m.provider.is_empty()).then_some(Cow::Owned(m.provider));
    }
    out.push(r);
}

/// `gen_ai.provider.name` for a Pi provider id: the GenAI conventions' name where there is
/// one, else Pi's own id (a provider of the user's own keeps its name).
fn provider_name(id: &str) -> &str {
    match id {
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
        other => other,
    }
}
