//! Kimi's sub-agents: `subagent.spawned` in the parent's wire names one and the `Agent` call
//! that started it; its own events are in `agents/<id>/wire.jsonl` beside its parent's, read
//! by a [`Reader`] of its own into a session nested under that call, with a turn of its own;
//! `subagent.completed` (or `failed`) in the parent's wire ends it.


use serde_json::Value;

use super::payload::{is_plain, wire_of};
use super::wire::Reader;
use super::{ends, Sub, Turn};
use crate::protocol::{Event, Record};
use crate::sources::command_hooks::engine::files::Transcripts;
use crate::sources::command_hooks::engine::records::{record, SubAgent};
use crate::sources::command_hooks::engine::session_key;
use crate::sources::command_hooks::engine::open_turn::Why;

/// How long a sub-agent's end in its parent's file waits for the sub-agent's own file to
/// catch up (see [`waits_for`]).
const SUB_GRACE_MS: u64 = 2_000;

impl Sub {
    /// Reads what the sub-agent's file has that is new (all of it is the sub-agent's one turn).
    pub fn read(&mut self, now: u64, files: &mut dyn Transcripts, out: &mut Vec<Record<'static>>) {
        self.reader.read(&mut self.turn, 0, now, files, out);
    }

    /// The sub-agent is done at `at_ms`: its turn ends where its own `turn.ended` says (no
    /// later than `at_ms`), else at `at_ms` for `why`, and its session closes.
    pub fn close(self, at_ms: u64, why: Why, out: &mut Vec<Record<'static>>) {
        let session = self.reader.session;
        if let Some(turn) = self.turn {
            let (end, why) = match turn.own.ended {
                Some((end, reason)) => (end.min(at_ms), ends::why_of(reason)),
                None => (at_ms, why),
            };
            ends::end(turn, &session, end, why, out);
        }
        out.push(record(&session, Event::Closed { at_ms }));
    }
}

// The sub-agent events of a wire, read by its [`Reader`]: methods of it, so that the reader
// drives its sub-agents, each with a reader of its own, without the two files importing each
// other.
impl Reader {
    /// `subagent.spawned` in this (the parent's) wire at `at_ms`: a session of its own under the
    /// `Agent` call, a call of `turn`.
    pub(super) fn spawned(
        &self,
        turn: &mut Turn,
        v: &Value,
        at_ms: u64,
        out: &mut Vec<Record<'static>>,
    ) {
        let caller = v["callerAgentId"].as_str().or(v["parentAgentId"].as_str());
        let Some(id) = v["subagentId"].as_str().filter(|id| is_plain(id)) else {
            return;
        };
        let Some(call) = v["parentToolCallId"].as_str() else {
            return;
        };
        if caller.is_some_and(|c| c != self.agent)
            || turn.own.subs.iter().any(|s| s.reader.agent == id)
        {
            return;
        }
        let session = session_key::sub_agent(&self.session, id);
        // The sub-agent's file can say it began before this line: it opens with its call.
        let at_ms = turn
            .pending
            .iter()
            .find(|c| c.id == call)
            .map_or(at_ms, |c| c.at_ms.min(at_ms));
        let sub_agent = SubAgent {
            name: v["subagentName"].as_str().unwrap_or("subagent").to_string(),
            model: v["model"].as_str().map(str::to_string),
            workspace: None,
            under: Some((&self.session, call)),
        };
        out.push(sub_agent.opened(&session, at_ms));
        let path = wire_of(&self.dir, id);
        turn.own.subs.push(Sub {
            reader: Reader::new(id, session, &self.dir, &path, 0),
            turn: None,
        });
    }

    /// `subagent.completed` or `subagent.failed` at `at_ms`: what the sub-agent's file has left
    /// is read, and it closes.
    pub(super) fn completed(
        turn: &mut Turn,
        v: &Value,
        at_ms: u64,
        now: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let id = v["subagentId"].as_str().unwrap_or_default();
        let Some(i) = turn.own.subs.iter().position(|s| s.reader.agent == id) else {
            return;
        };
        let mut sub = turn.own.subs.remove(i);
        sub.read(now, files, out);
        let reason = if v["type"] == "subagent.failed" {
            "error"
        } else {
            "end_turn"
        };
        sub.close(at_ms, Why::Stopped(reason), out);
    }

    /// Whether line `v`, a sub-agent's end, must wait: Kimi writes each agent's file on its own,
    /// and the parent's `subagent.completed` can be on disk before the sub-agent's last lines (its
    /// last model call, its `turn.ended`). The line is read again at the next read, until the
    /// sub-agent's file has its end, or for [`SUB_GRACE_MS`] after the line's time.
    pub(super) fn waits_for(
        turn: Option<&mut Turn>,
        v: &Value,
        now: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> bool {
        if !matches!(
            v["type"].as_str(),
            Some("subagent.completed" | "subagent.failed")
        ) {
            return false;
        }
        let id = v["subagentId"].as_str().unwrap_or_default();
        let Some(sub) = turn.and_then(|t| t.own.subs.iter_mut().find(|s| s.reader.agent == id))
        else {
            return false;
        };
        sub.read(now, files, out);
        let ended = sub.turn.as_ref().is_some_and(|t| t.own.ended.is_some());
        let at = v["time"].as_u64().unwrap_or(0);
        !ended && now < at.saturating_add(SUB_GRACE_MS)
    }
}
