//! One agent's `wire.jsonl` read into its open turn: Kimi writes every event of an agent there,
//! each with its own time (Unix ms) and, for the agent's own, its `agentId`:
//! - a model call is `llm.request` to `usage.record` and its step's `step.end` ([`models`]);
//! - a tool call is `tool.call` to `tool.result` (with `isError`), by `toolCallId`;
//! - a sub-agent is `subagent.spawned` to `subagent.completed`, its own events in a file of
//!   its own ([`subagents`]);
//! - `turn.ended` ends the agent's turn, with its reason.
//!
//! The file's lines are read as they are appended, whole lines only, from where the last read
//! stopped (`offset`); what they say goes to the agent's turn ([`Turn`]), which ends apart.
//!
//! [`models`]: super::models
//! [`subagents`]: super::subagents

use std::borrow::Cow;

use serde_json::value::{to_raw_value, RawValue};
use serde_json::Value;

use super::{ends, models, Turn};
use crate::protocol::{Event, Record};
use crate::sources::command_hooks::engine::files::Transcripts;
use crate::sources::command_hooks::engine::records::{record, Outcome};

/// The least of a wire read at once; a read that takes all of it reads on in a window twice as
/// long, up to [`WINDOW_MAX`] (a line longer than that is read whole, however long).
pub(super) const WINDOW: usize = 1024;
const WINDOW_MAX: usize = 1 << 20;

/// Where one agent's `wire.jsonl` has been read to, and whose it is.
#[derive(Debug)]
pub(super) struct Reader {
    /// `main`, or a sub-agent's id: only this agent's events are taken.
    pub agent: String,
    /// The session its records go to.
    pub session: String,
    /// The session's folder, where sub-agents' files are.
    pub dir: String,
    pub path: String,
    /// The first byte not yet taken.
    pub offset: u64,
    /// The file's identity when last read (see [`Transcripts::identity`]).
    pub identity: Option<u64>,
    /// When the agent was last seen at work (a model or tool call begun or ended).
    pub last_work: u64,
}

impl Reader {
    /// The reader of agent `agent`'s file at `path`, in session folder `dir`, from `offset`.
    pub fn new(agent: &str, session: String, dir: &str, path: &str, offset: u64) -> Reader {
        Reader {
            agent: agent.into(),
            session,
            dir: dir.into(),
            path: path.into(),
            offset,
            identity: None,
            last_work: 0,
        }
    }

    /// Reads into `turn` what was appended since the last read, taking events from `from` ms
    /// on, and what the turn's sub-agents appended to theirs; `now` is the daemon's time (see
    /// [`Reader::waits_for`]). A sub-agent's turn begins at its file's first event; the
    /// main agent's is begun by its hook.
    pub fn read(
        &mut self,
        turn: &mut Option<Turn>,
        from: u64,
        now: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        // The main agent's reads stop at its turn's end, and a daemon catching up has many
        // turns after it: read in a window that starts small and doubles while all of it is
        // taken, rather than the whole rest of the file at each turn's end.
        let mut window = WINDOW;
        loop {
            let bytes = files.read_at_most(&self.path, self.offset, window);
            let (taken, stopped) = self.lines(&bytes, turn, from, now, files, out);
            self.offset += taken as u64;
            if stopped || bytes.len() < window {
                break;
            }
            // A line longer than the window is read whole the next time round.
            window = match taken {
                0 => window.saturating_mul(2),
                _ => window.saturating_mul(2).min(WINDOW_MAX),
            };
        }
        self.identity = files.identity(&self.path);
        if let Some(turn) = turn {
            for sub in &mut turn.own.subs {
                sub.read(now, files, out);
            }
        }
    }

