//! Codex CLI's payloads for the conformance suite's steps (test only): Claude Code's, with
//! its model named.

use serde_json::{json, Value};

use crate::sources::command_hooks::claude_code::script::payload;
use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{
    Gives,
    Model, Promise, Script, Step, Sub, ANSWER_TOKENS, SESSION,
};

#[derive(Default)]
pub(crate) struct Codex;

impl Script for Codex {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn gives(&self) -> Gives {
        Gives {
            turn: "`UserPromptSubmit` to `Stop`",
            tool_calls: "`PreToolUse` to `PostToolUse`, at the hooks' own times; denied ones are refused errors",
            model_calls: "`PreModelRequest` to `PostModelRequest`: model, input, cached, output and reasoning tokens",
            sub_agents: "under their `spawn_agent` call (which ends when the sub-agent starts)",
            cannot: "times from the payloads (they have none), a model call's messages, a command's exit code",
        }
    }

    fn step(&mut self, step: Step<'_>, _: u64, _: &mut String) -> Vec<Value> {
        let mut p = payload(step);
        p["model"] = "gpt-5".into();
        vec![p]
    }

    /// `PreModelRequest` and `PostModelRequest`, paired by `request_id`, as Codex 0.171.0
    /// sends them (docs/agents/codex.md).
    fn model(&mut self, step: Model<'_>, _: u64, _: &mut String) -> Option<Vec<Value>> {
        let mut p = match step {
            Model::Asked(id) => json!({"hook_event_name": "PreModelRequest", "request_id": id}),
            Model::Answered(id) => {
                let (input, output) = ANSWER_TOKENS;
                json!({"hook_event_name": "PostModelRequest", "request_id": id,
                    "status": "completed", "response_id": format!("resp_{id}"),
                    "token_usage": {"input_tokens": input, "cached_input_tokens": 0,
                        "output_tokens": output, "reasoning_output_tokens": 0}})
            }
        };
        p["session_id"] = SESSION.into();
        p["cwd"] = "/work".into();
        p["model"] = "gpt-5".into();
        Some(vec![p])
    }

    fn cannot(&self, promise: Promise) -> Option<&'static str> {
        match promise {
            Promise::SubagentsSideBySide => Some(
                "a `spawn_agent` call returns as soon as its sub-agent starts (`wait_agent` \
                 waits for it): no call ends at its sub-agent's end",
            ),
            _ => None,
        }
    }

    /// As Codex 0.171.0 runs a sub-agent (docs/agents/codex.md): `spawn_agent`'s answer
    /// names it as its `SubagentStart` comes, and its own hooks carry its `agent_id`. The
    /// parent's `wait_agent`, a call of its own, is left out.
    fn sub_agent(&mut self, step: Sub<'_>, _: u64, _: &mut String) -> Option<Vec<Value>> {
        let spawn = |call: &str, agent: &str| {
            json!({"hook_event_name": "PreToolUse", "tool_name": "spawn_agent",
                "tool_use_id": call, "tool_input": {"message": format!("work as {agent}"),
                "agent_type": "default"}})
        };
        let child = |mut p: Value, agent: &str| {
            p["agent_id"] = agent.into();
            p["agent_type"] = "default".into();
            p
        };
        let payloads = match step {
            Sub::Spawn { call, agent } => vec![spawn(call, agent)],
            Sub::Started { call, agent } => {
                let mut answer = spawn(call, agent);
                answer["hook_event_name"] = "PostToolUse".into();
                answer["tool_response"] = json!({"agent_id": agent, "nickname": "Faraday"})
                    .to_string()
                    .into();
                vec![
                    answer,
                    child(json!({"hook_event_name": "SubagentStart"}), agent),
                    child(
                        json!({"hook_event_name": "UserPromptSubmit",
                            "prompt": format!("work as {agent}")}),
                        agent,
                    ),
                ]
            }
            Sub::ToolStart { agent, id } => vec![child(payload(Step::ToolStart(id)), agent)],
            Sub::ToolEnd { agent, id } => vec![child(payload(Step::ToolEnd(id)), agent)],
            Sub::Stopped { agent, .. } => vec![child(
                json!({"hook_event_name": "SubagentStop", "stop_hook_active": false,
                    "last_assistant_message": "done"}),
                agent,
            )],
            Sub::Returned { .. } => Vec::new(),
        };
        Some(
            payloads
                .into_iter()
                .map(|mut p| {
                    p["session_id"] = SESSION.into();
                    p["cwd"] = "/work".into();
                    p["model"] = "gpt-5".into();
                    p
                })
                .collect(),
        )
    }
}

/// This agent's script, for the conformance suite's list in `command_hooks/mod.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Codex)
}
