//! Sub-agents. Gemini CLI 0.61 runs a sub-agent inside its `invoke_agent` call: the
//! sub-agent's model and tool hooks come under the parent's session id, with no field that
//! marks them, between that call's `BeforeTool` and `AfterTool`, and no `BeforeAgent` or
//! `AfterAgent` of their own. So `invoke_agent`'s `BeforeTool` opens a session under the call,
//! with the call's prompt, the hooks until its `AfterTool` are that session's, and the
//! `AfterTool` closes it before it ends the call.
//!
//! Sub-agents started side by side (`wait_for_previous: false`) are each a session under its
//! own call: an `invoke_agent` call made before the sub-agent started last did anything is its
//! caller's, and an `AfterTool` ends the sub-agent whose call had that input. Their hooks in
//! between cannot be told apart: they all go to the one started last. An `invoke_agent` call
//! another hook denies gets no `AfterTool`, so the caller's later hooks go to a sub-agent that
//! never ran, until the turn ends.


use serde::Deserialize;

use super::{Adapter, Payload, Session, AGENT};
use crate::protocol::{Event, Record};
use crate::sources::command_hooks::engine::records::{record, SubAgent};
use crate::sources::command_hooks::engine::open_turn::{OpenTurn, Why};
use crate::sources::command_hooks::engine::AgentRules;

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

/// A sub-agent running: its session, the session whose call started it, that call's input,
/// and whether any hook was its own yet.
#[derive(Debug)]
pub(super) struct Running {
    session: String,
    caller: String,
    input: Option<String>,
    acted: bool,
}

impl Adapter {
    /// The session a model or tool hook of top session `sid` goes to: the sub-agent started
    /// last, if one runs, except for an `invoke_agent` call made before that sub-agent did
    /// anything (a call side by side with the one that started it: its caller's), and for an
    /// `invoke_agent`'s end (its caller's, once its sub-agent is closed).
    pub(super) fn target(
        &mut self,
        sid: &str,
        event: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) -> Option<String> {
        let invoke = p.tool_name.as_deref() == Some(TOOL);
        if event == "AfterTool" && invoke {
            return self.sub_agent_ended(sid, p, at_ms, out);
        }
        let s = self.sessions.get_mut(sid)?;
        let last = s.agents.last_mut()?;
        match event {
            "BeforeTool" if invoke && !last.acted => Some(last.caller.clone()),
            "BeforeModel" | "AfterModel" | "BeforeTool" | "AfterTool" => {
                last.acted = true;
                Some(last.session.clone())
            }
            _ => Some(last.session.clone()),
        }
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
        let Some(top) = self.sessions.get_mut(sid) else {
            return;
        };
        let Some(turn_at) = top.turn.as_ref().map(|t| t.at_ms) else {
            return;
        };
        // Unique across turns (call ids restart with each turn) and callers (each numbers its
        // own calls), and the same on a re-read.
        let child = crate::sources::command_hooks::engine::session_key::sub_agent(caller, &format!("{turn_at}-{call}"));
        top.agents.push(Running {
            session: child.clone(),
            caller: caller.to_string(),
            input: p.tool_input.as_ref().map(|i| i.get().to_string()),
            acted: false,
        });
        let input = p
            .tool_input
            .as_ref()
            .and_then(|i| serde_json::from_str::<Invoke>(i.get()).ok());
        let (name, prompt) = input.map_or((None, None), |i| (i.agent_name, i.prompt));
        let sub_agent = SubAgent {
            name: name.unwrap_or_else(|| AGENT.to_string()),
            model: None,
            workspace: p.cwd.clone(),
            under: Some((caller, &call)),
        };
        sub_agent.open(&child, at_ms, prompt.unwrap_or_default(), out);
        let session = Session {
            started: true,
            turn: Some(OpenTurn::new(at_ms)),
            ..Session::default()
        };
        self.sessions.insert(child, session);
    }

    /// An `invoke_agent` call of top session `sid` ended (`p`, its `AfterTool`, repeats its
    /// input): the sub-agent it started is over, that with the same input, else the one
    /// started last. Returns the call's caller, whose call it ends.
    fn sub_agent_ended(
        &mut self,
        sid: &str,
        p: &Payload,
        at_ms: u64,
        out: &mut Vec<Record<'static>>,
    ) -> Option<String> {
        let input = p.tool_input.as_ref().map(|i| i.get());
        let s = self.sessions.get_mut(sid)?;
        let i = s
            .agents
            .iter()
            .rposition(|a| a.input.as_deref() == input)
            .or(s.agents.len().checked_sub(1))?;
        let Running {
            session, caller, ..
        } = s.agents.remove(i);
        self.end_turn(&session, at_ms, Why::Stopped("end_turn"), out);
        self.sessions.remove(&session);
        out.push(record(&session, Event::Closed { at_ms }));
        Some(caller)
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
        for child in running.into_iter().rev().map(|r| r.session) {
            // Unfinished: its model call in flight is still a call, with an error.
            self.end_turn(&child, at_ms, Why::Unseen, out);
            if self.sessions.remove(&child).is_some() {
                out.push(record(&child, Event::Closed { at_ms }));
            }
        }
    }
}

#[cfg(test)]
mod tests;
