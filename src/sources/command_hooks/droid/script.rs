//! Factory Droid's payloads for the conformance suite's steps (test only), and what Droid
//! 0.215.0 writes for each to the session file and its settings (seen running it).

use serde_json::{json, Value};

use crate::protocol::Usage;
use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{
    iso, Gives, Model, Promise, Script, Step, ANSWER_TOKENS, SESSION,
};

/// Where the session's file is (the suite serves its one log whatever the path).
const TRANSCRIPT: &str = "/home/u/.factory/sessions/-work/conformance-session.jsonl";
/// The settings beside it, with the session's usage.
const SETTINGS: &str = "/home/u/.factory/sessions/-work/conformance-session.settings.json";

#[derive(Default)]
pub(crate) struct Droid {
    /// Lines written so far, for their ids.
    lines: u32,
    /// The session's usage so far, and the newest call's.
    total: Usage,
    settings: String,
}

impl Droid {
    /// Appends a message line to the session file, stamped `at_ms`; returns its id.
    fn write(&mut self, log: &mut String, message: Value, parent: Option<String>, at_ms: u64) -> String {
        self.lines += 1;
        let id = format!("m{}", self.lines);
        self.write_as(log, &id, message, parent, at_ms);
        id
    }

    fn write_as(&mut self, log: &mut String, id: &str, message: Value, parent: Option<String>, at_ms: u64) {
        let line = json!({"type": "message", "id": id, "parentId": parent,
            "timestamp": iso(at_ms), "message": message});
        log.push_str(&line.to_string());
        log.push('\n');
    }

    /// The model's message (one model call): the session file gets it, and the settings the
    /// call's usage, as Droid writes them before its next hook.
    fn answer(&mut self, log: &mut String, content: Value, at_ms: u64) {
        self.write(
            log,
            json!({"role": "assistant", "content": content, "modelId": "claude-opus-4-7",
                "openaiMessageId": format!("msg_{}", self.lines + 1)}),
            None,
            at_ms,
        );
        let (input, output) = ANSWER_TOKENS;
        self.total.input_tokens += input;
        self.total.output_tokens += output;
        self.settings = json!({"model": "claude-opus-4-7", "providerLock": "anthropic",
            "tokenUsage": {"inputTokens": self.total.input_tokens,
                "outputTokens": self.total.output_tokens, "cacheCreationTokens": 0,
                "cacheReadTokens": 0, "thinkingTokens": 0},
            "lastCallTokenUsage": {"inputTokens": input, "outputTokens": output,
                "cacheReadTokens": 0}})
        .to_string();
    }
}

/// A hook's payload as Droid sends it: Claude Code's fields, no `tool_use_id`.
fn payload(mut p: Value) -> Value {
    p["session_id"] = SESSION.into();
    p["cwd"] = "/work".into();
    p["transcript_path"] = TRANSCRIPT.into();
    p["permission_mode"] = "auto-low".into();
    p
}

impl Script for Droid {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn gives(&self) -> Gives {
        Gives {
            turn: "`UserPromptSubmit` (or, in `droid exec`, which sends none, the prompt in its session file) to `Stop` (after the grace; a blocked stop's continuation stays in the turn)",
            tool_calls: "`PreToolUse` to `PostToolUse`, at the hooks' arrival, with the call ids of its session file; a failed one's output says so",
            model_calls: "from its session file: one per answer, from the message before it to the answer, with the model and the provider's response id; usage from the session's running totals (input, cache read and write, output, thinking tokens), each call what the totals gained",
            sub_agents: "none yet: a sub-droid (`Task`) is a session of its own",
            cannot: "a model call's messages, time to first token, a command's exit code, a sub-droid under its call",
        }
    }

    fn step(&mut self, step: Step<'_>, at_ms: u64, log: &mut String) -> Vec<Value> {
        let shell = json!({"command": "sleep 1", "riskLevel": "low", "riskLevelReason": "waits"});
        let p = match step {
            // The prompt after its context line, and the hook naming it (as the interactive
            // Droid sends it; `droid exec` sends none, and the file alone opens the turn).
            Step::Prompt(text) => {
                self.lines += 1;
                let id = format!("p{}", self.lines);
                let context = json!({"role": "user", "visibility": "llm_only",
                    "content": [{"type": "text", "text": "<system-reminder>tools</system-reminder>"}]});
                self.write_as(log, &format!("context-{id}"), context, None, at_ms);
                let prompt = json!({"role": "user", "interactionMode": "auto",
                    "content": [{"type": "text", "text": text}]});
                self.write_as(log, &id, prompt, Some(format!("context-{id}")), at_ms);
                json!({"hook_event_name": "UserPromptSubmit", "prompt": text,
                    "message_id": id, "has_images": false})
            }
            Step::ToolStart(id) => {
                let asked = json!([{"type": "tool_use", "id": id, "name": "Execute", "input": shell}]);
                self.answer(log, asked, at_ms);
                json!({"hook_event_name": "PreToolUse", "tool_name": "Execute",
                    "tool_input": shell})
            }
            Step::ToolEnd(id) => {
                let result = json!({"role": "user", "content": [{"type": "tool_result",
                    "tool_use_id": id, "is_error": false, "content": ""}]});
                self.write(log, result, None, at_ms);
                json!({"hook_event_name": "PostToolUse", "tool_name": "Execute",
                    "tool_input": shell, "tool_response": "\n\n[Process exited with code 0]"})
            }
            Step::Stop => {
                self.answer(log, json!([{"type": "text", "text": "done"}]), at_ms);
                json!({"hook_event_name": "Stop", "stop_hook_active": false,
                    "message_id": format!("m{}", self.lines)})
            }
        };
        vec![payload(p)]
    }

    /// A long command's output, as the tool's result line.
    fn filler(&mut self, bytes: usize, at_ms: u64, log: &mut String) {
        let chunk = "x".repeat(64 << 10);
        for _ in 0..bytes.div_ceil(chunk.len()) {
            let line = json!({"role": "user", "content": [{"type": "text", "text": chunk}],
                "visibility": "user_only"});
            self.write(log, line, None, at_ms);
        }
    }

    /// No hook: Droid writes a model call to the session file once its answer has come.
    fn model(&mut self, step: Model<'_>, at_ms: u64, log: &mut String) -> Option<Vec<Value>> {
        if let Model::Answered(_) = step {
            self.answer(log, json!([{"type": "text", "text": "thinking it over"}]), at_ms);
        }
        Some(Vec::new())
    }

    fn file(&self, path: &str) -> Option<&str> {
        (path == SETTINGS).then_some(self.settings.as_str())
    }

    fn cannot(&self, promise: Promise) -> Option<&'static str> {
        match promise {
            Promise::KilledTurnKeepsItsModelCall => Some(
                "a model call is written to the session file only once answered, and no hook \
                 is sent for it: one in flight when Droid dies is in no file",
            ),
            Promise::SubagentsSideBySide | Promise::SubagentCallsStayTheirs => Some(
                "a sub-droid (`Task`) runs as a session of its own, which is not nested under \
                 its call yet",
            ),
            _ => None,
        }
    }
}

/// This agent's script, for the conformance suite's list in `command_hooks/mod.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Droid::default())
}
