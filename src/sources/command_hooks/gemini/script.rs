//! Gemini CLI's payloads for the conformance suite's steps (test only).

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{
    Gives,
    iso, Model, Promise, Script, Step, Sub, ANSWER_TOKENS, SESSION,
};

#[derive(Default)]
pub(crate) struct Gemini;

impl Script for Gemini {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn gives(&self) -> Gives {
        Gives {
            turn: "`BeforeAgent` to `AfterAgent`",
            tool_calls: "`BeforeTool` to `AfterTool`, at the CLI's own times; denied ones are refused errors",
            model_calls: "`BeforeModel` to the last chunk: model, input and output tokens",
            sub_agents: "under their `invoke_agent` call (side by side ones each under its own call, their calls under the last started)",
            cannot: "cached and reasoning tokens, a model call's messages, tool call ids, a command's exit code",
        }
    }

    fn step(&mut self, step: Step<'_>, at_ms: u64, _: &mut String) -> Vec<Value> {
        let shell = json!({"command": "sleep 1"});
        let p = match step {
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
        vec![stamped(p, at_ms)]
    }

    /// `BeforeModel` as the call is sent; its last streamed chunk's `AfterModel`, with a
    /// finish reason and the usage, as it is answered.
    fn model(&mut self, step: Model<'_>, at_ms: u64, _: &mut String) -> Option<Vec<Value>> {
        let request = json!({"model": "gemini-2.5-pro", "config": {"maxOutputTokens": 8192}});
        let p = match step {
            Model::Asked(_) => json!({"hook_event_name": "BeforeModel", "llm_request": request}),
            Model::Answered(_) => {
                let (input, output) = ANSWER_TOKENS;
                json!({"hook_event_name": "AfterModel", "llm_request": request,
                    "llm_response": {"candidates": [{"finishReason": "STOP"}],
                        "usageMetadata": {"promptTokenCount": input,
                            "candidatesTokenCount": output, "totalTokenCount": input + output}}})
            }
        };
        Some(vec![stamped(p, at_ms)])
    }

    fn cannot(&self, promise: Promise) -> Option<&'static str> {
        (promise == Promise::SubagentCallsStayTheirs).then_some(
            "the hooks of sub-agents run side by side carry nothing that says whose they are: \
             their calls go to the last started",
        )
    }

    /// As Gemini CLI 0.61 runs a sub-agent (gemini/subagents/tests.rs): inside its
    /// `invoke_agent` call, with no hook of its own to start or stop it, its tool hooks the
    /// same as its parent's.
    fn sub_agent(&mut self, step: Sub<'_>, at_ms: u64, log: &mut String) -> Option<Vec<Value>> {
        let invoke = |agent: &str| {
            json!({"tool_name": "invoke_agent",
                "tool_input": {"agent_name": agent, "prompt": format!("work as {agent}")}})
        };
        let p = match step {
            Sub::Spawn { agent, .. } => {
                let mut p = invoke(agent);
                p["hook_event_name"] = "BeforeTool".into();
                p
            }
            Sub::Started { .. } => return Some(Vec::new()),
            // A sub-agent ends by calling `complete_task` with its answer.
            Sub::Stopped { .. } => {
                let done = json!({"tool_name": "complete_task",
                    "tool_input": {"result": {"response": "done"}}});
                let mut before = done.clone();
                before["hook_event_name"] = "BeforeTool".into();
                let mut after = done;
                after["hook_event_name"] = "AfterTool".into();
                after["tool_response"] = json!({"llmContent": "Output submitted"});
                return Some(vec![stamped(before, at_ms), stamped(after, at_ms)]);
            }
            Sub::ToolStart { id, .. } => return Some(self.step(Step::ToolStart(id), at_ms, log)),
            Sub::ToolEnd { id, .. } => return Some(self.step(Step::ToolEnd(id), at_ms, log)),
            Sub::Returned { agent, .. } => {
                let mut p = invoke(agent);
                p["hook_event_name"] = "AfterTool".into();
                p["tool_response"] = json!({"llmContent": [{"text": "finished"}]});
                p
            }
        };
        Some(vec![stamped(p, at_ms)])
    }
}

fn stamped(mut p: Value, at_ms: u64) -> Value {
    p["session_id"] = SESSION.into();
    p["cwd"] = "/work".into();
    p["timestamp"] = iso(at_ms).into();
    p
}

/// This agent's script, for the conformance suite's list in `command_hooks/mod.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Gemini)
}
