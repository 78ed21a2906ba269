//! Copilot CLI's payloads and session log for the conformance suite's steps (test only): its
//! hooks mark a turn's start and end, and its calls are in the log.

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{
    Gives,
    iso, Model, Promise, Script, Step, Sub, ANSWER_TOKENS, SESSION,
};

#[derive(Default)]
pub(crate) struct Copilot {
    /// Each sub-agent's `task` call, by its `agentId`.
    calls: Vec<(String, String)>,
    /// When each model call was sent, by its id.
    asked: Vec<(String, u64)>,
    /// The agent stopped and no prompt came since: work now means a hook blocked the stop.
    stopped: bool,
}

/// What the blocking hook answers a stop with: Copilot (1.0.102) logs the hook's answer, then
/// submits its reason as a prompt, `UserPromptSubmit` and all.
const BLOCKED_BECAUSE: &str = "the tests fail: run them again";

impl Copilot {
    /// Work after a stop: the stop's hook blocked it, as Copilot logs and says it.
    fn went_on(&mut self, at_ms: u64, log: &mut String) -> Vec<Value> {
        if !std::mem::take(&mut self.stopped) {
            return Vec::new();
        }
        let end = json!({"type": "hook.end", "id": "x", "timestamp": iso(at_ms), "data": {
            "hookInvocationId": "h", "hookType": "agentStop", "success": true,
            "output": {"decision": "block", "reason": BLOCKED_BECAUSE}}});
        log.push_str(&format!("{end}\n"));
        vec![
            json!({"session_id": SESSION, "hook_event_name": "UserPromptSubmit",
            "timestamp": iso(at_ms), "cwd": "/work", "transcript_path": LOG,
            "prompt": BLOCKED_BECAUSE}),
        ]
    }
}

const LOG: &str = "/home/u/.copilot/session-state/conformance-session/events.jsonl";

