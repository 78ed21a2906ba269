//! opencode's events for the conformance suite's steps (test only), as albedo-otel's plugin
//! hands them on.

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{Promise, Script, Step, SESSION};

#[derive(Default)]
pub(crate) struct Opencode {
    /// Prompts so far: message ids are numbered by them.
    turns: u32,
    /// When the current assistant message was created.
    message_at: u64,
}

impl Script for Opencode {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn cannot(&self, promise: Promise) -> Option<&'static str> {
        (promise == Promise::BlockedStopStaysOneTurn)
            .then_some("no plugin can block opencode's stop: `session.idle` is the turn's end")
    }

    fn step(&mut self, step: Step<'_>, at: u64, _: &mut String) -> Vec<Value> {
        let event = |name: &str, properties: Value| {
            json!({"session_id": SESSION, "hook_event_name": name, "at_ms": at,
                "properties": properties})
        };
        let (user, assistant) = (
            format!("msg_u{}", self.turns),
            format!("msg_a{}", self.turns),
        );
        let message = |created: u64, completed: Option<u64>| {
            let mut info = json!({"id": assistant, "parentID": user, "role": "assistant",
                "mode": "build", "agent": "build", "modelID": "mock-model", "providerID": "mock",
                "sessionID": SESSION, "cost": 0, "time": {"created": created},
                "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}});
            if let Some(done) = completed {
                info["time"]["completed"] = done.into();
                info["tokens"] = json!({"total": 110, "input": 100, "output": 10, "reasoning": 0,
                    "cache": {"read": 0, "write": 0}});
                info["finish"] = "stop".into();
            }
            event(
                "message.updated",
                json!({"sessionID": SESSION, "info": info}),
            )
        };
        let tool = |call: &str, state: Value| {
            event(
                "message.part.updated",
                json!({"sessionID": SESSION, "time": at, "part": {"id": format!("prt_{call}"),
                    "messageID": assistant, "type": "tool", "tool": "bash", "callID": call,
                    "state": state}}),
            )
        };
        let shell = json!({"command": "sleep 1", "description": "conformance"});
        match step {
            Step::Prompt(text) => {
                self.turns += 1;
                self.message_at = at;
                let (user, assistant) = (
                    format!("msg_u{}", self.turns),
                    format!("msg_a{}", self.turns),
                );
                vec![
                    event(
                        "chat.message",
                        json!({"message": {"id": user, "role": "user", "sessionID": SESSION,
                            "time": {"created": at}, "agent": "build",
                            "model": {"providerID": "mock", "modelID": "mock-model"}}, "text": text}),
                    ),
                    event(
                        "message.updated",
                        json!({"sessionID": SESSION, "info": {"id": assistant, "parentID": user,
                            "role": "assistant", "mode": "build", "agent": "build",
                            "modelID": "mock-model", "providerID": "mock", "sessionID": SESSION,
                            "cost": 0, "time": {"created": at}, "tokens": {"input": 0,
                            "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}}}),
                    ),
                ]
            }
            Step::ToolStart(id) => vec![tool(
                id,
                json!({"status": "running", "input": shell, "time": {"start": at}}),
            )],
            Step::ToolEnd(id) => vec![tool(
                id,
                json!({"status": "completed", "input": shell, "output": "", "metadata": {"exit": 0},
                    "time": {"start": at, "end": at}}),
            )],
            Step::Stop => vec![
                message(self.message_at, Some(at)),
                event("session.idle", json!({"sessionID": SESSION})),
            ],
        }
    }
}

/// This agent's script, for the conformance suite's list in `agent.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Opencode::default())
}
