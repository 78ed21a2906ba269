//! Decoding (and encoding) one protocol line, with errors that name the field at fault.
//!
//! A line is first read into [`Wire`], a flat struct with every field of every kind as an
//! option, in one pass that borrows strings and raw JSON from the line. The kind then decides
//! which fields are required, and the record goes through [`validate`], the checks every
//! source's records pass. Only a line that fails to parse is parsed a second time, through
//! `serde_path_to_error`, to say which field broke: the happy path pays nothing for that.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use thiserror::Error;

use super::validate::{validate, Invalid};
use super::{
    rb, rb_opt, Call, CallSent, Called, Event, Json, Kind, ParentRef, Record, Request, Response,
    SessionInfo, Usage, PROTOCOL_VERSION,
};
use crate::text::truncate;

/// Kind names quoted in an error are cut to this length: a hostile line must not make its
/// error message huge.
const QUOTED_KIND_MAX: usize = 64;

/// Why a line was skipped. The reader adds the source and line number.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    #[error("line is {len} bytes, over the {max}-byte cap (raise it with --max-line-bytes)")]
    TooLong { len: usize, max: usize },
    #[error("not valid UTF-8 (first bad byte at offset {offset})")]
    NotUtf8 { offset: usize },
    #[error("not a JSON object: {message}")]
    NotJson { message: String },
    #[error("field `{path}`: {message}")]
    BadField { path: String, message: String },
    #[error("missing field `{field}` (required for kind `{kind}`)")]
    MissingField {
        kind: &'static str,
        field: &'static str,
    },
    /// A value no record may carry (see [`validate`]).
    #[error(transparent)]
    Invalid(#[from] Invalid),
    #[error("unknown kind `{0}` (expected one of: session, prompted, calling, called, stopping, call_sent, turn_ended, closed)")]
    UnknownKind(String),
    #[error("protocol version {0} is not supported (this exporter reads version 1)")]
    Version(u64),
}

/// Decodes one line (without its newline). Blank lines are the caller's to skip.
pub fn decode_line(line: &[u8]) -> Result<Record<'_>, DecodeError> {
    let text = std::str::from_utf8(line).map_err(|e| DecodeError::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    let wire: Wire<'_> = match serde_json::from_str(text) {
        Ok(w) => w,
        Err(_) => return Err(explain_json_error(text)),
    };
    wire.into_record()
}

/// Encodes a record as one protocol line, without the trailing newline.
pub fn encode_record(record: &Record<'_>) -> String {
    // Serializing plain strings, integers and raw JSON cannot fail.
    serde_json::to_string(&Wire::from_record(record)).expect("protocol records always serialize")
}

/// Parses a failed line again to find which field broke.
fn explain_json_error(text: &str) -> DecodeError {
    let mut de = serde_json::Deserializer::from_str(text);
    match serde_path_to_error::deserialize::<_, Wire<'_>>(&mut de) {
        Ok(_) => DecodeError::NotJson {
            message: "could not be decoded".into(),
        },
        Err(e) => {
            let path = e.path().to_string();
            let message = without_position(e.into_inner());
            if path == "." || path.is_empty() {
                DecodeError::NotJson { message }
            } else {
                DecodeError::BadField { path, message }
            }
        }
    }
}

/// serde_json says "at line 1 column 7"; within one line only the column is news.
fn without_position(e: serde_json::Error) -> String {
    let column = e.column();
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => format!("{} (column {column})", &text[..i]),
        None => text,
    }
}

fn borrow_raw<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Json<'de>>, D::Error> {
    Option::<&'de RawValue>::deserialize(d).map(|o| o.map(|raw| Json(Cow::Borrowed(raw))))
}

/// Every field of every kind, flat: what a line may carry.
#[derive(Deserialize, Serialize, Default)]
struct Wire<'a> {
    #[serde(default)]
    v: Option<u64>,
    #[serde(borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    session: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    at_ms: Option<u64>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    agent: Option<Cow<'a, str>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    workspace: Option<Cow<'a, str>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    parent: Option<WireParent<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    call: Option<WireCall<'a>>,
    #[serde(
        borrow,
        default,
        deserialize_with = "borrow_raw",
        skip_serializing_if = "Option::is_none"
    )]
    output: Option<Json<'a>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    started_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    finished_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refused: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    failed: Option<bool>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    reply: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    held: Option<u32>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    request: Option<WireRequest<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    response: Option<WireResponse<'a>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    first_token_ms: Option<u64>,
    #[serde(
        borrow,
        default,
        deserialize_with = "borrow_raw",
        skip_serializing_if = "Option::is_none"
    )]
    error: Option<Json<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Serialize)]
