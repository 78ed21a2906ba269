//! The model calls in Qwen Code's transcript, and the background agents they reveal.
//!
//! The CLI writes a `qwen-code.api_response` line for each model call when it ends, with the
//! call's duration: the call spans from its end less that duration. A sub-agent's calls carry
//! its `subagent_id` and go to its session. A `subagent_id` that no `SubagentStart` named is
//! one of the CLI's own background agents (memory extraction, skill review), which it runs
//! after a turn, at its own cost: its calls go in a session of its own, named after it, under
//! a `background_agent` call in the turn that caused it (whose end is held for the grace
//! anyway), so the turn stays one trace and the background work is marked as such
//! (`gen_ai.tool.name` `background_agent` on the call, the agent's name on its
//! `invoke_agent`). A background call seen with no turn open is a trace of its own.

use std::borrow::Cow;

use super::payload::{api_event, ApiEvent};
use super::{new_turn, Adapter, Turn};
use crate::protocol::{
    Call, CallSent, Called, Event, Json, Record,
};
use crate::sources::command_hooks::engine::files::Transcripts;
use crate::sources::command_hooks::engine::model_call::{
    error_text, Answer, Cache, ModelCall, Reasoning, Tokens,
};
use crate::sources::command_hooks::engine::records::{record, rfc3339_ms, SubAgent};
use crate::sources::command_hooks::engine::session_key;
use crate::sources::command_hooks::engine::open_turn::Why;

/// The tool name of the call a background agent's session is nested under.
pub const BACKGROUND_TOOL: &str = "background_agent";

/// One of the CLI's background agents, seen in the transcript.
#[derive(Debug)]
pub(super) struct Background {
    pub session: String,
    /// Its tool calls not ended yet.
    pub calls: Turn,
    /// The call in the turn that caused it, if a turn was open: `(id, start)`.
    call: Option<(String, u64)>,
    /// When its last call ended.
    last_ms: u64,
}

impl Adapter {
    /// Reads what session `sid`'s transcript has gained, and exports its model calls.
    pub(super) fn read(
        &mut self,
        sid: &str,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let Some(path) = s.transcript.clone() else {
            return;
        };
        let mut events = Vec::new();
        s.tail.read(&path, files, |line| events.extend(api_event(line)));
        let since = s.since;
        for e in events {
            self.model_call(sid, since, e, out);
        }
    }

    fn model_call(&mut self, sid: &str, since: u64, e: ApiEvent, out: &mut Vec<Record<'static>>) {
        // A call that cannot be placed in time cannot be placed in a turn.
        let Some(end) = e.timestamp.as_deref().and_then(rfc3339_ms) else {
            return;
        };
        if end < since {
            return;
        }
        if let Some(s) = self.sessions.get_mut(sid) {
            s.seen_ms = s.seen_ms.max(end);
        }
        let start = end.saturating_sub(e.duration_ms.unwrap_or(0));
        let target = match e.subagent_id.as_deref() {
            None => sid.to_string(),
            Some(a) => {
                let known = self
                    .sessions
                    .get(sid)
                    .and_then(|s| s.agents.get(a).map(|c| c.session.clone()));
                match known {
                    Some(child) => child,
                    None => {
                        let name = e.subagent_name.as_deref();
                        let child = self.background_session(sid, a, name, start, out);
                        if let Some(bg) = self
                            .sessions
                            .get_mut(sid)
                            .and_then(|s| s.background.get_mut(a))
                        {
                            bg.last_ms = bg.last_ms.max(end);
                        }
                        child
                    }
                }
            }
        };
        out.push(record(&target, Event::CallSent(call_sent(e, start, end))));
    }

    /// The session of background agent `id` of session `sid`, opened at `at_ms` the first
    /// time: under a `background_agent` call of the open turn, if there is one.
    pub(super) fn background_session(
        &mut self,
        sid: &str,
        id: &str,
        name: Option<&str>,
        at_ms: u64,
        out: &mut Vec<Record<'static>>,
    ) -> String {
        let Some(s) = self.sessions.get_mut(sid) else {
            return sid.to_string();
        };
        if let Some(bg) = s.background.get(id) {
            return bg.session.clone();
        }
        let session = session_key::sub_agent(sid, id);
        let name = name.unwrap_or(id).to_string();
        let call = s.turn.is_some().then(|| format!("{BACKGROUND_TOOL}-{id}"));
        if let Some(call) = &call {
            let arguments = Json::of(&serde_json::json!({"agent": name, "background": true})).ok();
            out.push(record(
                sid,
                Event::Calling {
                    at_ms,
                    call: Call {
                        id: Cow::Owned(call.clone()),
                        name: Cow::Borrowed(BACKGROUND_TOOL),
                        arguments,
                        within: None,
                    },
                },
            ));
        }
        let sub_agent = SubAgent {
            name,
            model: None,
            workspace: None,
            under: call.as_deref().map(|call| (sid, call)),
        };
        sub_agent.open(&session, at_ms, String::new(), out);
        s.background.insert(
            id.to_string(),
            Background {
                session: session.clone(),
                calls: new_turn(at_ms),
                call: call.map(|c| (c, at_ms)),
                last_ms: at_ms,
            },
        );
        session
    }

