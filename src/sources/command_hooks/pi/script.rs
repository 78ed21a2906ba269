//! Pi's events for the conformance suite's steps (test only), as albedo-otel's extension
//! hands them on.

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{Promise, Script, Step, SESSION};

#[derive(Default)]
pub(crate) struct Pi {
    /// When the model call in flight was sent.
    sent: Option<u64>,
    /// Model calls so far: their response ids are numbered by them.
    calls: u32,
    /// When each tool call started.
    started: std::collections::HashMap<String, u64>,
}

impl Script for Pi {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn cannot(&self, promise: Promise) -> Option<&'static str> {
        match promise {
            Promise::BlockedStopStaysOneTurn => Some(
                "its turn ends at `agent_settled`, which comes only once no extension goes on \
                 (`agent_before_settle`): there is no stop to block after the fact",
            ),
            Promise::SubagentsSideBySide | Promise::SubagentCallsStayTheirs => {
                Some("Pi has no sub-agents")
            }
            _ => None,
        }
    }

    fn step(&mut self, step: Step<'_>, at: u64, _: &mut String) -> Vec<Value> {
        let event = |name: &str, fields: Value| {
            let mut e = json!({"session_id": SESSION, "hook_event_name": name, "at_ms": at});
            if let (Some(e), Some(f)) = (e.as_object_mut(), fields.as_object()) {
                e.extend(f.clone());
            }
            e
        };
        let request = |s: &mut Pi| {
            s.sent = Some(at);
            vec![
                event(
                    "before_provider_request",
                    json!({"provider": "mock", "model": "mock-model"}),
                ),
                event(
                    "message_start",
                    json!({"message": {"provider": "mock", "model": "mock-model",
                        "stopReason": "pending", "timestamp": at}}),
                ),
                event("message_update", json!({})),
            ]
        };
        let answered = |s: &mut Pi, stop: &str| {
            let Some(sent) = s.sent.take() else {
                return vec![];
            };
            s.calls += 1;
            vec![event(
                "message_end",
                json!({"message": {"provider": "mock", "model": "mock-model",
                    "responseId": format!("chatcmpl-{}", s.calls), "stopReason": stop,
                    "timestamp": sent, "durationMs": at - sent,
                    "usage": {"input": 100, "output": 10, "cacheRead": 0, "cacheWrite": 0,
                        "reasoning": 0, "totalTokens": 110}}}),
            )]
        };
        let shell = json!({"command": "sleep 1"});
        match step {
            Step::Prompt(text) => {
                let mut out = vec![event(
                    "before_agent_start",
                    json!({"messageType": "user", "prompt": text}),
                )];
                out.extend(request(self));
                out
            }
            Step::ToolStart(id) => {
                self.started.insert(id.to_string(), at);
                let mut out = answered(self, "toolUse");
                out.push(event(
                    "tool_execution_start",
                    json!({"toolCallId": id, "toolName": "bash", "args": shell}),
                ));
                out
            }
            Step::ToolEnd(id) => {
                let ran = at - self.started.get(id).copied().unwrap_or(at);
                let mut out = vec![event(
                    "tool_execution_end",
                    json!({"toolCallId": id, "toolName": "bash", "isError": false,
                        "durationMs": ran, "content": [{"type": "text", "text": "(no output)"}]}),
                )];
                out.extend(request(self));
                out
            }
            Step::Stop => {
                let mut out = answered(self, "stop");
                out.push(event("agent_settled", json!({"aborted": false})));
                out
            }
        }
    }
}

/// This agent's script, for the conformance suite's list in `agent.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Pi::default())
}
