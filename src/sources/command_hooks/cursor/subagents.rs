//! Sub-agents. `subagentStart` (in the parent's conversation) names the sub-agent, its task
//! and the call that started it (`tool_call_id`, the `Task` tool's `tool_use_id`);
//! `subagentStop` its status and summary. The sub-agent is a session of its own under that
//! call (or, when the call was not seen, under a `Task` call made for it from these two
//! hooks). Hooks that name the sub-agent's own conversation go to its session; those that
//! name the parent's cannot be told from the parent's own, and stay in the parent's turn.


use serde_json::value::RawValue;

use super::{Adapter, Payload, Session, AGENT};
use crate::protocol::{Event, Record};
use crate::sources::command_hooks::engine::records::{record, SubAgent};
use crate::sources::command_hooks::engine::session_key;
use crate::sources::command_hooks::engine::open_turn::{OpenTurn, Why};
use crate::sources::command_hooks::engine::AgentRules;

/// The tool that runs a sub-agent.
const TOOL: &str = "Task";

/// A sub-agent running.
#[derive(Debug)]
pub(super) struct Running {
    session: String,
    /// Its own conversation id, as Cursor names it.
    id: Option<String>,
    kind: Option<String>,
    /// The call it runs under, in its parent's session, and whether that call was made for
    /// it here (then its end is the sub-agent's).
    call: String,
    made: bool,
}

impl Adapter {
    pub(super) fn sub_agent_started(
        &mut self,
        sid: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) {
        self.ensure_turn(sid, at_ms, out);
        let named = p
            .tool_call_id
            .clone()
            .filter(|c| self.pending_call(sid, c).is_some());
        let last_task = || {
            let s = self.sessions.get(sid)?;
            let taken: Vec<&str> = s.agents.iter().map(|a| a.call.as_str()).collect();
            s.turn
                .as_ref()?
                .pending
                .iter()
                .rev()
                .find(|c| c.name == TOOL && !taken.contains(&c.id.as_str()))
                .map(|c| c.id.clone())
        };
        let (call, made) = match named.or_else(last_task) {
            Some(call) => (call, false),
            None => {
                let input = serde_json::json!({"subagent_type": p.subagent_type, "task": p.task});
                let input = RawValue::from_string(input.to_string()).ok();
                let call = self.start_call(sid, TOOL, input, at_ms, out);
                (call, true)
            }
        };
        let Some(top) = self.sessions.get_mut(sid) else {
            return;
        };
        let own = p.subagent_id.clone().filter(|i| !i.is_empty());
        let turn_at = top.turn.as_ref().map_or(at_ms, |t| t.at_ms);
        let key = own.clone().unwrap_or_else(|| format!("{turn_at}-{call}"));
        let child = session_key::sub_agent(sid, &key);
        top.agents.push(Running {
            session: child.clone(),
            id: own.clone(),
            kind: p.subagent_type.clone(),
            call: call.clone(),
            made,
        });
        if let Some(own) = own {
            self.aliases.insert(own, child.clone());
        }
        let sub_agent = SubAgent {
            name: p.subagent_type.clone().unwrap_or_else(|| AGENT.to_string()),
            model: p.subagent_model.clone(),
            workspace: p.workspace().map(str::to_string),
            under: Some((sid, &call)),
        };
        sub_agent.open(&child, at_ms, p.task.clone().unwrap_or_default(), out);
        let session = Session {
            turn: Some(OpenTurn::new(at_ms)),
            ..Session::default()
        };
        self.sessions.insert(child, session);
    }

    /// `subagentStop`, in the parent's conversation or the sub-agent's own: the one it names,
    /// else the one of its type, else the one started last, ends.
    pub(super) fn sub_agent_stopped(
        &mut self,
        sid: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) {
        let parent = self
            .sessions
            .iter()
            .find(|(_, s)| s.agents.iter().any(|a| a.session == sid))
            .map_or_else(|| sid.to_string(), |(id, _)| id.clone());
        let Some(s) = self.sessions.get_mut(&parent) else {
            return;
        };
        let i = s
            .agents
            .iter()
            .rposition(|a| a.session == sid)
            .or_else(|| {
                let id = p.subagent_id.as_ref()?;
                s.agents.iter().rposition(|a| a.id.as_ref() == Some(id))
            })
            .or_else(|| {
                let kind = p.subagent_type.as_ref()?;
                s.agents.iter().position(|a| a.kind.as_ref() == Some(kind))
            })
            .or(s.agents.len().checked_sub(1));
        let Some(i) = i else {
            return;
        };
        let running = s.agents.remove(i);
        let failed = matches!(p.status.as_deref(), Some("error") | Some("aborted"));
        let why = if failed {
            Why::Interrupted
        } else {
            Why::Stopped("end_turn")
        };
        if let Some(s) = self.sessions.get_mut(&running.session) {
            s.reply = p.summary.clone();
        }
        self.end_turn(&running.session, at_ms, why, out);
        self.forget_child(&running, at_ms, out);
        if running.made {
            let output = p
                .summary
                .as_deref()
                .and_then(|t| crate::protocol::Json::of(t).ok());
            self.end_call(
                &parent,
                &running.call,
                output.map(|j| j.0.into_owned()),
                failed,
                at_ms,
                out,
            );
        }
    }

    /// Top session `sid`'s turn ends: its sub-agents still running end with it, unfinished,
    /// and the calls made for them, failed.
    pub(super) fn sub_agents_ended(
        &mut self,
        sid: &str,
        at_ms: u64,
        out: &mut Vec<Record<'static>>,
    ) {
        for running in self.take_agents(sid) {
            self.forget_child(&running, at_ms, out);
            if running.made {
                self.end_call(sid, &running.call, None, true, at_ms, out);
            }
        }
    }

    /// Top session `sid` is given up: its sub-agents close with it, their calls still open.
    pub(super) fn sub_agents_gone(
        &mut self,
        sid: &str,
        at_ms: u64,
        out: &mut Vec<Record<'static>>,
    ) {
        for running in self.take_agents(sid) {
            self.forget_child(&running, at_ms, out);
        }
    }

    fn take_agents(&mut self, sid: &str) -> Vec<Running> {
        let mut running = match self.sessions.get_mut(sid) {
            Some(s) => std::mem::take(&mut s.agents),
            None => Vec::new(),
        };
        running.reverse();
        running
    }

    fn forget_child(&mut self, running: &Running, at_ms: u64, out: &mut Vec<Record<'static>>) {
        // A sub-agent's own sub-agents go first.
        self.sub_agents_gone(&running.session.clone(), at_ms, out);
        if let Some(id) = &running.id {
            self.aliases.remove(id);
        }
        if self.sessions.remove(&running.session).is_some() {
            out.push(record(&running.session, Event::Closed { at_ms }));
        }
    }
}
