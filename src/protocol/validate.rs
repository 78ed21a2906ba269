//! The checks every record passes before it is assembled, whichever source it came from: a
//! protocol line, a command-hook payload turned into records, or an in-process host's event.
//!
//! The decoder checks shape (is `at_ms` there, is it a number); this checks values, so that a
//! record built in code is held to the same rules as one read from a line.

use thiserror::Error;

use super::{Call, Event, Json, Record};

/// Times must fall before this instant (2100-01-01T00:00:00Z, in Unix milliseconds). A larger
/// value is almost always micro- or nanoseconds sent where milliseconds were meant, and past
/// about the year 2554 milliseconds no longer fit in a 64-bit nanosecond timestamp.
pub const MAX_TIME_MS: u64 = 4_102_444_800_000;

/// JSON values inside a record (arguments, outputs, messages) may nest this deep, no deeper:
/// the same limit serde_json puts on a line's own structure.
pub const MAX_JSON_DEPTH: usize = 128;

/// A value no record may carry, with the field that carries it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("field `{field}`: {reason}")]
pub struct Invalid {
    pub field: &'static str,
    pub reason: String,
}

fn invalid(field: &'static str, reason: impl Into<String>) -> Invalid {
    Invalid {
        field,
        reason: reason.into(),
    }
}

/// Checks `record`; the first field at fault is named.
pub fn validate(record: &Record<'_>) -> Result<(), Invalid> {
    non_empty(&record.session, "session")?;
    match &record.event {
        Event::Session(s) => time(s.at_ms, "at_ms"),
        Event::Prompted { at_ms, .. }
        | Event::Stopping { at_ms, .. }
        | Event::TurnEnded { at_ms, .. }
        | Event::Closed { at_ms } => time(*at_ms, "at_ms"),
        Event::Calling { at_ms, call } => {
            time(*at_ms, "at_ms")?;
            check_call(call)
        }
        Event::Called(c) => {
            check_call(&c.call)?;
            shallow(c.output.as_ref(), "output")?;
            time(c.started_ms, "started_ms")?;
            time(c.finished_ms, "finished_ms")
        }
        Event::CallSent(c) => {
            shallow(c.request.messages.as_ref(), "request.messages")?;
            shallow(c.request.system.as_ref(), "request.system")?;
            if let Some(r) = &c.response {
                shallow(r.content.as_ref(), "response.content")?;
            }
            time(c.started_ms, "started_ms")?;
            time(c.finished_ms, "finished_ms")?;
            if let Some(t) = c.first_token_ms {
                time(t, "first_token_ms")?;
            }
            shallow(c.error.as_ref(), "error")
        }
    }
}

fn check_call(call: &Call<'_>) -> Result<(), Invalid> {
    non_empty(&call.id, "call.id")?;
    non_empty(&call.name, "call.name")?;
    shallow(call.arguments.as_ref(), "call.arguments")
}

fn time(v: u64, field: &'static str) -> Result<(), Invalid> {
    if v >= MAX_TIME_MS {
        return Err(invalid(
            field,
            format!(
                "{v} is after the year 2100; times are Unix milliseconds (was this micro- or nanoseconds?)"
            ),
        ));
    }
    Ok(())
}

fn non_empty(s: &str, field: &'static str) -> Result<(), Invalid> {
    if s.is_empty() {
        return Err(invalid(field, "must not be empty"));
    }
    Ok(())
}

fn shallow(json: Option<&Json<'_>>, field: &'static str) -> Result<(), Invalid> {
    match json {
        Some(j) if nests_deeper_than(j.get(), MAX_JSON_DEPTH) => Err(invalid(
            field,
            format!("nested deeper than {MAX_JSON_DEPTH} levels"),
        )),
        _ => Ok(()),
    }
}

/// Whether `text`, one JSON value, nests arrays and objects deeper than `max`. A scan, not a
/// parse: a hostile value a million brackets deep must not recurse.
fn nests_deeper_than(text: &str, max: usize) -> bool {
    let bytes = text.as_bytes();
    // Fewer brackets than the limit, strings included, cannot nest deeper than it.
    if memchr::memchr2_iter(b'[', b'{', bytes).nth(max).is_none() {
        return false;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &c in bytes {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::protocol::{CallSent, Called, Request, Usage};

    fn record(event: Event<'static>) -> Record<'static> {
        Record {
            session: Cow::Borrowed("s"),
            event,
        }
    }

    fn call(id: &'static str, name: &'static str) -> Call<'static> {
        Call {
            id: Cow::Borrowed(id),
            name: Cow::Borrowed(name),
            arguments: None,
            within: None,
        }
    }

    /// Records built in code (the command-hook adapter, a Rust host) meet the same checks as
    /// decoded lines: each broken field is named.
    #[test]
    fn records_from_any_source_are_held_to_the_same_rules() {
        let called = |started_ms, finished_ms, call| {
            record(Event::Called(Called {
                call,
                output: None,
                started_ms,
                finished_ms,
                refused: false,
                failed: false,
            }))
        };
        assert_eq!(validate(&called(1, 2, call("c", "run"))), Ok(()));
        let field = |r: &Record<'_>| validate(r).unwrap_err().field;
        assert_eq!(field(&called(1, u64::MAX, call("c", "run"))), "finished_ms");
        assert_eq!(
            field(&called(MAX_TIME_MS, 1, call("c", "run"))),
            "started_ms"
        );
        assert_eq!(field(&called(1, 2, call("", "run"))), "call.id");
        assert_eq!(field(&called(1, 2, call("c", ""))), "call.name");
        let mut empty_session = called(1, 2, call("c", "run"));
        empty_session.session = Cow::Borrowed("");
        assert_eq!(field(&empty_session), "session");
        let deep = Json::parse(&format!("{}{}", "[".repeat(200), "]".repeat(200))).unwrap();
        let sent = record(Event::CallSent(CallSent {
            id: None,
            request: Request {
                model: Cow::Borrowed("m"),
                provider: None,
                max_tokens: None,
                messages: Some(deep),
                system: None,
            },
            response: None,
            usage: Usage::default(),
            started_ms: 1,
            finished_ms: 2,
            first_token_ms: None,
            error: None,
        }));
        assert_eq!(
            validate(&sent).unwrap_err().to_string(),
            "field `request.messages`: nested deeper than 128 levels"
        );
        assert!(validate(&record(Event::Closed { at_ms: MAX_TIME_MS }))
            .unwrap_err()
            .reason
            .contains("after the year 2100"));
    }
}
