//! How each kind of span looks: names, kinds, attributes and status.
//!
//! The state machine in `mod.rs` decides *which* spans exist, with which ids, parents and times;
//! this file decides what they say. Keeping the two apart means a naming change never touches
//! the tree logic, and the tree logic is readable without the attribute lists.

use std::sync::Arc;

use serde::Deserialize;

use super::policy::ContentPolicy;
use super::semconv::*;
use super::span::{ms_to_ns, Span, SpanEvent, SpanId, SpanKind, SpanLink, Status, TraceId, Value};
use crate::ingest::protocol::{CallSent, Called};

/// Where a span sits: its trace, its id and its parent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Place {
    pub trace_id: TraceId,
    pub span_id: SpanId,
    pub parent: Option<SpanId>,
}

/// What every span of a session carries.
#[derive(Debug, Clone)]
pub(crate) struct SessionAttrs {
    pub id: Arc<str>,
}

/// Attributes a span of each kind carries, at most (so its list never grows).
const TOOL_ATTRS: usize = 18;
const CHAT_ATTRS: usize = 30;
const TURN_ATTRS: usize = 22;

fn base(
    place: Place,
    name: String,
    kind: SpanKind,
    start_ms: u64,
    end_ms: u64,
    attrs: usize,
) -> Span {
    Span {
        trace_id: place.trace_id,
        span_id: place.span_id,
        parent_span_id: place.parent,
        name,
        kind,
        start_ns: ms_to_ns(start_ms),
        end_ns: ms_to_ns(end_ms),
        attributes: Vec::with_capacity(attrs),
        events: Vec::new(),
        links: Vec::new(),
        status: Status::Unset,
    }
}

fn session_attrs(span: &mut Span, s: &SessionAttrs) {
    span.push(GEN_AI_CONVERSATION_ID, Value::Shared(s.id.clone()));
    span.push(SESSION_ID, Value::Shared(s.id.clone()));
}

fn int(n: u64) -> Value {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

/// A tool span in the making: the parts that do not come from a `called` event, so that
/// unfinished and synthesized calls are built by the same code.
pub(crate) struct ToolSpan<'a> {
    pub place: Place,
    pub call_id: &'a str,
    pub name: Option<&'a str>,
    pub within: Option<&'a str>,
    pub start_ms: u64,
    pub end_ms: u64,
}

impl ToolSpan<'_> {
    fn build(&self, policy: &ContentPolicy, session: &SessionAttrs) -> Span {
        let name = self.name.map(|n| policy.name(n));
        let span_name = match &name {
            Some(n) => format!("{OP_EXECUTE_TOOL} {n}"),
            None => OP_EXECUTE_TOOL.to_string(),
        };
        let mut span = base(
            self.place,
            span_name,
            SpanKind::Internal,
            self.start_ms,
            self.end_ms,
            TOOL_ATTRS,
        );
        span.push(GEN_AI_OPERATION_NAME, Value::Static(OP_EXECUTE_TOOL));
        if let Some(n) = name {
            span.push(TOOL_NAME, Value::Shared(n.clone()));
            span.push(GEN_AI_TOOL_NAME, Value::Shared(n));
        }
        span.push(GEN_AI_TOOL_CALL_ID, Value::Str(policy.label(self.call_id)));
        session_attrs(&mut span, session);
        span.push(OPENINFERENCE_SPAN_KIND, Value::Static("TOOL"));
        if let Some(w) = self.within {
            span.push(ALBEDO_TOOL_WITHIN, Value::Str(policy.label(w)));
        }
        span
    }

    /// The span of a call that has its result.
    pub fn finished(
        &self,
        called: &Called<'_>,
        clamped: bool,
        policy: &ContentPolicy,
        session: &SessionAttrs,
    ) -> Span {
        let mut span = self.build(policy, session);
        if clamped {
            span.push(ALBEDO_TIMING_CLAMPED, Value::Bool(true));
        }
        if policy.capture_tool_content {
            if let Some(args) = &called.call.arguments {
                let text: Arc<str> = policy.content(args.get()).into();
                span.push(INPUT_VALUE, Value::Shared(text.clone()));
                span.push(GEN_AI_TOOL_CALL_ARGUMENTS, Value::Shared(text));
            }
            if let Some(output) = &called.output {
                let text: Arc<str> = policy.content(output.get()).into();
                span.push(OUTPUT_VALUE, Value::Shared(text.clone()));
                span.push(GEN_AI_TOOL_CALL_RESULT, Value::Shared(text));
            }
        }
        let is_run = called.call.name == "run" || called.call.name.ends_with(".run");
        let mut timed_out = false;
        if is_run {
            if let Some(out) = called
                .output
                .as_ref()
                .and_then(|o| serde_json::from_str::<RunOutput>(o.get()).ok())
            {
                if let Some(code) = out.exit_code {
                    span.push(PROCESS_EXIT_CODE, Value::Int(code));
                }
                if let Some(t) = out.timed_out {
                    span.push(ALBEDO_TOOL_TIMED_OUT, Value::Bool(t));
                    timed_out = t;
                }
            }
        }
        // A refusal or a failure says what happened, and why when the output says (and tool
        // content may be exported).
        let error = |what: &str| {
            let why = called
                .output
                .as_ref()
                .filter(|_| policy.capture_tool_content)
                .map(|o| refusal_text(o.get()))
                .filter(|t| !t.is_empty());
            Status::Error(match why {
                Some(t) => format!("{what}: {}", policy.content(&t)),
                None => what.into(),
            })
        };
        if called.refused {
            span.push(ALBEDO_TOOL_REFUSED, Value::Bool(true));
            span.push(ERROR_TYPE, Value::Static("refused"));
            span.status = error("refused by a hook");
        } else if called.failed {
            span.push(ERROR_TYPE, Value::Static("tool_error"));
            span.status = error("failed");
        } else if timed_out {
            span.push(ERROR_TYPE, Value::Static("timeout"));
            span.status = Status::Error(format!("`{}` timed out", policy.name(&called.call.name)));
        }
        span
    }

    /// The span of a call that never got its result: it was still running when its turn or
    /// session ended (`synthesized` is false), or it was only ever named as another call's
    /// `within` (`synthesized` is true).
    pub fn unfinished(
        &self,
        synthesized: bool,
        policy: &ContentPolicy,
        session: &SessionAttrs,
    ) -> Span {
        let mut span = self.build(policy, session);
        span.push(ALBEDO_UNFINISHED, Value::Bool(true));
        if synthesized {
            span.push(ALBEDO_SYNTHESIZED, Value::Bool(true));
        }
        span
    }
}

