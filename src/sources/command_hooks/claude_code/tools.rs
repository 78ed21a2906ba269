//! Tool calls: `PreToolUse` starts one, `PostToolUse`/`PostToolUseFailure` ends it, and
//! `PostToolBatch` ends, as refused, the ones another hook blocked.

use super::{Adapter, Payload, AGENT_TOOLS};
use crate::protocol::{Json, Record};
use crate::sources::command_hooks::engine::open_turn::{OpenTurn, Pending};
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
        if target == sid {
            if let Some(s) = self.sessions.get_mut(sid) {
                // A call after a `Stop`: that stop was held, the turn goes on.
                s.stop_after_agents = false;
                s.turn.get_or_insert_with(|| OpenTurn::new(at_ms)).went_on();
                if AGENT_TOOLS.contains(&name.as_str()) {
                    s.agent_calls.push(id.clone());
                }
            }
        }
        let s = self.sessions.entry(target.to_string()).or_default();
        let turn = s.turn.get_or_insert_with(|| OpenTurn::new(at_ms));
        let input = p.tool_input.clone();
        turn.start_call(
            target,
            Some(id.clone()),
            name.clone(),
            input,
            None,
            at_ms,
            out,
        );
    }

    /// Takes call `id` of session `target` off its turn's pending calls.
    fn take_pending(&mut self, target: &str, id: &str) -> Option<Pending> {
        let turn = self.sessions.get_mut(target)?.turn.as_mut()?;
        let i = turn.pending.iter().position(|c| c.id == id)?;
        Some(turn.pending.remove(i))
    }

    pub(super) fn on_post_tool(
        &mut self,
        target: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(id) = &p.tool_use_id else { return };
        let failed = p.hook_event_name == "PostToolUseFailure";
        let pending = self.take_pending(target, id);
        let (started, name, input) = match pending {
            Some(pre) => (pre.at_ms, pre.name, pre.input),
            None => (
                at_ms.saturating_sub(p.duration_ms.unwrap_or(0)),
                p.tool_name.clone().unwrap_or_default(),
                p.tool_input.clone(),
            ),
        };
        // The tool's own measured duration is truer than hook-to-hook time. It comes from
        // the payload, so the sum saturates (a huge one is then refused by validation).
        let finished = p
            .duration_ms
            .map_or(at_ms, |d| started.saturating_add(d))
            .max(started);
        let output = if failed {
            p.error.as_deref().and_then(json_text)
        } else {
            raw(&p.tool_response)
        };
        out.push(
            Ended {
                session: target,
                id: id.clone(),
                name: p.tool_name.clone().unwrap_or(name),
                arguments: raw(&p.tool_input).or_else(|| raw(&input)),
                output,
                started_ms: started,
            }
            .record(finished, Outcome::of(false, failed)),
        );
    }

    /// Session `target`'s agent went on after its `Stop` (another hook blocked it): that
    /// stop was held, and the turn goes on.
    pub(in super::super) fn stop_was_held(&mut self, target: &str) {
        if let Some(s) = self.sessions.get_mut(target) {
            if let Some(turn) = s.turn.as_mut().filter(|t| t.stop.is_some()) {
                turn.went_on();
                s.stop_after_agents = false;
            }
        }
    }

    /// Ends every call of `target` still pending: for a host that sends no `PostToolBatch`
    /// (Codex, Droid). Refused when the host asks its model again, which it does only once the
    /// calls it asked for are over, so that one still pending was blocked by another hook;
    /// failed when the user interrupted it.
    pub(in super::super) fn end_pending(
        &mut self,
        target: &str,
        at_ms: u64,
        refused: bool,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(turn) = self.sessions.get_mut(target).and_then(|s| s.turn.as_mut()) else {
            return;
        };
        let mut pending = std::mem::take(&mut turn.pending);
        pending.sort_by_key(|p| p.at_ms);
        for pre in pending {
            out.push(
                Ended {
                    session: target,
                    id: pre.id,
                    name: pre.name,
                    arguments: raw(&pre.input),
                    output: None,
                    started_ms: pre.at_ms,
                }
                .record(at_ms, Outcome::of(refused, !refused)),
            );
        }
    }

    /// A call still pending at its batch's end never ran: another hook blocked it.
    pub(super) fn on_batch(
        &mut self,
        sid: &str,
        target: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) {
        for c in p.tool_calls.iter().flatten() {
            let Some(pre) = self.take_pending(target, &c.tool_use_id) else {
                continue;
            };
            if let Some(s) = self.sessions.get_mut(sid) {
                s.agent_calls.retain(|a| a != &c.tool_use_id);
            }
            out.push(
                Ended {
                    session: target,
                    id: c.tool_use_id.clone(),
                    name: c.tool_name.clone(),
                    arguments: raw(&c.tool_input).or_else(|| raw(&pre.input)),
                    output: raw(&c.tool_response),
                    started_ms: pre.at_ms,
                }
                .record(at_ms, Outcome::Refused),
            );
        }
    }
}

/// A string as JSON text (a failed call's error message).
fn json_text(text: &str) -> Option<Json<'static>> {
    Json::of(text).ok()
}
