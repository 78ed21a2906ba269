//! Claude Code's payloads for the conformance suite's steps (test only).

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{Script, Step, Sub, SESSION};

#[derive(Default)]
pub(crate) struct Claude;

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

    fn step(&mut self, step: Step<'_>, _: u64, _: &mut String) -> Vec<Value> {
        vec![payload(step)]
    }

    fn sub_agent(&mut self, step: Sub<'_>, _: u64, _: &mut String) -> Option<Vec<Value>> {
        Some(vec![sub_agent_payload(step)])
    }
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

/// This agent's script, for the conformance suite's list in `agent.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Claude::default())
}
