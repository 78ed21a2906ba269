//! Factory Droid's command-hook payloads to protocol records.
//!
//! Droid runs Claude Code's hooks in Claude Code's shape (`UserPromptSubmit`, `PreToolUse`,
//! `PostToolUse`, `Stop` with `stop_hook_active`, `SessionEnd`; its shell is `Execute`), so
//! the turn, the calls and the held stop go through Claude Code's adapter. What is Droid's
//! own (0.215.0, seen running it):
//! - no `tool_use_id`: a `PreToolUse` takes the id of the model's next `tool_use` of that
//!   tool in the session file, and a `PostToolUse` ends the open call of that tool with the
//!   same input (the oldest, when several are alike);
//! - `droid exec` sends no `UserPromptSubmit`: a prompt the session file shows and no hook
//!   announced opens the turn, at the time Droid wrote it. A user message that does not
//!   follow its own `context-` line is not a prompt: it is a blocking stop hook's reason,
//!   and the turn goes on;
//! - the session file (`~/.factory/sessions/<project>/<session>.jsonl`) has the model's
//!   messages, one per model call, but no usage: Droid keeps only the session's running
//!   totals, in the `.settings.json` beside it, rewritten before every hook. A call's usage
//!   is what the totals gained ([`usage`]): Droid writes an answer first and its usage later
//!   (the last answer's only after the stop hooks), so a call waits for its usage, until
//!   the session ends; the session's sum is exact whatever the timing;
//! - a sub-droid (`Task`) runs as a session of its own; it is not nested yet.
//!
//! Pure, like every adapter: the files are read through [`Transcripts`].

mod contract;
pub(crate) use contract::adapter;
pub use contract::{HISTORY, SPEC};
mod payload;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod script;
mod transcript;
mod usage;

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

pub use payload::{Own, Payload};
use transcript::{Answer, Line, Totals};
use usage::Ledger;

use super::claude_code;
use super::engine::model_call::{self, ModelCall};
use super::engine::tail::Tail;
use super::engine::AgentRules;
use crate::sources::command_hooks::engine::files::{NoTranscripts, Transcripts};
use crate::sources::command_hooks::engine::records::record;
use crate::protocol::{CallSent, Event, Record, Usage};

/// The agent name on Factory Droid's turns.
pub const AGENT: &str = "droid";

/// Droid's events that make a trace (it has no other hook events but `Notification` and
/// `PreCompact`).
pub const HOOK_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SubagentStop",
    "SessionEnd",
];
/// Prompt ids remembered per session, so a prompt is never opened twice.
const PROMPTS_KEPT: usize = 64;

/// What Droid's adapter keeps of a session beside Claude Code's.
#[derive(Debug, Default)]
struct Reading {
    tail: Tail,
    /// When the session file last said something: the next model call began then.
    last_at_ms: Option<u64>,
    /// Model calls found, waiting for the usage their totals will show.
    ledger: Ledger,
    /// `tool_use` ids the model asked for, not yet taken by a `PreToolUse`: `(id, tool)`.
    asked: VecDeque<(String, String)>,
    /// Calls started and not ended: `(id, tool, input)`.
    open: Vec<(String, String, String)>,
    /// Prompts opened, by the id of their line, newest last.
    prompts: VecDeque<String>,
    /// The newest answer's text: the reply a `Stop` ends the turn with.
    reply: String,
    /// Ids made up for calls the session file did not name.
    made_up: u64,
    /// Lines written before this (ms) are an earlier run's (a session Droid resumed under the
    /// same id, met anew by this daemon): not read again. Set by the session's first hook.
    since: Option<u64>,
    /// Models of the user's own (`custom:…`), as the user's settings name them upstream.
    custom: HashMap<String, (String, Option<&'static str>)>,
}

impl Reading {
    /// Model calls wait for their usage.
    fn waits(&self) -> bool {
        !self.ledger.is_empty()
    }
}

#[derive(Debug)]
pub struct Adapter {
    claude_code: claude_code::Adapter,
    readings: HashMap<String, Reading>,
}

impl Adapter {
    pub fn new(grace_ms: u64) -> Self {
        Adapter {
            claude_code: claude_code::Adapter::named(grace_ms, AGENT),
            readings: HashMap::new(),
        }
    }

