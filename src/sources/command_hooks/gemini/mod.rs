//! Gemini CLI's command-hook payloads to protocol records (what they carry:
//! docs/agents/gemini-cli.md).
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
pub(crate) use contract::adapter;
pub use contract::SPEC;
mod payload;
#[cfg(test)]
pub(crate) mod script;
mod stops;
mod subagents;

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::value::RawValue;

pub use payload::{slim, Payload};

use super::records::{raw, record, session_opened, Ended, Outcome, Unanswered};
use crate::protocol::{Call, CallSent, Event, Record, Request, Response, Usage};

/// The agent name on Gemini CLI's turns.
pub const AGENT: &str = "gemini-cli";

/// Gemini CLI's events that make a trace (docs/agents/gemini-cli.md).
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
const PROVIDER: &str = "gcp.gemini";

/// A call `BeforeTool` announced and no `AfterTool` has ended yet.
#[derive(Debug)]
struct Pending {
    id: String,
    name: String,
    input: Option<Box<RawValue>>,
    at_ms: u64,
}

/// A model call `BeforeModel` started.
#[derive(Debug)]
struct ModelStart {
    at_ms: u64,
    model: String,
    max_tokens: Option<u64>,
    first_chunk_ms: Option<u64>,
}

#[derive(Debug, Default)]
struct Session {
    started: bool,
    turn_open: bool,
    /// Numbers for the calls and model calls of the current turn: ids only need to differ
    /// within a turn, and counting from the turn's start gives the same ids on a re-read.
    calls: u32,
    model_calls: u32,
    pending: Vec<Pending>,
    model: Option<ModelStart>,
    /// When the open turn began: sub-agents' session ids are made from it.
    turn_at: u64,
    /// On a top session: its sub-agents running now, the last started last.
    agents: Vec<subagents::Running>,
    /// An `AfterAgent` whose turn end is held back (see [`stops`]): when it came.
    stop_at: Option<u64>,
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

    /// Sessions with a turn open.
    pub fn open_turns(&self) -> usize {
        self.sessions.values().filter(|s| s.turn_open).count()
    }

    /// Whether session `id` is between turns.
    pub fn at_rest(&self, id: &str) -> bool {
        self.sessions.get(id).is_none_or(|s| !s.turn_open)
    }

    /// Takes one payload that reached the journal at `received_ms`; appends records to `out`.
    pub fn push(&mut self, received_ms: u64, p: &Payload, out: &mut Vec<Record<'static>>) {
        let sid = p.session_id.as_str();
        if sid.is_empty() {
            return;
        }
        let at_ms = p.at_ms().unwrap_or(received_ms);
        self.ensure(sid, at_ms, p.cwd.as_deref(), out);
        // A model or tool hook is the running sub-agent's, if one runs; `invoke_agent`'s end
        // is its caller's, once the sub-agent is closed.
        let event = p.hook_event_name.as_str();
        if matches!(
            event,
            "BeforeModel" | "AfterModel" | "BeforeTool" | "AfterTool"
        ) {
            self.went_on(sid);
        }
        let target = self.target(sid, event, at_ms, p, out);
        let target = target.as_deref().unwrap_or(sid);
        match event {
            "BeforeAgent" => self.on_prompt(sid, at_ms, p, out),
            "BeforeModel" => self.on_model_start(target, at_ms, p, out),
            "AfterModel" => self.on_model_chunk(target, at_ms, p, out),
            "BeforeTool" => {
                let call = self.on_tool_start(target, at_ms, p, out);
                if let Some(call) = call.filter(|_| p.tool_name.as_deref() == Some(subagents::TOOL))
                {
                    self.sub_agent_started(sid, target, call, at_ms, p, out);
                }
            }
            "AfterTool" => self.on_tool_end(target, at_ms, p, out),
            "AfterAgent" => self.hold_stop(sid, at_ms),
            "SessionEnd" => self.close(sid, at_ms, out),
            // SessionStart (the session is known now), BeforeToolSelection, PreCompress
            // (fired before every model call, compressing or not), Notification.
            _ => {}
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
            self.end_turn(sid, at_ms, "interrupted", out);
        }
        let s = self.sessions.entry(sid.to_string()).or_default();
        s.turn_open = true;
        s.turn_at = at_ms;
        s.calls = 0;
        s.model_calls = 0;
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
        self.refuse_pending(sid, at_ms, out);
        self.unanswered(sid, at_ms, out);
        let request = p.llm_request.as_ref();
        let s = self.sessions.entry(sid.to_string()).or_default();
        s.model = Some(ModelStart {
            at_ms,
            model: request.and_then(|r| r.model.clone()).unwrap_or_default(),
            max_tokens: request.and_then(|r| r.config.as_ref()?.max_output_tokens),
            first_chunk_ms: None,
        });
    }

