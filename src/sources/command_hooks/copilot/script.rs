//! Copilot CLI's payloads and session log for the conformance suite's steps (test only): its
//! hooks mark a turn's start and end, and its calls are in the log.

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{iso, Script, Step, SESSION};

#[derive(Default)]
pub(crate) struct Copilot;

const LOG: &str = "/home/u/.copilot/session-state/conformance-session/events.jsonl";

impl Script for Copilot {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn step(&mut self, step: Step<'_>, at_ms: u64, log: &mut String) -> Vec<Value> {
        let line = |kind: &str, data: Value| {
            json!({"type": kind, "data": data, "id": "x", "timestamp": iso(at_ms)}).to_string()
                + "\n"
        };
        let hook = |event: &str, extra: Value| {
            let mut p = json!({"session_id": SESSION, "hook_event_name": event,
                "timestamp": iso(at_ms), "cwd": "/work", "transcript_path": LOG});
            p.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            vec![p]
        };
        match step {
            Step::Prompt(text) => hook("UserPromptSubmit", json!({"prompt": text})),
            Step::ToolStart(id) => {
                log.push_str(&line(
                    "tool.execution_start",
                    json!({"toolCallId": id, "toolName": "bash", "arguments": {"command": "sleep 1"}}),
                ));
                Vec::new()
            }
            Step::ToolEnd(id) => {
                log.push_str(&line(
                    "tool.execution_complete",
                    json!({"toolCallId": id, "success": true, "result": {"content": ""}}),
                ));
                Vec::new()
            }
            Step::Stop => hook("Stop", json!({"stop_reason": "end_turn"})),
        }
    }
}

/// This agent's script, for the conformance suite's list in `agent.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Copilot::default())
}
