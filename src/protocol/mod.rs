//! Protocol: the records every source produces and the assembly consumes (the host-to-exporter
//! wire protocol, version 1: one JSON object per line), how a line is decoded, and the checks
//! every record passes whichever source it came from ([`validate`]).
//!
//! `docs/protocol.md` is the human contract; this file is its one Rust copy. Fields may be added,
//! never renamed. The types borrow from the line they were decoded from (`Cow`), so the hot path
//! copies nothing it does not keep; `into_owned` makes a record that can cross a channel.
//!
//! `arguments`, `output`, `messages`, `content` and `error` are kept as raw JSON text
//! ([`RawValue`]): the exporter only ever truncates and scrubs them as text, so building a
//! `serde_json::Value` tree for each would be wasted work.

pub mod decode;
mod lines;
pub mod shared;
pub mod validate;

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;
use serde_json::value::RawValue;

pub use decode::{decode_line, encode_record, DecodeError};
pub use lines::LineChunk;
pub use validate::{validate, Invalid, MAX_JSON_DEPTH, MAX_TIME_MS};

/// The protocol version this crate reads and writes (`"v": 1`).
pub const PROTOCOL_VERSION: u64 = 1;

/// A JSON value kept as its text (borrowed from the line, or owned).
#[derive(Debug, Clone)]
pub struct Json<'a>(pub Cow<'a, RawValue>);

impl Json<'_> {
    /// The JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    pub fn into_owned(self) -> Json<'static> {
        Json(Cow::Owned(self.0.into_owned()))
    }

    /// Owned JSON from text, checked to be one valid JSON value.
    pub fn parse(text: &str) -> Result<Json<'static>, serde_json::Error> {
        RawValue::from_string(text.to_string()).map(|raw| Json(Cow::Owned(raw)))
    }

    /// Owned JSON from any serializable value.
    pub fn of<T: Serialize + ?Sized>(value: &T) -> Result<Json<'static>, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(|raw| Json(Cow::Owned(raw)))
    }
}

impl PartialEq for Json<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Serialize for Json<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// One line of the protocol: which session it belongs to and what happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Record<'a> {
    pub session: Cow<'a, str>,
    pub event: Event<'a>,
}

