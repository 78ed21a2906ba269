//! Sub-agents: `SubagentStart` opens a child session under the call that started it (the
//! `Agent` call, or the one another agent's adapter named), and `SubagentStop` reads the
//! child's transcript and closes it.

use std::borrow::Cow;

use super::payload::AgentInput;
use super::{Adapter, Payload, Spawned, Transcripts};
use crate::protocol::{Event, Record};
use crate::sources::command_hooks::engine::open_turn::{OpenTurn, Why};
use crate::sources::command_hooks::engine::records::{record, SubAgent};

impl Adapter {
    /// Call `call` of `session` (in `sid`'s family) is starting a sub-agent with `prompt`,
    /// and will name it when it ends (Codex's `spawn_agent`). The sub-agent's `SubagentStart`
    /// can come first (its hook and the call's end run at once): it then takes the oldest
    /// call still starting one.
    pub fn spawning(&mut self, sid: &str, session: &str, call: &str, prompt: &str) {
        if let Some(s) = self.sessions.get_mut(sid) {
            s.spawning.push(Spawned {
                session: session.to_string(),
                call: call.to_string(),
                prompt: prompt.to_string(),
            });
        }
    }

    /// Call `call` of `session` ended, naming the sub-agent it started (`None`: it started
    /// none, it failed). That sub-agent's `SubagentStart`, if still to come, opens it under
    /// this call, where the oldest call starting one would be a guess. One that came first
    /// took the oldest such call: this call is then left for the sub-agent still to start.
    pub fn spawned(
        &mut self,
        sid: &str,
        agent: Option<&str>,
        session: &str,
        call: &str,
        prompt: &str,
    ) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        if agent.is_some_and(|a| s.agents.contains_key(a)) {
            return;
        }
        s.spawning.retain(|p| p.call != call);
        if let Some(agent) = agent {
            let spawned = Spawned {
                session: session.to_string(),
                call: call.to_string(),
                prompt: prompt.to_string(),
            };
            s.spawned.insert(agent.to_string(), spawned);
        }
    }

    /// The calls of `by` (every session's, for `None`) still starting a sub-agent never will:
    /// `by` asks its model again (a call another hook denied gets no answer), or the turn is
    /// over. A later `SubagentStart` must not take them.
    pub fn forget_spawning(&mut self, sid: &str, by: Option<&str>) {
        if let Some(s) = self.sessions.get_mut(sid) {
            s.spawning.retain(|p| by.is_some_and(|b| p.session != b));
        }
    }

    pub(super) fn on_subagent_start(
        &mut self,
        sid: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(agent) = &p.agent_id else { return };
        let child = crate::sources::command_hooks::engine::session_key::sub_agent(sid, agent);
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let named = s
            .spawned
            .remove(agent)
            .or_else(|| (!s.spawning.is_empty()).then(|| s.spawning.remove(0)));
        let (parent, prompt) = match named {
            Some(Spawned {
                session,
                call,
                prompt,
            }) => (Some((session, call)), prompt),
            None => {
                let call = (!s.agent_calls.is_empty()).then(|| s.agent_calls.remove(0));
                let prompt = call
                    .as_ref()
                    .and_then(|c| s.turn.as_ref()?.pending.iter().find(|p| &p.id == c))
                    .and_then(|pre| pre.input.as_ref())
                    .and_then(|i| serde_json::from_str::<AgentInput>(i.get()).ok())
                    .and_then(|i| i.prompt)
                    .unwrap_or_default();
                (call.map(|c| (sid.to_string(), c)), prompt)
            }
        };
        s.agents.insert(agent.clone(), child.clone());
        let sub_agent = SubAgent {
            name: p.agent_type.clone().unwrap_or_else(|| "subagent".into()),
            model: None,
            workspace: p.cwd.clone(),
            under: parent.as_ref().map(|(session, call)| (session.as_str(), call.as_str())),
        };
        sub_agent.open(&child, at_ms, prompt, out);
        let c = self.sessions.entry(child).or_default();
        c.started = true;
        c.turn = Some(OpenTurn::new(at_ms));
    }

    pub(super) fn on_subagent_stop(
        &mut self,
        sid: &str,
        at_ms: u64,
        p: &Payload,
        transcripts: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(agent) = &p.agent_id else { return };
        let Some(child) = self
            .sessions
            .get_mut(sid)
            .and_then(|s| s.agents.remove(agent))
        else {
            return;
        };
        self.read_transcript(&child, p.agent_transcript_path.as_deref(), transcripts, out);
        out.push(record(
            &child,
            Event::Stopping {
                at_ms,
                reply: Cow::Owned(p.last_assistant_message.clone().unwrap_or_default()),
                held: 0,
            },
        ));
        // Its one turn ends as every turn does, and the sub-agent with it.
        if let Some(turn) = self.sessions.remove(&child).and_then(|c| c.turn) {
            turn.flush(&child, at_ms, Why::Stopped("end_turn"), out);
        }
        out.push(record(&child, Event::Closed { at_ms }));
        // The parent stopped while this one ran: now its turn may end (unless it answers
        // again, which puts the end off once more).
        if let Some(s) = self.sessions.get_mut(sid) {
            if s.agents.is_empty() && s.stop_after_agents {
                s.stop_after_agents = false;
                s.turn
                    .get_or_insert_with(|| OpenTurn::new(at_ms))
                    .hold(at_ms, "end_turn");
            }
        }
    }
}
