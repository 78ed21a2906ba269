//! opencode's model calls: an assistant message is one, from its creation to its
//! `time.completed`, with the tokens and the finish reason the last update carries; its
//! `step-start` part is the first streamed chunk.

use std::borrow::Cow;

use super::payload::{Info, Part};
use super::Adapter;
use crate::protocol::{Event, Json, Record};
use crate::sources::command_hooks::engine::model_call::{Answer, Cache, ModelCall, Reasoning, Tokens};
use crate::sources::command_hooks::engine::records::record;

impl Adapter {
    pub(super) fn on_message(
        &mut self,
        sid: &str,
        seen: u64,
        info: &Info,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(id) = info.id.clone() else { return };
        let completed = info.time.completed;
        let open = self.sessions.get(sid).and_then(|s| s.turn.as_ref());
        // An update of a message this turn does not know, once it is over, is an older
        // turn's: opencode updates a message again after it has finished.
        let known =
            open.is_some_and(|t| t.own.messages.contains(&id) && !t.own.ended.contains(&id));
        let ours = open.is_some_and(|t| info.parent_id.as_deref() == Some(t.own.prompt.as_str()));
        if completed.is_some() && !known && !ours {
            return;
        }
        if open.is_some_and(|t| t.own.ended.contains(&id)) {
            return;
        }
        let created = info.time.created.unwrap_or(seen);
        let turn = self.turn(sid, created, out);
        turn.own.messages.insert(id.clone());
        let i = match turn.models.iter().position(|m| m.id == id) {
            Some(i) => i,
            None => {
                let none = Cow::Borrowed("opencode");
                turn.start_model(Some(id.clone()), String::new(), none, None, created);
                turn.models.len() - 1
            }
        };
        let start = &mut turn.models[i];
        if let Some(m) = &info.model_id {
            start.model.clone_from(m);
        }
        if let Some(p) = &info.provider_id {
            start.provider = Cow::Owned(provider(p).to_string());
        }
        let Some(done) = completed else { return };
        let start = turn.models.remove(i);
        turn.own.ended.insert(id.clone());
        let t = info.tokens.unwrap_or_default();
        let error = info.error.as_ref().map(|e| Json(Cow::Owned(e.clone())));
        out.push(record(
            sid,
            Event::CallSent(
                ModelCall {
                    id: Some(id.clone()),
                    model: start.model,
                    provider: Some(start.provider),
                    started_ms: start.started_ms,
                    finished_ms: done,
                    first_token_ms: start.first_token_ms,
                    // opencode's `output` leaves the reasoning out.
                    usage: Tokens {
                        input: t.input.unwrap_or(0),
                        output: t.output.unwrap_or(0),
                        cache_read: t.cache.read.unwrap_or(0),
                        cache_write: t.cache.write.unwrap_or(0),
                        reasoning: t.reasoning.unwrap_or(0),
                        ..Tokens::default()
                    }
                    .usage(Cache::Apart, Reasoning::Apart),
                    answer: Some(Answer {
                        id: Some(id),
                        stop_reason: info.finish.clone(),
                        ..Answer::default()
                    }),
                    error,
                    ..ModelCall::default()
                }
                .call_sent(),
            ),
        ));
    }

    pub(super) fn on_first_chunk(&mut self, sid: &str, seen: u64, part: &Part) {
        let Some(turn) = self.sessions.get_mut(sid).and_then(|s| s.turn.as_mut()) else {
            return;
        };
        let Some(m) = part
            .message_id
            .as_ref()
            .and_then(|m| turn.models.iter_mut().find(|c| &c.id == m))
        else {
            return;
        };
        m.first_token_ms.get_or_insert(seen);
    }
}

/// `gen_ai.provider.name` for an opencode provider id: the GenAI conventions' name where
/// there is one, else opencode's own id (a provider of the user's own keeps its name).
fn provider(id: &str) -> &str {
    match id {
        "anthropic" => "anthropic",
        "openai" => "openai",
        "google" => "gcp.gemini",
        "google-vertex" | "google-vertex-anthropic" => "gcp.vertex_ai",
        "amazon-bedrock" => "aws.bedrock",
        "azure" => "azure.ai.openai",
        "mistral" => "mistral_ai",
        "groq" => "groq",
        "deepseek" => "deepseek",
        "xai" => "x_ai",
        "perplexity" => "perplexity",
        "cohere" => "cohere",
        other => other,
    }
}