impl Script for Copilot {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn gives(&self) -> Gives {
        Gives {
            turn: "`UserPromptSubmit` to `Stop`",
            tool_calls: "from its session log: call ids, start and end; denied ones are refused errors",
            model_calls: "from its session log: model, input, cached and output tokens, time to first token; with capture on, its answer (text and the calls it asked for)",
            sub_agents: "under their `task` call, from the log",
            cannot: "a model call's input messages, a command's exit code",
        }
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
            Step::Prompt(text) => {
                self.stopped = false;
                hook("UserPromptSubmit", json!({"prompt": text}))
            }
            Step::ToolStart(id) => {
                let blocked = self.went_on(at_ms, log);
                log.push_str(&line(
                    "tool.execution_start",
                    json!({"toolCallId": id, "toolName": "bash", "arguments": {"command": "sleep 1"}}),
                ));
                blocked
            }
            Step::ToolEnd(id) => {
                log.push_str(&line(
                    "tool.execution_complete",
                    json!({"toolCallId": id, "success": true, "result": {"content": ""}}),
                ));
                Vec::new()
            }
            Step::Stop => {
                self.stopped = true;
                hook("Stop", json!({"stop_reason": "end_turn"}))
            }
        }
    }

    /// Copilot logs a model call once answered: a `session.usage_record` with its duration
    /// and tokens.
    fn model(&mut self, step: Model<'_>, at_ms: u64, log: &mut String) -> Option<Vec<Value>> {
        let blocked = self.went_on(at_ms, log);
        match step {
            Model::Asked(id) => self.asked.push((id.to_string(), at_ms)),
            Model::Answered(id) => {
                let asked = self
                    .asked
                    .iter()
                    .find(|(a, _)| a == id)
                    .map_or(at_ms, |a| a.1);
                let (input, output) = ANSWER_TOKENS;
                let line = json!({"type": "session.usage_record", "id": "x",
                    "timestamp": iso(at_ms), "data": {"usage": {"model": "gpt-4.1",
                    "inputTokens": input, "outputTokens": output, "cacheReadTokens": 0,
                    "cacheWriteTokens": 0, "duration": at_ms - asked, "apiCallId": id,
                    "finishReason": "stop", "providerType": "openai"}}});
                log.push_str(&line.to_string());
                log.push('\n');
            }
        }
        Some(blocked)
    }

    fn cannot(&self, promise: Promise) -> Option<&'static str> {
        (promise == Promise::KilledTurnKeepsItsModelCall).then_some(
            "a model call is logged only once answered (`session.usage_record`, with its \
             duration), and no hook is sent for it: one in flight when Copilot dies is in no \
             file",
        )
    }

    /// A long command's output, as Copilot streams it into the log while the call runs.
    fn filler(&mut self, bytes: usize, at_ms: u64, log: &mut String) {
        let chunk = "x".repeat(64 << 10);
        for _ in 0..bytes.div_ceil(chunk.len()) {
            let line = json!({"type": "tool.execution_partial_result", "id": "x",
                "timestamp": iso(at_ms), "data": {"toolCallId": "call_1", "partialOutput": chunk}});
            log.push_str(&line.to_string());
            log.push('\n');
        }
    }

    /// As Copilot CLI writes a sub-agent into its parent's log (docs/agents/copilot.md):
    /// a `task` call, the sub-agent's events with its `agentId`, the call completed just
    /// before `subagent.completed`; and as it runs the hooks albedo-otel installs for the
    /// sub-agent: its prompt and its stop, under its own id as the session.
    fn sub_agent(&mut self, step: Sub<'_>, at_ms: u64, log: &mut String) -> Option<Vec<Value>> {
        let line = |agent: Option<&str>, kind: &str, data: Value| {
            let mut l = json!({"type": kind, "data": data, "id": "x", "timestamp": iso(at_ms)});
            if let Some(agent) = agent {
                l["agentId"] = agent.into();
            }
            l.to_string() + "\n"
        };
        let call_of = |agent: &str| {
            self.calls
                .iter()
                .find(|(a, _)| a == agent)
                .map(|(_, c)| c.clone())
                .unwrap_or_default()
        };
        match step {
            Sub::Spawn { call, agent } => {
                self.calls.push((agent.to_string(), call.to_string()));
                log.push_str(&line(
                    None,
                    "tool.execution_start",
                    json!({"toolCallId": call, "toolName": "task",
                        "arguments": {"prompt": format!("work as {agent}")}}),
                ));
            }
            Sub::Started { call, agent } => {
                log.push_str(&line(
                    Some(agent),
                    "subagent.started",
                    json!({"toolCallId": call, "agentName": "general-purpose", "model": "gpt-4.1"}),
                ));
                log.push_str(&line(
                    Some(agent),
                    "user.message",
                    json!({"content": format!("work as {agent}")}),
                ));
                return Some(child_hook(
                    agent,
                    "UserPromptSubmit",
                    at_ms,
                    json!({"prompt": format!("work as {agent}")}),
                ));
            }
            Sub::ToolStart { agent, id } => log.push_str(&line(
                Some(agent),
                "tool.execution_start",
                json!({"toolCallId": id, "toolName": "bash", "parentToolCallId": call_of(agent),
                    "arguments": {"command": "sleep 1"}}),
            )),
            Sub::ToolEnd { agent, id } => log.push_str(&line(
                Some(agent),
                "tool.execution_complete",
                json!({"toolCallId": id, "success": true, "result": {"content": ""}}),
            )),
            Sub::Stopped { agent } => {
                return Some(child_hook(
                    agent,
                    "Stop",
                    at_ms,
                    json!({"stop_reason": "end_turn"}),
                ));
            }
            Sub::Returned { call, agent } => {
                log.push_str(&line(
                    None,
                    "tool.execution_complete",
                    json!({"toolCallId": call, "success": true, "result": {"content": "done"}}),
                ));
                log.push_str(&line(
                    Some(agent),
                    "subagent.completed",
                    json!({"toolCallId": call}),
                ));
            }
        }
        Some(Vec::new())
    }
}

/// A hook of sub-agent `agent`, as Copilot runs it: its own id as the session, its parent's.
fn child_hook(agent: &str, event: &str, at_ms: u64, extra: Value) -> Vec<Value> {
    let mut p = json!({"session_id": agent, "hook_event_name": event, "timestamp": iso(at_ms),
        "cwd": "/work", "transcript_path": LOG, "agent_id": agent,
        "agent_type": "general-purpose", "parent_agent_id": SESSION});
    p.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    vec![p]
}

/// This agent's script, for the conformance suite's list in `command_hooks/mod.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Copilot::default())
}
