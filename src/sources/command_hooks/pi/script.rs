//! Pi's events for the conformance suite's steps (test only), as albedo-otel's extension
//! hands them on.

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{
    Gives,Model, Promise, Script, Step, ANSWER_TOKENS, SESSION};

#[derive(Default)]
pub(crate) struct Pi {
    /// A request Pi makes after a prompt or a tool's result, not handed on yet: the next
    /// step sends it, stamped when it was made, unless a model step sends its own instead.
    due: Option<u64>,
    /// When the model call in flight was sent.
    sent: Option<u64>,
    /// Model calls so far: their response ids are numbered by them.
    calls: u32,
    /// When each tool call started.
    started: std::collections::HashMap<String, u64>,
}

/// One event as the extension hands it on, made at `at`.
fn event(name: &str, at: u64, fields: Value) -> Value {
    let mut e = json!({"session_id": SESSION, "hook_event_name": name, "at_ms": at});
    if let (Some(e), Some(f)) = (e.as_object_mut(), fields.as_object()) {
        e.extend(f.clone());
    }
    e
}

impl Pi {
    /// A request sent at `at`.
    fn request(&mut self, at: u64) -> Vec<Value> {
        self.sent = Some(at);
        vec![event(
            "before_provider_request",
            at,
            json!({"provider": "mock", "model": "mock-model"}),
        )]
    }

    /// The request due, if one is.
    fn send_due(&mut self) -> Vec<Value> {
        match self.due.take() {
            Some(at) => self.request(at),
            None => Vec::new(),
        }
    }

    /// The answer to the request in flight, at `at`: its headers, its first chunk and its
    /// end, with `tokens` (input, output) and the stop reason `stop`.
    fn answer(&mut self, at: u64, stop: &str, (input, output): (u64, u64)) -> Vec<Value> {
        let mut out = self.send_due();
        let Some(sent) = self.sent.take() else {
            return out;
        };
        self.calls += 1;
        let message = |stop: &str| {
            json!({"provider": "mock", "model": "mock-model", "stopReason": stop,
                "timestamp": sent})
        };
        let mut done = message(stop);
        done["responseId"] = format!("chatcmpl-{}", self.calls).into();
        done["durationMs"] = (at - sent).into();
        done["usage"] = json!({"input": input, "output": output, "cacheRead": 0,
            "cacheWrite": 0, "reasoning": 0, "totalTokens": input + output});
        out.extend([
            event("message_start", at, json!({"message": message("pending")})),
            event("message_update", at, json!({})),
            event("message_end", at, json!({"message": done})),
        ]);
        out
    }
}

impl Script for Pi {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn gives(&self) -> Gives {
        Gives {
            turn: "`before_agent_start` to `agent_settled`",
            tool_calls: "`tool_execution_start` to `_end`, with call ids; calls another extension blocked are refused errors",
            model_calls: "from its events, the message it writes to its session file: model, provider, input, cache read and write, output and reasoning tokens, Pi's own start and end, first chunk",
            sub_agents: "none: Pi has none",
            cannot: "a model call's messages",
        }
    }

    fn cannot(&self, promise: Promise) -> Option<&'static str> {
        match promise {
            Promise::BlockedStopStaysOneTurn | Promise::ContinuationAfterExportKept => Some(
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
        let shell = json!({"command": "sleep 1"});
        match step {
            Step::Prompt(text) => {
                self.due = Some(at);
                vec![event(
                    "before_agent_start",
                    at,
                    json!({"messageType": "user", "prompt": text}),
                )]
            }
            Step::ToolStart(id) => {
                self.started.insert(id.to_string(), at);
                let mut out = self.answer(at, "toolUse", (100, 10));
                out.push(event(
                    "tool_execution_start",
                    at,
                    json!({"toolCallId": id, "toolName": "bash", "args": shell}),
                ));
                out
            }
            Step::ToolEnd(id) => {
                let ran = at - self.started.get(id).copied().unwrap_or(at);
                // Pi asks the model again with the result.
                self.due = Some(at);
                vec![event(
                    "tool_execution_end",
                    at,
                    json!({"toolCallId": id, "toolName": "bash", "isError": false,
                        "durationMs": ran, "content": [{"type": "text", "text": "(no output)"}]}),
                )]
            }
            Step::Stop => {
                let mut out = self.answer(at, "stop", (100, 10));
                out.push(event("agent_settled", at, json!({"aborted": false})));
                out
            }
        }
    }

    /// A model step stands for the request Pi would have made: it sends its own at its own
    /// time, and answers it as Pi's events do (headers, first chunk, end with its tokens).
    fn model(&mut self, step: Model<'_>, at: u64, _: &mut String) -> Option<Vec<Value>> {
        Some(match step {
            Model::Asked(_) => {
                self.due = None;
                self.request(at)
            }
            Model::Answered(_) => self.answer(at, "stop", ANSWER_TOKENS),
        })
    }
}

/// This agent's script, for the conformance suite's list in `command_hooks/mod.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Pi::default())
}