    /// Closes what session `sid`'s turn started: sub-agents still running end at `at_ms`,
    /// background agents at their last call, and the call each was nested under with them.
    pub(super) fn close_children(&mut self, sid: &str, at_ms: u64, out: &mut Vec<Record<'static>>) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let mut agents: Vec<_> = s.agents.drain().map(|(_, child)| child).collect();
        agents.sort_by(|a, b| a.session.cmp(&b.session));
        for child in agents {
            child
                .calls
                .flush(&child.session, at_ms, Why::Interrupted, out);
            out.push(record(&child.session, Event::Closed { at_ms }));
        }
        let mut background: Vec<Background> = s.background.drain().map(|(_, bg)| bg).collect();
        background.sort_by(|a, b| a.session.cmp(&b.session));
        for bg in background {
            // Its last sign of life: its last model call's end, or a tool call it started.
            let last_ms = bg
                .calls
                .pending
                .iter()
                .map(|c| c.at_ms)
                .fold(bg.last_ms, u64::max);
            bg.calls
                .flush(&bg.session, last_ms, Why::Stopped("end_turn"), out);
            out.push(record(&bg.session, Event::Closed { at_ms: last_ms }));
            if let Some((id, started_ms)) = bg.call {
                out.push(record(
                    sid,
                    Event::Called(Called {
                        call: Call {
                            id: Cow::Owned(id),
                            name: Cow::Borrowed(BACKGROUND_TOOL),
                            arguments: None,
                            within: None,
                        },
                        output: None,
                        started_ms,
                        finished_ms: last_ms.max(started_ms),
                        refused: false,
                        failed: false,
                    }),
                ));
            }
        }
    }
}

/// `gen_ai.provider.name` for how the CLI reached the model: Qwen's own service and
/// DashScope speak OpenAI's API too.
fn provider(auth_type: Option<&str>) -> &'static str {
    match auth_type {
        Some("anthropic") => "anthropic",
        Some("gemini") => "gcp.gemini",
        Some("vertex-ai") => "gcp.vertex_ai",
        _ => "openai",
    }
}

/// How Qwen's output counts the thoughts: `candidatesTokenCount` through the
/// OpenAI-compatible APIs (`openai`, `qwen-oauth`) is the completion, thoughts included;
/// through Gemini's own (`gemini`, `vertex-ai`) the answer alone, the thoughts counted apart.
/// Qwen's own totals (`getEventTotalTokenCount`, 0.24.4) add them for every sign-in but those
/// two; so does this.
fn reasoning(e: &ApiEvent) -> Reasoning {
    match e.auth_type.as_deref() {
        None | Some("openai") | Some("qwen-oauth") => Reasoning::Within,
        Some(_) => Reasoning::Apart,
    }
}

pub(super) fn call_sent(e: ApiEvent, start: u64, end: u64) -> CallSent<'static> {
    let failed = e.name == "qwen-code.api_error";
    ModelCall {
        id: e.response_id.clone(),
        model: e.model.clone().unwrap_or_default(),
        provider: Some(Cow::Borrowed(provider(e.auth_type.as_deref()))),
        started_ms: start,
        finished_ms: end,
        first_token_ms: e.ttft_ms.map(|t| start.saturating_add(t)),
        // Qwen counts cached tokens inside the input's.
        usage: Tokens {
            input: e.input_token_count.unwrap_or(0),
            cache_read: e.cached_content_token_count.unwrap_or(0),
            output: e.output_token_count.unwrap_or(0),
            reasoning: e.thoughts_token_count.unwrap_or(0),
            ..Tokens::default()
        }
        .usage(Cache::ReadsWithin, reasoning(&e)),
        answer: (!failed).then(|| Answer {
            id: e.response_id.clone(),
            ..Answer::default()
        }),
        error: failed
            .then(|| error_text(e.error.as_deref().unwrap_or("the model call failed")))
            .flatten(),
        ..ModelCall::default()
    }
    .call_sent()
}
