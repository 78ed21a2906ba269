//! The promises every agent's adapter keeps, written once and run against each (the
//! conformance suite): an agent is driven through the same steps in its own payloads
//! ([`Script`], one per agent folder), the records are assembled, and the traces checked.
//! Where an agent cannot keep a promise, its script says why, here and nowhere else.

mod continuation;
mod generated;
mod manifest;
mod models;
mod promises;
mod readme;
mod restart;
mod subagents;

use serde_json::value::RawValue;

use super::agent::Agent;
use super::registry::Adapters;
use super::steps::{Log, Model, Promise, Script, Step, Sub, SESSION, T0};
use crate::assemble::semconv::GEN_AI_OPERATION_NAME;
use crate::assemble::span::Value;
use crate::assemble::{AssembleConfig, Assembler, Output, Span};
use crate::protocol::Record;

/// Every agent's script, from the list in `command_hooks/mod.rs`.
fn scripts() -> Vec<Box<dyn Script>> {
    Agent::ALL.into_iter().map(|a| a.script()).collect()
}

/// How much of the conversation each model call carries, as the daemon sets it with capture
/// on (a resumed Claude Code session then reads its transcript's tail again).
const MESSAGE_BUDGET: usize = 64 << 10;

/// Drives one agent through `steps` (times after [`T0`]), then `after` (ticks, an abandon);
/// returns the assembled spans.
struct Run {
    script: Box<dyn Script>,
    adapters: Adapters,
    log: String,
    /// The adapters' reads of `log`.
    reads: Vec<(u64, usize)>,
    records: Vec<Record<'static>>,
    /// How many records there were at each restart: the exporter restarts with the daemon.
    restarts: Vec<usize>,
}

impl Run {
    fn new(script: Box<dyn Script>) -> Run {
        Run {
            script,
            adapters: Adapters::new(1_000),
            log: String::new(),
            reads: Vec::new(),
            records: Vec::new(),
            restarts: Vec::new(),
        }
    }

