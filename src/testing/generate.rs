//! A generator of realistic, interleaved protocol streams, for tests, benchmarks and load tests.
//!
//! Many sessions run at once; each has turns with model calls, single and parallel tool calls,
//! cells whose nested calls carry `within`, refusals, held stops, and now and then a child
//! session spawned from a cell. Lines of all sessions are merged in time order, as one host
//! running many agents would write them. The same seed always gives the same stream.

use serde_json::json;

/// How many spans and events of each kind a generated stream must produce.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Expected {
    pub events: u64,
    /// `called` lines: one tool span each.
    pub tool_spans: u64,
    /// `call_sent` lines: one chat span each.
    pub chat_spans: u64,
    /// Turns: one root span each.
    pub turns: u64,
    pub sessions: u64,
}

impl Expected {
    pub fn spans(&self) -> u64 {
        self.tool_spans + self.chat_spans + self.turns
    }
}

#[derive(Debug, Clone)]
pub struct GenConfig {
    pub sessions: usize,
    pub turns_per_session: usize,
    /// Every n-th session spawns a child session in its first turn (0: never).
    pub child_every: usize,
    pub seed: u64,
    /// Unix ms of the first event.
    pub start_ms: u64,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            sessions: 100,
            turns_per_session: 3,
            child_every: 10,
            seed: 7,
            start_ms: 1_796_000_000_000,
        }
    }
}

