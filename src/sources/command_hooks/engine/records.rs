//! Small constructors of the records every agent's adapter emits.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::model_call::{error_text, ModelCall};
use crate::protocol::{Call, Called, Event, Json, ParentRef, Record, SessionInfo};

pub(in crate::sources::command_hooks) fn record(
    session: &str,
    event: Event<'static>,
) -> Record<'static> {
    Record {
        session: Cow::Owned(session.to_string()),
        event,
    }
}

pub(in crate::sources::command_hooks) fn raw(
    value: &Option<Box<RawValue>>,
) -> Option<Json<'static>> {
    value.as_ref().map(|v| Json(Cow::Owned(v.clone())))
}

/// A prompt, at `at_ms`: its turn begins.
pub(in crate::sources::command_hooks) fn prompted(
    session: &str,
    at_ms: u64,
    text: String,
) -> Record<'static> {
    record(
        session,
        Event::Prompted {
            at_ms,
            text: Cow::Owned(text),
        },
    )
}

/// A turn that ended as the agent ends one when it is done (`end_turn`), at `at_ms`: what an
/// import makes of a turn its files show whole.
pub(in crate::sources::command_hooks) fn turn_ended(session: &str, at_ms: u64) -> Record<'static> {
    record(
        session,
        Event::TurnEnded {
            at_ms,
            reason: Some(Cow::Borrowed("end_turn")),
        },
    )
}

/// The `session` record a session's first payload opens it with.
pub(in crate::sources::command_hooks) fn session_opened(
    id: &str,
    at_ms: u64,
    agent: &'static str,
    cwd: Option<&str>,
) -> Record<'static> {
    record(
        id,
        Event::Session(SessionInfo {
            at_ms,
            agent: Some(Cow::Borrowed(agent)),
            model: None,
            workspace: cwd.map(|c| Cow::Owned(c.to_string())),
            parent: None,
        }),
    )
}

/// The `session` record that opens a sub-agent's session `id` under call `call` of session
/// `parent` (its spans go in that call's trace, under it); with no call known, a session of
/// its own.
pub(in crate::sources::command_hooks) fn session_opened_under(
    id: &str,
    at_ms: u64,
    agent: &'static str,
    cwd: Option<&str>,
    under: Option<(&str, &str)>,
) -> Record<'static> {
    let sub_agent = SubAgent {
        name: agent.to_string(),
        model: None,
        workspace: cwd.map(str::to_string),
        under,
    };
    sub_agent.opened(id, at_ms)
}

/// A sub-agent's session as it opens, in every agent's words alike: its agent's name for it,
/// its model where that is said, where it runs, and the call of its caller's session it runs
/// under (its spans go in that call's trace, under it; none known: a session of its own).
pub(in crate::sources::command_hooks) struct SubAgent<'a> {
    pub name: String,
    pub model: Option<String>,
    pub workspace: Option<String>,
    /// The caller's session, and the call.
    pub under: Option<(&'a str, &'a str)>,
}

impl SubAgent<'_> {
    /// The `session` record that opens sub-agent session `id` at `at_ms`.
    pub fn opened(self, id: &str, at_ms: u64) -> Record<'static> {
        let parent = self.under.map(|(session, call)| ParentRef {
            session: Cow::Owned(session.to_string()),
            call: Cow::Owned(call.to_string()),
        });
        record(
            id,
            Event::Session(SessionInfo {
                at_ms,
                agent: Some(Cow::Owned(self.name)),
                model: self.model.map(Cow::Owned),
                workspace: self.workspace.map(Cow::Owned),
                parent,
            }),
        )
    }

    /// Opens sub-agent session `id` at `at_ms`, and its turn with `prompt` (what it was asked).
    pub fn open(self, id: &str, at_ms: u64, prompt: String, out: &mut Vec<Record<'static>>) {
        out.push(self.opened(id, at_ms));
        out.push(prompted(id, at_ms, prompt));
    }
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::sources::command_hooks) enum Outcome {
    /// It ran (whatever its output says).
    Ran,
    /// It ran and failed, or was cut short (the user interrupted it, the agent is gone).
    Failed,
    /// It never ran: another hook, or the user, refused it.
    Refused,
}

impl Outcome {
    /// From what an agent says of a call: refused, else failed, else ran.
    pub(in crate::sources::command_hooks) fn of(refused: bool, failed: bool) -> Outcome {
        match (refused, failed) {
            (true, _) => Outcome::Refused,
            (false, true) => Outcome::Failed,
            (false, false) => Outcome::Ran,
        }
    }
}

/// A tool call's end, at `at_ms`: never before it started, whatever the agent's clock says.
/// Every agent's adapter ends its calls here, pending ones at a turn's end included.
pub(in crate::sources::command_hooks) struct Ended<'a> {
    pub id: String,
    pub name: String,
    pub arguments: Option<Json<'static>>,
    pub output: Option<Json<'static>>,
    pub started_ms: u64,
    pub session: &'a str,
}

impl Ended<'_> {
    pub(in crate::sources::command_hooks) fn record(
        self,
        at_ms: u64,
        outcome: Outcome,
    ) -> Record<'static> {
        record(
            self.session,
            Event::Called(Called {
                call: Call {
                    id: Cow::Owned(self.id),
                    name: Cow::Owned(self.name),
                    arguments: self.arguments,
                    within: None,
                },
                output: self.output,
                started_ms: self.started_ms,
                finished_ms: at_ms.max(self.started_ms),
                refused: outcome == Outcome::Refused,
                failed: outcome == Outcome::Failed,
            }),
        )
    }
}

/// A model call whose answer never came (the stream broke, the agent was stopped): still a
/// model call, with an error and no usage, rather than lost.
#[derive(Debug)]
pub(in crate::sources::command_hooks) struct Unanswered {
    pub id: String,
    pub model: String,
    pub provider: Cow<'static, str>,
    pub max_tokens: Option<u64>,
    pub started_ms: u64,
    pub first_token_ms: Option<u64>,
}

impl Unanswered {
    /// The call's record, ended at `at_ms` (never before it started) with `why` as its error.
    pub(in crate::sources::command_hooks) fn record(
        self,
        session: &str,
        at_ms: u64,
        why: &str,
    ) -> Record<'static> {
        let call = ModelCall {
            id: Some(self.id),
            model: self.model,
            provider: Some(self.provider),
            max_tokens: self.max_tokens,
            started_ms: self.started_ms,
            finished_ms: at_ms,
            first_token_ms: self.first_token_ms,
            error: error_text(why),
            ..ModelCall::default()
        };
        record(session, Event::CallSent(call.call_sent()))
    }
}

/// An RFC 3339 time (`2026-11-29T21:09:49.888Z`), as the agents write them, in Unix
/// milliseconds.
pub(in crate::sources::command_hooks) fn rfc3339_ms(s: &str) -> Option<u64> {
    let t = humantime::parse_rfc3339_weak(s).ok()?;
    u64::try_from(t.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis()).ok()
}
