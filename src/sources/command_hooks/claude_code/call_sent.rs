//! A model call read from a transcript, as the `call_sent` record albedo's extension would have
//! sent for it: what the live adapter and `import` both emit.

use std::borrow::Cow;

use super::transcript::ModelCall;
use crate::protocol::{CallSent, Json};
use crate::sources::command_hooks::engine::model_call;

/// A transcript's model call as the `call_sent` the albedo extension would have sent.
pub(super) fn call_sent(c: ModelCall) -> CallSent<'static> {
    model_call::ModelCall {
        id: Some(c.id.clone()),
        model: c.model,
        provider: Some(Cow::Borrowed("anthropic")),
        max_tokens: c.max_tokens,
        messages: c.messages.as_deref().and_then(|m| Json::parse(m).ok()),
        system: c.system.as_deref().and_then(|m| Json::parse(m).ok()),
        started_ms: c.started_ms,
        finished_ms: c.finished_ms,
        usage: c.usage,
        answer: Some(model_call::Answer {
            id: Some(c.id),
            stop_reason: c.stop_reason,
            content: Json::parse(&c.content).ok(),
            ..model_call::Answer::default()
        }),
        ..model_call::ModelCall::default()
    }
    .call_sent()
}
