//! The promises every agent's adapter keeps, written once and run against each (the
//! conformance suite): an agent is driven through the same steps in its own payloads
//! ([`Script`], one per agent folder), the records are assembled, and the traces checked.
//! Where an agent cannot keep a promise, its script says why, here and nowhere else.

mod promises;

use serde_json::value::RawValue;
use serde_json::Value;

use super::claude_code::Transcripts;
use super::registry::{Adapters, Agent};
use crate::assemble::{AssembleConfig, Assembler, Output, Span};
use crate::protocol::Record;

/// What the user's agent did, whatever its hooks call it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step<'a> {
    /// A prompt: a new turn.
    Prompt(&'a str),
    /// A shell call starts (its id, where the agent has ids).
    ToolStart(&'a str),
    /// That call ends with its result.
    ToolEnd(&'a str),
    /// The agent stops (another hook may block it, and it goes on).
    Stop,
}

/// The promises of this suite, for a script to say which it cannot keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Promise {
    InterruptedTurnKeepsItsCalls,
    KilledTurnKeepsItsCalls,
    BlockedStopStaysOneTurn,
}

/// One agent's payloads for each step.
pub(crate) trait Script {
    fn agent(&self) -> Agent;
    /// The payloads `step` makes at `at_ms`; an agent that logs its calls elsewhere (Copilot)
    /// appends to `log` instead, which its adapter reads.
    fn step(&mut self, step: Step<'_>, at_ms: u64, log: &mut String) -> Vec<Value>;
    /// Why this agent cannot keep `promise`, if it cannot.
    fn cannot(&self, promise: Promise) -> Option<&'static str> {
        let _ = promise;
        None
    }
}

/// Every agent's script: one line per agent.
fn scripts() -> Vec<Box<dyn Script>> {
    vec![
        Box::new(super::claude_code::script::Claude),
        Box::new(super::codex::script::Codex),
        Box::new(super::gemini::script::Gemini),
        Box::new(super::copilot::script::Copilot),
        Box::new(super::opencode::script::Opencode::default()),
    ]
}

/// The log or transcript an agent's adapter reads: what its script wrote so far.
struct Log<'a>(&'a str);

impl Transcripts for Log<'_> {
    fn read_from(&mut self, _: &str, offset: u64) -> Vec<u8> {
        self.0.as_bytes()[(offset as usize).min(self.0.len())..].to_vec()
    }
}

pub(crate) const T0: u64 = 1_796_000_000_000;

/// Drives one agent through `steps` (times after [`T0`]), then `after` (ticks, an abandon);
/// returns the assembled spans.
struct Run {
    script: Box<dyn Script>,
    adapters: Adapters,
    log: String,
    records: Vec<Record<'static>>,
}

impl Run {
    fn new(script: Box<dyn Script>) -> Run {
        Run {
            script,
            adapters: Adapters::new(1_000),
            log: String::new(),
            records: Vec::new(),
        }
    }

    fn steps(&mut self, steps: &[(u64, Step<'_>)]) {
        let agent = self.script.agent();
        for (ms, step) in steps {
            let at = T0 + ms;
            for payload in self.script.step(*step, at, &mut self.log) {
                let raw: Box<RawValue> = serde_json::from_str(&payload.to_string()).unwrap();
                let parsed = self
                    .adapters
                    .parse(agent, &raw)
                    .unwrap_or_else(|e| panic!("{}: {e}: {payload}", agent.name()));
                let session = payload["session_id"].as_str().unwrap_or_default();
                self.adapters.note(agent, session);
                self.adapters
                    .push(parsed, at, &mut Log(&self.log), &mut self.records);
            }
        }
    }

    fn tick(&mut self, ms: u64) {
        self.adapters
            .tick(T0 + ms, &mut Log(&self.log), &mut self.records);
    }

    fn abandon(&mut self, ms: u64) {
        self.adapters
            .abandon(SESSION, T0 + ms, &mut Log(&self.log), &mut self.records);
    }

    fn spans(&self) -> Vec<Span> {
        let mut asm = Assembler::new(AssembleConfig::default());
        let mut out = Output::default();
        for r in &self.records {
            crate::protocol::validate(r).unwrap();
            asm.push(r, &mut out);
        }
        asm.finish(&mut out);
        assert_eq!(crate::testing::check_tree(&out.spans), Ok(()));
        out.spans
    }
}

/// The session every script speaks for.
pub(crate) const SESSION: &str = "conformance-session";

/// Runs `check` for every agent that can keep `promise`.
fn each_agent(promise: Promise, check: impl Fn(&mut Run) -> Result<(), String>) {
    let mut failed = Vec::new();
    for script in scripts() {
        if let Some(why) = script.cannot(promise) {
            eprintln!("{}: cannot keep {promise:?}: {why}", script.agent().name());
            continue;
        }
        let name = script.agent().name();
        let mut run = Run::new(script);
        if let Err(e) = check(&mut run) {
            failed.push(format!("{name}: {e}"));
        }
    }
    assert!(
        failed.is_empty(),
        "{promise:?} broken:\n{}",
        failed.join("\n")
    );
}

/// `at_ms` as RFC 3339, as agents that time their payloads write it.
pub(crate) fn iso(at_ms: u64) -> String {
    humantime::format_rfc3339_millis(
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(at_ms),
    )
    .to_string()
}
