//! Cline CLI's payloads and messages files for the conformance suite's steps (test only): its
//! hooks carry the turn and the tool calls; the model calls are in the messages file, which
//! Cline rewrites whole, pretty-printed, with each message. A sub-agent (`spawn_agent`) sends
//! the same hooks with its own `agent_id` and its parent's as `parent_agent_id`, and writes a
//! messages file of its own (docs/agents/cline.md).

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{
    Gives,
    iso, Model, Promise, Script, Step, Sub, ANSWER_TOKENS, SESSION,
};

#[derive(Default)]
pub(crate) struct Cline {
    /// The user's own agent's messages (its file is the suite's log).
    messages: Vec<Value>,
    /// Each sub-agent's messages, and its file as last written.
    subs: HashMap<String, (Vec<Value>, String)>,
    /// When each running call started.
    started: HashMap<String, u64>,
    /// A running call's output so far (a long one's, from `filler`).
    output: String,
    calls: u64,
}

const HOME: &str = "/home/u";
/// The user's own agent.
const LEAD: &str = "agent_1";

impl Cline {
    /// The messages of `who` (a sub-agent; `None`: the user's own agent).
    fn messages(&mut self, who: Option<&str>) -> &mut Vec<Value> {
        match who {
            Some(a) => &mut self.subs.entry(a.to_string()).or_default().0,
            None => &mut self.messages,
        }
    }

    /// The messages file of `who` as Cline writes it after each message.
    fn write(&mut self, who: Option<&str>, at_ms: u64, log: &mut String) {
        match who {
            Some(a) => {
                let sub = self.subs.entry(a.to_string()).or_default();
                let file = json!({"version": 1, "updated_at": iso(at_ms), "agent": "subagent",
                    "sessionId": format!("{SESSION}__{a}"), "taskType": "subagent_task",
                    "origin": {"source": "cli", "mode": "subagent", "parentThreadId": SESSION,
                        "subagent": a}, "messages": sub.0});
                sub.1 = serde_json::to_string_pretty(&file).unwrap();
            }
            None => {
                let file = json!({"version": 1, "updated_at": iso(at_ms), "agent": "lead",
                    "sessionId": SESSION, "messages": self.messages, "system_prompt": "You are Cline."});
                *log = serde_json::to_string_pretty(&file).unwrap();
            }
        }
    }

    fn answer(&mut self, who: Option<&str>, at_ms: u64, content: Value) {
        self.calls += 1;
        let n = self.calls;
        self.messages(who)
            .push(json!({"id": format!("msg_{n}"), "role": "assistant",
            "content": [content], "ts": at_ms,
            "modelInfo": {"id": "claude-sonnet-4.5", "provider": "anthropic"},
            "metrics": {"inputTokens": 1000 * n + 17, "outputTokens": 20,
                "cacheReadTokens": 100, "cacheWriteTokens": 0}}));
    }

    fn asked(&mut self, who: Option<&str>, at_ms: u64, text: &str) -> Value {
        self.messages(who)
            .push(json!({"id": format!("u_{at_ms}"), "role": "user",
            "content": [{"type": "text", "text": text}], "ts": at_ms}));
        hook(
            who,
            "agent_start",
            at_ms,
            json!({"taskStart": {"taskMetadata": {}}}),
        )
    }

    /// Call `id` (`name`, with `input`) of `who` starts: the model asked for it.
    fn call(&mut self, who: Option<&str>, id: &str, name: &str, input: Value, at_ms: u64) -> Value {
        self.answer(
            who,
            at_ms,
            json!({"type": "tool_use", "id": id, "name": name, "input": input}),
        );
        self.started.insert(id.to_string(), at_ms);
        hook(
            who,
            "tool_call",
            at_ms,
            json!({"iteration": 1, "tool_call": {"id": id, "name": name, "input": input}}),
        )
    }

    /// Call `id` of `who` ends with `output`.
    fn result(
        &mut self,
        who: Option<&str>,
        id: &str,
        name: &str,
        input: Value,
        output: Value,
        at_ms: u64,
    ) -> Value {
        let started = self.started.remove(id).unwrap_or(at_ms);
        self.messages(who)
            .push(json!({"id": format!("r_{at_ms}"), "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": id, "content": output}],
            "ts": at_ms}));
        hook(
            who,
            "tool_result",
            at_ms,
            json!({"iteration": 1, "tool_result": {"id": id, "name": name, "input": input,
                "output": output, "durationMs": at_ms - started, "startedAt": iso(started),
                "endedAt": iso(at_ms)}}),
        )
    }

    /// `step`, by `who`, into its messages file; returns the hook's payload.
    fn act(&mut self, who: Option<&str>, step: Step<'_>, at_ms: u64, log: &mut String) -> Value {
        let command = json!({"commands": ["sleep 1"]});
        let payload = match step {
            Step::Prompt(text) => self.asked(who, at_ms, text),
            Step::ToolStart(id) => self.call(who, id, "run_commands", command, at_ms),
            Step::ToolEnd(id) => {
                let output = json!([{"query": "sleep 1", "result": std::mem::take(&mut self.output),
                    "success": true}]);
                self.result(who, id, "run_commands", command, output, at_ms)
            }
            Step::Stop => {
                self.answer(
                    who,
                    at_ms.saturating_sub(5),
                    json!({"type": "text", "text": "Done."}),
                );
                hook(
                    who,
                    "agent_end",
                    at_ms,
                    json!({"turn": {"outputText": "Done.", "status": "completed"}}),
                )
            }
        };
        self.write(who, at_ms, log);
        payload
    }
}

