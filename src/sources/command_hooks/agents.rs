//! Which agent's hooks a payload comes from, and one adapter per agent: the hook, the journal
//! and the daemon are shared, and the daemon hands each payload to its agent's adapter. An
//! agent is a folder beside `claude_code/` plus a line in each `match` here.
//!
//! Codex's hooks are Claude Code's shape, so its adapter wraps Claude Code's: the one place an
//! agent folder uses another's.
//!
//! The hook learns the agent from its command line (`--agent gemini`, written by `install`);
//! a hook without one is Claude Code's, or albedo's, which sends Claude Code's payloads.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

pub use super::agent::Agent;
use super::{claude_code, codex, copilot, gemini, opencode};
use crate::protocol::Record;

/// What the daemon reads of every payload, whatever its agent.
#[derive(Debug, Deserialize)]
pub struct Head {
    pub session_id: String,
    pub hook_event_name: String,
    /// Only on `albedo-otel doctor`'s test payload: which test it is.
    #[serde(default)]
    pub doctor_id: Option<String>,
}

/// A payload, read by its agent's types.
#[derive(Debug)]
pub enum Parsed {
    ClaudeCode(claude_code::Payload),
    Gemini(gemini::Payload),
    Codex(codex::Payload),
    Copilot(copilot::Payload),
    /// Boxed: opencode's payload is the largest by far, and every other one would pay for it.
    Opencode(Box<opencode::Payload>),
}

/// Every agent's adapter, and which agent each session is.
#[derive(Debug)]
pub struct Adapters {
    claude_code: claude_code::Adapter,
    gemini: gemini::Adapter,
    codex: codex::Adapter,
    copilot: copilot::Adapter,
    opencode: opencode::Adapter,
    of: HashMap<String, Agent>,
}

impl Adapters {
    /// `grace_ms`: how long Claude Code's `Stop` waits for a held stop's continuation.
    pub fn new(grace_ms: u64) -> Self {
        Adapters {
            claude_code: claude_code::Adapter::new(grace_ms),
            gemini: gemini::Adapter::new(),
            codex: codex::Adapter::new(grace_ms),
            copilot: copilot::Adapter::new(),
            opencode: opencode::Adapter::new(),
            of: HashMap::new(),
        }
    }

    fn agent(&self, session: &str) -> Agent {
        let own = claude_code::owner(session);
        self.of.get(own).copied().unwrap_or_default()
    }

    /// Reads a payload as `agent`'s adapter takes it: an error names why it is not one.
    pub fn parse(&self, agent: Agent, payload: &RawValue) -> Result<Parsed, String> {
        Ok(match agent {
            Agent::ClaudeCode => {
                Parsed::ClaudeCode(serde_json::from_str(payload.get()).map_err(|e| e.to_string())?)
            }
            Agent::Gemini => {
                Parsed::Gemini(serde_json::from_str(payload.get()).map_err(|e| e.to_string())?)
            }
            Agent::Codex => {
                Parsed::Codex(codex::Payload::parse(payload.get()).map_err(|e| e.to_string())?)
            }
            Agent::Copilot => {
                Parsed::Copilot(serde_json::from_str(payload.get()).map_err(|e| e.to_string())?)
            }
            Agent::Opencode => {
                Parsed::Opencode(serde_json::from_str(payload.get()).map_err(|e| e.to_string())?)
            }
        })
    }

    /// Takes one payload received at `at_ms`; appends records to `out`.
    pub fn push(
        &mut self,
        payload: Parsed,
        at_ms: u64,
        transcripts: &mut dyn claude_code::Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        match payload {
            Parsed::ClaudeCode(p) => {
                self.note(Agent::ClaudeCode, &p.session_id);
                self.claude_code.push(at_ms, &p, transcripts, out);
            }
            Parsed::Gemini(p) => {
                self.note(Agent::Gemini, &p.session_id);
                self.gemini.push(at_ms, &p, out);
            }
            Parsed::Codex(p) => {
                self.note(Agent::Codex, &p.hook.session_id);
                self.codex.push(at_ms, p, out);
            }
            Parsed::Copilot(p) => {
                self.note(Agent::Copilot, &p.session_id);
                self.copilot.push(at_ms, &p, transcripts, out);
            }
            Parsed::Opencode(p) => {
                self.note(Agent::Opencode, &p.session_id);
                self.opencode.push(at_ms, &p, out);
            }
        }
    }

    /// Ends what time ends (Claude Code's held stops, Copilot's turns whose log is due).
    pub fn tick(
        &mut self,
        now_ms: u64,
        transcripts: &mut dyn claude_code::Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        self.claude_code.tick(now_ms, out);
        self.codex.claude_code_mut().tick(now_ms, out);
        self.copilot.tick(now_ms, transcripts, out);
    }

    pub fn open_turns(&self) -> usize {
        self.claude_code.open_turns()
            + self.gemini.open_turns()
            + self.codex.claude_code().open_turns()
            + self.copilot.open_turns()
            + self.opencode.open_turns()
    }

    /// Whether session `id` is between turns.
    pub fn at_rest(&self, id: &str) -> bool {
        match self.agent(id) {
            Agent::ClaudeCode => self.claude_code.at_rest(id),
            Agent::Gemini => self.gemini.at_rest(id),
            Agent::Codex => self.codex.claude_code().at_rest(id),
            Agent::Copilot => self.copilot.at_rest(id),
            Agent::Opencode => self.opencode.at_rest(id),
        }
    }

    /// Gives up on a session that will send nothing more; see each adapter's `abandon`.
    pub fn abandon(
        &mut self,
        id: &str,
        at_ms: u64,
        transcripts: &mut dyn claude_code::Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        match self.agent(id) {
            Agent::ClaudeCode => self.claude_code.abandon(id, at_ms, transcripts, out),
            Agent::Gemini => self.gemini.abandon(id, at_ms, out),
            Agent::Codex => self.codex.abandon(id, at_ms, out),
            Agent::Copilot => self.copilot.abandon(id, at_ms, transcripts, out),
            Agent::Opencode => self.opencode.abandon(id, at_ms, out),
        }
        self.of.remove(id);
    }

    /// Where session `id`'s transcript has been read to (only Claude Code's is read).
    pub fn transcript_offset(&self, id: &str) -> u64 {
        match self.agent(id) {
            Agent::ClaudeCode => self.claude_code.transcript_offset(id),
            Agent::Gemini | Agent::Codex | Agent::Copilot | Agent::Opencode => 0,
        }
    }

    /// Session `id` is `agent`'s: said before anything else of the session is asked.
    pub fn note(&mut self, agent: Agent, id: &str) {
        self.of.entry(id.to_string()).or_insert(agent);
    }

    /// Resumes session `id` where an earlier daemon left it.
    pub fn resume(&mut self, id: &str, transcript_offset: u64) {
        match self.agent(id) {
            Agent::ClaudeCode => self.claude_code.resume(id, transcript_offset),
            Agent::Gemini | Agent::Codex | Agent::Copilot | Agent::Opencode => {}
        }
    }

    /// How much of session `id`'s conversation its model calls carry (Claude Code's, read from
    /// its transcript; Gemini's hooks carry no messages to export yet).
    pub fn message_budget(&mut self, id: &str, bytes: usize) {
        if self.agent(id) == Agent::ClaudeCode {
            self.claude_code.message_budget(id, bytes);
        }
    }
}
