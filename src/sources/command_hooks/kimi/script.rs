//! Kimi Code's payloads and `wire.jsonl` lines for the conformance suite's steps (test only):
//! its hooks mark a turn's start and stop, and its calls are in the wire, as Kimi 2.1.0
//! writes them (docs/agents/kimi.md). The suite hands every path one log, so the
//! session index's line is in it too, and each sub-agent's lines (Kimi's own file per agent
//! holds the same lines, each with its `agentId`).

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{
    Gives,Model, Script, Step, Sub, ANSWER_TOKENS, SESSION};

#[derive(Default)]
pub(crate) struct Kimi {
    indexed: bool,
}

const HOME: &str = "/home/u/.kimi-code";

fn line(log: &mut String, agent: Option<&str>, at_ms: u64, mut v: Value) {
    v["time"] = at_ms.into();
    if let Some(agent) = agent {
        v["agentId"] = agent.into();
    }
    log.push_str(&v.to_string());
    log.push('\n');
}

fn tool_call(log: &mut String, agent: &str, at_ms: u64, id: &str, name: &str) {
    line(
        log,
        Some(agent),
        at_ms,
        json!({"type": "context.append_loop_event", "event": {"type": "tool.call",
            "toolCallId": id, "name": name, "args": {"command": "sleep 1"}}}),
    );
}

fn tool_result(log: &mut String, agent: &str, at_ms: u64, id: &str) {
    line(
        log,
        Some(agent),
        at_ms,
        json!({"type": "context.append_loop_event", "event": {"type": "tool.result",
            "toolCallId": id, "result": {"output": "", "durationMs": 1}}}),
    );
}

fn hook(event: &str, extra: Value) -> Vec<Value> {
    let mut p = json!({"session_id": SESSION, "hook_event_name": event, "cwd": "/work",
        "client_type": "kimi_code_cli", "kimi_home": HOME});
    p.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    vec![p]
}

impl Script for Kimi {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn gives(&self) -> Gives {
        Gives {
            turn: "`UserPromptSubmit` to the wire's `turn.ended`",
            tool_calls: "from its `wire.jsonl`: Kimi's call ids, start and end; failed and denied ones are errors",
            model_calls: "from its `wire.jsonl`: model, provider, input, cache read and write, output tokens, time to first token",
            sub_agents: "under their `Agent` call, each from its own `wire.jsonl`",
            cannot: "a refused call told from a failed one, a model call's messages, a command's exit code, a project scope (Kimi has none)",
        }
    }

    fn step(&mut self, step: Step<'_>, at_ms: u64, log: &mut String) -> Vec<Value> {
        match step {
            Step::Prompt(text) => {
                if !std::mem::replace(&mut self.indexed, true) {
                    log.push_str(
                        &json!({"sessionId": SESSION,
                            "sessionDir": format!("{HOME}/sessions/wd_work_0/{SESSION}")})
                        .to_string(),
                    );
                    log.push('\n');
                }
                // Kimi writes the prompt after its `UserPromptSubmit` hooks return.
                line(
                    log,
                    Some("main"),
                    at_ms + 1,
                    json!({"type": "turn.prompt", "input": [{"type": "text", "text": text}]}),
                );
                hook(
                    "UserPromptSubmit",
                    json!({"prompt": [{"type": "text", "text": text}]}),
                )
            }
            Step::ToolStart(id) => {
                tool_call(log, "main", at_ms, id, "Bash");
                Vec::new()
            }
            Step::ToolEnd(id) => {
                tool_result(log, "main", at_ms, id);
                Vec::new()
            }
            // Kimi writes `turn.ended` only once its stop hooks let the turn end: another that
            // blocks the stop keeps it going, so the step's stop is the hook alone.
            Step::Stop => hook("Stop", json!({"stop_hook_active": false})),
        }
    }

    /// As Kimi 2.1.0 writes a model call in the wire, and no hook for it: `llm.request` when
    /// it is sent; `usage.record` when its answer is in, then the step's `step.end` (an answer
    /// that asks for no tool ends its step at once).
    fn model(&mut self, step: Model<'_>, at_ms: u64, log: &mut String) -> Option<Vec<Value>> {
        match step {
            Model::Asked(_) => line(
                log,
                Some("main"),
                at_ms,
                json!({"type": "llm.request", "kind": "loop", "provider": "openai",
                    "model": "kimi-test", "modelAlias": "local", "maxTokens": 100000}),
            ),
            Model::Answered(id) => {
                let (input, output) = ANSWER_TOKENS;
                let usage = json!({"inputOther": input, "output": output, "inputCacheRead": 0,
                    "inputCacheCreation": 0});
                line(
                    log,
                    Some("main"),
                    at_ms,
                    json!({"type": "usage.record", "model": "local", "usage": usage,
                        "usageScope": "turn"}),
                );
                line(
                    log,
                    Some("main"),
                    at_ms,
                    json!({"type": "context.append_loop_event", "event": {"type": "step.end",
                        "finishReason": "end_turn", "usage": usage, "messageId": id,
                        "llmFirstTokenLatencyMs": 1}}),
                );
            }
        }
        Some(Vec::new())
    }

    /// A long command's output, as a tool's result in the wire.
    fn filler(&mut self, bytes: usize, at_ms: u64, log: &mut String) {
        let chunk = "x".repeat(64 << 10);
        for _ in 0..bytes.div_ceil(chunk.len()) {
            line(
                log,
                Some("main"),
                at_ms,
                json!({"type": "context.append_loop_event", "event": {"type": "content.part",
                    "part": {"type": "text", "text": chunk}}}),
            );
        }
    }

    /// As Kimi 2.1.0 writes a sub-agent: the `Agent` call in the parent's wire, then
    /// `subagent.spawned` naming it; the sub-agent's own events in its own wire; its
    /// `turn.ended`, `subagent.completed`, then the call's result. Its hooks (`SubagentStart`,
    /// its `Stop`) come under the parent's session id.
    fn sub_agent(&mut self, step: Sub<'_>, at_ms: u64, log: &mut String) -> Option<Vec<Value>> {
        match step {
            Sub::Spawn { call, .. } => tool_call(log, "main", at_ms, call, "Agent"),
            Sub::Started { call, agent } => {
                line(
                    log,
                    None,
                    at_ms,
                    json!({"type": "subagent.spawned", "subagentId": agent, "subagentName": "coder",
                        "parentToolCallId": call, "parentAgentId": "main", "callerAgentId": "main"}),
                );
                line(
                    log,
                    Some(agent),
                    at_ms,
                    json!({"type": "turn.prompt", "input": [{"type": "text", "text": format!("work as {agent}")}]}),
                );
                return Some(hook("SubagentStart", json!({"agent_name": "coder"})));
            }
            Sub::ToolStart { agent, id } => tool_call(log, agent, at_ms, id, "Bash"),
            Sub::ToolEnd { agent, id } => tool_result(log, agent, at_ms, id),
            Sub::Stopped { agent } => {
                line(
                    log,
                    Some(agent),
                    at_ms,
                    json!({"type": "turn.ended", "reason": "completed"}),
                );
                return Some(hook("Stop", json!({"stop_hook_active": false})));
            }
            Sub::Returned { call, agent } => {
                line(
                    log,
                    None,
                    at_ms,
                    json!({"type": "subagent.completed", "subagentId": agent}),
                );
                tool_result(log, "main", at_ms, call);
            }
        }
        Some(Vec::new())
    }
}

/// This agent's script, for the conformance suite's list in `command_hooks/mod.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Kimi::default())
}
