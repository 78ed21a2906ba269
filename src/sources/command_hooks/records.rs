//! Small constructors of the records every agent's adapter emits.

use std::borrow::Cow;

use serde_json::value::RawValue;

use crate::protocol::{Event, Json, Record, SessionInfo};

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
