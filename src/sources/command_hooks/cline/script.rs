//! Cline CLI's payloads and messages file for the conformance suite's steps (test only): its
//! hooks carry the turn and the tool calls; the model calls are in the messages file, which
//! Cline rewrites whole, pretty-printed, with each message.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{
    iso, Model, Promise, Script, Step, ANSWER_TOKENS, SESSION,
};

#[derive(Default)]
pub(crate) struct Cline {
    messages: Vec<Value>,
    /// When each running call started.
    started: HashMap<String, u64>,
    /// A running call's output so far (a long one's, from `filler`).
    output: String,
    calls: u64,
}

const HOME: &str = "/home/u";

impl Cline {
    /// The messages file as Cline writes it after each message.
    fn write(&self, at_ms: u64, log: &mut String) {
        let file = json!({"version": 1, "updated_at": iso(at_ms), "agent": "lead",
            "sessionId": SESSION, "messages": self.messages, "system_prompt": "You are Cline."});
        *log = serde_json::to_string_pretty(&file).unwrap();
    }

    fn answer(&mut self, at_ms: u64, content: Value) {
        self.calls += 1;
        self.messages.push(
            json!({"id": format!("msg_{}", self.calls), "role": "assistant",
            "content": [content], "ts": at_ms,
            "modelInfo": {"id": "claude-sonnet-4.5", "provider": "anthropic"},
            "metrics": {"inputTokens": 1000 * self.calls + 17, "outputTokens": 20,
                "cacheReadTokens": 100, "cacheWriteTokens": 0}}),
        );
    }
}

/// A hook's payload as Cline sends it and the hook journals it.
fn hook(name: &str, at_ms: u64, extra: Value) -> Value {
    let mut p = json!({"clineVersion": "", "timestamp": iso(at_ms), "taskId": "conv_1",
        "sessionContext": {"rootSessionId": SESSION}, "workspaceRoots": ["/work"],
        "userId": "unknown", "agent_id": "agent_1", "parent_agent_id": null, "hookName": name});
    p.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let env = |k: &str| (k == "HOME").then(|| HOME.to_string());
    let journaled = super::journaled(&p.to_string(), &env).expect("a Cline payload");
    serde_json::from_str(&journaled).expect("JSON")
}

impl Script for Cline {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn step(&mut self, step: Step<'_>, at_ms: u64, log: &mut String) -> Vec<Value> {
        let command = json!({"commands": ["sleep 1"]});
        let payload = match step {
            Step::Prompt(text) => {
                self.messages
                    .push(json!({"id": format!("u_{at_ms}"), "role": "user",
                    "content": [{"type": "text", "text": text}], "ts": at_ms}));
                hook(
                    "agent_start",
                    at_ms,
                    json!({"taskStart": {"taskMetadata": {}}}),
                )
            }
            Step::ToolStart(id) => {
                self.answer(
                    at_ms,
                    json!({"type": "tool_use", "id": id, "name": "run_commands",
                    "input": command}),
                );
                self.started.insert(id.to_string(), at_ms);
                hook(
                    "tool_call",
                    at_ms,
                    json!({"iteration": 1,
                    "tool_call": {"id": id, "name": "run_commands", "input": command}}),
                )
            }
            Step::ToolEnd(id) => {
                let started = self.started.remove(id).unwrap_or(at_ms);
                let output = json!([{"query": "sleep 1", "result": std::mem::take(&mut self.output),
                    "success": true}]);
                self.messages
                    .push(json!({"id": format!("r_{at_ms}"), "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": id, "content": output}],
                    "ts": at_ms}));
                hook(
                    "tool_result",
                    at_ms,
                    json!({"iteration": 1, "tool_result": {"id": id,
                    "name": "run_commands", "input": command, "output": output,
                    "durationMs": at_ms - started, "startedAt": iso(started), "endedAt": iso(at_ms)}}),
                )
            }
            Step::Stop => {
                self.answer(
                    at_ms.saturating_sub(5),
                    json!({"type": "text", "text": "Done."}),
                );
                hook(
                    "agent_end",
                    at_ms,
                    json!({"turn": {"outputText": "Done.", "status": "completed"}}),
                )
            }
        };
        self.write(at_ms, log);
        vec![payload]
    }

    /// No hook: Cline writes a model call into the messages file as one assistant message,
    /// with its model, tokens and time, once its answer has come.
    fn model(&mut self, step: Model<'_>, at_ms: u64, log: &mut String) -> Option<Vec<Value>> {
        if let Model::Answered(id) = step {
            let (input, output) = ANSWER_TOKENS;
            self.messages
                .push(json!({"id": format!("msg_{id}"), "role": "assistant",
                "content": [{"type": "text", "text": "thinking it over"}], "ts": at_ms,
                "modelInfo": {"id": "claude-sonnet-4.5", "provider": "anthropic"},
                "metrics": {"inputTokens": input, "outputTokens": output,
                    "cacheReadTokens": 0, "cacheWriteTokens": 0}}));
            self.write(at_ms, log);
        }
        Some(Vec::new())
    }

    /// A long command's output: Cline writes it into the file with the call's result.
    fn filler(&mut self, bytes: usize, _: u64, _: &mut String) {
        self.output.push_str(&"x".repeat(bytes));
    }

    fn cannot(&self, promise: Promise) -> Option<&'static str> {
        match promise {
            Promise::SubagentsSideBySide | Promise::SubagentCallsStayTheirs => Some(
                "Cline's sub-agents (`spawn_agent`) are not traced yet: their hooks are left out",
            ),
            Promise::KilledTurnKeepsItsModelCall => Some(
                "Cline records a model call only as its answer (an assistant message with its model, \
                 tokens and time in the messages file), and no hook is sent for it: one in flight \
                 when Cline dies has no record of when it was sent or to which model",
            ),
            _ => None,
        }
    }
}

/// This agent's script, for the conformance suite's list in `agent.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Cline::default())
}
