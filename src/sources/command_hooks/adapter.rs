//! The contract every agent's adapter keeps, so that the daemon (and the tests) drive every
//! agent the same way: a type implementing [`AgentAdapter`], listed once in
//! [`super::agent`], as an exporter is a type implementing `SpanExporter`.

use std::any::Any;
use std::fmt;

use super::files::{FileCursor, Transcripts};
use crate::protocol::Record;

/// One agent's payloads to protocol records. Everything but the transcripts and logs it is
/// handed (`files`) is pure: the same payloads in the same order give the same records.
pub trait AgentAdapter: fmt::Debug + Send {
    /// The agent's payload, as its types read it.
    type Payload: Send + 'static;

    /// Reads one payload; an error says why it is not one of this agent's.
    fn parse(&self, json: &str) -> Result<Self::Payload, String>;

    /// The session the payload names (for a sub-agent, whatever its agent sends there).
    fn session_of(payload: &Self::Payload) -> &str;

    /// Takes one payload received at `at_ms`; appends records to `out`.
    fn take(
        &mut self,
        payload: Self::Payload,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    );

    /// Ends what time ends (a held stop past its grace, a log that is due).
    fn tick(&mut self, now_ms: u64, files: &mut dyn Transcripts, out: &mut Vec<Record<'static>>) {
        let _ = (now_ms, files, out);
    }

    /// Sessions with a turn open (the daemon does not exit while there are any).
    fn open_turns(&self) -> usize;

    /// Sessions the adapter keeps anything of: none once each has ended or been abandoned, so
    /// that a daemon that never idles does not grow.
    fn kept(&self) -> usize;

    /// Whether session `id` is between turns: nothing of it is in flight in the adapter.
    fn at_rest(&self, id: &str) -> bool;

    /// Gives up on session `id`, which will send nothing more (its agent is gone): what it
    /// left open is exported, unfinished, ending at `at_ms` (when the agent was last seen),
    /// and the session is forgotten.
    fn abandon(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    );

    /// Where session `id`'s transcript or log has been read to, for a later daemon to resume
    /// from; `None` for an agent that reads none.
    fn cursor(&self, id: &str) -> Option<FileCursor> {
        let _ = id;
        None
    }

    /// Resumes session `id` where an earlier daemon left its transcript or log: read on from
    /// `at` if it is still that file (see [`FileCursor::offset_in`]).
    fn resume(&mut self, id: &str, at: FileCursor) {
        let _ = (id, at);
    }

    /// How much of session `id`'s conversation its model calls carry (0: capture is off).
    fn message_budget(&mut self, id: &str, bytes: usize) {
        let _ = (id, bytes);
    }
}

/// A payload read by some agent's adapter, kept for that adapter to take.
pub struct Parsed(Box<dyn Any + Send>);

impl fmt::Debug for Parsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Parsed(..)")
    }
}

/// [`AgentAdapter`] with its payload type erased, so that adapters of every agent sit in one
/// list. Implemented for every adapter.
pub trait Dispatch: fmt::Debug + Send {
    fn parse(&self, json: &str) -> Result<Parsed, String>;
    fn session_of<'a>(&self, payload: &'a Parsed) -> Option<&'a str>;
    fn take(
        &mut self,
        payload: Parsed,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    );
    fn tick(&mut self, now_ms: u64, files: &mut dyn Transcripts, out: &mut Vec<Record<'static>>);
    fn open_turns(&self) -> usize;
    fn kept(&self) -> usize;
    fn at_rest(&self, id: &str) -> bool;
    fn abandon(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    );
    fn cursor(&self, id: &str) -> Option<FileCursor>;
    fn resume(&mut self, id: &str, at: FileCursor);
    fn message_budget(&mut self, id: &str, bytes: usize);
}

impl<A: AgentAdapter> Dispatch for A {
    fn parse(&self, json: &str) -> Result<Parsed, String> {
        AgentAdapter::parse(self, json).map(|p| Parsed(Box::new(p)))
    }

    fn session_of<'a>(&self, payload: &'a Parsed) -> Option<&'a str> {
        payload.0.downcast_ref::<A::Payload>().map(A::session_of)
    }

    fn take(
        &mut self,
        payload: Parsed,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        // Only this adapter's own `parse` makes its payloads: another's cannot reach it.
        if let Ok(p) = payload.0.downcast::<A::Payload>() {
            AgentAdapter::take(self, *p, at_ms, files, out);
        }
    }

    fn tick(&mut self, now_ms: u64, files: &mut dyn Transcripts, out: &mut Vec<Record<'static>>) {
        AgentAdapter::tick(self, now_ms, files, out);
    }

    fn open_turns(&self) -> usize {
        AgentAdapter::open_turns(self)
    }

    fn kept(&self) -> usize {
        AgentAdapter::kept(self)
    }

    fn at_rest(&self, id: &str) -> bool {
        AgentAdapter::at_rest(self, id)
    }

    fn abandon(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        AgentAdapter::abandon(self, id, at_ms, files, out);
    }

    fn cursor(&self, id: &str) -> Option<FileCursor> {
        AgentAdapter::cursor(self, id)
    }

    fn resume(&mut self, id: &str, at: FileCursor) {
        AgentAdapter::resume(self, id, at);
    }

    fn message_budget(&mut self, id: &str, bytes: usize) {
        AgentAdapter::message_budget(self, id, bytes);
    }
}

