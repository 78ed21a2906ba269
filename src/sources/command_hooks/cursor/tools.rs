//! Cursor's tool calls. Two families of hooks report them: the generic `preToolUse` /
//! `postToolUse` / `postToolUseFailure`, for every tool, paired by `tool_use_id`; and the
//! older per-kind hooks (`before/afterShellExecution`, `before/afterMCPExecution`,
//! `afterFileEdit`), with no id, paired by command or tool name. A Cursor that sends the
//! first sends the second too, for the same calls: a conversation's per-kind hooks make calls
//! only while it has sent no `preToolUse`.

use serde_json::value::RawValue;

use super::{Adapter, Payload};
use crate::protocol::{Json, Record};
use crate::sources::command_hooks::engine::records::Outcome;
use crate::sources::command_hooks::engine::open_turn::Pending;

impl Adapter {
    pub(super) fn on_tool(
        &mut self,
        sid: &str,
        event: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) {
        let generic = matches!(event, "preToolUse" | "postToolUse" | "postToolUseFailure");
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        if generic {
            s.generic = true;
        } else if s.generic {
            return;
        }
        self.ensure_turn(sid, at_ms, out);
        match event {
            "preToolUse" => {
                let name = p.tool_name.clone().unwrap_or_else(|| "tool".into());
                self.start(
                    sid,
                    p.tool_use_id.clone(),
                    name,
                    p.input(),
                    None,
                    at_ms,
                    out,
                );
            }
            "postToolUse" => self.end(sid, p, Outcome::Ran, at_ms, out),
            "postToolUseFailure" => {
                let outcome = match p.failure_type.as_deref() {
                    Some("permission_denied") => Outcome::Refused,
                    _ => Outcome::Failed,
                };
                self.end(sid, p, outcome, at_ms, out);
            }
            "beforeShellExecution" => {
                let input = serde_json::json!({"command": p.command, "cwd": p.cwd});
                let input = RawValue::from_string(input.to_string()).ok();
                self.start(
                    sid,
                    None,
                    "Shell".into(),
                    input,
                    p.command.clone(),
                    at_ms,
                    out,
                );
            }
            "beforeMCPExecution" => {
                let name = p.tool_name.clone().unwrap_or_default();
                self.start(
                    sid,
                    None,
                    format!("MCP:{name}"),
                    p.input(),
                    Some(name),
                    at_ms,
                    out,
                );
            }
            "afterShellExecution" => self.end(sid, p, Outcome::Ran, at_ms, out),
            "afterMCPExecution" => self.end(sid, p, Outcome::Ran, at_ms, out),
            "afterFileEdit" => {
                // Reported once the edit is made: a call of no length.
                let input = serde_json::json!({"file_path": p.file_path, "edits": p.edits});
                let input = RawValue::from_string(input.to_string()).ok();
                let id = self.start(sid, None, "Edit".into(), input, None, at_ms, out);
                self.finish(sid, &id, None, Outcome::Ran, at_ms, out);
            }
            _ => {}
        }
    }

    /// Returns the call's id.
    #[allow(clippy::too_many_arguments)]
    fn start(
        &mut self,
        sid: &str,
        id: Option<String>,
        name: String,
        input: Option<Box<RawValue>>,
        key: Option<String>,
        at_ms: u64,
        out: &mut Vec<Record<'static>>,
    ) -> String {
        let turn = self.turn(sid, at_ms, out);
        turn.start_call(sid, id, name, input, key, at_ms, out)
    }

    /// A call's end: the pending call it names (by id, else by command or MCP tool, else the
    /// oldest of that tool), or one of no length that started `duration` before, when its
    /// start was not seen.
    fn end(
        &mut self,
        sid: &str,
        p: &Payload,
        outcome: Outcome,
        at_ms: u64,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(s) = self.sessions.get_mut(sid).and_then(|s| s.turn.as_mut()) else {
            return;
        };
        let key = match p.hook_event_name.as_str() {
            "afterShellExecution" => p.command.clone(),
            "afterMCPExecution" => p.tool_name.clone(),
            _ => None,
        };
        let found = match (&p.tool_use_id, &key) {
            (Some(id), _) => s.pending.iter().position(|c| &c.id == id),
            (None, Some(k)) => s.pending.iter().position(|c| c.key.as_ref() == Some(k)),
            (None, None) => s
                .pending
                .iter()
                .position(|c| Some(&c.name) == p.tool_name.as_ref()),
        };
        let output = p
            .tool_output
            .as_ref()
            .or(p.output.as_ref())
            .or(p.result_json.as_ref())
            .cloned()
            .or_else(|| {
                p.error_message
                    .as_ref()
                    .and_then(|e| Json::of(e).ok().map(|j| j.0.into_owned()))
            });
        let id = match found {
            Some(i) => s.pending[i].id.clone(),
            None => {
                let name = match p.hook_event_name.as_str() {
                    "afterShellExecution" => "Shell".to_string(),
                    "afterMCPExecution" => format!("MCP:{}", key.clone().unwrap_or_default()),
                    _ => p.tool_name.clone().unwrap_or_else(|| "tool".into()),
                };
                let started = at_ms.saturating_sub(p.duration_ms().unwrap_or(0));
                self.start(
                    sid,
                    p.tool_use_id.clone(),
                    name,
                    p.input(),
                    key,
                    started,
                    out,
                )
            }
        };
        self.finish(sid, &id, output, outcome, at_ms, out);
    }

    fn finish(
        &mut self,
        sid: &str,
        id: &str,
        output: Option<Box<RawValue>>,
        outcome: Outcome,
        at_ms: u64,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(turn) = self.sessions.get_mut(sid).and_then(|s| s.turn.as_mut()) else {
            return;
        };
        if let Some(i) = turn.pending.iter().position(|c| c.id == id) {
            turn.end_call(sid, i, output, outcome, at_ms, out);
        }
    }

    /// A call made for a sub-agent whose `Task` call was not seen; returns its id.
    pub(super) fn start_call(
        &mut self,
        sid: &str,
        name: &str,
        input: Option<Box<RawValue>>,
        at_ms: u64,
        out: &mut Vec<Record<'static>>,
    ) -> String {
        self.start(sid, None, name.to_string(), input, None, at_ms, out)
    }

    /// Ends such a call.
    pub(super) fn end_call(
        &mut self,
        sid: &str,
        id: &str,
        output: Option<Box<RawValue>>,
        failed: bool,
        at_ms: u64,
        out: &mut Vec<Record<'static>>,
    ) {
        let outcome = if failed {
            Outcome::Failed
        } else {
            Outcome::Ran
        };
        self.finish(sid, id, output, outcome, at_ms, out);
    }

    /// Whether `call` of session `sid` is pending, and its name.
    pub(super) fn pending_call(&self, sid: &str, call: &str) -> Option<&Pending> {
        self.sessions
            .get(sid)?
            .turn
            .as_ref()?
            .pending
            .iter()
            .find(|c| c.id == call)
    }
}
