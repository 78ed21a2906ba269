//! Model-call spans (`chat`): the request, the response, token usage, errors.

use std::sync::Arc;

use serde::Deserialize;

use super::{base, int, session_attrs, unquoted, Place, SessionAttrs};
use crate::assemble::attribution::Attribution;
use crate::assemble::policy::ContentPolicy;
use crate::assemble::pricing::Cost;
use crate::assemble::semconv::*;
use crate::assemble::span::{ms_to_ns, Span, SpanEvent, SpanKind, Status, Value};
use crate::protocol::CallSent;

/// Attributes a chat span carries, at most (so its list never grows).
const CHAT_ATTRS: usize = 37 + Attribution::ATTRS;

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

/// OpenInference's name for a provider (`llm.provider`, OI :597-613), where it differs from
/// the GenAI one (`gen_ai.provider.name`, R:6-76).
fn openinference_provider(genai: &str) -> Option<&'static str> {
    Some(match genai {
        "gcp.gemini" | "gcp.vertex_ai" | "gcp.gen_ai" => "google",
        "mistral_ai" => "mistralai",
        "azure.ai.inference" | "azure.ai.openai" => "azure",
        "aws.bedrock" => "aws",
        "x_ai" => "xai",
        "moonshot_ai" => "moonshot",
        _ => return None,
    })
}

/// A `chat` span for one model call.
pub(crate) fn chat_span(
    place: Place,
    c: &CallSent<'_>,
    clamped: bool,
    cost: Option<Cost>,
    who: Option<&Attribution>,
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
        let oi = p.as_str().and_then(openinference_provider);
        span.push(LLM_PROVIDER, oi.map_or_else(|| p.clone(), Value::Static));
        span.push(GEN_AI_PROVIDER_NAME, p);
    }
    span.push(LLM_MODEL_NAME, Value::Shared(model.clone()));
    span.push(GEN_AI_REQUEST_MODEL, Value::Shared(model));
    if let Some(max) = c.request.max_tokens {
        span.push(GEN_AI_REQUEST_MAX_TOKENS, int(max));
    }
    // Which agent made the call, so cost and tokens split by agent need no join (and their
    // metrics carry it).
    span.push(GEN_AI_AGENT_NAME, Value::Shared(session.agent.clone()));
    session_attrs(&mut span, session);
    span.push(OPENINFERENCE_SPAN_KIND, Value::Static("LLM"));
    if let Some(r) = &c.response {
        if let Some(m) = &r.model {
            // OpenInference's twin too: MLflow takes the model (and prices the call) from
            // the first OpenInference name it finds, so without it a dated response model
            // would show as the request's alias.
            let m = policy.name(m);
            span.push(LLM_RESPONSE_MODEL_NAME, Value::Shared(m.clone()));
            span.push(GEN_AI_RESPONSE_MODEL, Value::Shared(m));
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
        GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS,
        int(u.cache_write_tokens),
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
    if u.cache_write_1h_tokens > 0 {
        span.push(
            ALBEDO_CHAT_CACHE_WRITE_1H_TOKENS,
            int(u.cache_write_1h_tokens.into()),
        );
    }
    if u.web_searches > 0 {
        span.push(ALBEDO_CHAT_WEB_SEARCHES, int(u.web_searches.into()));
    }
    if let Some(cost) = cost {
        span.push(GEN_AI_USAGE_COST, Value::Double(cost.total));
        span.push(LLM_COST_TOTAL, Value::Double(cost.total));
        span.push(LLM_COST_PROMPT, Value::Double(cost.input));
        span.push(LLM_COST_COMPLETION, Value::Double(cost.output));
    }
    if let Some(who) = who {
        who.push(&mut span, policy);
    }
    if let Some(first) = c.first_token_ms {
        let wait_ms = first.saturating_sub(c.started_ms);
        // Seconds, as a double (R:257); the exact milliseconds stay beside it.
        span.push(
            GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
            Value::Double(wait_ms as f64 / 1000.0),
        );
        span.push(ALBEDO_CHAT_TIME_TO_FIRST_TOKEN_MS, int(wait_ms));
        span.events.push(SpanEvent {
            name: EVENT_FIRST_TOKEN,
            time_ns: ms_to_ns(first),
            attributes: Vec::new(),
        });
    }
    if policy.capture_messages {
        super::messages::push(&mut span, c, policy);
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
