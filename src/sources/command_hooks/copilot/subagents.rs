//! Sub-agents, from the session log: Copilot writes a sub-agent's events into its parent's
//! `events.jsonl`, each with the sub-agent's `agentId`. `subagent.started` names the `task`
//! call that started it, so the sub-agent opens as a session of its own under that call, its
//! first `user.message` is its prompt, and its model and tool calls are its own.
//!
//! The `task` call completes just before `subagent.completed` is written, so the sub-agent
//! is closed when either comes: its spans stay inside the call that started it. A sub-agent
//! run in the background (`mode: "background"`) that outlives its parent's turn is closed,
//! unfinished, with that turn: its later events are left out.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::sources::command_hooks::engine::records::{record, SubAgent};
use super::payload::LogEvent;
use crate::protocol::{Event, Record};

/// A sub-agent open in the log being read.
#[derive(Debug)]
struct Child {
    session: String,
    /// The `task` call that started it.
    call: String,
    prompted: bool,
}

/// The sub-agents a turn's log has opened and not yet closed, by `agentId`.
#[derive(Debug, Default)]
pub(super) struct Children {
    open: HashMap<String, Child>,
}

impl Children {
    /// The session an event belongs to: the top session's, or an open sub-agent's. `None`
    /// for a sub-agent whose start the turn did not see (it is left out).
    pub fn session_of(&self, sid: &str, e: &LogEvent) -> Option<String> {
        match &e.agent_id {
            None => Some(sid.to_string()),
            Some(agent) => self.open.get(agent).map(|c| c.session.clone()),
        }
    }

    /// Takes the events that open, prompt and close sub-agents; returns whether `e` was one
    /// of those and needs nothing more.
    /// `caller`: the session that made a running call (a sub-agent's `task` call starts a
    /// sub-agent of its own).
    pub fn take(
        &mut self,
        sid: &str,
        at: u64,
        e: &LogEvent,
        caller: &dyn Fn(&str) -> Option<String>,
        out: &mut Vec<Record<'static>>,
    ) -> bool {
        let Some(agent) = &e.agent_id else {
            return false;
        };
        let text = |k: &str| e.data[k].as_str().map(str::to_string);
        match e.kind.as_str() {
            "subagent.started" => {
                let Some(call) = text("toolCallId") else {
                    return true;
                };
                let session = crate::sources::command_hooks::engine::session_key::sub_agent(sid, agent);
                let name = text("agentName").or_else(|| text("agentType"));
                let parent = caller(&call).unwrap_or_else(|| sid.into());
                let sub_agent = SubAgent {
                    name: name.unwrap_or_else(|| "subagent".into()),
                    model: text("model"),
                    workspace: None,
                    under: Some((&parent, &call)),
                };
                out.push(sub_agent.opened(&session, at));
                let child = Child {
                    session,
                    call,
                    prompted: false,
                };
                self.open.insert(agent.clone(), child);
                true
            }
            "user.message" => {
                if let Some(c) = self.open.get_mut(agent).filter(|c| !c.prompted) {
                    c.prompted = true;
                    out.push(record(
                        &c.session,
                        Event::Prompted {
                            at_ms: at,
                            text: Cow::Owned(text("content").unwrap_or_default()),
                        },
                    ));
                }
                true
            }
            "subagent.completed" => {
                self.close(agent, at, "end_turn", out);
                true
            }
            "subagent.failed" => {
                self.close(agent, at, "error", out);
                true
            }
            _ => false,
        }
    }

    /// Closes the sub-agents call `call` started: the call is over.
    pub fn call_ended(&mut self, call: &str, at: u64, out: &mut Vec<Record<'static>>) {
        let agents: Vec<String> = self
            .open
            .iter()
            .filter(|(_, c)| c.call == call)
            .map(|(a, _)| a.clone())
            .collect();
        for agent in agents {
            self.close(&agent, at, "end_turn", out);
        }
    }

    /// Closes every sub-agent still open when the turn's log ends, unfinished.
    pub fn close_all(&mut self, at: u64, out: &mut Vec<Record<'static>>) {
        let agents: Vec<String> = self.open.keys().cloned().collect();
        for agent in agents {
            self.close(&agent, at, "interrupted", out);
        }
    }

    fn close(
        &mut self,
        agent: &str,
        at: u64,
        reason: &'static str,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(c) = self.open.remove(agent) else {
            return;
        };
        if c.prompted {
            out.push(record(
                &c.session,
                Event::TurnEnded {
                    at_ms: at,
                    reason: Some(Cow::Borrowed(reason)),
                },
            ));
        }
        out.push(record(&c.session, Event::Closed { at_ms: at }));
    }
}
