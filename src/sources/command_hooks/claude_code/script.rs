//! Claude Code's payloads for the conformance suite's steps (test only).

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{Script, Step, SESSION};

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
}

/// This agent's script, for the conformance suite's list in `agent.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Claude::default())
}
