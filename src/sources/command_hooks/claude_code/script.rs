//! Claude Code's payloads for the conformance suite's steps (test only).

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{
    Gives,
    iso, Model, Promise, Script, Step, Sub, ANSWER_TOKENS, SESSION,
};

#[derive(Default)]
pub(crate) struct Claude {
    /// Stops so far: the answers' message ids are numbered by them.
    stops: u32,
}

/// Where the session's transcript is (the suite serves its one log whatever the path).
const TRANSCRIPT: &str = "/home/u/.claude/projects/-work/conformance-session.jsonl";

/// A step as Claude Code 2.1.332 sends it (its payloads carry no time: the journal's is used).
pub(crate) fn payload(step: Step<'_>) -> Value {
    let shell = json!({"command": "sleep 1"});
    let mut p = match step {
        Step::Prompt(text) => json!({"hook_event_name": "UserPromptSubmit", "prompt": text}),
        Step::ToolStart(id) => json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_use_id": id, "tool_input": shell}),
        Step::ToolEnd(id) => json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_use_id": id, "tool_input": shell,
            "tool_response": {"stdout": "", "stderr": "", "interrupted": false}}),
        Step::Stop => json!({"hook_event_name": "Stop", "stop_hook_active": false,
            "last_assistant_message": "done"}),
    };
    p["session_id"] = SESSION.into();
    p["cwd"] = "/work".into();
    p
}

impl Script for Claude {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn gives(&self) -> Gives {
        Gives {
            turn: "`UserPromptSubmit` to `Stop` (after the grace)",
            tool_calls: "`PreToolUse` to `PostToolUse`; refused and failed ones are errors",
            model_calls: "from the transcript at `Stop`: usage with cache reads and writes, and the messages with capture on",
            sub_agents: "under their `Agent` call",
            cannot: "",
        }
    }

    /// The hook's payload, and what Claude Code writes to the transcript for the step: the
    /// prompt, the model's message asking for a call (a model call), the call's result, and
    /// the model's answer at the stop (another).
    fn step(&mut self, step: Step<'_>, at_ms: u64, log: &mut String) -> Vec<Value> {
        let line = match step {
            Step::Prompt(text) => json!({"type": "user",
                "message": {"role": "user", "content": text}}),
            Step::ToolStart(id) => assistant(
                &format!("msg_{id}"),
                json!([{"type": "tool_use", "id": id, "name": "Bash",
                    "input": {"command": "sleep 1"}}]),
                "tool_use",
            ),
            Step::ToolEnd(id) => json!({"type": "user", "message": {"role": "user",
                "content": [{"type": "tool_result", "tool_use_id": id, "content": ""}]}}),
            Step::Stop => {
                self.stops += 1;
                assistant(
                    &format!("msg_answer_{}", self.stops),
                    json!([{"type": "text", "text": "done"}]),
                    "end_turn",
                )
            }
        };
        write(log, line, at_ms);
        let mut p = payload(step);
        p["transcript_path"] = TRANSCRIPT.into();
        vec![p]
    }

    /// A long command's output, as Claude Code writes it while the call runs.
    fn filler(&mut self, bytes: usize, at_ms: u64, log: &mut String) {
        let chunk = "x".repeat(64 << 10);
        for _ in 0..bytes.div_ceil(chunk.len()) {
            let line = json!({"type": "progress", "data": {"type": "bash_progress",
                "output": chunk}});
            write(log, line, at_ms);
        }
    }

    fn sub_agent(&mut self, step: Sub<'_>, _: u64, _: &mut String) -> Option<Vec<Value>> {
        Some(vec![sub_agent_payload(step)])
    }

    /// No hook: Claude Code writes a model call to its transcript, as one assistant message,
    /// when its answer has come.
    fn model(&mut self, step: Model<'_>, at_ms: u64, log: &mut String) -> Option<Vec<Value>> {
        if let Model::Answered(id) = step {
            let mut line = assistant(
                &format!("msg_{id}"),
                json!([{"type": "text", "text": "thinking it over"}]),
                "end_turn",
            );
            let (input, output) = ANSWER_TOKENS;
            line["message"]["usage"]["input_tokens"] = input.into();
            line["message"]["usage"]["output_tokens"] = output.into();
            write(log, line, at_ms);
        }
        Some(Vec::new())
    }

    fn cannot(&self, promise: Promise) -> Option<&'static str> {
        (promise == Promise::KilledTurnKeepsItsModelCall).then_some(
            "a model call is written to the transcript only once answered, and no hook is \
             sent for it: one in flight when Claude Code dies is in no file",
        )
    }
}

/// The model's message `id` (one model call), as the transcript has it.
fn assistant(id: &str, content: Value, stop: &str) -> Value {
    json!({"type": "assistant", "message": {"id": id, "type": "message", "role": "assistant",
        "model": "claude-opus-5-5", "content": content, "stop_reason": stop,
        "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0}}})
}

/// Appends `line`, stamped `at_ms`, to the transcript.
fn write(log: &mut String, mut line: Value, at_ms: u64) {
    line["timestamp"] = iso(at_ms).into();
    line["sessionId"] = SESSION.into();
    log.push_str(&line.to_string());
    log.push('\n');
}

/// A sub-agent step as Claude Code 2.1.332 sends it: the `Agent` call's hooks, and the
/// sub-agent's own, each with its `agent_id`. (Its `agent_transcript_path` is left out: the
/// suite serves one log, the session's.)
fn sub_agent_payload(step: Sub<'_>) -> Value {
    let input = |agent: &str| {
        json!({"description": agent, "prompt": format!("work as {agent}"),
            "subagent_type": "general-purpose"})
    };
    let inside = |step: Step<'_>, agent: &str| {
        let mut p = payload(step);
        p["agent_id"] = agent.into();
        p["agent_type"] = "general-purpose".into();
        p
    };
    let mut p = match step {
        Sub::Spawn { call, agent } => json!({"hook_event_name": "PreToolUse",
            "tool_name": "Agent", "tool_use_id": call, "tool_input": input(agent)}),
        Sub::Started { agent, .. } => json!({"hook_event_name": "SubagentStart",
            "agent_id": agent, "agent_type": "general-purpose"}),
        Sub::ToolStart { agent, id } => return inside(Step::ToolStart(id), agent),
        Sub::ToolEnd { agent, id } => return inside(Step::ToolEnd(id), agent),
        Sub::Stopped { agent, .. } => json!({"hook_event_name": "SubagentStop",
            "agent_id": agent, "agent_type": "general-purpose", "stop_hook_active": false,
            "last_assistant_message": "done"}),
        Sub::Returned { call, agent } => json!({"hook_event_name": "PostToolUse",
            "tool_name": "Agent", "tool_use_id": call, "tool_input": input(agent),
            "tool_response": {"status": "completed", "content": [{"type": "text", "text": "done"}]}}),
    };
    p["session_id"] = SESSION.into();
    p["cwd"] = "/work".into();
    p
}

/// This agent's script, for the conformance suite's list in `command_hooks/mod.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Claude::default())
}