/// xorshift64*: small, fast and reproducible; no need for a crate to pick test data. The tests'
/// and the benchmarks' generators share it, so that a failure can be run again from its seed.
pub struct Rng(pub u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (0 for `n` = 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const COMMANDS: &[&str] = &[
    "cargo test",
    "git status --short",
    "ls -la src",
    "rg -n 'fn parse' src",
    "npm run build",
    "python3 -m pytest -q tests/test_api.py",
];
const MODELS: &[&str] = &["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"];

struct Line {
    at: u64,
    seq: u64,
    text: String,
}

struct Writer {
    lines: Vec<Line>,
    seq: u64,
    expected: Expected,
}

impl Writer {
    fn push(&mut self, at: u64, value: serde_json::Value) {
        match value["kind"].as_str() {
            Some("called") => self.expected.tool_spans += 1,
            Some("call_sent") => self.expected.chat_spans += 1,
            Some("session") => self.expected.sessions += 1,
            _ => {}
        }
        self.expected.events += 1;
        self.seq += 1;
        self.lines.push(Line {
            at,
            seq: self.seq,
            text: value.to_string(),
        });
    }
}

/// Generates the stream: one protocol line per element, in time order.
pub fn generate(config: &GenConfig) -> (Vec<String>, Expected) {
    let mut rng = Rng(config.seed.max(1));
    let mut w = Writer {
        lines: Vec::new(),
        seq: 0,
        expected: Expected::default(),
    };
    for s in 0..config.sessions {
        let sid = format!("gen-{:05}-{:08x}", s, rng.next() as u32);
        // Sessions start staggered, so their lines interleave.
        let start = config.start_ms + rng.below(5_000) + s as u64 * 37;
        let child = config.child_every > 0 && s % config.child_every == config.child_every - 1;
        session(
            &mut rng,
            &mut w,
            &sid,
            start,
            config.turns_per_session,
            child,
            None,
        );
    }
    w.lines.sort_by_key(|l| (l.at, l.seq));
    (w.lines.into_iter().map(|l| l.text).collect(), w.expected)
}

#[allow(clippy::too_many_arguments)]
fn session(
    rng: &mut Rng,
    w: &mut Writer,
    sid: &str,
    mut t: u64,
    turns: usize,
    spawn_child: bool,
    parent: Option<(&str, &str)>,
) -> u64 {
    let model = MODELS[rng.below(MODELS.len() as u64) as usize];
    let mut meta = json!({"v":1,"kind":"session","session":sid,"at_ms":t,"agent":if parent.is_some() {"helper"} else {"albedo"},"model":model,"workspace":"/home/dev/project"});
    if let Some((ps, pc)) = parent {
        meta["parent"] = json!({"session": ps, "call": pc});
    }
    w.push(t, meta);
    for turn in 0..turns {
        t += 1 + rng.below(2_000);
        w.expected.turns += 1;
        w.push(t, json!({"v":1,"kind":"prompted","session":sid,"at_ms":t,"text":format!("task {turn}: make the tests pass")}));
        let rounds = 1 + rng.below(3);
        let mut call_no = 0;
        for round in 0..rounds {
            t = chat(rng, w, sid, t, model, "tool_use");
            // One of: a single call, parallel calls, or a cell with nested calls.
            match rng.below(3) {
                0 => {
                    call_no += 1;
                    let refuse = round == 1 && rng.below(4) == 0;
                    t = tool(rng, w, sid, t, &format!("t{turn}c{call_no}"), None, refuse);
                }
                1 => {
                    let n = 2 + rng.below(2);
                    let ids: Vec<String> = (0..n).map(|i| format!("t{turn}p{round}{i}")).collect();
                    let mut ends = Vec::new();
                    for (i, id) in ids.iter().enumerate() {
                        let at = t + i as u64;
                        w.push(at, json!({"v":1,"kind":"calling","session":sid,"at_ms":at,"call":call_json(id, "run", None, rng)}));
                    }
                    for (i, id) in ids.iter().enumerate() {
                        let (s, e) = (t + i as u64, t + 50 + rng.below(3_000));
                        ends.push(e);
                        w.push(e, json!({"v":1,"kind":"called","session":sid,"call":call_json(id, "run", None, rng),"output":{"exit_code":rng.below(2),"timed_out":false},"started_ms":s,"finished_ms":e}));
                    }
                    t = ends.into_iter().max().unwrap_or(t) + 1;
                }
                _ => {
                    let cell = format!("t{turn}cell{round}");
                    let cell_start = t;
                    w.push(t, json!({"v":1,"kind":"calling","session":sid,"at_ms":t,"call":{"id":cell,"name":"code","arguments":{"code":"run('cargo test')"},"within":null}}));
                    let inner = 1 + rng.below(3);
                    for i in 0..inner {
                        t += 1;
                        let id = format!("{cell}i{i}");
                        if spawn_child && turn == 0 && i == 0 {
                            let child = format!("{sid}-child{round}");
                            w.push(t, json!({"v":1,"kind":"calling","session":sid,"at_ms":t,"call":{"id":id,"name":"agents.spawn","arguments":{"name":"helper"},"within":cell}}));
                            let end = session(rng, w, &child, t + 1, 1, false, Some((sid, &id)));
                            w.push(end + 1, json!({"v":1,"kind":"called","session":sid,"call":{"id":id,"name":"agents.spawn","arguments":{"name":"helper"},"within":cell},"output":{"agent":"helper"},"started_ms":t,"finished_ms":end + 1}));
                            t = end + 2;
                        } else {
                            t = tool(rng, w, sid, t, &id, Some(&cell), false);
                        }
                    }
                    t += 1;
                    w.push(t, json!({"v":1,"kind":"called","session":sid,"call":{"id":cell,"name":"code","arguments":{"code":"run('cargo test')"},"within":null},"output":"ok","started_ms":cell_start,"finished_ms":t}));
                }
            }
        }
        t = chat(rng, w, sid, t, model, "end_turn");
        w.push(
            t,
            json!({"v":1,"kind":"stopping","session":sid,"at_ms":t,"reply":"done","held":0}),
        );
        if rng.below(5) == 0 {
            t = chat(rng, w, sid, t, model, "end_turn");
            w.push(t, json!({"v":1,"kind":"stopping","session":sid,"at_ms":t,"reply":"really done","held":1}));
        }
        t += 1;
        w.push(
            t,
            json!({"v":1,"kind":"turn_ended","session":sid,"at_ms":t,"reason":"end_turn"}),
        );
    }
    t += 1;
    w.push(t, json!({"v":1,"kind":"closed","session":sid,"at_ms":t}));
    t
}

fn call_json(id: &str, name: &str, within: Option<&str>, rng: &mut Rng) -> serde_json::Value {
    let command = COMMANDS[rng.below(COMMANDS.len() as u64) as usize];
    json!({"id": id, "name": name, "arguments": {"command": command}, "within": within})
}

fn tool(
    rng: &mut Rng,
    w: &mut Writer,
    sid: &str,
    t: u64,
    id: &str,
    within: Option<&str>,
    refuse: bool,
) -> u64 {
    let call = call_json(id, "run", within, rng);
    w.push(
        t,
        json!({"v":1,"kind":"calling","session":sid,"at_ms":t,"call":call}),
    );
    let end = t + 5 + rng.below(2_000);
    let mut called = json!({"v":1,"kind":"called","session":sid,"call":call,"output":{"exit_code":rng.below(2),"timed_out":false},"started_ms":t,"finished_ms":end});
    if refuse {
        called["refused"] = json!(true);
        called["output"] = json!("blocked by policy");
    }
    w.push(end, called);
    end + 1
}

fn chat(rng: &mut Rng, w: &mut Writer, sid: &str, t: u64, model: &str, stop: &str) -> u64 {
    let start = t + 1;
    let end = start + 200 + rng.below(4_000);
    let input = 500 + rng.below(5_000);
    w.push(end, json!({"v":1,"kind":"call_sent","session":sid,"request":{"model":model,"max_tokens":8192},"response":{"id":format!("msg_{:x}", rng.next()),"model":model,"stop_reason":stop},"usage":{"input_tokens":input,"output_tokens":20 + rng.below(800),"cache_read_tokens":rng.below(20_000)},"started_ms":start,"finished_ms":end,"first_token_ms":start + 100}));
    end + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::{AssembleConfig, Assembler, Output};
    use crate::protocol::decode_line;

    #[test]
    fn the_stream_decodes_and_assembles_to_the_expected_counts() {
        let (lines, expected) = generate(&GenConfig {
            sessions: 30,
            ..GenConfig::default()
        });
        assert_eq!(lines.len() as u64, expected.events);
        let mut asm = Assembler::new(AssembleConfig::default());
        let mut out = Output::default();
        for l in &lines {
            asm.push(&decode_line(l.as_bytes()).unwrap(), &mut out);
        }
        asm.finish(&mut out);
        assert!(
            out.notes.is_empty(),
            "{:?}",
            &out.notes[..out.notes.len().min(5)]
        );
        let ids: std::collections::HashSet<_> =
            out.spans.iter().map(|s| (s.trace_id, s.span_id)).collect();
        assert_eq!(ids.len(), out.spans.len(), "span ids are unique");
        assert_eq!(out.spans.len() as u64, expected.spans());
        assert_eq!(
            generate(&GenConfig {
                sessions: 30,
                ..GenConfig::default()
            })
            .0,
            lines
        );
    }
}
