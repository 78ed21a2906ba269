//! The turn's root span (`invoke_agent`) and the events on it.

use std::sync::Arc;

use super::{base, int, session_attrs, Place, SessionAttrs};
use crate::assemble::attribution::Attribution;
use crate::assemble::policy::ContentPolicy;
use crate::assemble::semconv::*;
use crate::assemble::span::{ms_to_ns, Attr, Span, SpanEvent, SpanKind, SpanLink, Value};

/// Attributes a root span carries, at most (so its list never grows).
const TURN_ATTRS: usize = 26 + Attribution::ATTRS;

/// Everything the turn's root span reports, gathered while the turn ran.
#[derive(Debug, Default, Clone)]
pub(crate) struct TurnSummary {
    pub number: u64,
    pub prompted: bool,
    /// A continuation of a turn that had ended (see `WentOut`), not a turn of its own.
    pub continued: bool,
    pub prompt: Option<String>,
    /// The last stop reply, with message capture on: the turn's output.
    pub reply: Option<String>,
    pub tool_calls: u64,
    pub model_calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// The sum of the turn's priced model calls, in US dollars; `None` if none was priced.
    pub cost: Option<f64>,
    /// Who and where, as they were when the turn started.
    pub attribution: Option<Arc<Attribution>>,
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
    span.push(AGENT_NAME, Value::Shared(agent_name.clone()));
    span.push(GEN_AI_AGENT_NAME, Value::Shared(agent_name));
    session_attrs(&mut span, session);
    span.push(OPENINFERENCE_SPAN_KIND, Value::Static("AGENT"));
    span.push(ALBEDO_TURN_NUMBER, int(summary.number));
    span.push(ALBEDO_TURN_PROMPTED, Value::Bool(summary.prompted));
    if summary.continued {
        span.push(ALBEDO_TURN_CONTINUED, Value::Bool(true));
    }
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
    if let Some(cost) = summary.cost {
        span.push(ALBEDO_TURN_COST, Value::Double(cost));
    }
    if let Some(who) = &summary.attribution {
        who.push(&mut span, policy);
    }
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
    // What Phoenix's session view shows as each turn's output.
    if let Some(r) = summary.reply {
        span.push(OUTPUT_VALUE, Value::Str(r));
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
    let mut attributes = vec![Attr {
        key: ALBEDO_STOP_HELD,
        value: Value::Int(i64::from(held)),
    }];
    if policy.capture_messages {
        attributes.push(Attr {
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