/// What happened, one variant per `kind`.
#[derive(Debug, Clone, PartialEq)]
pub enum Event<'a> {
    /// `session`: metadata about the session, first line of a session.
    Session(SessionInfo<'a>),
    /// `prompted`: albedo's `Prompted(text)`, a turn begins with a user message.
    Prompted { at_ms: u64, text: Cow<'a, str> },
    /// `calling`: albedo's `Calling(call)`, a tool call is about to run.
    Calling { at_ms: u64, call: Call<'a> },
    /// `called`: albedo's `Called(call, output, started_ms, finished_ms)`.
    Called(Called<'a>),
    /// `stopping`: albedo's `Stopping(reply, held)`.
    Stopping {
        at_ms: u64,
        reply: Cow<'a, str>,
        held: u32,
    },
    /// `call_sent`: observe's `CallSent`, one model API call.
    CallSent(CallSent<'a>),
    /// `turn_ended`: observe's `TurnEnded`.
    TurnEnded {
        at_ms: u64,
        reason: Option<Cow<'a, str>>,
    },
    /// `closed`: the extension's `close()`; the session is over.
    Closed { at_ms: u64 },
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionInfo<'a> {
    pub at_ms: u64,
    pub agent: Option<Cow<'a, str>>,
    pub model: Option<Cow<'a, str>>,
    pub workspace: Option<Cow<'a, str>>,
    /// Set for a child session started by `agents.spawn`.
    pub parent: Option<ParentRef<'a>>,
}

/// The session and the `agents.spawn` call that started a child session.
#[derive(Debug, Clone, PartialEq)]
pub struct ParentRef<'a> {
    pub session: Cow<'a, str>,
    pub call: Cow<'a, str>,
}

/// A tool call: a model tool call, or a call made inside a cell (then `within` is set).
#[derive(Debug, Clone, PartialEq)]
pub struct Call<'a> {
    pub id: Cow<'a, str>,
    pub name: Cow<'a, str>,
    pub arguments: Option<Json<'a>>,
    /// The `id` of the tool call whose cell made this call.
    pub within: Option<Cow<'a, str>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Called<'a> {
    pub call: Call<'a>,
    pub output: Option<Json<'a>>,
    pub started_ms: u64,
    pub finished_ms: u64,
    /// The call was refused (blocked) by a hook; `output` is the refusal.
    pub refused: bool,
    /// The call ran and failed (a tool error); `output` says how.
    pub failed: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CallSent<'a> {
    pub id: Option<Cow<'a, str>>,
    pub request: Request<'a>,
    pub response: Option<Response<'a>>,
    pub usage: Usage,
    pub started_ms: u64,
    pub finished_ms: u64,
    pub first_token_ms: Option<u64>,
    pub error: Option<Json<'a>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Request<'a> {
    pub model: Cow<'a, str>,
    pub provider: Option<Cow<'a, str>>,
    pub max_tokens: Option<u64>,
    /// The conversation sent, in the provider's shape (Anthropic's or OpenAI's `messages`).
    pub messages: Option<Json<'a>>,
    /// System instructions sent apart from the messages (Anthropic's `system`): a string or
    /// a list of text blocks.
    pub system: Option<Json<'a>>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Response<'a> {
    pub id: Option<Cow<'a, str>>,
    pub model: Option<Cow<'a, str>>,
    pub stop_reason: Option<Cow<'a, str>>,
    pub content: Option<Json<'a>>,
}

/// Token usage as the host reports it: `input_tokens` excludes cached tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Of `cache_write_tokens`, those written to the one-hour cache (Anthropic's
    /// `cache_creation.ephemeral_1h_input_tokens`), dearer than the five-minute rest.
    /// 32 bits, as `web_searches`: far more than any call's, and the `call_sent` event stays
    /// within a few bytes of its others.
    #[serde(default, skip_serializing_if = "is_zero32")]
    pub cache_write_1h_tokens: u32,
    /// Web searches the provider ran for the call (Anthropic's
    /// `server_tool_use.web_search_requests`), priced per search.
    #[serde(default, skip_serializing_if = "is_zero32")]
    pub web_searches: u32,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero32(n: &u32) -> bool {
    *n == 0
}

impl Usage {
    /// Input tokens as the GenAI semantic conventions count them: cache reads and writes included.
    pub fn total_input(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
    }
}

/// The `kind` of a record, as the wire names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Session,
    Prompted,
    Calling,
    Called,
    Stopping,
    CallSent,
    TurnEnded,
    Closed,
}

impl Kind {
    /// Every kind, in the order `docs/protocol.md` lists them.
    pub const ALL: [Kind; 8] = [
        Kind::Session,
        Kind::Prompted,
        Kind::Calling,
        Kind::Called,
        Kind::Stopping,
        Kind::CallSent,
        Kind::TurnEnded,
        Kind::Closed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Session => "session",
            Kind::Prompted => "prompted",
            Kind::Calling => "calling",
            Kind::Called => "called",
            Kind::Stopping => "stopping",
            Kind::CallSent => "call_sent",
            Kind::TurnEnded => "turn_ended",
            Kind::Closed => "closed",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Event<'_> {
    /// The kind of this event.
    pub fn kind(&self) -> Kind {
        match self {
            Event::Session(_) => Kind::Session,
            Event::Prompted { .. } => Kind::Prompted,
            Event::Calling { .. } => Kind::Calling,
            Event::Called(_) => Kind::Called,
            Event::Stopping { .. } => Kind::Stopping,
            Event::CallSent(_) => Kind::CallSent,
            Event::TurnEnded { .. } => Kind::TurnEnded,
            Event::Closed { .. } => Kind::Closed,
        }
    }
}

fn owned(s: Cow<'_, str>) -> Cow<'static, str> {
    Cow::Owned(s.into_owned())
}

fn owned_opt(s: Option<Cow<'_, str>>) -> Option<Cow<'static, str>> {
    s.map(owned)
}

fn owned_json(j: Option<Json<'_>>) -> Option<Json<'static>> {
    j.map(Json::into_owned)
}

impl Call<'_> {
    pub fn into_owned(self) -> Call<'static> {
        Call {
            id: owned(self.id),
            name: owned(self.name),
            arguments: owned_json(self.arguments),
            within: owned_opt(self.within),
        }
    }
}

impl Record<'_> {
    /// A copy that borrows nothing, to send across threads.
    pub fn into_owned(self) -> Record<'static> {
        let event = match self.event {
            Event::Session(s) => Event::Session(SessionInfo {
                at_ms: s.at_ms,
                agent: owned_opt(s.agent),
                model: owned_opt(s.model),
                workspace: owned_opt(s.workspace),
                parent: s.parent.map(|p| ParentRef {
                    session: owned(p.session),
                    call: owned(p.call),
                }),
            }),
            Event::Prompted { at_ms, text } => Event::Prompted {
                at_ms,
                text: owned(text),
            },
            Event::Calling { at_ms, call } => Event::Calling {
                at_ms,
                call: call.into_owned(),
            },
            Event::Called(c) => Event::Called(Called {
                call: c.call.into_owned(),
                output: owned_json(c.output),
                started_ms: c.started_ms,
                finished_ms: c.finished_ms,
                refused: c.refused,
                failed: c.failed,
            }),
            Event::Stopping { at_ms, reply, held } => Event::Stopping {
                at_ms,
                reply: owned(reply),
                held,
            },
            Event::CallSent(c) => Event::CallSent(CallSent {
                id: owned_opt(c.id),
                request: Request {
                    model: owned(c.request.model),
                    provider: owned_opt(c.request.provider),
                    max_tokens: c.request.max_tokens,
                    messages: owned_json(c.request.messages),
                    system: owned_json(c.request.system),
                },
                response: c.response.map(|r| Response {
                    id: owned_opt(r.id),
                    model: owned_opt(r.model),
                    stop_reason: owned_opt(r.stop_reason),
                    content: owned_json(r.content),
                }),
                usage: c.usage,
                started_ms: c.started_ms,
                finished_ms: c.finished_ms,
                first_token_ms: c.first_token_ms,
                error: owned_json(c.error),
            }),
            Event::TurnEnded { at_ms, reason } => Event::TurnEnded {
                at_ms,
                reason: owned_opt(reason),
            },
            Event::Closed { at_ms } => Event::Closed { at_ms },
        };
        Record {
            session: owned(self.session),
            event,
        }
    }
}

// `reborrow`: a view of an owned value that borrows from it, so a record can be built from
// shared data (an in-process host's events) without copying a byte.

pub(crate) fn rb(s: &str) -> Cow<'_, str> {
    Cow::Borrowed(s)
}

pub(crate) fn rb_opt<'b>(s: &'b Option<Cow<'_, str>>) -> Option<Cow<'b, str>> {
    s.as_deref().map(Cow::Borrowed)
}

impl Json<'_> {
    pub fn reborrow(&self) -> Json<'_> {
        Json(Cow::Borrowed(&self.0))
    }
}

impl Call<'_> {
    pub fn reborrow(&self) -> Call<'_> {
        Call {
            id: rb(&self.id),
            name: rb(&self.name),
            arguments: self.arguments.as_ref().map(Json::reborrow),
            within: rb_opt(&self.within),
        }
    }
}

impl Called<'_> {
    pub fn reborrow(&self) -> Called<'_> {
        Called {
            call: self.call.reborrow(),
            output: self.output.as_ref().map(Json::reborrow),
            ..*self
        }
    }
}

impl CallSent<'_> {
    pub fn reborrow(&self) -> CallSent<'_> {
        CallSent {
            id: rb_opt(&self.id),
            request: Request {
                model: rb(&self.request.model),
                provider: rb_opt(&self.request.provider),
                max_tokens: self.request.max_tokens,
                messages: self.request.messages.as_ref().map(Json::reborrow),
                system: self.request.system.as_ref().map(Json::reborrow),
            },
            response: self.response.as_ref().map(|r| Response {
                id: rb_opt(&r.id),
                model: rb_opt(&r.model),
                stop_reason: rb_opt(&r.stop_reason),
                content: r.content.as_ref().map(Json::reborrow),
            }),
            error: self.error.as_ref().map(Json::reborrow),
            ..*self
        }
    }
}

#[cfg(test)]
mod tests;
