//! Sub-agents. Qwen Code's `agent` tool starts one: `SubagentStart` names it (`agent_id`,
//! `<type>-<the provider's call id>`), the hooks of its own calls carry that `agent_id`, its
//! model calls in the transcript carry it as `subagent_id`, and `SubagentStop` ends it. It is
//! a session of its own, under the `agent` call that started it (the one whose call id its
//! `agent_id` ends with, else the oldest not yet started). A sub-agent run in the background
//! (the `agent` tool's default) answers its call at once and goes on: it ends at its
//! `SubagentStop`, or with the turn.

use std::borrow::Cow;

use super::payload::{AgentInput, Payload};
use super::{new_turn, Adapter, Turn, AGENT};
use crate::protocol::{Event, Record};
use crate::sources::command_hooks::engine::records::{record, SubAgent};
use crate::sources::command_hooks::engine::session_key;
use crate::sources::command_hooks::engine::open_turn::Why;

/// The tool that starts a sub-agent.
pub const TOOL: &str = "agent";

/// A running sub-agent: its session, and its calls not ended yet.
#[derive(Debug)]
pub(super) struct Child {
    pub session: String,
    pub calls: Turn,
}

/// An `agent` call waiting for its sub-agent's `SubagentStart`.
#[derive(Debug)]
pub(super) struct AgentCall {
    tool_use_id: String,
    call_id: Option<String>,
    prompt: Option<String>,
}

impl AgentCall {
    pub(super) fn of(tool_use_id: &str, p: &Payload) -> AgentCall {
        let input = p
            .tool_input
            .as_ref()
            .and_then(|i| serde_json::from_str::<AgentInput>(i.get()).ok());
        AgentCall {
            tool_use_id: tool_use_id.to_string(),
            call_id: p.tool_call_id.clone(),
            prompt: input.and_then(|i| i.prompt),
        }
    }
}

impl Adapter {
    /// The session a hook of top session `sid` carrying `agent_id` belongs to: a running
    /// sub-agent's, else (an id no `SubagentStart` named) a background agent's.
    pub(super) fn target(
        &mut self,
        sid: &str,
        event: &str,
        agent_id: Option<&str>,
        at_ms: u64,
        out: &mut Vec<Record<'static>>,
    ) -> String {
        let Some(a) = agent_id else {
            return sid.to_string();
        };
        // These two name the sub-agent they start or stop, and are its parent's.
        if matches!(event, "SubagentStart" | "SubagentStop") {
            return sid.to_string();
        }
        if let Some(child) = self.sessions.get(sid).and_then(|s| s.agents.get(a)) {
            return child.session.clone();
        }
        self.background_session(sid, a, None, at_ms, out)
    }

    pub(super) fn sub_agent_started(
        &mut self,
        sid: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(agent) = p.agent_id.as_deref() else {
            return;
        };
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let call = s.turn.as_mut().and_then(|t| {
            let waiting = &mut t.own.agent_calls;
            let named = waiting.iter().position(|c| {
                c.call_id
                    .as_deref()
                    .is_some_and(|id| agent.ends_with(&format!("-{id}")))
            });
            let i = named.or((!waiting.is_empty()).then_some(0))?;
            Some(waiting.remove(i))
        });
        let child = session_key::sub_agent(sid, agent);
        s.agents.insert(
            agent.to_string(),
            Child {
                session: child.clone(),
                calls: new_turn(at_ms),
            },
        );
        let sub_agent = SubAgent {
            name: p.agent_type.clone().unwrap_or_else(|| AGENT.to_string()),
            model: None,
            workspace: p.cwd.clone(),
            under: call.as_ref().map(|c| (sid, c.tool_use_id.as_str())),
        };
        let prompt = call.as_ref().and_then(|c| c.prompt.clone()).unwrap_or_default();
        sub_agent.open(&child, at_ms, prompt, out);
    }

    pub(super) fn sub_agent_stopped(
        &mut self,
        sid: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(agent) = p.agent_id.as_deref() else {
            return;
        };
        let Some(child) = self
            .sessions
            .get_mut(sid)
            .and_then(|s| s.agents.remove(agent))
        else {
            return;
        };
        if let Some(reply) = &p.last_assistant_message {
            out.push(record(
                &child.session,
                Event::Stopping {
                    at_ms,
                    reply: Cow::Owned(reply.clone()),
                    held: 0,
                },
            ));
        }
        child
            .calls
            .flush(&child.session, at_ms, Why::Stopped("end_turn"), out);
        out.push(record(&child.session, Event::Closed { at_ms }));
    }
}
