//! Small constructors of the records every agent's adapter emits.

use std::borrow::Cow;

use serde_json::value::RawValue;

use crate::protocol::{
    Call, CallSent, Called, Event, Json, ParentRef, Record, Request, SessionInfo, Usage,
};

/// Token counts as an agent reports them when its input counts its cache reads too (Codex,
/// Gemini and Copilot do, as OpenAI's and Gemini's APIs do). The protocol keeps cache reads
/// apart from the input, as Anthropic's API does; a cached count above the input is all of it.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct CachedWithin {
    pub input: u64,
    pub cached: u64,
    pub output: u64,
    pub cache_write: u64,
    pub reasoning: Option<u64>,
}

impl CachedWithin {
    pub fn usage(self) -> Usage {
        let cached = self.cached.min(self.input);
        Usage {
            input_tokens: self.input - cached,
            output_tokens: self.output,
            cache_read_tokens: cached,
            cache_write_tokens: self.cache_write,
            reasoning_tokens: self.reasoning,
            ..Usage::default()
        }
    }
}

pub(super) fn record(session: &str, event: Event<'static>) -> Record<'static> {
    Record {
        session: Cow::Owned(session.to_string()),
        event,
    }
}

pub(super) fn raw(value: &Option<Box<RawValue>>) -> Option<Json<'static>> {
    value.as_ref().map(|v| Json(Cow::Owned(v.clone())))
}

/// The `session` record a session's first payload opens it with.
pub(super) fn session_opened(
    id: &str,
    at_ms: u64,
    agent: &'static str,
    cwd: Option<&str>,
) -> Record<'static> {
    opened(id, at_ms, agent, cwd, None)
}

/// The `session` record that opens a sub-agent's session `id` under call `call` of session
/// `parent`: its spans go in that call's trace, under it.
pub(super) fn session_opened_under(
    id: &str,
    at_ms: u64,
    agent: &'static str,
    cwd: Option<&str>,
    (parent, call): (&str, &str),
) -> Record<'static> {
    let parent = ParentRef {
        session: Cow::Owned(parent.to_string()),
        call: Cow::Owned(call.to_string()),
    };
    opened(id, at_ms, agent, cwd, Some(parent))
}

fn opened(
    id: &str,
    at_ms: u64,
    agent: &'static str,
    cwd: Option<&str>,
    parent: Option<ParentRef<'static>>,
) -> Record<'static> {
    record(
        id,
        Event::Session(SessionInfo {
            at_ms,
            agent: Some(Cow::Borrowed(agent)),
            model: None,
            workspace: cwd.map(|c| Cow::Owned(c.to_string())),
            parent,
        }),
    )
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// It ran (whatever its output says).
    Ran,
    /// It ran and failed, or was cut short (the user interrupted it, the agent is gone).
    Failed,
    /// It never ran: another hook, or the user, refused it.
    Refused,
}

impl Outcome {
    /// From what an agent says of a call: refused, else failed, else ran.
    pub(super) fn of(refused: bool, failed: bool) -> Outcome {
        match (refused, failed) {
            (true, _) => Outcome::Refused,
            (false, true) => Outcome::Failed,
            (false, false) => Outcome::Ran,
        }
    }
}

/// A tool call's end, at `at_ms`: never before it started, whatever the agent's clock says.
/// Every agent's adapter ends its calls here, pending ones at a turn's end included.
pub(super) struct Ended<'a> {
    pub id: String,
    pub name: String,
    pub arguments: Option<Json<'static>>,
    pub output: Option<Json<'static>>,
    pub started_ms: u64,
    pub session: &'a str,
}

impl Ended<'_> {
    pub(super) fn record(self, at_ms: u64, outcome: Outcome) -> Record<'static> {
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
pub(super) struct Unanswered {
    pub id: String,
    pub model: String,
    pub provider: Cow<'static, str>,
    pub max_tokens: Option<u64>,
    pub started_ms: u64,
    pub first_token_ms: Option<u64>,
}

impl Unanswered {
    /// The call's record, ended at `at_ms` (never before it started) with `why` as its error.
    pub(super) fn record(self, session: &str, at_ms: u64, why: &str) -> Record<'static> {
        record(
            session,
            Event::CallSent(CallSent {
                id: Some(Cow::Owned(self.id)),
                request: Request {
                    model: Cow::Owned(self.model),
                    provider: Some(self.provider),
                    max_tokens: self.max_tokens,
                    messages: None,
                    system: None,
                },
                response: None,
                usage: Usage::default(),
                started_ms: self.started_ms,
                finished_ms: at_ms.max(self.started_ms),
                first_token_ms: self.first_token_ms.map(|t| t.max(self.started_ms)),
                error: Json::of(why).ok(),
            }),
        )
    }
}

/// An RFC 3339 time (`2026-11-29T21:09:49.888Z`), as the agents write them, in Unix
/// milliseconds.
pub(super) fn rfc3339_ms(s: &str) -> Option<u64> {
    let t = humantime::parse_rfc3339_weak(s).ok()?;
    u64::try_from(t.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis()).ok()
}

#[cfg(test)]
mod tests {
    use super::CachedWithin;

    #[test]
    fn cache_reads_counted_within_the_input_are_taken_out_of_it() {
        let u = CachedWithin {
            input: 1_001,
            cached: 101,
            output: 21,
            cache_write: 3,
            reasoning: Some(7),
        }
        .usage();
        let got = (u.input_tokens, u.cache_read_tokens, u.output_tokens);
        assert_eq!(got, (900, 101, 21));
        assert_eq!((u.cache_write_tokens, u.reasoning_tokens), (3, Some(7)));
        // A count that says more was cached than was sent is read as all of it.
        let u = CachedWithin {
            input: 10,
            cached: 50,
            ..Default::default()
        }
        .usage();
        assert_eq!((u.input_tokens, u.cache_read_tokens), (0, 10));
    }
}
