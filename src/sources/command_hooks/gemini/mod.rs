//! Gemini CLI's command-hook payloads to protocol records (what they carry:
//! docs/agents/gemini.md).
//!
//! Gemini's hooks say more than Claude Code's, and name less:
//! - every payload has the time the CLI fired it, so spans take that, not the hook's arrival;
//! - `BeforeAgent` opens the turn and `AfterAgent` ends it;
//! - `BeforeModel` starts a model call, and the `AfterModel` whose chunk has a finish reason
//!   ends it, with the usage (`AfterModel` fires once per streamed chunk);
//! - `BeforeTool` starts a call and `AfterTool` ends it. No payload has a call id, so calls
//!   pair in order, by tool name, and are numbered within their turn. A call a hook denied gets
//!   no `AfterTool`: it ends, refused, at the next model call or at the turn's end;
//! - `SessionEnd` closes the session. Each `gemini` process sends its own `SessionStart` and
//!   `SessionEnd`; a resumed session keeps its id and opens again;
//! - a sub-agent's model and tool hooks come under its parent's session, with nothing that
//!   marks them, between its `invoke_agent` call's `BeforeTool` and `AfterTool`: they are a
//!   session of its own, nested under that call ([`subagents`]).
//!
//! Pure: no I/O. The records pass `protocol::validate` in the pipeline like every source's.

mod contract;
pub mod history;
pub(crate) use contract::adapter;
pub use contract::{HISTORY, SPEC};
mod payload;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod script;
mod ends;
mod subagents;

use std::borrow::Cow;
use std::collections::HashMap;

pub use payload::{slim, Payload};

use super::engine::model_call::{Answer, Cache, ModelCall, Reasoning, Tokens};
use crate::sources::command_hooks::engine::records::{record, session_opened, Outcome};
use crate::sources::command_hooks::engine::open_turn::{OpenTurn, Why};
use crate::protocol::{Event, Record};
use crate::sources::command_hooks::engine::AgentRules;

/// The agent name on Gemini CLI's turns.
pub const AGENT: &str = "gemini-cli";

/// Gemini CLI's events that make a trace (docs/agents/gemini.md).
pub const HOOK_EVENTS: &[&str] = &[
    "SessionStart",
    "BeforeAgent",
    "BeforeModel",
    "AfterModel",
    "BeforeTool",
    "AfterTool",
    "AfterAgent",
    "SessionEnd",
];
/// `gen_ai.provider.name` for the Gemini API, as the GenAI conventions name it.
pub(super) const PROVIDER: &str = "gcp.gemini";

#[derive(Debug, Default)]
pub struct Session {
    started: bool,
    turn: Option<OpenTurn>,
    /// On a top session: its sub-agents running now, the last started last.
    agents: Vec<subagents::Running>,
}

/// Turns Gemini CLI's hook payloads into protocol records; see the module docs.
#[derive(Debug)]
pub struct Adapter {
    sessions: HashMap<String, Session>,
    /// How long an `AfterAgent` waits for a blocked stop's continuation.
    grace_ms: u64,
}

impl Default for Adapter {
    fn default() -> Self {
        Adapter::with_grace(15_000)
    }
}

impl Adapter {
    pub fn new() -> Self {
        Adapter::default()
    }

    /// `grace_ms`: how long an `AfterAgent` waits for a blocked stop's continuation.
    pub fn with_grace(grace_ms: u64) -> Self {
        Adapter {
            sessions: HashMap::new(),
            grace_ms,
        }
    }

    fn ensure(&mut self, id: &str, at_ms: u64, cwd: Option<&str>, out: &mut Vec<Record<'static>>) {
        let s = self.sessions.entry(id.to_string()).or_default();
        if !s.started {
            s.started = true;
            out.push(session_opened(id, at_ms, AGENT, cwd));
        }
    }

    fn on_prompt(&mut self, sid: &str, at_ms: u64, p: &Payload, out: &mut Vec<Record<'static>>) {
        // A turn whose AfterAgent never came (the CLI was stopped) ends where the next begins.
        if !self.end_held(sid, out) {
            self.end_turn(sid, at_ms, Why::Interrupted, out);
        }
        let s = self.sessions.entry(sid.to_string()).or_default();
        s.turn = Some(OpenTurn::new(at_ms));
        out.push(record(
            sid,
            Event::Prompted {
                at_ms,
                text: Cow::Owned(p.prompt.clone().unwrap_or_default()),
            },
        ));
    }

