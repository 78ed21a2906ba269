//! Qwen Code's payloads for the conformance suite's steps (test only): Claude Code's shape,
//! timed, with the model call that asked for each tool call written to the transcript first,
//! as the CLI writes it.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{
    Gives,
    iso, Model, Promise, Script, Step, Sub, ANSWER_TOKENS, SESSION,
};

/// The transcript every payload names (the suite hands the adapter its one log).
const TRANSCRIPT: &str = "/home/u/.qwen/projects/-work/chats/conformance-session.jsonl";

#[derive(Default)]
pub(crate) struct Qwen {
    prompts: u32,
    calls: u32,
    /// The suite's sub-agent names to the `agent_id` their `SubagentStart` gave them.
    agents: HashMap<String, String>,
    /// When each model call of the suite's was sent: its answer's line says how long it took.
    asked: HashMap<String, u64>,
}

impl Qwen {
    fn agent_id(&self, agent: &str) -> String {
        self.agents.get(agent).cloned().unwrap_or_default()
    }

    fn stamped(&self, mut p: Value, at_ms: u64) -> Value {
        p["session_id"] = SESSION.into();
        p["cwd"] = "/work".into();
        p["transcript_path"] = TRANSCRIPT.into();
        p["timestamp"] = iso(at_ms).into();
        p["permission_mode"] = "yolo".into();
        if self.prompts > 0 && p.get("prompt_id").is_none() {
            p["prompt_id"] = format!("{SESSION}########{}", self.prompts).into();
        }
        p
    }

    /// The model call that asked for the next tool call, as the transcript keeps it.
    fn model_call(&mut self, at_ms: u64, subagent: Option<&str>, log: &mut String) {
        self.calls += 1;
        let mut e = json!({"event.name": "qwen-code.api_response",
            "event.timestamp": iso(at_ms), "response_id": format!("chatcmpl-{}", self.calls),
            "model": "qwen3-coder-plus", "duration_ms": 5, "input_token_count": 100,
            "output_token_count": 10, "auth_type": "openai"});
        if let Some(agent) = subagent {
            e["subagent_id"] = agent.into();
            e["subagent_name"] = "general-purpose".into();
        }
        let line = json!({"type": "system", "subtype": "ui_telemetry",
            "systemPayload": {"uiEvent": e}});
        log.push_str(&format!("{line}\n"));
    }
}

impl Script for Qwen {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn gives(&self) -> Gives {
        Gives {
            turn: "`UserPromptSubmit` to `Stop` (after the grace; its continuations after tool results stay in the turn)",
            tool_calls: "`PreToolUse` to `PostToolUse`, at the CLI's own times, with call ids; denied ones (named by `PostToolBatch`) are refused errors, failed ones errors",
            model_calls: "from its transcript: model, input, cached, output and reasoning tokens, duration and time to first token; the CLI's background agents' calls too",
            sub_agents: "under their `agent` call; background agents under a `background_agent` call in the turn that caused them",
            cannot: "a model call's messages, a call still unanswered when its turn ends",
        }
    }

    fn step(&mut self, step: Step<'_>, at_ms: u64, log: &mut String) -> Vec<Value> {
        let shell = json!({"command": "sleep 1", "description": "wait"});
        let p = match step {
            Step::Prompt(text) => {
                self.prompts += 1;
                json!({"hook_event_name": "UserPromptSubmit", "prompt": text,
                    "submitted_prompt": text,
                    "prompt_id": format!("{SESSION}########{}", self.prompts)})
            }
            Step::ToolStart(id) => {
                self.model_call(at_ms.saturating_sub(1), None, log);
                json!({"hook_event_name": "PreToolUse", "tool_name": "run_shell_command",
                    "tool_input": shell, "tool_use_id": id, "tool_call_id": format!("call-{id}")})
            }
            Step::ToolEnd(id) => json!({"hook_event_name": "PostToolUse",
                "tool_name": "run_shell_command", "tool_input": shell, "tool_use_id": id,
                "tool_call_id": format!("call-{id}"),
                "tool_response": {"llmContent": "Output: (empty)", "returnDisplay": ""}}),
            Step::Stop => json!({"hook_event_name": "Stop", "stop_hook_active": false,
                "last_assistant_message": "done"}),
        };
        vec![self.stamped(p, at_ms)]
    }

