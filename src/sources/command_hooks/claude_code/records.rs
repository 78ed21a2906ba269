//! Small constructors of the records the adapter emits.

use std::borrow::Cow;

use super::transcript::ModelCall;
use crate::protocol::{CallSent, Json, Request, Response};
pub(super) use crate::sources::command_hooks::records::{raw, record, Ended, Outcome};

/// A string as JSON text (a failed call's error message).
pub(super) fn json_text(text: &str) -> Option<Json<'static>> {
    Json::of(text).ok()
}

/// A transcript's model call as the `call_sent` the albedo extension would have sent.
pub(super) fn call_sent(c: ModelCall) -> CallSent<'static> {
    CallSent {
        id: Some(Cow::Owned(c.id.clone())),
        request: Request {
            model: Cow::Owned(c.model.clone()),
            provider: Some(Cow::Borrowed("anthropic")),
            max_tokens: c.max_tokens,
            messages: c.messages.as_deref().and_then(|m| Json::parse(m).ok()),
            system: c.system.as_deref().and_then(|m| Json::parse(m).ok()),
        },
        response: Some(Response {
            id: Some(Cow::Owned(c.id)),
            model: Some(Cow::Owned(c.model)),
            stop_reason: c.stop_reason.map(Cow::Owned),
            content: Json::parse(&c.content).ok(),
        }),
        usage: c.usage,
        started_ms: c.started_ms,
        finished_ms: c.finished_ms.max(c.started_ms),
        first_token_ms: None,
        error: None,
    }
}
