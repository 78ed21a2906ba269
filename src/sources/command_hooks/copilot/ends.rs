//! A `Stop` another hook blocked: Copilot goes on (up to 8 times), its calls only in the log.
//! So a turn's log is looked at past its `Stop` before the turn ends: work begun after the
//! `Stop` means the stop was held, and the turn waits for the next one. Copilot 1.0.102 also
//! submits the blocking hook's reason as a prompt (`UserPromptSubmit` fires): that prompt,
//! which the log shows the hook answered, goes on the turn ([`blocked`]), however late.

use super::payload::LogEvent;
use std::borrow::Cow;

use super::{finish, Session};
use crate::protocol::{Event, Record};
use crate::sources::command_hooks::engine::files::Transcripts;
use crate::sources::command_hooks::engine::held::WentOut;
use crate::sources::command_hooks::engine::records::record;
use crate::sources::command_hooks::engine::records::rfc3339_ms;
use crate::sources::command_hooks::engine::open_turn::OpenTurn;
use crate::sources::command_hooks::engine::open_turn::Why;

/// Events that only a running turn logs: a model call's end, a tool's start.
const WORK: &[&str] = &[
    "session.usage_record",
    "tool.execution_start",
    "assistant.turn_start",
];

/// The events of the log at `path` from where session `s` last read it: its own offset in
/// that log, the resume point's in a log it has not read yet, or the start of another.
fn unread_events(s: &Session, path: &str, logs: &mut dyn Transcripts) -> Vec<LogEvent> {
    let from = match (&s.read, &s.resumed) {
        (Some(read), _) if read.path == path => read.offset,
        (Some(_), _) | (None, None) => 0,
        (None, Some(at)) => at.offset_in(path, logs),
    };
    logs.read_from(path, from)
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice::<LogEvent>(line).ok())
        .collect()
}

/// Whether session `s`'s log shows its own agent at work after its `Stop` at `stop_at`, up to
/// `now_ms` (a log read late, by a daemon catching up, holds later turns too: they began with
/// a prompt, which ended this turn before any tick).
pub(super) fn went_on(
    s: &Session,
    stop_at: u64,
    now_ms: u64,
    path: &str,
    logs: &mut dyn Transcripts,
) -> bool {
    unread_events(s, path, logs).into_iter().any(|e| {
        e.agent_id.is_none()
            && WORK.contains(&e.kind.as_str())
            && e.timestamp
                .as_deref()
                .and_then(rfc3339_ms)
                .is_some_and(|at| at > stop_at && at <= now_ms)
    })
}

/// Takes prompt `u` of session `sid`: the reason a `Stop` hook blocked the last stop with
/// continues that turn (see the module); any other prompt begins a turn, and the last one is
/// over, whatever the log's delay. Until the log shows which, a prompt after a stop waits,
/// unless `decide`.
pub(super) fn prompted(
    sid: &str,
    s: &mut Session,
    u: Undecided,
    decide: bool,
    logs: &mut dyn Transcripts,
    out: &mut Vec<Record<'static>>,
) {
    if continues(s, &u.text, logs) {
        return;
    }
    if !decide && last_stop(s).is_some() {
        s.undecided = Some(u);
        return;
    }
    finish(sid, s, u.at_ms, Why::Interrupted, logs, out);
    s.turn = Some(OpenTurn::new(u.at_ms));
    s.went_out = WentOut::default();
    s.closing = None;
    out.push(record(
        sid,
        Event::Prompted {
            at_ms: u.at_ms,
            text: Cow::Owned(u.text),
        },
    ));
}

/// A prompt not yet known to be a turn's: when it came, and what it says.
#[derive(Debug)]
pub(super) struct Undecided {
    pub at_ms: u64,
    pub text: String,
}

/// The stop a hook may have blocked: the open turn's held one, or the one the last turn went
/// out at. A new daemon's session, resumed where the old one's last turn ended, does not know
/// when that turn's stop was, only that it came before the resume point: any stop the log
/// has past it may be the one.
pub(super) fn last_stop(s: &Session) -> Option<u64> {
    let held = s.turn.as_ref().and_then(|t| t.stop).map(|(at, _)| at);
    let resumed = (s.turn.is_none() && s.read.is_none() && s.resumed.is_some()).then_some(0);
    held.or(s.went_out.stop()).or(resumed)
}

/// Whether the prompt `prompt` of session `s` is the reason its last stop was blocked with:
/// then its held turn goes on, or the turn that went out at that stop is continued.
pub(super) fn continues(s: &mut Session, prompt: &str, logs: &mut dyn Transcripts) -> bool {
    let Some(stop_at) = last_stop(s) else {
        return false;
    };
    let Some(path) = s.log.clone() else {
        return false;
    };
    if !blocked(s, stop_at, prompt, &path, logs) {
        return false;
    }
    match s.turn.as_mut() {
        Some(turn) => turn.went_on(),
        None => s.turn = s.went_out.continuation().map(OpenTurn::new),
    }
    true
}

/// Whether `prompt` is the reason a `Stop` hook of session `s` gave when it blocked a stop at
/// or after `stop_at`: Copilot logs the hook's answer (`hook.end`) before it submits the
/// reason as a prompt.
pub(super) fn blocked(
    s: &Session,
    stop_at: u64,
    prompt: &str,
    path: &str,
    logs: &mut dyn Transcripts,
) -> bool {
    unread_events(s, path, logs).into_iter().any(|e| {
        e.kind == "hook.end"
            && e.data["hookType"] == "agentStop"
            && e.data["output"]["decision"] == "block"
            && e.data["output"]["reason"].as_str() == Some(prompt)
            && e.timestamp
                .as_deref()
                .and_then(rfc3339_ms)
                .is_some_and(|at| at >= stop_at)
    })
}
