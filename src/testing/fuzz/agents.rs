//! Every agent's payloads as its own script makes them (`script.rs` in its folder, the one
//! the conformance suite drives), interleaved as the daemon meets them, through its dispatch
//! ([`Adapters`]), then validation and the assembly. The fuzzer chooses the agent, the step,
//! its ids and its time, and now and then breaks a payload (a field dropped or made a value
//! of another kind, its session renamed or emptied) or hands an agent its own bytes, cuts a
//! log mid-line, ticks the clock or gives a session up. No agent is named here: a new agent
//! is fuzzed as soon as its script is written.

use serde_json::value::RawValue;
use serde_json::Value;

use super::{config, Choices};
use crate::assemble::{Assembler, Output};
use crate::protocol::validate;
use crate::sources::command_hooks::agent::Agent;
use crate::sources::command_hooks::registry::Adapters;
use crate::sources::command_hooks::steps::{Log, Model, Script, Step, Sub, SESSION, T0};
use crate::testing::check_tree;

/// The sessions a payload may be rewritten to name besides its agent's own: another, none.
const OTHERS: [&str; 2] = ["other-session", ""];
const CALLS: [&str; 3] = ["call_1", "call_2", "call_3"];
const SUB_AGENTS: [&str; 2] = ["agent_1", "agent_2"];
const MODEL_CALLS: [&str; 2] = ["model_1", "model_2"];
/// The scripts write times as RFC 3339, which ends with the year 9999.
const LAST_MS: u64 = 253_402_300_799_000;

/// One agent, as the fuzzer drives it: its script, and the log the script writes.
struct Driven {
    agent: Agent,
    script: Box<dyn Script>,
    log: String,
    reads: Vec<(u64, usize)>,
}

/// What the fuzzer has an agent do: one of the conformance suite's steps.
fn chosen_payloads(c: &mut Choices<'_>, d: &mut Driven, now: u64) -> Vec<Value> {
    let call = CALLS[usize::from(c.u8()) % CALLS.len()];
    let agent = SUB_AGENTS[usize::from(c.u8()) % SUB_AGENTS.len()];
    let model = MODEL_CALLS[usize::from(c.u8()) % MODEL_CALLS.len()];
    let log = &mut d.log;
    let made = match c.u8() % 14 {
        0 => Some(d.script.step(Step::Prompt("go"), now, log)),
        1 | 2 => Some(d.script.step(Step::ToolStart(call), now, log)),
        3 | 4 => Some(d.script.step(Step::ToolEnd(call), now, log)),
        5 => Some(d.script.step(Step::Stop, now, log)),
        6 => d.script.sub_agent(Sub::Spawn { call, agent }, now, log),
        7 => d.script.sub_agent(Sub::Started { call, agent }, now, log),
        8 => d
            .script
            .sub_agent(Sub::ToolStart { agent, id: call }, now, log),
        9 => d
            .script
            .sub_agent(Sub::ToolEnd { agent, id: call }, now, log),
        10 => d.script.sub_agent(Sub::Stopped { agent }, now, log),
        11 => d.script.sub_agent(Sub::Returned { call, agent }, now, log),
        12 => d.script.model(Model::Asked(model), now, log),
        _ => d.script.model(Model::Answered(model), now, log),
    };
    made.unwrap_or_default()
}

/// Breaks `payload` (of session `own`) the way the fuzzer chose, if it chose to; whether it
/// did.
fn broken(c: &mut Choices<'_>, payload: &mut Value, own: &str) -> bool {
    match c.u8() % 8 {
        // Another session, or none: still the agent's payload.
        0 => {
            renamed(payload, own, OTHERS[usize::from(c.u8()) % OTHERS.len()]);
            false
        }
        1 => {
            let Some(o) = payload.as_object_mut() else {
                return false;
            };
            let n = o.len().max(1);
            let key = o.keys().nth(usize::from(c.u8()) % n).cloned();
            let Some(key) = key else { return false };
            let kinds = [
                Value::Null,
                Value::from(-1),
                Value::from("x"),
                Value::from(vec![1]),
            ];
            match c.u8() % 5 {
                4 => {
                    o.remove(&key);
                }
                k => {
                    o.insert(key, kinds[usize::from(k)].clone());
                }
            }
            true
        }
        _ => false,
    }
}

