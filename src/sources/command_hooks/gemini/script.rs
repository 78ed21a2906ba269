//! Gemini CLI's payloads for the conformance suite's steps (test only).

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{Script, Step, SESSION};

#[derive(Default)]
pub(crate) struct Gemini;

impl Script for Gemini {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn step(&mut self, step: Step<'_>, at_ms: u64, _: &mut String) -> Vec<Value> {
        let shell = json!({"command": "sleep 1"});
        let mut p = match step {
            Step::Prompt(text) => json!({"hook_event_name": "BeforeAgent", "prompt": text}),
            // Gemini's tool hooks carry no call id.
            Step::ToolStart(_) => json!({"hook_event_name": "BeforeTool",
                "tool_name": "run_shell_command", "tool_input": shell}),
            Step::ToolEnd(_) => json!({"hook_event_name": "AfterTool",
                "tool_name": "run_shell_command", "tool_input": shell,
                "tool_response": {"llmContent": "Output: (empty)", "returnDisplay": ""}}),
            Step::Stop => json!({"hook_event_name": "AfterAgent", "prompt": "",
                "prompt_response": "done", "stop_hook_active": false}),
        };
        p["session_id"] = SESSION.into();
        p["cwd"] = "/work".into();
        p["timestamp"] = crate::sources::command_hooks::steps::iso(at_ms).into();
        vec![p]
    }
}

/// This agent's script, for the conformance suite's list in `agent.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Gemini::default())
}