    /// Reads what session `sid`'s file at `path` gained: prompts no hook announced open
    /// turns, and its model calls go out with the usage their totals show (`last`: the
    /// session ends, so none waits any longer).
    #[allow(clippy::too_many_arguments)]
    fn read(
        &mut self,
        sid: &str,
        at_ms: u64,
        hook: &claude_code::Payload,
        path: &str,
        last: bool,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let r = self.readings.entry(sid.to_string()).or_default();
        let mut lines = Vec::new();
        r.tail.read(path, files, |l| lines.extend(transcript::line(l)));
        let totals = transcript::totals(&files.read_from(&transcript::settings_path(path), 0));
        for line in lines {
            let r = self.readings.entry(sid.to_string()).or_default();
            if line.at_ms() < r.since.unwrap_or(0) {
                continue;
            }
            match line {
                Line::Prompt { id, text, at_ms: written } => {
                    if r.prompts.iter().any(|p| *p == id) {
                        // Announced by its hook: the calls before it are the turn's before.
                        self.send(sid, totals, true, out);
                        continue;
                    }
                    remember(&mut r.prompts, &id);
                    r.last_at_ms = Some(written);
                    // The calls before a prompt are the turn's before it.
                    self.send(sid, totals, true, out);
                    let prompt = claude_code::Payload {
                        session_id: sid.to_string(),
                        hook_event_name: "UserPromptSubmit".into(),
                        cwd: hook.cwd.clone(),
                        prompt: Some(text),
                        ..claude_code::Payload::default()
                    };
                    let when = written.min(at_ms);
                    AgentRules::take(&mut self.claude_code, prompt, when, &mut NoTranscripts, out);
                }
                Line::Answer(mut a) => {
                    if a.model.starts_with("custom:") {
                        let (model, provider) = custom(r, &a.model, path, files);
                        (a.model, a.provider) = (model, provider);
                    }
                    let began = r.last_at_ms.unwrap_or(a.at_ms).min(a.at_ms);
                    r.last_at_ms = Some(a.at_ms);
                    r.asked.extend(a.calls.iter().cloned());
                    r.reply.clone_from(&a.text);
                    r.ledger.wait(a, began);
                }
                Line::Other { at_ms: written } => r.last_at_ms = Some(written),
            }
        }
        self.send(sid, totals, last, out);
    }

    /// Sends session `sid`'s calls whose usage its settings show now (`flush`: all of them).
    fn settle(&mut self, sid: &str, files: &mut dyn Transcripts, flush: bool, out: &mut Vec<Record<'static>>) {
        let path = self.readings.get(sid).map(|r| r.tail.cursor.path.clone());
        let totals = path
            .filter(|p| !p.is_empty())
            .and_then(|p| transcript::totals(&files.read_from(&transcript::settings_path(&p), 0)));
        self.send(sid, totals, flush, out);
    }

    /// Sends session `sid`'s calls whose usage `totals` shows (`flush`: all of them).
    fn send(
        &mut self,
        sid: &str,
        totals: Option<Totals>,
        flush: bool,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(r) = self.readings.get_mut(sid) else {
            return;
        };
        let locked = totals.and_then(|t| t.provider);
        for (answer, began, usage) in r.ledger.settle(totals, flush) {
            let provider = answer.provider.or(locked);
            out.push(record(sid, Event::CallSent(call_sent(answer, began, usage, provider))));
        }
    }
}

/// The model of the user's own Droid names `id`, and its provider, from the user's settings
/// beside the session's folder (read once a session); `id` itself when they do not say.
fn custom(
    r: &mut Reading,
    id: &str,
    path: &str,
    files: &mut dyn Transcripts,
) -> (String, Option<&'static str>) {
    if let Some(known) = r.custom.get(id) {
        return known.clone();
    }
    let settings = transcript::user_settings_path(path)
        .map(|p| files.read_from(&p, 0))
        .unwrap_or_default();
    let found = transcript::custom_model(&settings, id).unwrap_or((id.to_string(), None));
    r.custom.insert(id.to_string(), found.clone());
    found
}

/// Keeps prompt `id`, forgetting the oldest beyond [`PROMPTS_KEPT`].
fn remember(prompts: &mut VecDeque<String>, id: &str) {
    prompts.push_back(id.to_string());
    if prompts.len() > PROMPTS_KEPT {
        prompts.pop_front();
    }
}

/// An id for a call the session file did not name (its file unread, or unreadable).
fn made_up(r: &mut Reading) -> String {
    r.made_up += 1;
    format!("droid-call-{}", r.made_up)
}

/// A call's input as JSON text, to tell alike calls apart.
fn input(hook: &claude_code::Payload) -> String {
    hook.tool_input.as_ref().map(|i| i.get().to_string()).unwrap_or_default()
}

/// One model call, as the session file and the totals tell it.
fn call_sent(a: Answer, began: u64, usage: Usage, provider: Option<&'static str>) -> CallSent<'static> {
    ModelCall {
        id: Some(a.id),
        model: a.model,
        provider: provider.map(Cow::Borrowed),
        started_ms: began,
        finished_ms: a.at_ms,
        usage,
        answer: Some(model_call::Answer {
            id: a.response_id,
            ..model_call::Answer::default()
        }),
        ..ModelCall::default()
    }
    .call_sent()
}

#[cfg(test)]
mod tests;
