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
//! Reading the transcript is the caller's I/O, behind
//! [`Transcripts`](crate::sources::command_hooks::engine::files::Transcripts); the rest is pure.

mod contract;
pub(crate) use contract::adapter;
pub use contract::{HISTORY, SPEC};
pub mod history;
mod payload;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod script;
mod subagents;
mod tools;
mod transcript;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

pub use payload::Payload;

use super::engine::tail::Tail;
use crate::sources::command_hooks::engine::records::record;
use crate::sources::command_hooks::engine::open_turn::{OpenTurn, Why};
use crate::protocol::{Event, Record};
use crate::sources::command_hooks::engine::AgentRules;

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

/// A turn, a sub-agent's or a background agent's open calls: the shared open turn, with what
/// Qwen alone keeps of it.
type Turn = OpenTurn<Own>;

/// What Qwen alone keeps of a turn.
#[derive(Debug, Default)]
struct Own {
    /// The turn's `prompt_id`: a prompt with the same one goes on with that turn.
    prompt_id: Option<String>,
    /// The provider's ids of the turn's calls that ended, which `PostToolBatch` names.
    ended: HashSet<String>,
    /// `agent` calls waiting for their `SubagentStart`, oldest first.
    agent_calls: Vec<subagents::AgentCall>,
}

/// A turn begun at `at_ms`. Qwen reports the calls it refused (in `PostToolBatch`), so a call
/// still pending when a turn ends had started and failed with it.
fn new_turn(at_ms: u64) -> Turn {
    let mut turn = Turn::new(at_ms);
    turn.reports_refusals = true;
    turn
}

#[derive(Debug, Default)]
pub struct Session {
    started: bool,
    /// The open turn, if one is.
    turn: Option<Turn>,
    /// The transcript the payloads name, and how far it has been read.
    transcript: Option<String>,
    tail: Tail,
    /// Model calls that ended before this are not this adapter's to export.
    since: u64,
    /// The latest time a payload or the transcript says the agent was alive.
    seen_ms: u64,
    /// Resumed where an earlier daemon left the transcript (`tail` goes on from there if it
    /// is still that file).
    resumed: bool,
    /// Running sub-agents, by `agent_id`.
    agents: HashMap<String, subagents::Child>,
    /// The CLI's background agents seen since the turn ended: by `subagent_id`.
    background: HashMap<String, transcript::Background>,
}

impl Session {
    /// The open calls of `target`, one of this session's sessions: the turn's own, a
    /// sub-agent's or a background agent's.
    fn calls_of(&mut self, sid: &str, target: &str) -> Option<&mut Turn> {
        if target == sid {
            return self.turn.as_mut();
        }
        if let Some(c) = self.agents.values_mut().find(|c| c.session == target) {
            return Some(&mut c.calls);
        }
        self.background
            .values_mut()
            .find(|b| b.session == target)
            .map(|b| &mut b.calls)
    }

    /// Every set of open calls, with the session it is in (`None`: this one).
    fn all_calls(&mut self) -> impl Iterator<Item = (Option<&str>, &mut Turn)> {
        let agents = self
            .agents
            .values_mut()
            .map(|c| (Some(c.session.as_str()), &mut c.calls));
        let background = self
            .background
            .values_mut()
            .map(|b| (Some(b.session.as_str()), &mut b.calls));
        self.turn
            .iter_mut()
            .map(|t| (None, t))
            .chain(agents)
            .chain(background)
    }
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

    fn on_prompt(&mut self, sid: &str, at_ms: u64, p: &Payload, out: &mut Vec<Record<'static>>) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        if let Some(turn) = &mut s.turn {
            let same_turn = match (&p.prompt_id, &turn.own.prompt_id) {
                (Some(now), Some(open)) => now == open,
                // Without ids: an empty prompt nobody typed goes on with the open turn.
                _ => p.submitted_prompt.is_none() && p.prompt.as_deref().unwrap_or("").is_empty(),
            };
            if same_turn {
                // Asked again in the same turn (after tool results, or a blocked stop).
                turn.went_on();
                return;
            }
        }
        // A turn whose Stop never came (the CLI was stopped) ends where the next begins.
        if !self.end_held(sid, out) {
            self.end_turn(sid, at_ms, Why::Interrupted, out);
        }
        let mut turn = new_turn(at_ms);
        turn.own.prompt_id = p.prompt_id.clone();
        self.sessions.entry(sid.to_string()).or_default().turn = Some(turn);
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
        let Some(turn) = self.sessions.get_mut(sid).and_then(|s| s.turn.as_mut()) else {
            return;
        };
        out.push(record(
            sid,
            Event::Stopping {
                at_ms,
                reply: Cow::Owned(p.last_assistant_message.clone().unwrap_or_default()),
                held: turn.stops,
            },
        ));
        turn.stops = turn.stops.saturating_add(1);
        turn.hold(at_ms, "end_turn");
    }
}

#[cfg(test)]
mod tests;