struct WireParent<'a> {
    #[serde(borrow)]
    session: Cow<'a, str>,
    #[serde(borrow)]
    call: Cow<'a, str>,
}

#[derive(Deserialize, Serialize)]
struct WireCall<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(
        borrow,
        default,
        deserialize_with = "borrow_raw",
        skip_serializing_if = "Option::is_none"
    )]
    arguments: Option<Json<'a>>,
    #[serde(borrow, default)]
    within: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Serialize)]
struct WireRequest<'a> {
    #[serde(borrow)]
    model: Cow<'a, str>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    provider: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u64>,
    #[serde(
        borrow,
        default,
        deserialize_with = "borrow_raw",
        skip_serializing_if = "Option::is_none"
    )]
    messages: Option<Json<'a>>,
    #[serde(
        borrow,
        default,
        deserialize_with = "borrow_raw",
        skip_serializing_if = "Option::is_none"
    )]
    system: Option<Json<'a>>,
}

#[derive(Deserialize, Serialize, Default)]
struct WireResponse<'a> {
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    stop_reason: Option<Cow<'a, str>>,
    #[serde(
        borrow,
        default,
        deserialize_with = "borrow_raw",
        skip_serializing_if = "Option::is_none"
    )]
    content: Option<Json<'a>>,
}

fn need<T>(v: Option<T>, kind: &'static str, field: &'static str) -> Result<T, DecodeError> {
    v.ok_or(DecodeError::MissingField { kind, field })
}

fn bj<'s, 'a>(c: &'s Option<Json<'a>>) -> Option<Json<'s>> {
    c.as_ref().map(|c| Json(Cow::Borrowed(c.0.as_ref())))
}

impl<'a> WireCall<'a> {
    fn into_call(self) -> Call<'a> {
        Call {
            id: self.id,
            name: self.name,
            arguments: self.arguments,
            within: self.within.filter(|w| !w.is_empty()),
        }
    }

    fn from_call<'s>(c: &'s Call<'_>) -> WireCall<'s> {
        WireCall {
            id: rb(&c.id),
            name: rb(&c.name),
            arguments: bj(&c.arguments),
            within: rb_opt(&c.within),
        }
    }
}

