//! Events from an in-process (Rust) host, handed over shared rather than copied. The host
//! source makes them and the pipeline's queue carries them to the assembly, so they live here,
//! below both.
//!
//! A host's `hook` is on the agent's critical path. Copying an event's strings there would mean
//! allocations on the host's thread that the exporter's thread later frees, and cache lines
//! moving between cores on every event. So the payloads are behind `Arc`s: handing one over is
//! a reference-count increment, and the assembly reads the host's own bytes through
//! [`SharedEvent::record`], a [`Record`] that borrows them.

use std::borrow::Cow;
use std::sync::Arc;

use super::{Call, CallSent, Called, Event, Record};

/// albedo's `hook.Event`. Cloning one is cheap: the payloads are shared.
#[derive(Debug, Clone)]
pub enum HookEvent {
    Prompted { text: Arc<str> },
    Calling { call: Arc<Call<'static>> },
    Called(Arc<Called<'static>>),
    Stopping { reply: Arc<str>, held: u32 },
}

/// albedo's `observe` events that matter for traces.
#[derive(Debug, Clone)]
pub enum Observed {
    CallSent(Arc<CallSent<'static>>),
    TurnEnded { reason: Option<Arc<str>> },
}

/// What an in-process host handed over, and when.
#[derive(Debug, Clone)]
pub struct SharedEvent {
    pub session: Arc<str>,
    /// When the host handed it over (Unix ms): the time of events that carry none.
    pub at_ms: u64,
    pub what: Shared,
}

#[derive(Debug, Clone)]
pub enum Shared {
    Hook(HookEvent),
    Observed(Observed),
    Closed,
}

impl SharedEvent {
    /// The protocol record this event stands for, borrowing from it.
    pub fn record(&self) -> Record<'_> {
        let at_ms = self.at_ms;
        let event = match &self.what {
            Shared::Hook(HookEvent::Prompted { text }) => Event::Prompted {
                at_ms,
                text: Cow::Borrowed(text),
            },
            Shared::Hook(HookEvent::Calling { call }) => Event::Calling {
                at_ms,
                call: call.reborrow(),
            },
            Shared::Hook(HookEvent::Called(called)) => Event::Called(called.reborrow()),
            Shared::Hook(HookEvent::Stopping { reply, held }) => Event::Stopping {
                at_ms,
                reply: Cow::Borrowed(reply),
                held: *held,
            },
            Shared::Observed(Observed::CallSent(sent)) => Event::CallSent(sent.reborrow()),
            Shared::Observed(Observed::TurnEnded { reason }) => Event::TurnEnded {
                at_ms,
                reason: reason.as_deref().map(Cow::Borrowed),
            },
            Shared::Closed => Event::Closed { at_ms },
        };
        Record {
            session: Cow::Borrowed(&self.session),
            event,
        }
    }
}