/// A hook's payload as Cline sends it and the hook journals it: from sub-agent `who`, or
/// (`None`) the user's own agent.
fn hook(who: Option<&str>, name: &str, at_ms: u64, extra: Value) -> Value {
    let mut p = json!({"clineVersion": "", "timestamp": iso(at_ms),
        "taskId": format!("conv_{}", who.unwrap_or("1")),
        "sessionContext": {"rootSessionId": SESSION}, "workspaceRoots": ["/work"],
        "userId": "unknown", "agent_id": who.unwrap_or(LEAD),
        "parent_agent_id": who.map(|_| LEAD), "hookName": name});
    p.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let env = |k: &str| (k == "HOME").then(|| HOME.to_string());
    let journaled = super::journaled(&p.to_string(), &env).expect("a Cline payload");
    serde_json::from_str(&journaled).expect("JSON")
}

/// What `spawn_agent` is called with for sub-agent `agent`.
fn spawn_input(agent: &str) -> Value {
    json!({"task": format!("work as {agent}"), "systemPrompt": "You are a helper."})
}

impl Script for Cline {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn gives(&self) -> Gives {
        Gives {
            turn: "`TaskStart` to `TaskComplete` (a second later, for the messages file)",
            tool_calls: "`PreToolUse` to `PostToolUse`, by Cline's call id, at the times Cline measured; a call a hook cancelled is a refused error (it ends the turn), failed ones errors",
            model_calls: "from its messages file: model, provider, input, cache read and write, output tokens",
            sub_agents: "under their `spawn_agent` call, each with its own tool calls and, from its own messages file, model calls",
            cannot: "the prompt's text (no hook that fires carries it), time to first token",
        }
    }

    fn step(&mut self, step: Step<'_>, at_ms: u64, log: &mut String) -> Vec<Value> {
        vec![self.act(None, step, at_ms, log)]
    }

    /// As Cline 3.0.65 runs a sub-agent: the parent's `spawn_agent` call, then the
    /// sub-agent's own hooks and messages file, its first message the call's task.
    fn sub_agent(&mut self, step: Sub<'_>, at_ms: u64, log: &mut String) -> Option<Vec<Value>> {
        let payload = match step {
            Sub::Spawn { call, agent } => {
                let p = self.call(None, call, "spawn_agent", spawn_input(agent), at_ms);
                self.write(None, at_ms, log);
                p
            }
            Sub::Started { agent, .. } => {
                let p = self.asked(Some(agent), at_ms, &format!("work as {agent}"));
                self.write(Some(agent), at_ms, log);
                p
            }
            Sub::ToolStart { agent, id } => self.act(Some(agent), Step::ToolStart(id), at_ms, log),
            Sub::ToolEnd { agent, id } => self.act(Some(agent), Step::ToolEnd(id), at_ms, log),
            Sub::Stopped { agent } => self.act(Some(agent), Step::Stop, at_ms, log),
            Sub::Returned { call, agent } => {
                let output = json!({"text": "Done.", "iterations": 2, "finishReason": "completed"});
                let p = self.result(None, call, "spawn_agent", spawn_input(agent), output, at_ms);
                self.write(None, at_ms, log);
                p
            }
        };
        Some(vec![payload])
    }

    /// A sub-agent's messages file, by the path its hooks name.
    fn file(&self, path: &str) -> Option<&str> {
        let (_, (_, text)) = self
            .subs
            .iter()
            .find(|(a, _)| path.ends_with(&format!("/{a}.messages.json")))?;
        Some(text.as_str())
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
            self.write(None, at_ms, log);
        }
        Some(Vec::new())
    }

    /// A long command's output: Cline writes it into the file with the call's result.
    fn filler(&mut self, bytes: usize, _: u64, _: &mut String) {
        self.output.push_str(&"x".repeat(bytes));
    }

    fn cannot(&self, promise: Promise) -> Option<&'static str> {
        match promise {
            Promise::KilledTurnKeepsItsModelCall => Some(
                "Cline records a model call only as its answer (an assistant message with its model, \
                 tokens and time in the messages file), and no hook is sent for it: one in flight \
                 when Cline dies has no record of when it was sent or to which model",
            ),
            Promise::ContinuationAfterExportKept => Some(
                "no hook can block Cline's stop: `TaskComplete` comes after the answer, and a \
                 hook's `cancel` only refuses a call (and stops the turn)",
            ),
            _ => None,
        }
    }
}

/// This agent's script, for the conformance suite's list in `command_hooks/mod.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Cline::default())
}
