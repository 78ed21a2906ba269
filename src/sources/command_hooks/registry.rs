//! The daemon's adapters, one per agent ([`Adapters`]), and which agent each session is: the
//! hook, the journal and the daemon are shared, and the daemon hands each payload to its
//! agent's adapter. An agent is a folder beside `claude_code/` with a type implementing its
//! rules ([`super::engine::AgentRules`], kept to the contract by the engine), plus a line in
//! the list in `command_hooks/mod.rs`.
//!
//! Codex's hooks are Claude Code's shape, so its adapter wraps Claude Code's: the one place an
//! agent folder uses another's.

use std::collections::HashMap;

use serde_json::value::RawValue;

use super::agent::Agent;
use crate::protocol::Record;
use crate::sources::command_hooks::engine::adapter::{Dispatch, Parsed};
use crate::sources::command_hooks::engine::files::{FileCursor, NoTranscripts, Transcripts};

/// Every agent's adapter, from the list in `command_hooks/mod.rs`.
fn registry(grace_ms: u64) -> Vec<(Agent, Box<dyn Dispatch>)> {
    Agent::ALL
        .into_iter()
        .map(|a| (a, a.adapter(grace_ms)))
        .collect()
}

/// Every agent's adapter, and which agent each session is.
#[derive(Debug)]
pub struct Adapters {
    adapters: Vec<(Agent, Box<dyn Dispatch>)>,
    of: HashMap<String, Agent>,
}

impl Adapters {
    /// `grace_ms`: how long a `Stop` waits for a held stop's continuation.
    pub fn new(grace_ms: u64) -> Self {
        Adapters {
            adapters: registry(grace_ms),
            of: HashMap::new(),
        }
    }

    fn adapter(&self, agent: Agent) -> Option<&dyn Dispatch> {
        self.adapters
            .iter()
            .find(|(a, _)| *a == agent)
            .map(|(_, d)| d.as_ref())
    }

    fn adapter_mut(&mut self, agent: Agent) -> Option<&mut Box<dyn Dispatch>> {
        self.adapters
            .iter_mut()
            .find(|(a, _)| *a == agent)
            .map(|(_, d)| d)
    }

    /// The agent of session `id` (a sub-agent's is its top session's).
    fn agent(&self, session: &str) -> Agent {
        let own = crate::sources::command_hooks::engine::session_key::top(session);
        self.of.get(own).copied().unwrap_or_default()
    }

    /// Reads a payload as `agent`'s adapter takes it: an error names why it is not one.
    pub fn parse(&self, agent: Agent, payload: &RawValue) -> Result<(Agent, Parsed), String> {
        let adapter = self
            .adapter(agent)
            .ok_or_else(|| format!("no adapter for {}", agent.name()))?;
        Ok((agent, adapter.parse(payload.get())?))
    }

    /// Takes one payload received at `at_ms`; appends records to `out`.
    pub fn push(
        &mut self,
        (agent, payload): (Agent, Parsed),
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(adapter) = self.adapter_mut(agent) else {
            return;
        };
        let session = adapter.session_of(&payload).map(str::to_string);
        adapter.take(payload, at_ms, files, out);
        if let Some(session) = session {
            self.note(agent, &session);
        }
    }

    /// Ends what time ends (held stops, logs that are due).
    pub fn tick(
        &mut self,
        now_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        for (_, a) in &mut self.adapters {
            a.tick(now_ms, files, out);
        }
    }

    /// Sessions the adapters keep anything of.
    pub fn kept(&self) -> usize {
        self.adapters.iter().map(|(_, a)| a.kept()).sum()
    }

    pub fn open_turns(&self) -> usize {
        self.adapters.iter().map(|(_, a)| a.open_turns()).sum()
    }

    /// Whether session `id` is between turns.
    pub fn at_rest(&self, id: &str) -> bool {
        self.adapter(self.agent(id)).is_none_or(|a| a.at_rest(id))
    }

    /// Gives up on a session that will send nothing more (see
    /// [`AgentRules::give_up`](super::engine::AgentRules::give_up)), and forgets whose
    /// it was.
    pub fn abandon(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let agent = self.agent(id);
        if let Some(a) = self.adapter_mut(agent) {
            a.abandon(id, at_ms, files, out);
        }
        self.of.remove(id);
    }

    /// Forgets session `id` once its journal is gone (it ended): nothing of it stays in
    /// memory in a daemon that never idles.
    pub fn forget(&mut self, id: &str) {
        // At rest, an abandon closes nothing that was not closed; what it says is not news.
        let mut closed = Vec::new();
        self.abandon(id, 0, &mut NoTranscripts, &mut closed);
    }

    /// Where session `id`'s transcript or log has been read to, if its agent reads one.
    pub fn cursor(&self, id: &str) -> Option<FileCursor> {
        self.adapter(self.agent(id)).and_then(|a| a.cursor(id))
    }

    /// Session `id` is `agent`'s: said before anything else of the session is asked.
    pub fn note(&mut self, agent: Agent, id: &str) {
        if !self.of.contains_key(id) {
            self.of.insert(id.to_string(), agent);
        }
    }

    /// Resumes session `id` where an earlier daemon left it.
    pub fn resume(&mut self, id: &str, at: FileCursor) {
        let agent = self.agent(id);
        if let Some(a) = self.adapter_mut(agent) {
            a.resume(id, at);
        }
    }

    /// How much of session `id`'s conversation its model calls carry.
    pub fn message_budget(&mut self, id: &str, bytes: usize) {
        let agent = self.agent(id);
        if let Some(a) = self.adapter_mut(agent) {
            a.message_budget(id, bytes);
        }
    }
}
