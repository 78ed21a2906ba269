//! Tool spans (`execute_tool`): a call with its result, or one that never got it.

use std::sync::Arc;

use serde::Deserialize;

use super::{base, session_attrs, unquoted, Place, SessionAttrs};
use crate::assemble::policy::ContentPolicy;
use crate::assemble::semconv::*;
use crate::assemble::span::{Span, SpanKind, Status, Value};
use crate::protocol::Called;

/// Attributes a tool span carries, at most (so its list never grows).
const TOOL_ATTRS: usize = 18;

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
                .map(|o| unquoted(o.get()))
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
