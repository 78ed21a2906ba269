//! Codex CLI's command-hook payloads to protocol records.
//!
//! Codex sends Claude Code's hooks in Claude Code's shape (`UserPromptSubmit`, `PreToolUse`
//! and `PostToolUse` paired by `tool_use_id`, `Stop`, `SessionEnd`, the shell as `Bash`), so
//! those go through Claude Code's adapter, which does the pairing, the turn and the held stop.
//! What is Codex's own:
//! - `PreModelRequest` and `PostModelRequest` around each model call, paired by `request_id`;
//!   the second has the usage. Payloads carry no time, so the call spans from when the first
//!   hook reached the journal to when the second did (Codex waits for each hook: the request
//!   goes out after the first returns);
//! - its transcript is a rollout of another shape, so Claude Code's reader is not given it:
//!   the model calls come from the hooks instead;
//! - `Interrupt` (Ctrl-C) ends the calls and the model call in flight, failed; no `Stop`
//!   follows, so the turn is exported unfinished when the next begins or the session ends;
//! - a sub-agent's hooks carry its `agent_id`; its prompt is not the parent's next turn. It
//!   opens under the `spawn_agent` call whose answer named it, or, when its `SubagentStart`
//!   comes before that answer (the two hooks run at once), under the oldest `spawn_agent`
//!   call not yet answered. That call ends as soon as the sub-agent is started, so the
//!   sub-agent's spans outlast their parent's; `wait_agent` waits for it after.
//!
//! Pure, like every adapter.

mod contract;
pub mod history;
pub(crate) use contract::adapter;
pub use contract::{HISTORY, SPEC};
mod payload;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod script;

use std::borrow::Cow;
use std::collections::HashMap;

pub use payload::{ModelHook, Payload, TokenUsage};

use super::claude_code;
use super::engine::model_call::{error_text, Answer, Cache, ModelCall, Reasoning, Tokens};
use crate::sources::command_hooks::engine::records::{record, Unanswered};
use crate::protocol::{CallSent, Event, Record};

/// The agent name on Codex CLI's turns.
pub const AGENT: &str = "codex";

/// Codex CLI's events that make a trace: Claude Code's, and its model hooks.
pub const HOOK_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreModelRequest",
    "PostModelRequest",
    "PreToolUse",
    "PostToolUse",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "Interrupt",
    "SessionEnd",
];
/// The tool that starts a sub-agent.
const SPAWN_TOOL: &str = "spawn_agent";
/// `gen_ai.provider.name` for OpenAI, as the GenAI conventions name it.
const PROVIDER: &str = "openai";

/// A model call `PreModelRequest` started.
#[derive(Debug)]
struct Started {
    at_ms: u64,
    model: String,
}

#[derive(Debug)]
pub struct Adapter {
    claude_code: claude_code::Adapter,
    /// By session and `request_id`.
    started: HashMap<(String, String), Started>,
}

impl Adapter {
    pub fn new(grace_ms: u64) -> Self {
        Adapter {
            claude_code: claude_code::Adapter::named(grace_ms, AGENT),
            started: HashMap::new(),
        }
    }

    pub fn claude_code(&self) -> &claude_code::Adapter {
        &self.claude_code
    }

    /// Model calls of `session` (its sub-agents' included) that never got their
    /// `PostModelRequest`: calls with an error, not lost.
    fn unanswered(&mut self, session: &str, at_ms: u64, out: &mut Vec<Record<'static>>) {
        let keys: Vec<(String, String)> = self
            .started
            .keys()
            .filter(|(t, _)| crate::sources::command_hooks::engine::session_key::top(t) == session)
            .cloned()
            .collect();
        for key in keys {
            let start = self.started.remove(&key).expect("listed above");
            let call = Unanswered {
                id: key.1,
                model: start.model,
                provider: Cow::Borrowed(PROVIDER),
                max_tokens: None,
                started_ms: start.at_ms,
                first_token_ms: None,
            };
            out.push(call.record(&key.0, at_ms, "interrupted before its answer"));
        }
    }

    fn on_model(
        &mut self,
        at_ms: u64,
        hook: &claude_code::Payload,
        m: &ModelHook,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(request) = m.request_id.clone() else {
            return;
        };
        let target = target(hook);
        let key = (target.clone(), request);
        if hook.hook_event_name == "PreModelRequest" {
            let model = m.model.clone().unwrap_or_default();
            self.started.insert(key, Started { at_ms, model });
            return;
        }
        let start = self.started.remove(&key).unwrap_or(Started {
            at_ms,
            model: m.model.clone().unwrap_or_default(),
        });
        let failed = m.status.as_deref() == Some("failed");
        let error = failed.then(|| m.error.as_deref().unwrap_or("the model request failed"));
        let usage = m.token_usage.unwrap_or_default();
        let (model, response) = (start.model, m.response_id.clone());
        let call = model_call(key.1, model, response, usage, start.at_ms, at_ms, error);
        out.push(record(&target, Event::CallSent(call)));
    }
}

/// One model call of Codex's, answered (or failed with `error`): the live route's and the
/// import's alike, so a call met both ways is the same call.
fn model_call(
    id: String,
    model: String,
    response_id: Option<String>,
    usage: TokenUsage,
    started_ms: u64,
    finished_ms: u64,
    error: Option<&str>,
) -> CallSent<'static> {
    ModelCall {
        id: Some(id),
        model,
        provider: Some(Cow::Borrowed(PROVIDER)),
        started_ms,
        finished_ms,
        usage: Tokens {
            input: usage.input_tokens.unwrap_or(0),
            cache_read: usage.cached_input_tokens.unwrap_or(0),
            output: usage.output_tokens.unwrap_or(0),
            cache_write: usage.cache_write_input_tokens.unwrap_or(0),
            reasoning: usage.reasoning_output_tokens.unwrap_or(0),
            ..Tokens::default()
        }
        .usage(Cache::ReadsWithin, Reasoning::Within),
        answer: error.is_none().then(|| Answer {
            id: response_id,
            ..Answer::default()
        }),
        error: error.and_then(error_text),
        ..ModelCall::default()
    }
    .call_sent()
}

/// The session a payload's event belongs to: a sub-agent's own, as Claude Code's adapter
/// names it.
fn target(hook: &claude_code::Payload) -> String {
    match &hook.agent_id {
        Some(agent) => crate::sources::command_hooks::engine::session_key::sub_agent(&hook.session_id, agent),
        None => hook.session_id.clone(),
    }
}

#[cfg(test)]
mod tests;