    /// Takes the whole lines of `bytes` (read from the offset) into `turn`; returns how many
    /// bytes it took, and whether it stopped before the end: at the main agent's turn's end,
    /// or at a line that waits for what its sub-agent has not written yet.
    fn lines(
        &mut self,
        bytes: &[u8],
        turn: &mut Option<Turn>,
        from: u64,
        now: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> (usize, bool) {
        let mut pos = 0;
        while let Some(n) = memchr::memchr(b'\n', &bytes[pos..]) {
            let line = &bytes[pos..pos + n];
            if let Ok(v) = serde_json::from_slice::<Value>(line) {
                if Self::waits_for(turn.as_mut(), &v, now, files, out) {
                    return (pos, true);
                }
                self.take(turn, &v, from, now, files, out);
            }
            pos += n + 1;
            // The main agent's turn ends here: the lines after it are the next turn's, for
            // the next read (a daemon catching up reads several turns' lines at once).
            let ended = turn.as_ref().is_some_and(|t| t.own.ended.is_some());
            if ended && self.agent == "main" {
                return (pos, true);
            }
        }
        (pos, false)
    }

    fn take(
        &mut self,
        turn: &mut Option<Turn>,
        v: &Value,
        from: u64,
        now: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(at) = v["time"].as_u64().filter(|at| *at >= from) else {
            return;
        };
        if v["agentId"].as_str().is_some_and(|a| a != self.agent) {
            return;
        }
        match v["type"].as_str().unwrap_or_default() {
            "turn.prompt" if turn.is_none() => {
                let prompt = super::Payload {
                    prompt: Some(v["input"].clone()),
                    ..Default::default()
                };
                let text = Cow::Owned(prompt.prompt_text());
                out.push(record(&self.session, Event::Prompted { at_ms: at, text }));
                *turn = Some(ends::begin(at));
            }
            "llm.request" => {
                self.last_work = at;
                models::requested(open(turn, at), &self.session, v, at, out);
            }
            "usage.record" => {
                self.last_work = at;
                if let Some(turn) = turn {
                    models::answered(turn, &v["usage"], at);
                }
            }
            "turn.ended" => {
                if let Some(turn) = turn {
                    turn.own.ended = Some((at, reason_of(v["reason"].as_str())));
                }
            }
            "subagent.spawned" => self.spawned(open(turn, at), v, at, out),
            "subagent.completed" | "subagent.failed" => {
                if let Some(turn) = turn {
                    Self::completed(turn, v, at, now, files, out);
                }
            }
            "context.append_loop_event" => self.loop_event(turn, &v["event"], at, out),
            _ => {}
        }
    }

    fn loop_event(
        &mut self,
        turn: &mut Option<Turn>,
        e: &Value,
        at: u64,
        out: &mut Vec<Record<'static>>,
    ) {
        match e["type"].as_str().unwrap_or_default() {
            "tool.call" => {
                let Some(id) = e["toolCallId"].as_str().map(str::to_string) else {
                    return;
                };
                self.last_work = at;
                let name = e["name"].as_str().unwrap_or_default().to_string();
                let args = json(&e["args"]);
                open(turn, at).start_call(&self.session, Some(id), name, args, None, at, out);
            }
            "tool.result" => {
                let id = e["toolCallId"].as_str().unwrap_or_default();
                let Some(turn) = turn.as_mut() else { return };
                let Some(i) = turn.pending.iter().position(|c| c.id == id) else {
                    return;
                };
                self.last_work = at;
                // Kimi records a call another hook refused as it records one that failed:
                // an error, with the reason as its output.
                let failed = e["result"]["isError"].as_bool().unwrap_or(false);
                let output = json(&e["result"]["output"]);
                turn.end_call(
                    &self.session,
                    i,
                    output,
                    Outcome::of(false, failed),
                    at,
                    out,
                );
            }
            "step.begin" => self.last_work = at,
            "step.end" => {
                if let Some(turn) = turn {
                    models::step_ended(turn, &self.session, e, at, out);
                }
            }
            _ => {}
        }
    }
}

/// The agent's open turn, begun at `at_ms` if none is: what a sub-agent does before its
/// file's `turn.prompt` still has a turn.
fn open(turn: &mut Option<Turn>, at_ms: u64) -> &mut Turn {
    turn.get_or_insert_with(|| ends::begin(at_ms))
}

/// A value of the wire as the call's JSON; none for `null` or none at all.
fn json(v: &Value) -> Option<Box<RawValue>> {
    to_raw_value(v).ok().filter(|_| !v.is_null())
}

/// A `turn.ended` reason in the protocol's words.
fn reason_of(reason: Option<&str>) -> &'static str {
    match reason {
        Some("completed") => "end_turn",
        Some("cancelled") => "interrupted",
        Some("blocked") => "blocked",
        _ => "error",
    }
}