/// Every value of `v` that names session `from`, made to name `to`.
fn renamed(v: &mut Value, from: &str, to: &str) {
    match v {
        Value::String(s) if s == from => *s = to.to_string(),
        Value::Array(a) => a.iter_mut().for_each(|v| renamed(v, from, to)),
        Value::Object(o) => o.values_mut().for_each(|v| renamed(v, from, to)),
        _ => {}
    }
}

/// The session agent `d`'s payloads name: every script speaks for [`SESSION`], and the
/// daemon knows a session as one agent's.
fn own(d: &Driven) -> String {
    format!("{}-{SESSION}", d.agent.name())
}

/// The log as far as the agent has written it: now and then cut a few bytes short, as a log
/// still being written is (at a character's edge).
fn written(c: &mut Choices<'_>, log: &str) -> usize {
    let mut end = log.len().saturating_sub(usize::from(c.u8() % 4) * 7);
    while !log.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// The daemon's dispatch under every agent's payloads, chosen by the fuzzer's bytes (now and
/// then its raw bytes, read as an agent's payload), with ticks and abandoned sessions in
/// between. The output must keep the assembly's invariant, and nothing may panic.
pub fn agents(data: &[u8]) -> Result<(), String> {
    let mut c = Choices(data);
    let mut adapters = Adapters::new(u64::from(c.u8()) * 100);
    let mut driven: Vec<Driven> = Agent::ALL
        .into_iter()
        .map(|agent| Driven {
            agent,
            script: agent.script(),
            log: String::new(),
            reads: Vec::new(),
        })
        .collect();
    let mut asm = Assembler::new(config());
    let mut out = Output::default();
    let mut records = Vec::new();
    // The scripts' clock only goes forward, as an agent's does; when the daemon receives each
    // payload is the fuzzer's choice, earlier, later or anywhere at all.
    let (mut now, mut received): (u64, u64) = (T0, T0);
    while !c.done() {
        let op = c.u8();
        now = now.saturating_add(u64::from(c.u8()) * 10).min(LAST_MS);
        received = c.next_time(op, now);
        let d = &mut driven[usize::from(c.u8()) % Agent::ALL.len()];
        let own = own(d);
        let cut = written(&mut c, &d.log);
        let mut log = Log {
            text: &d.log[..cut],
            script: d.script.as_ref(),
            reads: &mut d.reads,
        };
        match op % 16 {
            15 => adapters.tick(received, &mut log, &mut records),
            13 => {
                let session = [own.as_str(), OTHERS[0], OTHERS[1]][usize::from(c.u8()) % 3];
                adapters.abandon(session, received, &mut log, &mut records);
            }
            14 => {
                // The fuzzer's own bytes: most are not JSON, or not the agent's, and are
                // skipped.
                let raw = std::str::from_utf8(c.bytes(255))
                    .ok()
                    .and_then(|s| RawValue::from_string(s.to_string()).ok());
                if let Some(parsed) = raw.and_then(|r| adapters.parse(d.agent, &r).ok()) {
                    adapters.push(parsed, received, &mut log, &mut records);
                }
            }
            _ => {
                let payloads = chosen_payloads(&mut c, d, now);
                for mut payload in payloads {
                    renamed(&mut payload, SESSION, &own);
                    let intact = !broken(&mut c, &mut payload, &own);
                    let raw =
                        RawValue::from_string(payload.to_string()).map_err(|e| e.to_string())?;
                    let parsed = match adapters.parse(d.agent, &raw) {
                        Ok(p) => p,
                        Err(_) if !intact => continue,
                        Err(e) => {
                            return Err(format!("{}'s script's payload: {e}", d.agent.name()))
                        }
                    };
                    let cut = written(&mut c, &d.log);
                    let log = &mut Log {
                        text: &d.log[..cut],
                        script: d.script.as_ref(),
                        reads: &mut d.reads,
                    };
                    adapters.push(parsed, received, log, &mut records);
                }
            }
        }
    }
    for d in &mut driven {
        let own = own(d);
        let mut log = Log {
            text: &d.log,
            script: d.script.as_ref(),
            reads: &mut d.reads,
        };
        for session in [own.as_str(), OTHERS[0], OTHERS[1]] {
            adapters.abandon(session, received, &mut log, &mut records);
        }
    }
    for record in records.drain(..) {
        if validate(&record).is_ok() {
            asm.push(&record, &mut out);
        }
    }
    asm.finish(&mut out);
    check_tree(&out.spans)
}