    fn on_model_start(
        &mut self,
        sid: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) {
        // The model is asked again only once the calls it asked for are over: one still
        // pending was denied by a hook.
        let turn = self.turn(sid, at_ms);
        turn.refuse_pending(sid, at_ms, out);
        turn.unanswered(sid, at_ms, NO_FINISH, out);
        let request = p.llm_request.as_ref();
        turn.start_model(
            None,
            request.and_then(|r| r.model.clone()).unwrap_or_default(),
            Cow::Borrowed(PROVIDER),
            request.and_then(|r| r.config.as_ref()?.max_output_tokens),
            at_ms,
        );
    }

    fn on_model_chunk(
        &mut self,
        sid: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(turn) = self.sessions.get_mut(sid).and_then(|s| s.turn.as_mut()) else {
            return;
        };
        let Some(start) = turn.models.last_mut() else {
            return;
        };
        start.first_token_ms.get_or_insert(at_ms);
        let Some(reason) = p.finish_reason() else {
            return;
        };
        let Some(start) = turn.models.pop() else {
            return;
        };
        let id = start.id;
        let usage = p
            .llm_response
            .as_ref()
            .and_then(|r| r.usage_metadata)
            .unwrap_or_default();
        let model = p
            .llm_request
            .as_ref()
            .and_then(|r| r.model.clone())
            .unwrap_or(start.model);
        out.push(record(
            sid,
            Event::CallSent(
                ModelCall {
                    id: Some(id),
                    model,
                    provider: Some(Cow::Borrowed(PROVIDER)),
                    max_tokens: start.max_tokens,
                    started_ms: start.started_ms,
                    finished_ms: at_ms,
                    first_token_ms: start.first_token_ms,
                    // Gemini counts the cache reads inside the input, and bills its thoughts as
                    // output but counts them apart from the candidates.
                    usage: Tokens {
                        input: usage.prompt_token_count.unwrap_or(0),
                        cache_read: usage.cached_content_token_count.unwrap_or(0),
                        output: usage.candidates_token_count.unwrap_or(0),
                        reasoning: usage.thoughts_token_count.unwrap_or(0),
                        ..Tokens::default()
                    }
                    .usage(Cache::ReadsWithin, Reasoning::Apart),
                    answer: Some(Answer {
                        stop_reason: Some(reason.to_string()),
                        ..Answer::default()
                    }),
                    ..ModelCall::default()
                }
                .call_sent(),
            ),
        ));
    }

    /// Returns the call's id.
    fn on_tool_start(
        &mut self,
        sid: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) -> Option<String> {
        let name = p.tool_name.clone()?;
        let turn = self.turn(sid, at_ms);
        Some(turn.start_call(sid, None, name, p.tool_input.clone(), None, at_ms, out))
    }

    /// Session `sid`'s open turn, opened without a prompt if there is none: a model or tool
    /// hook seen after its turn ended (past the stop's grace: another hook blocked the stop
    /// late) still belongs to a turn. No `prompted` record says so: the assembly puts what
    /// comes with no prompt after an ended turn in that turn's trace.
    fn turn(&mut self, sid: &str, at_ms: u64) -> &mut OpenTurn {
        let s = self.sessions.entry(sid.to_string()).or_default();
        s.turn.get_or_insert_with(|| OpenTurn::new(at_ms))
    }

    fn on_tool_end(&mut self, sid: &str, at_ms: u64, p: &Payload, out: &mut Vec<Record<'static>>) {
        let Some(name) = p.tool_name.as_deref() else {
            return;
        };
        let Some(turn) = self.sessions.get_mut(sid).and_then(|s| s.turn.as_mut()) else {
            return;
        };
        // `AfterTool` repeats its call's input: the call still running with that tool and that
        // input, else the oldest of that tool. Order alone would pair a denied call (which
        // gets no `AfterTool`) with the next call's end.
        let same = |c: &crate::sources::command_hooks::engine::open_turn::Pending| {
            c.name == name
                && c.input.as_ref().map(|i| i.get()) == p.tool_input.as_ref().map(|i| i.get())
        };
        let Some(i) = turn
            .pending
            .iter()
            .position(same)
            .or_else(|| turn.pending.iter().position(|c| c.name == name))
        else {
            return;
        };
        // The CLI reports a tool that could not run as `{"error": …}`; a command that ran and
        // exited non-zero is not an error of the tool, and Gemini says so only in its text.
        let failed = p
            .tool_response
            .as_ref()
            .and_then(|r| serde_json::from_str::<serde_json::Value>(r.get()).ok())
            .is_some_and(|v| v.get("error").is_some_and(|e| !e.is_null()));
        let call = &mut turn.pending[i];
        if call.input.is_none() {
            call.input = p.tool_input.clone();
        }
        let output = p.tool_response.clone();
        turn.end_call(sid, i, output, Outcome::of(false, failed), at_ms, out);
    }
}

/// What a model call says whose finishing chunk never came, when the agent asked again.
const NO_FINISH: &str = "the answer ended without a finishing chunk";

#[cfg(test)]
mod tests;
