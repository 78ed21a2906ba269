//! Kimi Code's command hooks and its session's `wire.jsonl` to protocol records.
//!
//! Kimi's hooks carry no time, no model calls, and a sub-agent's hooks come under its
//! parent's session id with nothing to tell them apart; its `wire.jsonl` has everything,
//! timed, one file per agent. So the hooks only mark the turn and say where to read:
//! - `UserPromptSubmit` opens a turn (the hook adds Kimi's home folder, where
//!   `session_index.jsonl` names the session's folder);
//! - while the turn is open, the main agent's `wire.jsonl` is read as it grows ([`wire`]):
//!   model calls, tool calls, sub-agents (each from its own file, nested under its `Agent`
//!   call);
//! - the wire's `turn.ended` ends the turn, at its time. A `Stop` hook (Kimi's, or a
//!   sub-agent's under the same id) with no `turn.ended` after it ends the turn at the stop
//!   once a grace has passed with the agent idle: another hook that blocks a stop keeps the
//!   agent at work, and the turn open;
//! - `SessionEnd` closes the session; a killed Kimi's turn goes out unfinished with what its
//!   wire had.
//!
//! However a turn ends (its `turn.ended`, a stop or `Interrupt` past the grace, the next
//! prompt, `SessionEnd`, Kimi gone), it ends one way ([`turns::end`]): the shared open turn's
//! flush, which ends the tool calls and model calls still in flight, its sub-agents' with it.

mod contract;
pub mod history;
pub(crate) use contract::adapter;
pub use contract::{HISTORY, SPEC};
mod models;
mod payload;
#[cfg(test)]
pub(crate) mod script;
mod subagents;
mod turns;
mod wire;

use std::borrow::Cow;
use std::collections::HashMap;

use payload::{dir_of_wire, session_dir, wire_of};
pub use payload::{with_home, Payload};
use turns::why_of;
use wire::Reader;

use super::files::{FileCursor, Transcripts};
use super::held::WentOut;
use super::records::{record, session_opened};
use super::open_turn::{OpenTurn, Why};
use crate::protocol::{Event, Record};

/// The agent name on Kimi Code's turns.
pub const AGENT: &str = "kimi";

/// Kimi Code's events that make a trace: its `wire.jsonl` has the calls, so none of the
/// tool hooks (Kimi waits for `PreToolUse` on every call).
pub const HOOK_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "Stop",
    "StopFailure",
    "Interrupt",
    "SessionEnd",
];

/// How long a `Stop` with nothing after it waits before it ends the turn: Kimi writes
/// `turn.ended` tens of milliseconds after its `Stop` hooks return.
const STOP_GRACE_MS: u64 = 2_000;

/// What Kimi alone keeps of an agent's open turn (its turn is the shared [`OpenTurn`]; see
/// [`turns`]).
#[derive(Debug, Default)]
struct Own {
    /// The agent's `turn.ended`, once read: when, and its reason in the protocol's words.
    ended: Option<(u64, &'static str)>,
    /// The sub-agents the turn started that have not ended yet, each with a turn of its own.
    subs: Vec<Sub>,
}

type Turn = OpenTurn<Own>;

/// A sub-agent at work ([`subagents`]): its wire, and its turn once its file has begun one.
#[derive(Debug)]
struct Sub {
    reader: Reader,
    turn: Option<Turn>,
}

#[derive(Debug, Default)]
pub struct Session {
    started: bool,
    /// Kimi's home folder, from the hook.
    home: Option<String>,
    /// The main agent's reader, once the session's folder is known.
    reader: Option<Reader>,
    /// Where an earlier daemon had read the wire to.
    resumed: Option<FileCursor>,
    /// The main agent's open turn (a stop hook held in it: when, and the reason the turn
    /// ends with if nothing follows).
    turn: Option<Turn>,
    /// `SessionEnd` came: the session closes once its turn is over.
    closing: Option<u64>,
    /// When the main agent's last turn went out at its stop (see [`WentOut`]).
    went_out: WentOut,
}

#[derive(Debug, Default)]
pub struct Adapter {
    sessions: HashMap<String, Session>,
}

impl Adapter {
    pub fn new() -> Self {
        Adapter::default()
    }

