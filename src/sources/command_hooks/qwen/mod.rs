//! Qwen Code's command-hook payloads and transcript to protocol records (what they carry:
//! docs/agents/qwen-code.md).
//!
//! Qwen's hooks are Claude Code's in shape, with more in them, and its transcript is its
//! own, so this adapter is its own rather than Claude Code's wrapped:
//! - every payload has the time the CLI fired it, so spans take that, not the hook's arrival;
//! - `UserPromptSubmit` opens the turn. Qwen fires it again, with an empty prompt and the
//!   same `prompt_id`, before each model call that carries tool results: that is the same
//!   turn going on, not a new one;
//! - `PreToolUse` starts a call and `PostToolUse` or `PostToolUseFailure` ends it, paired by
//!   `tool_use_id`. A call another hook (or a permission rule) denied gets no end of its own:
//!   the `PostToolBatch` after it names it, by the provider's call id, as not started;
//! - the model calls are read from the transcript the payloads name: the CLI writes a
//!   `qwen-code.api_response` line when each call ends, with its duration, time to first
//!   token and usage. It is read on every payload, so calls go out as the session goes;
//! - `Stop` ends the turn once the grace has passed with nothing of the turn after it (a stop
//!   another hook blocked goes on with tool calls); `-p` sends no `SessionEnd`, so a session
//!   ends when its agent is gone;
//! - `SubagentStart` opens a session under the `agent` call that started it; hooks carrying
//!   its `agent_id`, and transcript lines with its `subagent_id`, are its own
//!   ([`subagents`]);
//! - after a turn the CLI runs background agents of its own (memory extraction, skill
//!   review), announced by no hook: their model calls are in the transcript under a
//!   `subagent_id` no `SubagentStart` named, and go under the turn that caused them, in a
//!   session of their own under a `background_agent` call ([`transcript`]).
//!
//! Reading the transcript is the caller's I/O, behind [`Transcripts`]; the rest is pure.

mod contract;
pub(crate) use contract::adapter;
pub use contract::SPEC;
mod payload;
#[cfg(test)]
pub(crate) mod script;
mod subagents;
mod transcript;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde_json::value::RawValue;

pub use payload::Payload;

use super::files::{FileCursor, Transcripts};
use super::records::{raw, record, session_opened, Ended, Outcome};
use crate::protocol::{Call, Event, Json, Record};

/// The agent name on Qwen Code's turns.
pub const AGENT: &str = "qwen-code";

/// Qwen Code's events that make a trace (docs/agents/qwen-code.md).
pub const HOOK_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "SessionEnd",
];

/// A call `PreToolUse` announced and nothing has ended yet.
#[derive(Debug)]
struct Pending {
    /// The session the call is made in: the top session or one of its sub-agents'.
    session: String,
    /// The provider's id of the call, which `PostToolBatch` names.
    call_id: Option<String>,
    name: String,
    input: Option<Box<RawValue>>,
    at_ms: u64,
}

#[derive(Debug, Default)]
struct Session {
    started: bool,
    turn_open: bool,
    /// The open turn's `prompt_id`: a prompt with the same one goes on with that turn.
    prompt_id: Option<String>,
    /// Calls announced and not ended, by `tool_use_id`, its sub-agents' included.
    pending: HashMap<String, Pending>,
    /// A `Stop` whose turn end is held back: when it came.
    stop_at: Option<u64>,
    stops: u32,
    /// The transcript the payloads name, and how far it has been read.
    transcript: Option<String>,
    offset: u64,
    identity: Option<u64>,
    /// The provider's ids of the open turn's calls that ended.
    ended: HashSet<String>,
    /// Model calls that ended before this are not this adapter's to export.
    since: u64,
    /// The latest time a payload or the transcript says the agent was alive.
    seen_ms: u64,
    /// Where an earlier daemon left the transcript: the first read goes on from there if it
    /// is still that file.
    resumed: Option<FileCursor>,
    /// `agent` calls waiting for their `SubagentStart`, oldest first.
    agent_calls: Vec<subagents::AgentCall>,
    /// Running sub-agents: `agent_id` to their session.
    agents: HashMap<String, String>,
    /// The CLI's background agents seen since the turn ended: by `subagent_id`.
    background: HashMap<String, transcript::Background>,
}

