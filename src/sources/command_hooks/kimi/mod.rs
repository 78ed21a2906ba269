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
//! prompt, `SessionEnd`, Kimi gone), it ends one way ([`ends::end`]): the shared open turn's
//! flush, which ends the tool calls and model calls still in flight, its sub-agents' with it.

mod contract;
pub mod history;
pub(crate) use contract::adapter;
pub use contract::{HISTORY, SPEC};
mod models;
mod payload;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod script;
mod subagents;
mod ends;
mod wire;

use std::collections::HashMap;

use payload::{dir_of_wire, session_dir, wire_of};
pub use payload::{with_home, Payload};
use ends::why_of;
use wire::Reader;

use crate::sources::command_hooks::engine::files::{FileCursor, Transcripts};
use crate::sources::command_hooks::engine::held::WentOut;
use crate::sources::command_hooks::engine::open_turn::{OpenTurn, Why};
use crate::protocol::Record;

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
/// [`ends`]).
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
    let went_on = ends::busy(turn) || s.reader.as_ref().is_some_and(|r| r.last_work > at);
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
        ends::end(turn, sid, at_ms, why, out);
    }
}

#[cfg(test)]
mod ending_tests;
#[cfg(test)]
mod tests;