    /// As Qwen Code 0.24.4 runs a sub-agent (docs/agents/qwen-code.md): `SubagentStart`
    /// names it `<type>-<the agent call's provider id>`, its hooks carry that `agent_id`.
    fn sub_agent(&mut self, step: Sub<'_>, at_ms: u64, log: &mut String) -> Option<Vec<Value>> {
        let agent_call = |call: &str, agent: &str| {
            json!({"tool_name": "agent", "tool_use_id": call, "tool_call_id": format!("c{call}"),
                "tool_input": {"description": agent, "prompt": format!("work as {agent}"),
                    "subagent_type": "general-purpose", "run_in_background": false}})
        };
        let p = match step {
            Sub::Spawn { call, agent } => {
                let mut p = agent_call(call, agent);
                p["hook_event_name"] = "PreToolUse".into();
                p
            }
            Sub::Started { call, agent } => {
                let id = format!("general-purpose-c{call}");
                self.agents.insert(agent.to_string(), id.clone());
                json!({"hook_event_name": "SubagentStart", "agent_id": id,
                    "agent_type": "general-purpose"})
            }
            Sub::ToolStart { agent, id: call } => {
                let a = self.agent_id(agent);
                self.model_call(at_ms.saturating_sub(1), Some(&a), log);
                let mut p = self
                    .step(Step::ToolStart(call), at_ms, &mut String::new())
                    .remove(0);
                p["agent_id"] = a.into();
                return Some(vec![p]);
            }
            Sub::ToolEnd { agent, id: call } => {
                let mut p = self.step(Step::ToolEnd(call), at_ms, log).remove(0);
                p["agent_id"] = self.agent_id(agent).into();
                return Some(vec![p]);
            }
            Sub::Stopped { agent } => json!({"hook_event_name": "SubagentStop",
                "agent_id": self.agent_id(agent), "agent_type": "general-purpose",
                "last_assistant_message": "done"}),
            Sub::Returned { call, agent } => {
                let mut p = agent_call(call, agent);
                p["hook_event_name"] = "PostToolUse".into();
                p["tool_response"] = json!({"llmContent": "done"});
                p
            }
        };
        Some(vec![self.stamped(p, at_ms)])
    }

    /// No hook: Qwen writes a model call to its transcript (a `qwen-code.api_response` line,
    /// with its duration) only when it ends; nothing is written when it is sent.
    fn model(&mut self, step: Model<'_>, at_ms: u64, log: &mut String) -> Option<Vec<Value>> {
        match step {
            Model::Asked(id) => {
                self.asked.insert(id.to_string(), at_ms);
            }
            Model::Answered(id) => {
                let sent = self.asked.remove(id).unwrap_or(at_ms);
                let (input, output) = ANSWER_TOKENS;
                let e = json!({"event.name": "qwen-code.api_response",
                    "event.timestamp": iso(at_ms), "response_id": format!("chatcmpl-{id}"),
                    "model": "qwen3-coder-plus", "status_code": 200,
                    "duration_ms": at_ms.saturating_sub(sent), "input_token_count": input,
                    "output_token_count": output, "cached_content_token_count": 0,
                    "auth_type": "openai"});
                let line = json!({"type": "system", "subtype": "ui_telemetry",
                    "systemPayload": {"uiEvent": e}});
                log.push_str(&format!("{line}\n"));
            }
        }
        Some(Vec::new())
    }

    fn cannot(&self, promise: Promise) -> Option<&'static str> {
        (promise == Promise::KilledTurnKeepsItsModelCall).then_some(
            "a model call is written to the transcript only once it ends (`qwen-code.api_response` \
             or `api_error`), and no hook is sent for it: one in flight when Qwen Code dies is \
             in no file",
        )
    }
}

/// This agent's script, for the conformance suite's list in `command_hooks/mod.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Qwen::default())
}