/// Turns Qwen Code's hook payloads and transcript into protocol records; see the module docs.
#[derive(Debug)]
pub struct Adapter {
    sessions: HashMap<String, Session>,
    /// How long a `Stop` waits for a blocked stop's continuation before the turn ends.
    grace_ms: u64,
}

impl Adapter {
    pub fn new(grace_ms: u64) -> Self {
        Adapter {
            sessions: HashMap::new(),
            grace_ms,
        }
    }

    /// Sessions with a turn open.
    pub fn open_turns(&self) -> usize {
        self.sessions.values().filter(|s| s.turn_open).count()
    }

    /// Whether session `id` is between turns.
    pub fn at_rest(&self, id: &str) -> bool {
        self.sessions
            .get(id)
            .is_none_or(|s| !s.turn_open && s.agents.is_empty())
    }

    /// Takes one payload that reached the journal at `received_ms`; appends records to `out`.
    pub fn push(
        &mut self,
        received_ms: u64,
        p: &Payload,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let sid = p.session_id.as_str();
        if sid.is_empty() {
            return;
        }
        let at_ms = p.at_ms().unwrap_or(received_ms);
        let s = self.sessions.entry(sid.to_string()).or_default();
        if !s.started {
            s.started = true;
            // A session met anew (`--resume` in a new process, a new daemon with no resume
            // point) takes none of the calls its transcript held before: they were exported
            // with their turns.
            if s.resumed.is_none() {
                s.since = at_ms;
            }
            out.push(session_opened(sid, at_ms, AGENT, p.cwd.as_deref()));
        }
        s.seen_ms = s.seen_ms.max(at_ms);
        if let Some(path) = p.transcript_path.as_deref().filter(|t| !t.is_empty()) {
            if s.transcript.as_deref() != Some(path) {
                s.transcript = Some(path.to_string());
                s.offset = 0;
            }
        }
        // The model calls made up to this hook, before what the hook says: the call that
        // asked for a tool ended before the tool started.
        self.read(sid, files, out);
        let event = p.hook_event_name.as_str();
        let target = self.target(sid, event, p.agent_id.as_deref(), at_ms, out);
        let top = target == sid;
        match event {
            "UserPromptSubmit" if top => self.on_prompt(sid, at_ms, p, out),
            "PreToolUse" => self.on_pre_tool(sid, &target, at_ms, p, out),
            "PostToolUse" | "PostToolUseFailure" => self.on_post_tool(sid, &target, at_ms, p, out),
            "PostToolBatch" => self.on_batch(sid, at_ms, p, out),
            "SubagentStart" => self.sub_agent_started(sid, at_ms, p, out),
            "SubagentStop" => self.sub_agent_stopped(sid, at_ms, p, out),
            "Stop" | "StopFailure" if top => self.on_stop(sid, at_ms, p, out),
            "SessionEnd" => self.abandon(sid, at_ms, files, out),
            // SessionStart (the session is known now), Notification, PreCompact, ...
            _ => {}
        }
    }