#[derive(Deserialize)]
struct RunOutput {
    exit_code: Option<i64>,
    timed_out: Option<bool>,
}

/// A refusal is usually a JSON string; show it without its quotes.
fn refusal_text(raw: &str) -> String {
    serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.to_string())
}

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
            Err(_) => (None, refusal_text(raw)),
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

/// Everything the turn's root span reports, gathered while the turn ran.
#[derive(Debug, Default, Clone)]
pub(crate) struct TurnSummary {
    pub number: u64,
    pub prompted: bool,
    pub prompt: Option<String>,
    pub tool_calls: u64,
    pub model_calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub events: Vec<SpanEvent>,
    pub link: Option<SpanLink>,
}

/// Who the agent is, for the root span.
pub(crate) struct AgentInfo<'a> {
    pub name: &'a str,
    pub model: Option<&'a str>,
    pub workspace: Option<&'a str>,
    pub parent: Option<(&'a str, &'a str)>,
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn turn_span(
    place: Place,
    start_ms: u64,
    end_ms: u64,
    summary: TurnSummary,
    agent: &AgentInfo<'_>,
    reason: Option<&str>,
    unfinished: bool,
    policy: &ContentPolicy,
    session: &SessionAttrs,
) -> Span {
    let agent_name = policy.name(agent.name);
    let mut span = base(
        place,
        format!("{OP_INVOKE_AGENT} {agent_name}"),
        SpanKind::Internal,
        start_ms,
        end_ms.max(start_ms),
        TURN_ATTRS,
    );
    span.push(GEN_AI_OPERATION_NAME, Value::Static(OP_INVOKE_AGENT));
    span.push(GEN_AI_AGENT_NAME, Value::Shared(agent_name));
    session_attrs(&mut span, session);
    span.push(OPENINFERENCE_SPAN_KIND, Value::Static("AGENT"));
    span.push(ALBEDO_TURN_NUMBER, int(summary.number));
    span.push(ALBEDO_TURN_PROMPTED, Value::Bool(summary.prompted));
    span.push(ALBEDO_TURN_TOOL_CALLS, int(summary.tool_calls));
    span.push(ALBEDO_TURN_MODEL_CALLS, int(summary.model_calls));
    span.push(ALBEDO_TURN_INPUT_TOKENS, int(summary.input_tokens));
    span.push(ALBEDO_TURN_OUTPUT_TOKENS, int(summary.output_tokens));
    span.push(
        ALBEDO_TURN_CACHE_READ_TOKENS,
        int(summary.cache_read_tokens),
    );
    span.push(
        ALBEDO_TURN_CACHE_WRITE_TOKENS,
        int(summary.cache_write_tokens),
    );
    if let Some(m) = agent.model {
        span.push(ALBEDO_SESSION_MODEL, Value::Shared(policy.name(m)));
    }
    if let Some(w) = agent.workspace {
        span.push(ALBEDO_SESSION_WORKSPACE, Value::Str(policy.content(w)));
    }
    if let Some((s, c)) = agent.parent {
        span.push(ALBEDO_PARENT_SESSION, Value::Str(policy.label(s)));
        span.push(ALBEDO_PARENT_CALL, Value::Str(policy.label(c)));
    }
    if let Some(r) = reason {
        span.push(ALBEDO_TURN_REASON, Value::Shared(policy.name(r)));
    }
    if unfinished {
        span.push(ALBEDO_UNFINISHED, Value::Bool(true));
    }
    if let Some(p) = summary.prompt {
        span.push(INPUT_VALUE, Value::Str(p));
    }
    span.events = summary.events;
    span.links.extend(summary.link);
    span
}

/// The span event for one `stopping`.
pub(crate) fn stopping_event(
    at_ms: u64,
    reply: &str,
    held: u32,
    policy: &ContentPolicy,
) -> SpanEvent {
    let mut attributes = vec![super::span::Attr {
        key: ALBEDO_STOP_HELD,
        value: Value::Int(i64::from(held)),
    }];
    if policy.capture_messages {
        attributes.push(super::span::Attr {
            key: ALBEDO_STOP_REPLY,
            value: Value::Str(policy.content(reply)),
        });
    }
    SpanEvent {
        name: EVENT_STOPPING,
        time_ns: ms_to_ns(at_ms),
        attributes,
    }
}
