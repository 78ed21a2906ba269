//! opencode's tool calls: a `tool` part is a call from `running` to `completed` or `error`,
//! timed as opencode measured it; a call its permission rules refused is marked refused.

use super::payload::{Part, ToolState};
use super::{Adapter, REFUSALS};
use crate::protocol::{Json, Record};
use crate::sources::command_hooks::engine::records::{raw, Ended, Outcome};
use crate::sources::command_hooks::engine::open_turn::Pending;

impl Adapter {
    pub(super) fn on_tool(
        &mut self,
        sid: &str,
        seen: u64,
        part: &Part,
        out: &mut Vec<Record<'static>>,
    ) {
        let (Some(id), Some(state)) = (part.call_id.clone(), part.state.as_ref()) else {
            return;
        };
        let name = part.tool.clone().unwrap_or_default();
        let open = self.sessions.get(sid).and_then(|s| s.turn.as_ref());
        if open.is_some_and(|t| t.own.ended.contains(&id)) {
            return;
        }
        let start = state.time.start.unwrap_or(seen);
        match state.status.as_str() {
            "running" => {
                let turn = self.turn(sid, start, out);
                if turn.pending.iter().any(|c| c.id == id) {
                    return;
                }
                let input = state.input.clone();
                let task = name == "task";
                turn.start_call(sid, Some(id.clone()), name, input, None, start, out);
                // A running `task` call names the sub-agent's session it started; one that
                // names none is the call of the sub-agent that has waited longest.
                let named = state.metadata.as_ref().and_then(|m| m.session_id.clone());
                let child = match named {
                    Some(child) => Some(child),
                    None if task => self.holding(Some(sid), None).into_iter().next(),
                    None => None,
                };
                if let Some(child) = child {
                    self.release(&child, Some((sid.to_string(), id)), out);
                }
            }
            "completed" | "error" => {
                // An end this turn never saw start is another turn's, unless its message is
                // this turn's (the plugin saw no `running`, or joined late).
                let mine = open.is_some_and(|t| {
                    t.pending.iter().any(|c| c.id == id)
                        || part
                            .message_id
                            .as_ref()
                            .is_some_and(|m| t.own.messages.contains(m))
                });
                if !mine {
                    return;
                }
                let turn = self.turn(sid, start, out);
                let pre = turn
                    .pending
                    .iter()
                    .position(|c| c.id == id)
                    .map(|i| turn.pending.remove(i));
                turn.own.ended.insert(id.clone());
                let started = pre.as_ref().map_or(start, |p| p.at_ms);
                let end = state.time.end.unwrap_or(seen).max(started);
                out.push(ended(sid, id, pre, name, state, started, end));
            }
            // `pending`: the model is still writing the call's input.
            _ => {}
        }
    }
}

/// A tool call's end: refused when opencode's permissions (or the user) said no, failed on
/// any other error.
pub(super) fn ended(
    sid: &str,
    id: String,
    pre: Option<Pending>,
    name: String,
    state: &ToolState,
    started_ms: u64,
    finished_ms: u64,
) -> Record<'static> {
    let (name, input) = match pre {
        Some(p) => (p.name, p.input.or_else(|| state.input.clone())),
        None => (name, state.input.clone()),
    };
    let error = state.error.as_deref().filter(|_| state.status == "error");
    let refused = error.is_some_and(|e| REFUSALS.iter().any(|r| e.starts_with(r)));
    let output = match error {
        Some(e) => Json::of(e).ok(),
        None => raw(&state.output),
    };
    Ended {
        session: sid,
        id,
        name,
        arguments: raw(&input),
        output,
        started_ms,
    }
    .record(
        finished_ms,
        Outcome::of(refused, error.is_some() && !refused),
    )
}
