//! Every agent's hook payloads, interleaved as the daemon meets them, through its dispatch
//! ([`Adapters`]), then validation and the assembly: the Gemini, Codex and Copilot adapters
//! face what Claude Code's does in [`super::claude_code`].

use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::{config, Choices, FuzzTranscripts};
use crate::assemble::{Assembler, Output};
use crate::protocol::validate;
use crate::sources::command_hooks::agent::Agent;
use crate::sources::command_hooks::registry::Adapters;
use crate::testing::check_tree;

const SESSIONS: [&str; 3] = ["s", "t", ""];

/// The events each agent's hook is installed for; Claude Code's with the ones it sends that
/// make no trace.
fn events(agent: Agent) -> &'static [&'static str] {
    match agent {
        Agent::ClaudeCode => super::EVENTS,
        other => other.spec().install.form.events(),
    }
}

fn iso(ms: u64) -> String {
    // humantime writes years up to 9999 only.
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms.min(253_402_300_799_000));
    humantime::format_rfc3339_millis(at).to_string()
}

/// A payload in `agent`'s shape, with fields the fuzzer turns on and off.
fn chosen_payload(c: &mut Choices<'_>, agent: Agent, now: u64) -> Value {
    let list = events(agent);
    let event = list[usize::from(c.u8()) % list.len()];
    let session = SESSIONS[usize::from(c.u8()) % SESSIONS.len()];
    let n = c.u8() % 4;
    let flags = c.u8();
    let mut p = json!({
        "session_id": session,
        "hook_event_name": event,
        "cwd": "/w",
        "transcript_path": "/fuzz/log.jsonl",
        "prompt": "go",
    });
    if flags & 1 != 0 {
        p["timestamp"] = match agent {
            Agent::Copilot if flags & 2 != 0 => now.into(),
            _ => iso(now.saturating_sub(u64::from(c.u8()) * 10)).into(),
        };
    }
    if flags & 4 != 0 {
        p["tool_name"] = ["Bash", "run_shell_command", "Task"][usize::from(n % 3)].into();
        p["tool_use_id"] = format!("call_{n}").into();
        p["tool_input"] = json!({"command": "ls"});
        p["tool_response"] = json!({"stdout": "x"});
    }
    if flags & 8 != 0 {
        let tokens = u64::from(c.u8()) * 100;
        p["llm_request"] = json!({"model": "m", "config": {"maxOutputTokens": tokens}});
        p["llm_response"] = json!({
            "candidates": [{"finishReason": if flags & 16 != 0 { Value::from("STOP") } else { Value::Null }}],
            "usageMetadata": {"promptTokenCount": tokens, "candidatesTokenCount": n,
                              "cachedContentTokenCount": tokens / 2, "thoughtsTokenCount": n},
        });
        p["request_id"] = format!("r{n}").into();
        p["model"] = "m".into();
        p["status"] = ["completed", "failed", "incomplete", "cancelled"][usize::from(n)].into();
        p["response_id"] = format!("resp{n}").into();
        p["token_usage"] = json!({"input_tokens": tokens, "cached_input_tokens": tokens / 2,
                                  "output_tokens": n, "reasoning_output_tokens": n});
    }
    if flags & 32 != 0 {
        p["agent_id"] = format!("a{n}").into();
        p["error"] = "boom".into();
    }
    if matches!(agent, Agent::Opencode | Agent::Kilo) {
        p["at_ms"] = now.into();
        p["properties"] = opencode_properties(c, event, session, now);
    }
    p
}

/// An opencode event's `properties`, as its plugin hands them on: messages, steps and tool
/// parts of a few ids, in any state, sub-agents' sessions among them.
fn opencode_properties(c: &mut Choices<'_>, event: &str, session: &str, now: u64) -> Value {
    let at = |c: &mut Choices<'_>| now.saturating_sub(u64::from(c.u8()) * 10);
    let message = format!("msg_{}", c.u8() % 3);
    let prompt = format!("msg_u{}", c.u8() % 2);
    match event {
        "session.created" => json!({"info": {"id": session, "time": {"created": at(c)},
            "parentID": if c.u8().is_multiple_of(2) { Value::from(SESSIONS[usize::from(c.u8()) % 2]) } else { Value::Null }}}),
        "chat.message" => {
            json!({"message": {"id": prompt, "time": {"created": at(c)}}, "text": "go"})
        }
        "message.updated" => {
            let completed = if c.u8().is_multiple_of(2) {
                Value::from(at(c))
            } else {
                Value::Null
            };
            let role = ["assistant", "user"][usize::from(c.u8() % 2)];
            json!({"info": {"id": message, "role": role,
                "parentID": prompt, "modelID": "m", "providerID": "openai",
                "time": {"created": at(c), "completed": completed},
                "tokens": {"input": c.u8(), "output": c.u8(), "reasoning": c.u8() % 3,
                           "cache": {"read": c.u8(), "write": 0}},
                "finish": "stop"}})
        }
        "message.part.updated" => {
            let status = ["running", "completed", "error", "pending"][usize::from(c.u8() % 4)];
            let tool = ["bash", "task"][usize::from(c.u8() % 2)];
            let error = ["The user has specified a rule which prevents you", "boom"]
                [usize::from(c.u8() % 2)];
            let kind = ["tool", "step-start"][usize::from(c.u8() % 2)];
            json!({"time": at(c), "part": {"type": kind,
                "messageID": message, "callID": format!("call_{}", c.u8() % 3), "tool": tool,
                "state": {"status": status, "input": {"command": "ls"}, "output": "x", "error": error,
                          "time": {"start": at(c), "end": at(c)}}}})
        }
        _ => json!({}),
    }
}

