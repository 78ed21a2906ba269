//! Sub-agents. Gemini CLI 0.61 runs a sub-agent inside its `invoke_agent` call: the
//! sub-agent's model and tool hooks come under the parent's session id, with no field that
//! marks them, between that call's `BeforeTool` and `AfterTool`, and no `BeforeAgent` or
//! `AfterAgent` of their own. So `invoke_agent`'s `BeforeTool` opens a session under the call,
//! with the call's prompt, the hooks until its `AfterTool` are that session's, and the
//! `AfterTool` closes it before it ends the call.
//!
//! Sub-agents started side by side (`wait_for_previous: false`) cannot be told apart: their
//! hooks all go to the one started last. An `invoke_agent` call another hook denies gets no
//! `AfterTool`, so the caller's later hooks go to a sub-agent that never ran, until the turn
//! ends.

use std::borrow::Cow;

use serde::Deserialize;

use super::{Adapter, Payload, Session, AGENT};
use crate::protocol::{Event, ParentRef, Record, SessionInfo};
use crate::sources::command_hooks::records::record;

/// The tool that runs a sub-agent.
pub const TOOL: &str = "invoke_agent";

/// `invoke_agent`'s input.
#[derive(Debug, Deserialize)]
struct Invoke {
    #[serde(default)]
    agent_name: Option<String>,
    #[serde(default)]
    prompt: Option<String>,
}

impl Adapter {
    /// The sub-agent of top session `sid` that hooks go to now, if one runs.
    pub(super) fn running_agent(&self, sid: &str) -> Option<String> {
        let s = self.sessions.get(sid)?;
        s.agents.last().cloned()
    }

    /// `caller` (top session `sid` or one of its sub-agents) made `invoke_agent` call `call`:
    /// the sub-agent opens under it.
    pub(super) fn sub_agent_started(
        &mut self,
        sid: &str,
        caller: &str,
        call: String,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(top) = self.sessions.get_mut(sid).filter(|s| s.turn_open) else {
            return;
        };
        // Unique across turns (call ids restart with each turn) and callers (each numbers its
        // own calls), and the same on a re-read.
        let child =
            super::super::session_key::sub_agent(caller, &format!("{}-{call}", top.turn_at));
        top.agents.push(child.clone());
        let input = p
            .tool_input
            .as_ref()
            .and_then(|i| serde_json::from_str::<Invoke>(i.get()).ok());
        let (name, prompt) = input.map_or((None, None), |i| (i.agent_name, i.prompt));
        out.push(record(
            &child,
            Event::Session(SessionInfo {
                at_ms,
                agent: Some(Cow::Owned(name.unwrap_or_else(|| AGENT.to_string()))),
                model: None,
                workspace: p.cwd.clone().map(Cow::Owned),
                parent: Some(ParentRef {
                    session: Cow::Owned(caller.to_string()),
                    call: Cow::Owned(call),
                }),
            }),
        ));
        out.push(record(
            &child,
            Event::Prompted {
                at_ms,
                text: Cow::Owned(prompt.unwrap_or_default()),
            },
        ));
        let session = Session {
            started: true,
            turn_open: true,
            turn_at: at_ms,
            ..Session::default()
        };
        self.sessions.insert(child, session);
    }

    /// An `invoke_agent` call of top session `sid` ended: the sub-agent started last is over.
    pub(super) fn sub_agent_ended(
        &mut self,
        sid: &str,
        at_ms: u64,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(child) = self.sessions.get_mut(sid).and_then(|s| s.agents.pop()) else {
            return;
        };
        self.end_turn(&child, at_ms, "end_turn", out);
        self.sessions.remove(&child);
        out.push(record(&child, Event::Closed { at_ms }));
    }

    /// Top session `sid`'s turn is over, or the session is: its sub-agents still running end
    /// with it, unfinished.
    pub(super) fn sub_agents_stopped(
        &mut self,
        sid: &str,
        at_ms: u64,
        out: &mut Vec<Record<'static>>,
    ) {
        let running = match self.sessions.get_mut(sid) {
            Some(s) => std::mem::take(&mut s.agents),
            None => return,
        };
        for child in running.into_iter().rev() {
            // Its model call in flight is still a call, with an error.
            self.unanswered(&child, at_ms, out);
            if self.sessions.remove(&child).is_some() {
                out.push(record(&child, Event::Closed { at_ms }));
            }
        }
    }
}

#[cfg(test)]
mod tests;
