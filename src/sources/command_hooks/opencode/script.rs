//! opencode's events for the conformance suite's steps (test only), as albedo-otel's plugin
//! hands them on.

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{
    Gives,
    Model, Promise, Script, Step, Sub, ANSWER_TOKENS, SESSION,
};

#[derive(Default)]
pub(crate) struct Opencode {
    /// Prompts so far: message ids are numbered by them.
    turns: u32,
    /// The assistant message (one model call) open now, and when it was created: opencode
    /// creates one as it asks its model, so a turn's first is made by its first step.
    open: Option<(String, u64)>,
    /// When each call (a sub-agent's too) started, and each sub-agent's message was created.
    started: std::collections::HashMap<String, u64>,
}

impl Script for Opencode {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn gives(&self) -> Gives {
        Gives {
            turn: "a prompt to `session.idle`",
            tool_calls: "the start and end opencode measured, with call ids; calls its rules refused are refused errors",
            model_calls: "from its events: model, provider, input, cache read and write, output and reasoning tokens",
            sub_agents: "under their `task` call",
            cannot: "the title its small model writes (recorded nowhere), a model call's messages",
        }
    }

    fn cannot(&self, promise: Promise) -> Option<&'static str> {
        matches!(
            promise,
            Promise::BlockedStopStaysOneTurn | Promise::ContinuationAfterExportKept
        )
        .then_some("no plugin can block opencode's stop: `session.idle` is the turn's end")
    }

    fn sub_agent(&mut self, step: Sub<'_>, at: u64, _: &mut String) -> Option<Vec<Value>> {
        Some(self.sub(step, at))
    }

    fn step(&mut self, step: Step<'_>, at: u64, _: &mut String) -> Vec<Value> {
        let tool = |message: &str, call: &str, state: Value| {
            event(
                at,
                "message.part.updated",
                json!({"sessionID": SESSION, "time": at, "part": {"id": format!("prt_{call}"),
                    "messageID": message, "type": "tool", "tool": "bash", "callID": call,
                    "state": state}}),
            )
        };
        let shell = json!({"command": "sleep 1", "description": "conformance"});
        match step {
            Step::Prompt(text) => {
                self.turns += 1;
                self.open = None;
                vec![event(
                    at,
                    "chat.message",
                    json!({"message": {"id": self.user(), "role": "user", "sessionID": SESSION,
                        "time": {"created": at}, "agent": "build",
                        "model": {"providerID": "mock", "modelID": "mock-model"}}, "text": text}),
                )]
            }
            Step::ToolStart(id) => {
                let (message, mut events) = self.asking(at);
                events.push(tool(
                    &message,
                    id,
                    json!({"status": "running", "input": shell, "time": {"start": at}}),
                ));
                events
            }
            Step::ToolEnd(id) => {
                let (message, mut events) = self.asking(at);
                events.push(tool(
                    &message,
                    id,
                    json!({"status": "completed", "input": shell, "output": "",
                        "metadata": {"exit": 0}, "time": {"start": at, "end": at}}),
                ));
                events
            }
            Step::Stop => {
                let (message, mut events) = self.asking(at);
                let created = self.open.take().map_or(at, |(_, c)| c);
                events.push(self.message(&message, created, Some((at, (100, 10)))));
                events.push(event(at, "session.idle", json!({"sessionID": SESSION})));
                events
            }
        }
    }

    /// A model call is an assistant message: created as it is asked, completed with its
    /// tokens as it is answered.
    fn model(&mut self, step: Model<'_>, at: u64, _: &mut String) -> Option<Vec<Value>> {
        Some(match step {
            Model::Asked(id) => {
                let message = format!("msg_{id}");
                self.open = Some((message.clone(), at));
                vec![self.message(&message, at, None)]
            }
            Model::Answered(id) => {
                let message = format!("msg_{id}");
                let created = match self.open.take() {
                    Some((open, created)) if open == message => created,
                    _ => at,
                };
                vec![self.message(&message, created, Some((at, ANSWER_TOKENS)))]
            }
        })
    }
}

/// One event as the plugin hands it on.
fn event(at: u64, name: &str, properties: Value) -> Value {
    json!({"session_id": SESSION, "hook_event_name": name, "at_ms": at, "properties": properties})
}

impl Opencode {
    /// This turn's prompt's message id.
    fn user(&self) -> String {
        format!("msg_u{}", self.turns)
    }

    /// The assistant message open now, and its creation's event if the step creates it.
    fn asking(&mut self, at: u64) -> (String, Vec<Value>) {
        if let Some((open, _)) = &self.open {
            return (open.clone(), Vec::new());
        }
        let message = format!("msg_a{}", self.turns);
        self.open = Some((message.clone(), at));
        let created = self.message(&message, at, None);
        (message, vec![created])
    }

    /// Assistant message `id`'s update: created at `created`, and completed with `(input,
    /// output)` tokens when `done` says so.
    fn message(&self, id: &str, created: u64, done: Option<(u64, (u64, u64))>) -> Value {
        let mut info = json!({"id": id, "parentID": self.user(), "role": "assistant",
            "mode": "build", "agent": "build", "modelID": "mock-model", "providerID": "mock",
            "sessionID": SESSION, "cost": 0, "time": {"created": created},
            "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}});
        if let Some((at, (input, output))) = done {
            info["time"]["completed"] = at.into();
            info["tokens"] = json!({"total": input + output, "input": input, "output": output,
                "reasoning": 0, "cache": {"read": 0, "write": 0}});
            info["finish"] = "stop".into();
        }
        event(
            done.map_or(created, |(at, _)| at),
            "message.updated",
            json!({"sessionID": SESSION, "info": info}),
        )
    }

    /// As opencode 1.18.33 runs a sub-agent (docs/agents/opencode.md): a `task` call, whose
    /// running state names the child session created while it was pending; the child's own
    /// prompt, message, calls and `session.idle`, which the plugin journals under the top
    /// session, naming their own.
    fn sub(&mut self, step: Sub<'_>, at: u64) -> Vec<Value> {
        // The parent's `task` call is in the assistant message open now.
        let (parent, mut events) = match step {
            Sub::Spawn { .. } | Sub::Returned { .. } => self.asking(at),
            _ => (String::new(), Vec::new()),
        };
        events.extend(self.sub_events(step, at, &parent));
        events
    }

    fn sub_events(&mut self, step: Sub<'_>, at: u64, parent: &str) -> Vec<Value> {
        let in_child = |agent: &str, name: &str, mut properties: Value| {
            let child = format!("ses_{agent}");
            properties["sessionID"] = child.clone().into();
            json!({"session_id": SESSION, "session": child, "hook_event_name": name,
                "at_ms": at, "properties": properties})
        };
        let task = |call: &str, state: Value| {
            json!({"session_id": SESSION, "hook_event_name": "message.part.updated", "at_ms": at,
                "properties": {"sessionID": SESSION, "time": at, "part": {"id": format!("prt_{call}"),
                "messageID": parent, "type": "tool", "tool": "task",
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

/// This agent's script, for the conformance suite's list in `command_hooks/mod.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Opencode::default())
}
