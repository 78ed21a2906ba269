//! Model-call spans (`chat`): the request, the response, token usage, errors.

use std::sync::Arc;

use serde::Deserialize;

use super::{base, int, session_attrs, unquoted, Place, SessionAttrs};
use crate::assemble::policy::ContentPolicy;
use crate::assemble::semconv::*;
use crate::assemble::span::{ms_to_ns, Span, SpanEvent, SpanKind, Status, Value};
use crate::protocol::CallSent;

/// Attributes a chat span carries, at most (so its list never grows).
const CHAT_ATTRS: usize = 30;

#[derive(Deserialize)]
struct ErrorShape {
    #[serde(rename = "type")]
    kind: Option<String>,
    message: Option<String>,
}

/// The provider, when the host did not name it, from the model's well-known prefixes.
fn infer_provider(model: &str) -> Option<&'static str> {
    let m = model.to_ascii_lowercase();
    if m.starts_with("claude") {
        Some("anthropic")
    } else if m.starts_with("gpt")
        || m.starts_with("o1")
        || m.starts_with("o3")
        || m.starts_with("o4")
    {
        Some("openai")
    } else if m.starts_with("gemini") {
        Some("gcp.gemini")
    } else if m.starts_with("mistral") || m.starts_with("codestral") {
        Some("mistral_ai")
    } else {
        None
    }
}

/// A `chat` span for one model call.
pub(crate) fn chat_span(
    place: Place,
    c: &CallSent<'_>,
    clamped: bool,
    policy: &ContentPolicy,
    session: &SessionAttrs,
) -> Span {
    let model = policy.name(&c.request.model);
    let mut span = base(
        place,
        format!("{OP_CHAT} {model}"),
        SpanKind::Client,
        c.started_ms,
        c.finished_ms.max(c.started_ms),
        CHAT_ATTRS,
    );
    span.push(GEN_AI_OPERATION_NAME, Value::Static(OP_CHAT));
    let provider = match &c.request.provider {
        Some(p) => Some(Value::Shared(policy.name(p))),
        None => infer_provider(&c.request.model).map(Value::Static),
    };
    if let Some(p) = provider {
        span.push(LLM_PROVIDER, p.clone());
        span.push(GEN_AI_PROVIDER_NAME, p);
    }
    span.push(LLM_MODEL_NAME, Value::Shared(model.clone()));
    span.push(GEN_AI_REQUEST_MODEL, Value::Shared(model));
    if let Some(max) = c.request.max_tokens {
        span.push(GEN_AI_REQUEST_MAX_TOKENS, int(max));
    }
    session_attrs(&mut span, session);
    span.push(OPENINFERENCE_SPAN_KIND, Value::Static("LLM"));
    if let Some(r) = &c.response {
        if let Some(m) = &r.model {
            span.push(GEN_AI_RESPONSE_MODEL, Value::Shared(policy.name(m)));
        }
        if let Some(id) = &r.id {
            span.push(GEN_AI_RESPONSE_ID, Value::Str(policy.label(id)));
        }
        if let Some(stop) = &r.stop_reason {
            span.push(
                GEN_AI_RESPONSE_FINISH_REASONS,
                Value::StrList(Arc::from([policy.name(stop)])),
            );
        }
    }
    let u = &c.usage;
    let input = u.total_input();
    span.push(GEN_AI_USAGE_INPUT_TOKENS, int(input));
    span.push(GEN_AI_USAGE_OUTPUT_TOKENS, int(u.output_tokens));
    span.push(
        GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
        int(u.cache_read_tokens),
    );
    span.push(
        GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
        int(u.cache_write_tokens),
    );
    span.push(LLM_TOKEN_COUNT_PROMPT, int(input));
    span.push(LLM_TOKEN_COUNT_COMPLETION, int(u.output_tokens));
    span.push(
        LLM_TOKEN_COUNT_TOTAL,
        int(input.saturating_add(u.output_tokens)),
    );
    span.push(LLM_TOKEN_COUNT_CACHE_READ, int(u.cache_read_tokens));
    span.push(LLM_TOKEN_COUNT_CACHE_WRITE, int(u.cache_write_tokens));
    if let Some(r) = u.reasoning_tokens {
        span.push(GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, int(r));
        span.push(LLM_TOKEN_COUNT_REASONING, int(r));
    }
    if let Some(first) = c.first_token_ms {
        span.push(
            ALBEDO_CHAT_TIME_TO_FIRST_TOKEN_MS,
            int(first.saturating_sub(c.started_ms)),
        );
        span.events.push(SpanEvent {
            name: EVENT_FIRST_TOKEN,
            time_ns: ms_to_ns(first),
            attributes: Vec::new(),
        });
    }
    if policy.capture_messages {
        if let Some(m) = &c.request.messages {
            span.push(INPUT_VALUE, Value::Str(policy.content(m.get())));
        }
        if let Some(content) = c.response.as_ref().and_then(|r| r.content.as_ref()) {
            span.push(OUTPUT_VALUE, Value::Str(policy.content(content.get())));
        }
    }
    if clamped {
        span.push(ALBEDO_TIMING_CLAMPED, Value::Bool(true));
    }
    if let Some(e) = &c.error {
        let raw = e.get();
        let (kind, message) = match serde_json::from_str::<ErrorShape>(raw) {
            Ok(shape) => (shape.kind, shape.message.unwrap_or_else(|| raw.to_string())),
            Err(_) => (None, unquoted(raw)),
        };
        span.push(
            ERROR_TYPE,
            match kind {
                Some(k) => Value::Shared(policy.name(&k)),
                None => Value::Static("_OTHER"),
            },
        );
        span.status = Status::Error(policy.content(&message));
    }
    span
}