/// The part of [`AgentAdapter`] every agent's `Adapter` forwards alike (reading a payload, its
/// session, the turns open, whether a session is at rest), with `$items` the rest: for
/// [`payloads_only`] and [`reads_files`] below.
macro_rules! forwarded {
    ($payload:ty, |$p:ident| $session:expr, { $($items:tt)* }) => {
        impl $crate::sources::command_hooks::adapter::AgentAdapter for Adapter {
            type Payload = $payload;

            fn parse(&self, json: &str) -> Result<$payload, String> {
                serde_json::from_str(json).map_err(|e| e.to_string())
            }

            fn session_of($p: &$payload) -> &str {
                $session
            }

            fn open_turns(&self) -> usize {
                Adapter::open_turns(self)
            }

            fn at_rest(&self, id: &str) -> bool {
                Adapter::at_rest(self, id)
            }

            $($items)*
        }
    };
}
pub(crate) use forwarded;

/// [`AgentAdapter`] for an agent's `Adapter` that reads nothing but its hooks' payloads (no
/// transcript or log): the contract is its own `push`, `open_turns`, `at_rest` and `abandon`
/// (and `tick`, with `ticks`), the files it is handed unused, written here once rather than
/// in each such agent's `contract.rs`. `$session` names a payload's session.
macro_rules! payloads_only {
    ($payload:ty, |$p:ident| $session:expr $(, $ticks:ident)?) => {
        $crate::sources::command_hooks::adapter::forwarded!($payload, |$p| $session, {
            fn take(
                &mut self,
                p: $payload,
                at_ms: u64,
                _: &mut dyn $crate::sources::command_hooks::files::Transcripts,
                out: &mut Vec<$crate::protocol::Record<'static>>,
            ) {
                Adapter::push(self, at_ms, &p, out);
            }

            $($crate::sources::command_hooks::adapter::payloads_only!(@$ticks);)?

            fn kept(&self) -> usize {
                self.sessions.len()
            }

            fn abandon(
                &mut self,
                id: &str,
                at_ms: u64,
                _: &mut dyn $crate::sources::command_hooks::files::Transcripts,
                out: &mut Vec<$crate::protocol::Record<'static>>,
            ) {
                Adapter::abandon(self, id, at_ms, out);
            }
        });
    };
    (@ticks) => {
        fn tick(
            &mut self,
            now_ms: u64,
            _: &mut dyn $crate::sources::command_hooks::files::Transcripts,
            out: &mut Vec<$crate::protocol::Record<'static>>,
        ) {
            Adapter::tick(self, now_ms, out);
        }
    };
}
pub(crate) use payloads_only;

/// [`AgentAdapter`] for an agent's `Adapter` that reads transcripts or logs beside its hooks'
/// payloads (Copilot, Cline, Kimi, Qwen): the contract is its own `push`, `tick`,
/// `open_turns`, `kept`, `at_rest`, `abandon`, `cursor` and `resume`, each handed the files,
/// written here once rather than in each such agent's `contract.rs`.
macro_rules! reads_files {
    ($payload:ty, |$p:ident| $session:expr) => {
        $crate::sources::command_hooks::adapter::forwarded!($payload, |$p| $session, {
            fn take(
                &mut self,
                p: $payload,
                at_ms: u64,
                files: &mut dyn $crate::sources::command_hooks::files::Transcripts,
                out: &mut Vec<$crate::protocol::Record<'static>>,
            ) {
                Adapter::push(self, at_ms, &p, files, out);
            }

            fn tick(
                &mut self,
                now_ms: u64,
                files: &mut dyn $crate::sources::command_hooks::files::Transcripts,
                out: &mut Vec<$crate::protocol::Record<'static>>,
            ) {
                Adapter::tick(self, now_ms, files, out);
            }

            fn kept(&self) -> usize {
                Adapter::kept(self)
            }

            fn abandon(
                &mut self,
                id: &str,
                at_ms: u64,
                files: &mut dyn $crate::sources::command_hooks::files::Transcripts,
                out: &mut Vec<$crate::protocol::Record<'static>>,
            ) {
                Adapter::abandon(self, id, at_ms, files, out);
            }

            fn cursor(
                &self,
                id: &str,
            ) -> Option<$crate::sources::command_hooks::files::FileCursor> {
                Adapter::cursor(self, id)
            }

            fn resume(&mut self, id: &str, at: $crate::sources::command_hooks::files::FileCursor) {
                Adapter::resume(self, id, at);
            }
        });
    };
}
pub(crate) use reads_files;