    fn on_model_chunk(
        &mut self,
        sid: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let Some(start) = s.model.as_mut() else {
            return;
        };
        start.first_chunk_ms.get_or_insert(at_ms);
        let Some(reason) = p.finish_reason() else {
            return;
        };
        let start = s.model.take().expect("checked above");
        s.model_calls += 1;
        let id = format!("model-{}", s.model_calls);
        let usage = p
            .llm_response
            .as_ref()
            .and_then(|r| r.usage_metadata)
            .unwrap_or_default();
        // Gemini counts cached tokens inside the prompt's; the protocol keeps them apart.
        let prompt = usage.prompt_token_count.unwrap_or(0);
        let cached = usage.cached_content_token_count.unwrap_or(0).min(prompt);
        let model = p
            .llm_request
            .as_ref()
            .and_then(|r| r.model.clone())
            .unwrap_or(start.model);
        out.push(record(
            sid,
            Event::CallSent(CallSent {
                id: Some(Cow::Owned(id)),
                request: Request {
                    model: Cow::Owned(model.clone()),
                    provider: Some(Cow::Borrowed(PROVIDER)),
                    max_tokens: start.max_tokens,
                    messages: None,
                    system: None,
                },
                response: Some(Response {
                    id: None,
                    model: Some(Cow::Owned(model)),
                    stop_reason: Some(Cow::Owned(reason.to_string())),
                    content: None,
                }),
                usage: Usage {
                    input_tokens: prompt - cached,
                    // Gemini bills its thoughts as output, and counts them apart from the
                    // candidates; the protocol's output is what was billed as completion.
                    output_tokens: usage
                        .candidates_token_count
                        .unwrap_or(0)
                        .saturating_add(usage.thoughts_token_count.unwrap_or(0)),
                    cache_read_tokens: cached,
                    cache_write_tokens: 0,
                    reasoning_tokens: usage.thoughts_token_count,
                },
                started_ms: start.at_ms,
                finished_ms: at_ms.max(start.at_ms),
                first_token_ms: start.first_chunk_ms.map(|t| t.max(start.at_ms)),
                error: None,
            }),
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
        let s = self.sessions.entry(sid.to_string()).or_default();
        s.calls += 1;
        let id = format!("call-{}", s.calls);
        s.pending.push(Pending {
            id: id.clone(),
            name: name.clone(),
            input: p.tool_input.clone(),
            at_ms,
        });
        out.push(record(
            sid,
            Event::Calling {
                at_ms,
                call: Call {
                    id: Cow::Owned(id.clone()),
                    name: Cow::Owned(name),
                    arguments: raw(&p.tool_input),
                    within: None,
                },
            },
        ));
        Some(id)
    }

    fn on_tool_end(&mut self, sid: &str, at_ms: u64, p: &Payload, out: &mut Vec<Record<'static>>) {
        let Some(name) = p.tool_name.as_deref() else {
            return;
        };
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        // `AfterTool` repeats its call's input: the call still running with that tool and that
        // input, else the oldest of that tool. Order alone would pair a denied call (which
        // gets no `AfterTool`) with the next call's end.
        let same = |c: &Pending| {
            c.name == name
                && c.input.as_ref().map(|i| i.get()) == p.tool_input.as_ref().map(|i| i.get())
        };
        let Some(i) = s
            .pending
            .iter()
            .position(same)
            .or_else(|| s.pending.iter().position(|c| c.name == name))
        else {
            return;
        };
        let pre = s.pending.remove(i);
        // The CLI reports a tool that could not run as `{"error": …}`; a command that ran and
        // exited non-zero is not an error of the tool, and Gemini says so only in its text.
        let failed = p
            .tool_response
            .as_ref()
            .and_then(|r| serde_json::from_str::<serde_json::Value>(r.get()).ok())
            .is_some_and(|v| v.get("error").is_some_and(|e| !e.is_null()));
        out.push(
            Ended {
                session: sid,
                id: pre.id,
                name: pre.name,
                arguments: raw(&pre.input).or_else(|| raw(&p.tool_input)),
                output: raw(&p.tool_response),
                started_ms: pre.at_ms,
            }
            .record(at_ms, Outcome::of(false, failed)),
        );
    }

    /// A model call whose finishing chunk never came (the stream broke, or the CLI was
    /// stopped): it is still a model call, with an error and no usage, not lost.
    fn unanswered(&mut self, sid: &str, at_ms: u64, out: &mut Vec<Record<'static>>) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let Some(start) = s.model.take() else {
            return;
        };
        s.model_calls += 1;
        let call = Unanswered {
            id: format!("model-{}", s.model_calls),
            model: start.model,
            provider: PROVIDER,
            max_tokens: start.max_tokens,
            started_ms: start.at_ms,
            first_token_ms: start.first_chunk_ms,
        };
        out.push(call.record(sid, at_ms, "the answer ended without a finishing chunk"));
    }

    /// Calls that never got their `AfterTool`: a hook denied them, and they never ran.
    fn refuse_pending(&mut self, sid: &str, at_ms: u64, out: &mut Vec<Record<'static>>) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        for pre in s.pending.drain(..) {
            out.push(
                Ended {
                    session: sid,
                    id: pre.id,
                    name: pre.name,
                    arguments: raw(&pre.input),
                    output: None,
                    started_ms: pre.at_ms,
                }
                .record(at_ms, Outcome::Refused),
            );
        }
    }
}

#[cfg(test)]
mod tests;