    fn steps(&mut self, steps: &[(u64, Step<'_>)]) {
        for (ms, step) in steps {
            let at = T0 + ms;
            let payloads = self.script.step(*step, at, &mut self.log);
            self.feed(payloads, at);
        }
    }

    /// Drives the sub-agent steps; an error if the script has no payloads for them.
    fn sub_agents(&mut self, steps: &[(u64, Sub<'_>)]) -> Result<(), String> {
        for (ms, step) in steps {
            let at = T0 + ms;
            let payloads = self
                .script
                .sub_agent(*step, at, &mut self.log)
                .ok_or_else(|| {
                    format!("its script has no payloads for {step:?}: write them in its script.rs, or say it `cannot`")
                })?;
            self.feed(payloads, at);
        }
        Ok(())
    }

    /// Drives the model-call steps, between `steps`; an error if the script has no payloads
    /// for them.
    fn models(&mut self, steps: &[(u64, Model<'_>)]) -> Result<(), String> {
        for (ms, step) in steps {
            let at = T0 + ms;
            let payloads = self
                .script
                .model(*step, at, &mut self.log)
                .ok_or_else(|| {
                    format!("its script has no payloads for {step:?}: write them in its script.rs, or say it `cannot`")
                })?;
            self.feed(payloads, at);
        }
        Ok(())
    }

    fn feed(&mut self, payloads: Vec<serde_json::Value>, at: u64) {
        let agent = agent_of(self.script.as_ref());
        for payload in payloads {
            let raw: Box<RawValue> = serde_json::from_str(&payload.to_string()).unwrap();
            let parsed = self
                .adapters
                .parse(agent, &raw)
                .unwrap_or_else(|e| panic!("{}: {e}: {payload}", agent.name()));
            let session = payload["session_id"].as_str().unwrap_or_default();
            self.adapters.note(agent, session);
            self.adapters.push(
                parsed,
                at,
                &mut Log {
                    text: &self.log,
                    script: self.script.as_ref(),
                    reads: &mut self.reads,
                },
                &mut self.records,
            );
        }
    }

    fn tick(&mut self, ms: u64) {
        self.adapters.tick(
            T0 + ms,
            &mut Log {
                text: &self.log,
                script: self.script.as_ref(),
                reads: &mut self.reads,
            },
            &mut self.records,
        );
    }

    fn abandon(&mut self, ms: u64) {
        self.adapters.abandon(
            SESSION,
            T0 + ms,
            &mut Log {
                text: &self.log,
                script: self.script.as_ref(),
                reads: &mut self.reads,
            },
            &mut self.records,
        );
    }

    /// A running call's output of about `bytes`, at `ms`, in the agent's log.
    fn filler(&mut self, bytes: usize, ms: u64) {
        self.script.filler(bytes, T0 + ms, &mut self.log);
    }

    /// What a new daemon does between turns (daemon/ending.rs saves, daemon/mod.rs
    /// restores): takes the resume point the adapters report, drops them, and resumes the
    /// session in new ones, with capture on. Returns the resume point; the reads recorded
    /// from then on are the new adapters'.
    fn restart(&mut self) -> u64 {
        let agent = agent_of(self.script.as_ref());
        let at = self.adapters.cursor(SESSION).unwrap_or_default();
        let offset = at.offset;
        let mut fresh = Adapters::new(1_000);
        fresh.note(agent, SESSION);
        fresh.message_budget(SESSION, MESSAGE_BUDGET);
        fresh.resume(SESSION, at);
        self.adapters = fresh;
        self.reads.clear();
        self.restarts.push(self.records.len());
        offset
    }

    /// Sessions the adapters keep anything of.
    fn kept(&self) -> usize {
        self.adapters.kept()
    }

    /// The spans, as the exporters of the daemons that ran made them: at each restart the old
    /// one ends, and the new one goes on from the seed the old one's last checkpoint saved.
    fn spans(&self) -> Vec<Span> {
        let mut out = Output::default();
        let mut seed = None;
        let mut from = 0;
        for to in self.restarts.iter().copied().chain([self.records.len()]) {
            let mut asm = Assembler::new(AssembleConfig::default());
            if let Some(saved) = seed.take() {
                asm.resume(SESSION, &saved, &mut out);
            }
            for r in &self.records[from..to] {
                crate::protocol::validate(r).unwrap();
                asm.push(r, &mut out);
            }
            // As the daemon saves it with the resume point, and the next one reads it.
            let saved = serde_json::to_string(&asm.seed(SESSION)).unwrap();
            seed = serde_json::from_str(&saved).unwrap();
            asm.finish(&mut out);
            from = to;
        }
        assert_eq!(crate::testing::check_tree(&out.spans), Ok(()));
        out.spans
    }
}

/// Runs `check` for every agent that can keep `promise`.
fn each_agent(promise: Promise, check: impl Fn(&mut Run) -> Result<(), String>) {
    let mut failed = Vec::new();
    for script in scripts() {
        let name = script.spec().name;
        if let Some(why) = script.cannot(promise) {
            eprintln!("{name}: cannot keep {promise:?}: {why}");
            continue;
        }
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

/// The agent a script speaks for, by its spec's name.
/// The turns' roots, oldest first, each with the spans of its trace whose operation is `op`.
fn turns<'a>(spans: &'a [Span], op: &str) -> Vec<(&'a Span, Vec<&'a Span>)> {
    let mut roots: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_none())
        .collect();
    roots.sort_by_key(|r| r.start_ns);
    roots
        .into_iter()
        .map(|root| {
            let of_op = spans
                .iter()
                .filter(|s| {
                    s.trace_id == root.trace_id
                        && s.attr(GEN_AI_OPERATION_NAME).and_then(Value::as_str) == Some(op)
                })
                .collect();
            (root, of_op)
        })
        .collect()
}

fn agent_of(script: &dyn Script) -> Agent {
    Agent::from_name(script.spec().name).expect("every script's spec is a registered agent's")
}