impl<'a> Wire<'a> {
    fn into_record(self) -> Result<Record<'a>, DecodeError> {
        match self.v {
            Some(PROTOCOL_VERSION) => {}
            Some(v) => return Err(DecodeError::Version(v)),
            None => {
                return Err(DecodeError::MissingField {
                    kind: "any",
                    field: "v",
                })
            }
        }
        let kind_text = self.kind.ok_or(DecodeError::MissingField {
            kind: "any",
            field: "kind",
        })?;
        let kind = Kind::parse(&kind_text)
            .ok_or_else(|| DecodeError::UnknownKind(truncate(&kind_text, QUOTED_KIND_MAX)))?;
        let k = kind.as_str();
        let session = need(self.session, k, "session")?;
        let event = match kind {
            Kind::Session => Event::Session(SessionInfo {
                at_ms: need(self.at_ms, k, "at_ms")?,
                agent: self.agent,
                model: self.model,
                workspace: self.workspace,
                parent: self.parent.map(|p| ParentRef {
                    session: p.session,
                    call: p.call,
                }),
            }),
            Kind::Prompted => Event::Prompted {
                at_ms: need(self.at_ms, k, "at_ms")?,
                text: need(self.text, k, "text")?,
            },
            Kind::Calling => Event::Calling {
                at_ms: need(self.at_ms, k, "at_ms")?,
                call: need(self.call, k, "call")?.into_call(),
            },
            Kind::Called => Event::Called(Called {
                call: need(self.call, k, "call")?.into_call(),
                output: self.output,
                started_ms: need(self.started_ms, k, "started_ms")?,
                finished_ms: need(self.finished_ms, k, "finished_ms")?,
                refused: self.refused.unwrap_or(false),
                failed: self.failed.unwrap_or(false),
            }),
            Kind::Stopping => Event::Stopping {
                at_ms: need(self.at_ms, k, "at_ms")?,
                reply: need(self.reply, k, "reply")?,
                held: need(self.held, k, "held")?,
            },
            Kind::CallSent => {
                let request = need(self.request, k, "request")?;
                Event::CallSent(CallSent {
                    id: self.id,
                    request: Request {
                        model: request.model,
                        provider: request.provider,
                        max_tokens: request.max_tokens,
                        messages: request.messages,
                        system: request.system,
                    },
                    response: self.response.map(|r| Response {
                        id: r.id,
                        model: r.model,
                        stop_reason: r.stop_reason,
                        content: r.content,
                    }),
                    usage: self.usage.unwrap_or_default(),
                    started_ms: need(self.started_ms, k, "started_ms")?,
                    finished_ms: need(self.finished_ms, k, "finished_ms")?,
                    first_token_ms: self.first_token_ms,
                    error: self.error,
                })
            }
            Kind::TurnEnded => Event::TurnEnded {
                at_ms: need(self.at_ms, k, "at_ms")?,
                reason: self.reason,
            },
            Kind::Closed => Event::Closed {
                at_ms: need(self.at_ms, k, "at_ms")?,
            },
        };
        let record = Record { session, event };
        validate(&record)?;
        Ok(record)
    }

    fn from_record<'s>(r: &'s Record<'_>) -> Wire<'s> {
        let mut w = Wire {
            v: Some(PROTOCOL_VERSION),
            kind: Some(Cow::Borrowed(r.event.kind().as_str())),
            session: Some(rb(&r.session)),
            ..Wire::default()
        };
        match &r.event {
            Event::Session(s) => {
                w.at_ms = Some(s.at_ms);
                w.agent = rb_opt(&s.agent);
                w.model = rb_opt(&s.model);
                w.workspace = rb_opt(&s.workspace);
                w.parent = s.parent.as_ref().map(|p| WireParent {
                    session: rb(&p.session),
                    call: rb(&p.call),
                });
            }
            Event::Prompted { at_ms, text } => {
                w.at_ms = Some(*at_ms);
                w.text = Some(rb(text));
            }
            Event::Calling { at_ms, call } => {
                w.at_ms = Some(*at_ms);
                w.call = Some(WireCall::from_call(call));
            }
            Event::Called(c) => {
                w.call = Some(WireCall::from_call(&c.call));
                w.output = bj(&c.output);
                w.started_ms = Some(c.started_ms);
                w.finished_ms = Some(c.finished_ms);
                w.refused = c.refused.then_some(true);
                w.failed = c.failed.then_some(true);
            }
            Event::Stopping { at_ms, reply, held } => {
                w.at_ms = Some(*at_ms);
                w.reply = Some(rb(reply));
                w.held = Some(*held);
            }
            Event::CallSent(c) => {
                w.id = rb_opt(&c.id);
                w.request = Some(WireRequest {
                    model: rb(&c.request.model),
                    provider: rb_opt(&c.request.provider),
                    max_tokens: c.request.max_tokens,
                    messages: bj(&c.request.messages),
                    system: bj(&c.request.system),
                });
                w.response = c.response.as_ref().map(|r| WireResponse {
                    id: rb_opt(&r.id),
                    model: rb_opt(&r.model),
                    stop_reason: rb_opt(&r.stop_reason),
                    content: bj(&r.content),
                });
                w.usage = Some(c.usage);
                w.started_ms = Some(c.started_ms);
                w.finished_ms = Some(c.finished_ms);
                w.first_token_ms = c.first_token_ms;
                w.error = bj(&c.error);
            }
            Event::TurnEnded { at_ms, reason } => {
                w.at_ms = Some(*at_ms);
                w.reason = rb_opt(reason);
            }
            Event::Closed { at_ms } => w.at_ms = Some(*at_ms),
        }
        w
    }
}
