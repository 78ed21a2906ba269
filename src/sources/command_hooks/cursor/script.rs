//! Cursor's payloads for the conformance suite's steps (test only), as the hook journals them
//! (with the conversation as `session_id`: [`super::journaled`]).

use serde_json::{json, Value};

use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{
    Gives,Promise, Script, Step, Sub, SESSION};

#[derive(Default)]
pub(crate) struct Cursor;

impl Script for Cursor {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn gives(&self) -> Gives {
        Gives {
            turn: "(tested on recorded payloads only) `beforeSubmitPrompt` to `stop` (after the grace); in `-p` runs, first call to `sessionEnd`",
            tool_calls: "`preToolUse` to `postToolUse`, by `tool_use_id`, at the hooks' arrival; denied ones are refused errors, failed ones errors",
            model_calls: "none: its hooks carry no model call and no token count",
            sub_agents: "under their `Task` call (`subagentStart`, `subagentStop`)",
            cannot: "times from the payloads (they have none), model calls and tokens, a command's exit code; a sub-agent's own calls nest under it only when their hooks name its conversation",
        }
    }

    fn step(&mut self, step: Step<'_>, _: u64, _: &mut String) -> Vec<Value> {
        let p = match step {
            Step::Prompt(text) => json!({"hook_event_name": "beforeSubmitPrompt",
                "prompt": text, "attachments": []}),
            Step::ToolStart(id) => shell("preToolUse", id),
            Step::ToolEnd(id) => shell("postToolUse", id),
            Step::Stop => json!({"hook_event_name": "stop", "status": "completed",
                "loop_count": 0}),
        };
        vec![journaled(p, SESSION)]
    }

    fn cannot(&self, promise: Promise) -> Option<&'static str> {
        match promise {
            Promise::SubagentCallsStayTheirs => Some(
                "its documentation does not say which conversation a sub-agent's own tool \
                 hooks name: those naming the sub-agent's go under it (as this script sends \
                 them), those naming the parent's stay in the parent's turn; untested against \
                 Cursor",
            ),
            Promise::InterruptedTurnKeepsItsModelCalls | Promise::KilledTurnKeepsItsModelCall => {
                Some("no hook of Cursor's says when a model call is sent or what it used")
            }
            _ => None,
        }
    }

    /// A sub-agent is started by a `Task` call and announced by `subagentStart` (naming that
    /// call and the sub-agent's id), in its parent's conversation. Its own tool hooks are
    /// taken to name its own conversation, the sub-agent's id: the documentation does not say
    /// (docs/agents/cursor.md).
    fn sub_agent(&mut self, step: Sub<'_>, _: u64, _: &mut String) -> Option<Vec<Value>> {
        let task = |event: &str, call: &str, agent: &str| {
            json!({"hook_event_name": event, "tool_name": "Task", "tool_use_id": call,
                "tool_input": {"subagent_type": "explore", "prompt": format!("work as {agent}")}})
        };
        let (p, conversation) = match step {
            Sub::Spawn { call, agent } => (task("preToolUse", call, agent), SESSION),
            Sub::Started { call, agent } => (
                json!({"hook_event_name": "subagentStart", "subagent_id": agent,
                    "subagent_type": "explore", "task": format!("work as {agent}"),
                    "tool_call_id": call, "parent_conversation_id": SESSION}),
                SESSION,
            ),
            Sub::ToolStart { agent, id } => (shell("preToolUse", id), agent),
            Sub::ToolEnd { agent, id } => (shell("postToolUse", id), agent),
            Sub::Stopped { agent } => (
                json!({"hook_event_name": "subagentStop", "subagent_id": agent,
                    "subagent_type": "explore", "status": "completed", "summary": "done"}),
                SESSION,
            ),
            Sub::Returned { call, agent } => {
                let mut p = task("postToolUse", call, agent);
                p["tool_output"] = "\"done\"".into();
                (p, SESSION)
            }
        };
        Some(vec![journaled(p, conversation)])
    }
}

fn shell(event: &str, id: &str) -> Value {
    let mut p = json!({"hook_event_name": event, "tool_name": "Shell", "tool_use_id": id,
        "tool_input": {"command": "sleep 1", "working_directory": "/work"}, "cwd": "/work"});
    if event == "postToolUse" {
        p["tool_output"] = "{\"exitCode\":0,\"stdout\":\"\"}".into();
        p["duration"] = 1000.into();
    }
    p
}

/// `p` with what every Cursor payload carries, as the hook journals it.
fn journaled(mut p: Value, conversation: &str) -> Value {
    p["conversation_id"] = conversation.into();
    p["generation_id"] = "gen-1".into();
    p["model"] = "claude-4.5-sonnet".into();
    p["cursor_version"] = "2.4.21".into();
    p["workspace_roots"] = json!(["/work"]);
    p["user_email"] = "user@example.com".into();
    let journaled = super::journaled(&p.to_string()).expect("a Cursor payload");
    serde_json::from_str(&journaled).expect("JSON")
}

/// This agent's script, for the conformance suite's list in `command_hooks/mod.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Cursor)
}
