//! Cursor's payloads for the conformance suite's steps (test only), as the hook journals them
//! (with the conversation as `session_id`: [`super::journaled`]).

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{Script, Step, SESSION};

#[derive(Default)]
pub(crate) struct Cursor;

impl Script for Cursor {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn step(&mut self, step: Step<'_>, _: u64, _: &mut String) -> Vec<Value> {
        let shell = json!({"command": "sleep 1", "working_directory": "/work"});
        let mut p = match step {
            Step::Prompt(text) => json!({"hook_event_name": "beforeSubmitPrompt",
                "prompt": text, "attachments": []}),
            Step::ToolStart(id) => json!({"hook_event_name": "preToolUse",
                "tool_name": "Shell", "tool_input": shell, "tool_use_id": id, "cwd": "/work"}),
            Step::ToolEnd(id) => json!({"hook_event_name": "postToolUse",
                "tool_name": "Shell", "tool_input": shell, "tool_use_id": id, "cwd": "/work",
                "tool_output": "{\"exitCode\":0,\"stdout\":\"\"}", "duration": 1000}),
            Step::Stop => json!({"hook_event_name": "stop", "status": "completed",
                "loop_count": 0}),
        };
        p["conversation_id"] = SESSION.into();
        p["generation_id"] = "gen-1".into();
        p["model"] = "claude-4.5-sonnet".into();
        p["cursor_version"] = "2.4.21".into();
        p["workspace_roots"] = json!(["/work"]);
        p["user_email"] = "user@example.com".into();
        let journaled = super::journaled(&p.to_string()).expect("a Cursor payload");
        vec![serde_json::from_str(&journaled).expect("JSON")]
    }
}

/// This agent's script, for the conformance suite's list in `agent.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Cursor)
}