    /// Takes one payload received at `at_ms`; appends records to `out`.
    pub fn push(
        &mut self,
        at_ms: u64,
        p: &Payload,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let sid = p.session_id.as_str();
        if sid.is_empty() {
            return;
        }
        let s = self.sessions.entry(sid.to_string()).or_default();
        if !s.started {
            s.started = true;
            out.push(session_opened(sid, at_ms, AGENT, p.cwd.as_deref()));
        }
        if p.kimi_home.is_some() {
            s.home.clone_from(&p.kimi_home);
        }
        match p.hook_event_name.as_str() {
            "UserPromptSubmit" => {
                // What the last turn left in the wire is its own; a turn still open now was
                // cut short, unless its wire says it ended. (With none open, the wire's older
                // lines are the turns before, which the reads from this prompt's time on
                // leave out.)
                end_now(sid, s, at_ms, Why::Interrupted, files, out);
                s.turn = Some(turns::begin(at_ms));
                s.went_out = WentOut::default();
                s.closing = None;
                let text = Cow::Owned(p.prompt_text());
                out.push(record(sid, Event::Prompted { at_ms, text }));
            }
            "Stop" | "StopFailure" | "Interrupt" => {
                // With no turn open, the stop ends what the agent did since the last went out
                // (its stop blocked late), which only the wire has: in a new daemon, what the
                // wire has past where the old one had read it.
                if s.turn.is_none() {
                    let resumed = s.resumed.as_ref().map(|_| 0);
                    s.turn = s.went_out.continuation().or(resumed).map(turns::begin);
                }
                let Some(turn) = s.turn.as_mut() else { return };
                let reason = match p.hook_event_name.as_str() {
                    "Stop" => "end_turn",
                    "Interrupt" => "interrupted",
                    _ => "error",
                };
                turn.hold(at_ms, reason);
                settle(sid, s, at_ms, files, out);
            }
            "SessionEnd" => {
                s.closing = Some(at_ms);
                let held = s.turn.as_ref().and_then(|t| t.stop);
                let why = held.map_or(Why::Interrupted, |(_, reason)| why_of(reason));
                end_now(sid, s, at_ms, why, files, out);
            }
            _ => {}
        }
    }

    /// Reads the open turns' wires, ends the turns that are over, and closes the sessions
    /// that ended.
    pub fn tick(
        &mut self,
        now_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let mut closed = Vec::new();
        for (sid, s) in self.sessions.iter_mut() {
            if s.turn.is_some() {
                settle(sid, s, now_ms, files, out);
            }
            if let Some(at) = s.closing.filter(|_| s.turn.is_none()) {
                out.push(record(sid, Event::Closed { at_ms: at }));
                closed.push(sid.clone());
            }
        }
        for sid in closed {
            self.sessions.remove(&sid);
        }
    }

