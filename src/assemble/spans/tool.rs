//! Tool spans (`execute_tool`): a call with its result, or one that never got it.

use std::sync::Arc;

use serde::Deserialize;

use super::{base, session_attrs, unquoted, Place, SessionAttrs};
use crate::assemble::attribution::Attribution;
use crate::assemble::policy::ContentPolicy;
use crate::assemble::semconv::*;
use crate::assemble::span::{Span, SpanKind, Status, Value};
use crate::protocol::Called;

/// Attributes a tool span carries, at most (so its list never grows).
const TOOL_ATTRS: usize = 24;

/// A tool span in the making: the parts that do not come from a `called` event, so that
/// unfinished and synthesized calls are built by the same code.
pub(crate) struct ToolSpan<'a> {
    pub place: Place,
    /// Who and where, from the turn.
    pub who: Option<&'a Attribution>,
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
            span.push(GEN_AI_TOOL_TYPE, Value::Static(tool_type(&n)));
            span.push(TOOL_NAME, Value::Shared(n.clone()));
            span.push(GEN_AI_TOOL_NAME, Value::Shared(n));
        }
        span.push(GEN_AI_AGENT_NAME, Value::Shared(session.agent.clone()));
        if let Some(who) = self.who {
            who.push_who(&mut span, policy);
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
                // OpenInference's tool panel shows `tool.parameters` (OI :233); a host sends
                // no tool definitions, so it shows the parameters this call was given.
                span.push(TOOL_PARAMETERS, Value::Shared(text.clone()));
                span.push(GEN_AI_TOOL_CALL_ARGUMENTS, Value::Shared(text));
            }
            if let Some(output) = &called.output {
                let text: Arc<str> = policy.content(output.get()).into();
                span.push(OUTPUT_VALUE, Value::Shared(text.clone()));
                span.push(GEN_AI_TOOL_CALL_RESULT, Value::Shared(text));
            }
        }
        let timed_out = shell_attrs(&mut span, called, policy);
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
    /// Claude Code's `Bash`: the command was interrupted, so it has no exit code.
    interrupted: Option<bool>,
}

#[derive(Deserialize)]
struct ShellArgs<'a> {
    #[serde(borrow)]
    command: Option<std::borrow::Cow<'a, str>>,
}

/// `gen_ai.tool.type`: tools that reach an outside service through a protocol of their own
/// (MCP) are extensions; the rest are functions the agent's harness runs.
fn tool_type(name: &str) -> &'static str {
    if name.starts_with("mcp.") || name.starts_with("mcp__") || name == "mcp" {
        TOOL_TYPE_EXTENSION
    } else {
        TOOL_TYPE_FUNCTION
    }
}

/// A shell command (albedo's `run`, Claude Code's `Bash`): its exit code and, with tool content
/// on, the program it ran. Returns whether it timed out.
fn shell_attrs(span: &mut Span, called: &Called<'_>, policy: &ContentPolicy) -> bool {
    let name = called.call.name.as_ref();
    let albedo = name == "run" || name.ends_with(".run");
    if !albedo && name != "Bash" {
        return false;
    }
    let output = called
        .output
        .as_ref()
        .and_then(|o| serde_json::from_str::<RunOutput>(o.get()).ok());
    let code = match &output {
        Some(RunOutput {
            exit_code: Some(c), ..
        }) => Some(*c),
        // Claude Code reports a non-zero exit as a failure, "Exit code N", and a zero one as a
        // success; an interrupted command has none.
        _ if !albedo && called.failed => called
            .output
            .as_ref()
            .and_then(|o| serde_json::from_str::<String>(o.get()).ok())
            .and_then(|t| t.strip_prefix("Exit code ")?.trim().parse().ok()),
        Some(RunOutput {
            interrupted: Some(true),
            ..
        }) => None,
        _ if !albedo && !called.failed && !called.refused => Some(0),
        _ => None,
    };
    if let Some(c) = code {
        span.push(PROCESS_EXIT_CODE, Value::Int(c));
    }
    if policy.capture_tool_content {
        let program = called
            .call
            .arguments
            .as_ref()
            .and_then(|a| serde_json::from_str::<ShellArgs<'_>>(a.get()).ok())
            .and_then(|a| {
                a.command
                    .as_deref()
                    .and_then(executable)
                    .map(str::to_string)
            });
        if let Some(p) = program {
            span.push(PROCESS_EXECUTABLE_NAME, Value::Str(policy.label(&p)));
        }
    }
    let timed_out = output.and_then(|o| o.timed_out);
    if let Some(t) = timed_out {
        span.push(ALBEDO_TOOL_TIMED_OUT, Value::Bool(t));
    }
    timed_out.unwrap_or(false)
}

/// The program a shell command line starts: its first word after any `NAME=value`
/// assignments, without its folder (`cargo` for `RUST_LOG=1 ~/.cargo/bin/cargo test`).
pub(crate) fn executable(command: &str) -> Option<&str> {
    let assignment = |w: &str| {
        w.split_once('=').is_some_and(|(name, _)| {
            let mut chars = name.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    let word = command.split_whitespace().find(|w| !assignment(w))?;
    let word = word.trim_start_matches(['(', '{']);
    let base = word.rsplit('/').next().unwrap_or(word);
    let base = base.trim_matches(|c: char| matches!(c, '"' | '\'' | ';' | '&' | '|' | ')'));
    (!base.is_empty()).then_some(base)
}