/// Copilot's session log as the fuzzer writes it: calls and tool runs around `now`. Each
/// read gets the next log chosen, whatever its offset, so a held offset meets logs that do
/// not fit it.
fn chosen_log(c: &mut Choices<'_>, now: u64) -> Vec<u8> {
    let mut log = String::new();
    for _ in 0..c.u8() % 6 {
        let at = iso(now.saturating_sub(u64::from(c.u8()) * 20));
        let id = format!("call_{}", c.u8() % 3);
        let (kind, data) = match c.u8() % 3 {
            0 => (
                "session.usage_record",
                json!({"usage": {"model": "m", "inputTokens": c.u8(), "cacheReadTokens": c.u8(),
                                 "outputTokens": 3, "duration": f64::from(c.u8()) * 30.0,
                                 "timeToFirstTokenMs": f64::from(c.u8())}}),
            ),
            1 => (
                "tool.execution_start",
                json!({"toolCallId": id, "toolName": "bash", "arguments": {"command": "ls"}}),
            ),
            _ => (
                "tool.execution_complete",
                json!({"toolCallId": id, "success": c.u8().is_multiple_of(2),
                       "error": {"code": "denied", "message": "no"}}),
            ),
        };
        log.push_str(&json!({"type": kind, "timestamp": at, "data": data}).to_string());
        log.push('\n');
    }
    // Now and then cut mid-line, as a log still being written is.
    let cut = usize::from(c.u8() % 4) * 7;
    let mut log = log.into_bytes();
    log.truncate(log.len().saturating_sub(cut));
    log
}

/// The daemon's dispatch under payloads of all four agents, chosen by the fuzzer's bytes (now
/// and then its raw bytes, read as an agent's payload), with ticks and abandoned sessions in
/// between. The output must keep the assembly's invariant, and nothing may panic.
pub fn agents(data: &[u8]) -> Result<(), String> {
    let mut c = Choices(data);
    let mut adapters = Adapters::new(u64::from(c.u8()) * 100);
    let mut asm = Assembler::new(config());
    let mut out = Output::default();
    let mut records = Vec::new();
    let mut logs = FuzzTranscripts(Vec::new());
    let mut now: u64 = 1_796_000_000_000;
    while !c.done() {
        let op = c.u8();
        now = c.next_time(op, now);
        match op % 16 {
            15 => adapters.tick(now, &mut logs, &mut records),
            13 => {
                let session = SESSIONS[usize::from(c.u8()) % SESSIONS.len()];
                adapters.abandon(session, now, &mut logs, &mut records);
            }
            _ => {
                let agent = Agent::ALL[usize::from(c.u8()) % Agent::ALL.len()];
                let raw = if op % 16 == 14 {
                    // The fuzzer's own bytes: most are not JSON, and are skipped.
                    match std::str::from_utf8(c.bytes(255))
                        .ok()
                        .and_then(|s| RawValue::from_string(s.to_string()).ok())
                    {
                        Some(raw) => raw,
                        None => continue,
                    }
                } else {
                    let chosen = chosen_payload(&mut c, agent, now);
                    RawValue::from_string(chosen.to_string()).map_err(|e| e.to_string())?
                };
                let parsed = match adapters.parse(agent, &raw) {
                    Ok(p) => p,
                    Err(_) if op % 16 == 14 => continue,
                    Err(e) => return Err(format!("a chosen {} payload: {e}", agent.name())),
                };
                let log = chosen_log(&mut c, now);
                logs.0.push(log);
                adapters.push(parsed, now, &mut logs, &mut records);
            }
        }
    }
    for session in SESSIONS {
        adapters.abandon(session, now, &mut logs, &mut records);
    }
    for record in records.drain(..) {
        if validate(&record).is_ok() {
            asm.push(&record, &mut out);
        }
    }
    asm.finish(&mut out);
    check_tree(&out.spans)
}