    /// Gives up on a session that will send nothing more: what its wire has goes out, and it
    /// is closed at `at_ms` (or when it was ending), its open turn, its calls in flight and
    /// its sub-agents unfinished.
    fn give_up(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> Option<u64> {
        let mut s = self.sessions.remove(id)?;
        if s.turn.is_some() {
            read(id, &mut s, u64::MAX, files, out);
        }
        // Kimi's wire says it was alive when it last wrote there.
        let seen = s.reader.as_ref().map_or(0, |r| r.last_work);
        let at_ms = at_ms.max(seen);
        if let Some(turn) = s.turn.take() {
            match turn.own.ended {
                Some((end, reason)) => turns::end(turn, id, end, why_of(reason), out),
                None => turns::end(turn, id, at_ms, Why::Unseen, out),
            }
        }
        Some(s.closing.unwrap_or(at_ms))
    }

    /// Where the session's main wire has been read to.
    pub fn cursor(&self, id: &str) -> Option<FileCursor> {
        let s = self.sessions.get(id)?;
        match &s.reader {
            Some(r) => Some(FileCursor {
                path: r.path.clone(),
                offset: r.offset,
                identity: r.identity,
            }),
            None => s.resumed.clone(),
        }
    }

    pub fn resume(&mut self, id: &str, at: FileCursor) {
        if at.offset > 0 && !at.path.is_empty() {
            self.sessions.entry(id.to_string()).or_default().resumed = Some(at);
        }
    }
}

/// Reads the wire on, and ends the turn if it is over: at the wire's `turn.ended`, or at a
/// stop the agent stayed idle after for the grace.
fn settle(
    sid: &str,
    s: &mut Session,
    now_ms: u64,
    files: &mut dyn Transcripts,
    out: &mut Vec<Record<'static>>,
) {
    read(sid, s, now_ms, files, out);
    let Some(turn) = s.turn.as_mut() else { return };
    if let Some((end, reason)) = turn.own.ended {
        end_turn(sid, s, end, why_of(reason), out);
        return;
    }
    let Some((at, reason)) = turn
        .stop
        .filter(|(at, _)| now_ms >= at.saturating_add(STOP_GRACE_MS))
    else {
        return;
    };
    // A sub-agent's stop comes under this session's id too; and a stop another hook blocked
    // is followed by more work.
    let went_on = turns::busy(turn) || s.reader.as_ref().is_some_and(|r| r.last_work > at);
    if went_on {
        turn.went_on();
    } else {
        end_turn(sid, s, at, why_of(reason), out);
        s.went_out = WentOut::at(at);
    }
}

/// Ends the open turn now, at `at_ms`, for `why`, unless its wire says it ended before: what
/// the wire has of it is read first.
fn end_now(
    sid: &str,
    s: &mut Session,
    at_ms: u64,
    why: Why,
    files: &mut dyn Transcripts,
    out: &mut Vec<Record<'static>>,
) {
    if s.turn.is_none() {
        return;
    }
    read(sid, s, at_ms, files, out);
    match s.turn.as_ref().and_then(|t| t.own.ended) {
        Some((end, reason)) => end_turn(sid, s, end, why_of(reason), out),
        None => end_turn(sid, s, at_ms, why, out),
    }
}

/// Reads what the session's main wire has that is new, finding it first if need be.
/// `now`: the daemon's time, or `u64::MAX` when nothing more is coming.
fn read(
    sid: &str,
    s: &mut Session,
    now: u64,
    files: &mut dyn Transcripts,
    out: &mut Vec<Record<'static>>,
) {
    if s.reader.is_none() {
        s.reader = find(sid, s, files);
    }
    let from = s.turn.as_ref().map_or(0, |t| t.at_ms);
    if let Some(r) = s.reader.as_mut() {
        r.read(&mut s.turn, from, now, files, out);
    }
}

/// The main agent's reader: where an earlier daemon left it, else from Kimi's session index.
fn find(sid: &str, s: &mut Session, files: &mut dyn Transcripts) -> Option<Reader> {
    if let Some(at) = s.resumed.take() {
        if let Some(dir) = dir_of_wire(&at.path) {
            let offset = at.offset_in(&at.path, files);
            return Some(Reader::new("main", sid.into(), dir, &at.path, offset));
        }
    }
    let home = s.home.as_deref()?;
    let index = files.read_from(&format!("{home}/session_index.jsonl"), 0);
    let dir = session_dir(&index, sid)?;
    Some(Reader::new(
        "main",
        sid.into(),
        &dir,
        &wire_of(&dir, "main"),
        0,
    ))
}

/// Ends the open turn at `at_ms`, for `why`: what is still in flight ends with it.
fn end_turn(sid: &str, s: &mut Session, at_ms: u64, why: Why, out: &mut Vec<Record<'static>>) {
    if let Some(turn) = s.turn.take() {
        turns::end(turn, sid, at_ms, why, out);
    }
}

#[cfg(test)]
mod ending_tests;
#[cfg(test)]
mod tests;
