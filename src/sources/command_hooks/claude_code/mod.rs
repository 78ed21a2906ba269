//! Claude Code's command-hook payloads (albedo's `hooks` extension speaks the same format) to
//! protocol records.
//!
//! Each hook invocation is a separate process that sees one event, so the pairing that gives a
//! tool span its start and end happens here, in the one place that sees them all:
//! - `UserPromptSubmit` opens the turn; `PreToolUse` starts a call, `PostToolUse` or
//!   `PostToolUseFailure` (paired by `tool_use_id`) ends it;
//! - a call blocked by another hook gets no `PostToolUse`, only a `PostToolBatch`: it is ended
//!   there as refused;
//! - `Stop` reads the transcript for the turn's model calls and ends the turn. The end is held
//!   back for a grace period: if a hook blocked the stop, the turn goes on (the next event is a
//!   tool call or another `Stop` with `stop_hook_active`) and stays one turn;
//! - `SubagentStart` opens a child session nested under the `Agent` call that started it;
//!   calls inside carry `agent_id` and go to that child; `SubagentStop` reads its transcript;
//! - `SessionEnd` closes the session.
//!
//! Reading transcripts is the caller's I/O, behind [`Transcripts`]; everything else is pure.
//! Times taken from payloads (`duration_ms`) and added here saturate; the records still pass
//! `protocol::validate` in the pipeline, like those of every other source.

mod subagents;
mod call_sent;
mod contract;
mod ends;
pub mod history;
pub(crate) use contract::adapter;
pub use contract::{HISTORY, SPEC};
mod conversation;
mod payload;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod script;
mod tools;
pub mod transcript;

use std::borrow::Cow;
use std::collections::HashMap;

use crate::sources::command_hooks::engine::files::{FileCursor, Transcripts};
use crate::sources::command_hooks::engine::open_turn::OpenTurn;
pub use payload::{BatchCall, Payload};
use crate::sources::command_hooks::engine::records::record;
use call_sent::call_sent;
use transcript::TranscriptCursor;

use crate::protocol::{Event, Record};
use crate::sources::command_hooks::engine::AgentRules;

/// The agent name on turns from command hooks.
pub const AGENT: &str = "claude-code";

/// Claude Code's events that make a trace.
pub const HOOK_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionEnd",
];
/// How much of a transcript before a resume point a new daemon reads again for the
/// conversation the next calls were sent: many times what a call keeps of it (the newest
/// 256 KiB at the most), since raw lines are longer than what is kept of them. No more than
/// the conformance suite allows a restarted adapter to read again (`conformance/restart.rs`).
const RECALL_WINDOW: u64 = 8 << 20;
/// Tools that run a sub-agent.
const AGENT_TOOLS: &[&str] = &["Agent", "Task"];
/// How Claude Code words the prompt that tells the agent a background task finished.
const TASK_NOTIFICATION: &str = "<task-notification>";

#[derive(Debug, Default)]
pub struct Session {
    started: bool,
    /// The open turn, its calls announced by `PreToolUse` and not ended yet, and its held
    /// `Stop`.
    turn: Option<OpenTurn>,
    /// `Agent` calls waiting for their `SubagentStart`, oldest first.
    agent_calls: Vec<String>,
    /// `agent_id` to the child session's id.
    agents: HashMap<String, String>,
    /// Another agent's calls starting a sub-agent (Codex's `spawn_agent`), oldest first,
    /// until their answer names it.
    spawning: Vec<Spawned>,
    /// Sub-agents such a call named before their `SubagentStart`, by `agent_id`.
    spawned: HashMap<String, Spawned>,
    /// A `Stop` came while sub-agents ran (they run in the background): the turn is not over
    /// before they are, and the agent usually answers again once they report.
    stop_after_agents: bool,
    transcript: TranscriptCursor,
    /// The transcript the session's payloads last named: read when a turn ends without a
    /// `Stop` (the user pressed Esc, or the agent is gone), which sends no path of its own.
    transcript_path: Option<String>,
    /// Where an earlier daemon left the transcript: taken at the next read, which reads on
    /// from there if it is still that file, and reads the conversation before it once.
    resumed: Option<FileCursor>,
    /// The transcript's identity when last read, for [`FileCursor::identity`].
    read_identity: Option<u64>,
}

/// The call that started a sub-agent, known by the sub-agent's id before it starts.
#[derive(Debug)]
struct Spawned {
    /// The session that made the call (a sub-agent's, for a sub-agent's sub-agent).
    session: String,
    call: String,
    prompt: String,
}

