//! Fuzz drivers, shared by the fuzz targets (`fuzz/`) and the tests that replay what the
//! fuzzer found (`tests/assemble/fuzz_regressions.rs`), so a kept input is checked the same way it
//! was found.

use std::sync::{Arc, OnceLock};

use serde_json::{json, Value};

use super::check_tree;
use crate::assemble::defaults::MAX_VALUE_LEN;
use crate::assemble::redact::Scrubber;
use crate::assemble::{AssembleConfig, Assembler, ContentPolicy, Output};
use crate::protocol::{decode_line, validate};
use crate::sources::command_hooks::claude_code::{Adapter, Payload};
use crate::sources::command_hooks::engine::files::{NoTranscripts, Transcripts};
use crate::sources::command_hooks::engine::AgentRules;
use crate::sources::stream::read_lines;

mod agents;
pub use agents::agents;

/// Small caps, so the fuzzer reaches the eviction paths too. Built once: compiling the
/// scrubber's regexes for every input would be most of the time.
fn config() -> AssembleConfig {
    static SCRUBBER: OnceLock<Arc<Scrubber>> = OnceLock::new();
    let scrubber = SCRUBBER.get_or_init(|| Arc::new(Scrubber::builtin()));
    AssembleConfig {
        policy: ContentPolicy::new(true, true, MAX_VALUE_LEN, scrubber.clone()),
        max_sessions: 4,
        max_calls_per_turn: 8,
        ..AssembleConfig::default()
    }
}

/// Arbitrary bytes through the line reader, the decoder and the assembly. Besides not
/// panicking, the output must keep the assembly's invariant: unique span ids, no dangling
/// parent, every end at or after its start.
pub fn decode_assemble(data: &[u8]) -> Result<(), String> {
    let mut asm = Assembler::new(config());
    let mut out = Output::default();
    let _ = read_lines("fuzz".into(), data, 4096, |chunk| {
        for (_, line) in chunk.lines() {
            if let Ok(record) = line.and_then(decode_line) {
                asm.push(&record, &mut out);
            }
        }
        true
    });
    asm.finish(&mut out);
    check_tree(&out.spans)
}

/// Reads the fuzzer's bytes as choices; past the end, every choice is 0.
struct Choices<'a>(&'a [u8]);

impl Choices<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }

    fn u64(&mut self) -> u64 {
        (0..8).fold(0, |n, _| (n << 8) | u64::from(self.u8()))
    }

    fn bytes(&mut self, max: usize) -> &[u8] {
        let n = usize::from(self.u8()).min(max).min(self.0.len());
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        taken
    }

    /// The time of the next step: mostly a little later, now and then a little earlier, and
    /// now and then anywhere in the whole `u64` range, so that sums on outside values are
    /// exercised.
    fn next_time(&mut self, op: u8, now: u64) -> u64 {
        match op % 8 {
            0 => self.u64(),
            1 => now.saturating_sub(u64::from(self.u8())),
            _ => now.saturating_add(u64::from(self.u8()) * 10),
        }
    }

    fn done(&self) -> bool {
        self.0.is_empty()
    }
}

/// Transcript bytes chosen by the fuzzer: each read returns the next chunk it chose.
struct FuzzTranscripts(Vec<Vec<u8>>);

impl Transcripts for FuzzTranscripts {
    fn read_from(&mut self, _path: &str, _offset: u64) -> Vec<u8> {
        self.0.pop().unwrap_or_default()
    }
}

const EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "SessionEnd",
    "Notification",
];
const TOOLS: &[&str] = &["Bash", "Read", "Agent", "Task"];

/// A sequence of Claude Code hook payloads, chosen by the fuzzer's bytes, through the
/// adapter, then the records it makes through `validate` and the assembly. Times are chosen
/// from the whole `u64` range now and then, so that sums on outside values are exercised;
/// some payloads are the fuzzer's raw bytes, so that the payload parser is too. The output
/// must keep the assembly's invariant, and nothing may panic.
pub fn claude_code(data: &[u8]) -> Result<(), String> {
    let mut c = Choices(data);
    let mut adapter = Adapter::new(u64::from(c.u8()) * 100);
    let mut asm = Assembler::new(config());
    let mut out = Output::default();
    let mut records = Vec::new();
    let mut transcripts = FuzzTranscripts(Vec::new());
    let mut now: u64 = 1_796_000_000_000;
    while !c.done() {
        let op = c.u8();
        now = c.next_time(op, now);
        if op % 16 == 15 {
            AgentRules::tick(&mut adapter, now, &mut NoTranscripts, &mut records);
            continue;
        }
        let payload = if op % 16 == 14 {
            // The fuzzer's own bytes as a payload: most are not one, and are skipped.
            match serde_json::from_slice::<Payload>(c.bytes(255)) {
                Ok(p) => p,
                Err(_) => continue,
            }
        } else {
            match serde_json::from_value::<Payload>(chosen_payload(&mut c)) {
                Ok(p) => p,
                Err(e) => return Err(format!("a chosen payload did not parse: {e}")),
            }
        };
        let chunk = c.bytes(255).to_vec();
        transcripts.0.push(chunk);
        adapter.take(payload, now, &mut transcripts, &mut records);
    }
    adapter.flush(&mut records);
    for record in records.drain(..) {
        // What the pipeline does with every record, whichever source made it.
        if validate(&record).is_ok() {
            asm.push(&record, &mut out);
        }
    }
    asm.finish(&mut out);
    check_tree(&out.spans)
}

fn chosen_payload(c: &mut Choices<'_>) -> Value {
    let event = EVENTS[usize::from(c.u8()) % EVENTS.len()];
    let session = ["s", "t", ""][usize::from(c.u8()) % 3];
    let tool = TOOLS[usize::from(c.u8()) % TOOLS.len()];
    let id = format!("toolu_{}", c.u8() % 6);
    let mut p = json!({
        "session_id": session,
        "hook_event_name": event,
        "transcript_path": "/fuzz/transcript.jsonl",
        "cwd": "/w",
    });
    let flags = c.u8();
    if flags & 1 != 0 {
        p["tool_name"] = tool.into();
        p["tool_use_id"] = id.clone().into();
        p["tool_input"] = json!({"prompt": "p", "command": "ls"});
    }
    if flags & 2 != 0 {
        p["duration_ms"] = match c.u8() % 4 {
            0 => c.u64(),
            _ => u64::from(c.u8()) * 7,
        }
        .into();
    }
    if flags & 4 != 0 {
        p["agent_id"] = format!("a{}", c.u8() % 3).into();
        p["agent_type"] = "helper".into();
        p["agent_transcript_path"] = "/fuzz/agent.jsonl".into();
    }
    if flags & 8 != 0 {
        p["prompt"] = if c.u8().is_multiple_of(2) {
            "<task-notification> done"
        } else {
            "go"
        }
        .into();
    }
    if flags & 16 != 0 {
        p["tool_calls"] = json!([{ "tool_name": tool, "tool_use_id": id, "tool_input": {} }]);
    }
    if flags & 32 != 0 {
        p["stop_hook_active"] = true.into();
        p["error"] = "Exit code 3".into();
        p["tool_response"] = json!({"stdout": "x"});
    }
    p
}
