//! Qwen Code's tool calls: `PreToolUse` starts one and `PostToolUse` or `PostToolUseFailure`
//! ends it, paired by `tool_use_id`; a call another hook or a permission rule denied gets no
//! end of its own, and `PostToolBatch` says what became of every call of a batch.

use serde_json::value::to_raw_value;

use super::{new_turn, subagents, Adapter, Payload};
use crate::protocol::Record;
use crate::sources::command_hooks::engine::records::{raw, Ended, Outcome};

impl Adapter {
    pub(super) fn on_pre_tool(
        &mut self,
        sid: &str,
        target: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) {
        let (Some(id), Some(name)) = (&p.tool_use_id, &p.tool_name) else {
            return;
        };
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        if target == sid {
            // A call with no turn open (its prompt's hook was lost) opens one.
            let turn = s.turn.get_or_insert_with(|| new_turn(at_ms));
            // A call after a `Stop`: that stop was blocked, the turn goes on.
            turn.went_on();
            if name == subagents::TOOL {
                turn.own.agent_calls.push(subagents::AgentCall::of(id, p));
            }
        }
        let Some(calls) = s.calls_of(sid, target) else {
            return;
        };
        calls.start_call(
            target,
            Some(id.clone()),
            name.clone(),
            p.tool_input.clone(),
            p.tool_call_id.clone(),
            at_ms,
            out,
        );
    }

    pub(super) fn on_post_tool(
        &mut self,
        sid: &str,
        target: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(id) = &p.tool_use_id else { return };
        let failed = p.hook_event_name == "PostToolUseFailure";
        let output = if failed {
            p.error.as_deref().and_then(|e| to_raw_value(e).ok())
        } else {
            p.tool_response.clone()
        };
        let outcome = Outcome::of(false, failed);
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        if let Some(turn) = &mut s.turn {
            turn.own.ended.extend(p.tool_call_id.clone());
        }
        if let Some(calls) = s.calls_of(sid, target) {
            if let Some(i) = calls.pending.iter().position(|c| &c.id == id) {
                calls.end_call(target, i, output, outcome, at_ms, out);
                return;
            }
        }
        // An end whose start no hook announced: it is all there is of the call.
        out.push(
            Ended {
                session: target,
                id: id.clone(),
                name: p.tool_name.clone().unwrap_or_default(),
                arguments: raw(&p.tool_input),
                output: raw(&output),
                started_ms: at_ms,
            }
            .record(at_ms, outcome),
        );
    }

    /// A call still pending when its batch is over never ran: a hook or a permission rule
    /// denied it (the batch says `not_started`), or it was cancelled. A call the CLI itself
    /// refused (one that starts with a long `sleep`) had no hook before: the batch is all there
    /// is of it, so it is a refused call that starts and ends there. After a `Stop`, a batch is
    /// a background agent's (it names no agent), not the turn's.
    pub(super) fn on_batch(
        &mut self,
        sid: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let batch = p.tool_calls.as_deref().unwrap_or_default();
        let mut ended = Vec::new();
        for c in batch {
            let status = c.status.as_deref();
            let outcome = match status {
                Some("success") => Outcome::Ran,
                Some("cancelled") => Outcome::Failed,
                _ => Outcome::Refused,
            };
            let found = s.all_calls().find_map(|(session, calls)| {
                let i = calls.pending.iter().position(|pre| {
                    pre.key.is_some() && pre.key == c.tool_call_id
                        || c.tool_use_id.as_deref() == Some(pre.id.as_str())
                })?;
                let session = session.unwrap_or(sid).to_string();
                ended.extend(calls.pending[i].key.clone());
                calls.end_call(&session, i, c.tool_response.clone(), outcome, at_ms, out);
                Some(())
            });
            if found.is_some() || status != Some("error") {
                continue;
            }
            let Some(turn) = s.turn.as_ref().filter(|t| t.stop.is_none()) else {
                continue;
            };
            let id = c.tool_call_id.as_ref().or(c.tool_use_id.as_ref());
            let Some(id) = id.filter(|id| !turn.own.ended.contains(*id)) else {
                continue;
            };
            ended.push(id.clone());
            out.push(
                Ended {
                    session: sid,
                    id: id.clone(),
                    name: c.tool_name.clone().unwrap_or_default(),
                    arguments: raw(&c.tool_input),
                    output: raw(&c.tool_response),
                    started_ms: at_ms,
                }
                .record(at_ms, Outcome::Refused),
            );
        }
        if let Some(turn) = &mut s.turn {
            turn.own.ended.extend(ended);
        }
    }
}