    fn on_prompt(&mut self, sid: &str, at_ms: u64, p: &Payload, out: &mut Vec<Record<'static>>) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let same_turn = match (&p.prompt_id, &s.prompt_id) {
            (Some(now), Some(open)) => now == open,
            // Without ids: an empty prompt nobody typed goes on with the open turn.
            _ => p.submitted_prompt.is_none() && p.prompt.as_deref().unwrap_or("").is_empty(),
        };
        if s.turn_open && same_turn {
            // Asked again in the same turn (after tool results, or a blocked stop).
            s.stop_at = None;
            return;
        }
        // A turn whose Stop never came (the CLI was stopped) ends where the next begins.
        if !self.end_held(sid, out) {
            self.end_turn(sid, at_ms, "interrupted", out);
        }
        let s = self.sessions.entry(sid.to_string()).or_default();
        s.turn_open = true;
        s.prompt_id = p.prompt_id.clone();
        s.stops = 0;
        // The user's own words, without the reminders the CLI puts before them.
        let text = p.submitted_prompt.clone().or_else(|| p.prompt.clone());
        out.push(record(
            sid,
            Event::Prompted {
                at_ms,
                text: Cow::Owned(text.unwrap_or_default()),
            },
        ));
    }

    fn on_stop(&mut self, sid: &str, at_ms: u64, p: &Payload, out: &mut Vec<Record<'static>>) {
        let Some(s) = self.sessions.get_mut(sid).filter(|s| s.turn_open) else {
            return;
        };
        out.push(record(
            sid,
            Event::Stopping {
                at_ms,
                reply: Cow::Owned(p.last_assistant_message.clone().unwrap_or_default()),
                held: s.stops,
            },
        ));
        s.stops = s.stops.saturating_add(1);
        s.stop_at = Some(at_ms);
    }

    fn on_pre_tool(
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
            // A call after a `Stop`: that stop was blocked, the turn goes on.
            s.stop_at = None;
            if name == subagents::TOOL {
                s.agent_calls.push(subagents::AgentCall::of(id, p));
            }
        }
        s.pending.insert(
            id.clone(),
            Pending {
                session: target.to_string(),
                call_id: p.tool_call_id.clone(),
                name: name.clone(),
                input: p.tool_input.clone(),
                at_ms,
            },
        );
        let call = Call {
            id: Cow::Owned(id.clone()),
            name: Cow::Owned(name.clone()),
            arguments: raw(&p.tool_input),
            within: None,
        };
        out.push(record(target, Event::Calling { at_ms, call }));
    }

    fn on_post_tool(
        &mut self,
        sid: &str,
        target: &str,
        at_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(id) = &p.tool_use_id else { return };
        let failed = p.hook_event_name == "PostToolUseFailure";
        let pending = self.sessions.get_mut(sid).and_then(|s| {
            s.ended.extend(p.tool_call_id.clone());
            s.pending.remove(id)
        });
        let (session, started, input) = match pending {
            Some(pre) => (pre.session, pre.at_ms, pre.input),
            None => (target.to_string(), at_ms, None),
        };
        let output = if failed {
            p.error.as_deref().and_then(|e| Json::of(e).ok())
        } else {
            raw(&p.tool_response)
        };
        out.push(
            Ended {
                session: &session,
                id: id.clone(),
                name: p.tool_name.clone().unwrap_or_default(),
                arguments: raw(&p.tool_input).or_else(|| raw(&input)),
                output,
                started_ms: started,
            }
            .record(at_ms, Outcome::of(false, failed)),
        );
    }

    /// A call still pending when its batch is over never ran: a hook or a permission rule
    /// denied it (the batch says `not_started`), or it was cancelled. A call the CLI itself
    /// refused (one that starts with a long `sleep`) had no hook before: the batch is all there is of
    /// it, so it is a refused call that starts and ends there. After a `Stop`, a batch is a
    /// background agent's (it names no agent), not the turn's.
    fn on_batch(&mut self, sid: &str, at_ms: u64, p: &Payload, out: &mut Vec<Record<'static>>) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        if s.turn_open && s.stop_at.is_none() {
            for c in p.tool_calls.iter().flatten() {
                let id = c.tool_call_id.as_ref().or(c.tool_use_id.as_ref());
                let Some(id) = id.filter(|id| !s.ended.contains(*id)) else {
                    continue;
                };
                let known = s
                    .pending
                    .values()
                    .any(|pre| pre.call_id.as_ref() == Some(id));
                if known || c.status.as_deref() != Some("error") {
                    continue;
                }
                s.ended.insert(id.clone());
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
        }
        for c in p.tool_calls.iter().flatten() {
            let Some(id) = s
                .pending
                .iter()
                .find(|(id, pre)| {
                    pre.call_id.is_some() && pre.call_id == c.tool_call_id
                        || c.tool_use_id.as_deref() == Some(id.as_str())
                })
                .map(|(id, _)| id.clone())
            else {
                continue;
            };
            let pre = s.pending.remove(&id).expect("found above");
            s.ended.extend(pre.call_id.clone());
            let outcome = match c.status.as_deref() {
                Some("success") => Outcome::Ran,
                Some("cancelled") => Outcome::Failed,
                _ => Outcome::Refused,
            };
            out.push(
                Ended {
                    session: &pre.session,
                    id,
                    name: pre.name,
                    arguments: raw(&pre.input),
                    output: raw(&c.tool_response),
                    started_ms: pre.at_ms,
                }
                .record(at_ms, outcome),
            );
        }
    }

    /// Ends session `sid`'s turn at its held-back `Stop`; whether there was one.
    fn end_held(&mut self, sid: &str, out: &mut Vec<Record<'static>>) -> bool {
        let Some(at) = self.sessions.get_mut(sid).and_then(|s| s.stop_at.take()) else {
            return false;
        };
        self.end_turn(sid, at, "end_turn", out);
        true
    }

    /// Ends the open turn at `at_ms`: its sub-agents and background agents with it, and
    /// calls that never ended as failed.
    fn end_turn(
        &mut self,
        sid: &str,
        at_ms: u64,
        reason: &'static str,
        out: &mut Vec<Record<'static>>,
    ) {
        if !self.sessions.get(sid).is_some_and(|s| s.turn_open) {
            return;
        }
        self.close_children(sid, at_ms, out);
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let mut pending: Vec<(String, Pending)> = s.pending.drain().collect();
        pending.sort_by_key(|(_, p)| p.at_ms);
        for (id, pre) in pending {
            let ended = Ended {
                session: &pre.session,
                id,
                name: pre.name,
                arguments: raw(&pre.input),
                output: None,
                started_ms: pre.at_ms,
            };
            out.push(ended.record(at_ms, Outcome::Failed));
        }
        s.turn_open = false;
        s.ended.clear();
        s.prompt_id = None;
        s.stop_at = None;
        s.agent_calls.clear();
        out.push(record(
            sid,
            Event::TurnEnded {
                at_ms,
                reason: Some(Cow::Borrowed(reason)),
            },
        ));
    }

    /// Ends the turns whose `Stop` is older than the grace, with what the transcript has
    /// gained since (the background agents' calls).
    pub fn tick(
        &mut self,
        now_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let due = super::held::due(&self.sessions, now_ms, self.grace_ms, |s| s.stop_at);
        for id in due {
            self.read(&id, files, out);
            self.end_held(&id, out);
        }
    }

    /// Gives up on session `id`, which will send nothing more (its agent is gone; `-p` sends
    /// no `SessionEnd`): what its transcript holds goes out, a held stop ends its turn, and
    /// the session is closed at `at_ms`, so a turn still open is exported unfinished.
    pub fn abandon(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        self.read(id, files, out);
        // The daemon last saw the agent alive up to a second before what its last payload
        // says it did: the session closes no earlier than that.
        let at_ms = self
            .sessions
            .get(id)
            .map_or(at_ms, |s| at_ms.max(s.seen_ms));
        self.end_held(id, out);
        self.close_children(id, at_ms, out);
        if self.sessions.remove(id).is_some() {
            out.push(record(id, Event::Closed { at_ms }));
        }
    }
}

#[cfg(test)]
mod tests;