/// Turns command-hook payloads into protocol records; see the module docs.
#[derive(Debug)]
pub struct Adapter {
    sessions: HashMap<String, Session>,
    grace_ms: u64,
    /// The agent name its sessions are opened with.
    agent: &'static str,
}

impl Adapter {
    /// `grace_ms`: how long a `Stop` waits for a held stop's continuation before the turn ends.
    pub fn new(grace_ms: u64) -> Self {
        Adapter::named(grace_ms, AGENT)
    }

    /// For another agent whose hooks are Claude Code's (Codex CLI's), under its own name.
    pub fn named(grace_ms: u64, agent: &'static str) -> Self {
        Adapter {
            sessions: HashMap::new(),
            grace_ms,
            agent,
        }
    }

    fn ensure(&mut self, id: &str, at_ms: u64, cwd: Option<&str>, out: &mut Vec<Record<'static>>) {
        let s = self.sessions.entry(id.to_string()).or_default();
        if !s.started {
            s.started = true;
            out.push(crate::sources::command_hooks::engine::records::session_opened(id, at_ms, self.agent, cwd));
        }
    }

    /// The session a payload's event belongs to: the child of its `agent_id`, if any.
    fn target(&self, p: &Payload) -> String {
        p.agent_id
            .as_ref()
            .and_then(|a| self.sessions.get(&p.session_id)?.agents.get(a).cloned())
            .unwrap_or_else(|| p.session_id.clone())
    }

    fn on_prompt(
        &mut self,
        sid: &str,
        at_ms: u64,
        p: &Payload,
        transcripts: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        // A background sub-agent reporting back comes as a prompt nobody typed; the agent's
        // answer to it belongs to the turn that started the sub-agent.
        let notification = p
            .prompt
            .as_deref()
            .is_some_and(|t| t.trim_start().starts_with(TASK_NOTIFICATION));
        if let Some(s) = self.sessions.get_mut(sid) {
            if let Some(turn) = s.turn.as_mut().filter(|_| notification) {
                turn.went_on();
                s.stop_after_agents = false;
                return;
            }
        }
        self.end_held(sid, out);
        // A turn still open with no `Stop` was interrupted (Esc sends no hook at all): its
        // model calls are in the transcript now, and go in that turn, not the next.
        self.cut_short(sid, transcripts, out);
        if let Some(s) = self.sessions.get_mut(sid) {
            s.turn = Some(OpenTurn::new(at_ms));
        }
        out.push(record(
            sid,
            Event::Prompted {
                at_ms,
                text: Cow::Owned(p.prompt.clone().unwrap_or_default()),
            },
        ));
    }

    fn on_stop(
        &mut self,
        sid: &str,
        at_ms: u64,
        p: &Payload,
        transcripts: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        self.read_transcript(sid, p.transcript_path.as_deref(), transcripts, out);
        let s = self.sessions.entry(sid.to_string()).or_default();
        let turn = s.turn.get_or_insert_with(|| OpenTurn::new(at_ms));
        out.push(record(
            sid,
            Event::Stopping {
                at_ms,
                reply: Cow::Owned(p.last_assistant_message.clone().unwrap_or_default()),
                held: turn.stops,
            },
        ));
        turn.stops = turn.stops.saturating_add(1);
        if s.agents.is_empty() {
            turn.hold(at_ms, "end_turn");
        } else {
            s.stop_after_agents = true;
        }
    }

    /// The model calls `session`'s transcript at `path` has gained since the last read; a
    /// payload without a path (or with an empty one) has nothing to read.
    fn read_transcript(
        &mut self,
        session: &str,
        path: Option<&str>,
        transcripts: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(path) = path.filter(|p| !p.is_empty()) else {
            return;
        };
        let s = self.sessions.entry(session.to_string()).or_default();
        let resumed = s.resumed.take();
        if let Some(at) = &resumed {
            // Another file under that name, or another name, is read from its start.
            s.transcript.offset = at.offset_in(path, transcripts);
        }
        if resumed.is_some() && s.transcript.offset > 0 && s.transcript.keeps_messages() {
            // Resumed by a new daemon: what came before the saved offset is still what the
            // next calls were sent. Only its tail can be kept, so only its tail is read: a
            // long session's transcript is not read whole into memory again.
            let from = s.transcript.offset.saturating_sub(RECALL_WINDOW);
            s.transcript
                .recall(&transcripts.read_from(path, from), from);
        }
        let bytes = transcripts.read_from(path, s.transcript.offset);
        s.read_identity = transcripts.identity(path);
        s.transcript.feed(&bytes);
        for call in s.transcript.take_calls() {
            out.push(record(session, Event::CallSent(call_sent(call))));
        }
    }
}

#[cfg(test)]
mod tests;
