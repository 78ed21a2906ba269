//! opencode's events for the conformance suite's steps (test only), as albedo-otel's plugin
//! hands them on.

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{Promise, Script, Step, Sub, SESSION};

#[derive(Default)]
pub(crate) struct Opencode {
    /// Prompts so far: message ids are numbered by them.
    turns: u32,
    /// When the current assistant message was created.
    message_at: u64,
    /// When each call (a sub-agent's too) started, and each sub-agent's message was created.
    started: std::collections::HashMap<String, u64>,
}

impl Script for Opencode {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn cannot(&self, promise: Promise) -> Option<&'static str> {
        (promise == Promise::BlockedStopStaysOneTurn)
            .then_some("no plugin can block opencode's stop: `session.idle` is the turn's end")
    }

    fn sub_agent(&mut self, step: Sub<'_>, at: u64, _: &mut String) -> Option<Vec<Value>> {
        Some(self.sub(step, at))
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

impl Opencode {
    /// As opencode 1.18.33 runs a sub-agent (docs/agents/opencode.md): a `task` call, whose
    /// running state names the child session created while it was pending; the child's own
    /// prompt, message, calls and `session.idle`, which the plugin journals under the top
    /// session, naming their own.
    fn sub(&mut self, step: Sub<'_>, at: u64) -> Vec<Value> {
        let in_child = |agent: &str, name: &str, mut properties: Value| {
            let child = format!("ses_{agent}");
            properties["sessionID"] = child.clone().into();
            json!({"session_id": SESSION, "session": child, "hook_event_name": name,
                "at_ms": at, "properties": properties})
        };
        let task = |call: &str, state: Value| {
            json!({"session_id": SESSION, "hook_event_name": "message.part.updated", "at_ms": at,
                "properties": {"sessionID": SESSION, "time": at, "part": {"id": format!("prt_{call}"),
                "messageID": format!("msg_a{}", self.turns), "type": "tool", "tool": "task",
                "callID": call, "state": state}}})
        };
        let message = |agent: &str, created: u64, completed: Option<u64>| {
            let mut info = json!({"id": format!("msg_{agent}_a"), "parentID": format!("msg_{agent}_u"),
                "role": "assistant", "mode": "general", "agent": "general", "modelID": "mock-model",
                "providerID": "mock", "sessionID": format!("ses_{agent}"), "cost": 0,
                "time": {"created": created},
                "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}});
            if let Some(done) = completed {
                info["time"]["completed"] = done.into();
                info["tokens"] = json!({"total": 11, "input": 10, "output": 1, "reasoning": 0,
                    "cache": {"read": 0, "write": 0}});
                info["finish"] = "stop".into();
            }
            in_child(agent, "message.updated", json!({"info": info}))
        };
        let shell = json!({"command": "sleep 1", "description": "conformance"});
        let tool = |agent: &str, id: &str, state: Value| {
            in_child(
                agent,
                "message.part.updated",
                json!({"time": at, "part": {"id": format!("prt_{id}"),
                    "messageID": format!("msg_{agent}_a"), "type": "tool", "tool": "bash",
                    "callID": id, "state": state}}),
            )
        };
        let prompt = |agent: &str| format!("work as {agent}");
        match step {
            Sub::Spawn { call, agent } => {
                self.started.insert(call.to_string(), at);
                let child = format!("ses_{agent}");
                vec![
                    task(call, json!({"status": "pending"})),
                    in_child(
                        agent,
                        "session.created",
                        json!({"info": {"id": child, "parentID": SESSION, "time": {"created": at}}}),
                    ),
                    task(
                        call,
                        json!({"status": "running", "input": {"prompt": prompt(agent)},
                            "time": {"start": at},
                            "metadata": {"sessionId": child, "parentSessionId": SESSION}}),
                    ),
                ]
            }
            Sub::Started { agent, .. } => {
                self.started.insert(agent.to_string(), at);
                vec![
                    in_child(
                        agent,
                        "chat.message",
                        json!({"message": {"id": format!("msg_{agent}_u"), "role": "user",
                            "time": {"created": at}}, "text": prompt(agent)}),
                    ),
                    message(agent, at, None),
                ]
            }
            Sub::ToolStart { agent, id } => {
                self.started.insert(id.to_string(), at);
                vec![tool(
                    agent,
                    id,
                    json!({"status": "running", "input": shell, "time": {"start": at}}),
                )]
            }
            Sub::ToolEnd { agent, id } => {
                let start = self.started.get(id).copied().unwrap_or(at);
                vec![tool(
                    agent,
                    id,
                    json!({"status": "completed", "input": shell, "output": "",
                        "metadata": {"exit": 0}, "time": {"start": start, "end": at}}),
                )]
            }
            Sub::Stopped { agent, .. } => {
                let created = self.started.get(agent).copied().unwrap_or(at);
                vec![
                    message(agent, created, Some(at)),
                    in_child(agent, "session.idle", json!({})),
                ]
            }
            Sub::Returned { call, agent } => {
                let start = self.started.get(call).copied().unwrap_or(at);
                vec![task(
                    call,
                    json!({"status": "completed", "input": {"prompt": prompt(agent)},
                        "output": "done", "time": {"start": start, "end": at}}),
                )]
            }
        }
    }
}

/// This agent's script, for the conformance suite's list in `agent.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Opencode::default())
}
