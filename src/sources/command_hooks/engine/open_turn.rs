//! One open turn, the same for every agent that keeps its turns itself: what is in flight in
//! it, and the one way it ends, [`OpenTurn::flush`], whatever ends it (its stop, the next
//! prompt, the agent gone, its session's end, the daemon closing). Each agent used to end its
//! pending calls in its own way, and the ways differed exactly where turns were lost.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::records::{raw, record, Ended, Outcome, Unanswered};
use crate::protocol::{Call, CallSent, Event, Json, Record};

/// A tool call started and not ended yet.
#[derive(Debug)]
pub(in crate::sources::command_hooks) struct Pending {
    pub id: String,
    pub name: String,
    pub input: Option<Box<RawValue>>,
    pub at_ms: u64,
    /// What the call's end will name it by, when its agent gives no id (Cursor's command or
    /// MCP tool).
    pub key: Option<String>,
}

/// Why a turn ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// The agent ended it (its stop, past any grace), with this reason. A call still pending
    /// never ran: these agents report every call that ran, so a hook refused it.
    Stopped(&'static str),
    /// The turn was cut short where a hook says so (the next prompt came first, or the agent
    /// says the user stopped it): it ends then, and a call still pending was cut short with it.
    Interrupted,
    /// No hook says when the turn ended: the agent is gone, or its session ended with the turn
    /// open, or the user pressed Esc in Claude Code (which sends nothing). The turn and the
    /// calls still pending are left for the session's next prompt or close to end, unfinished,
    /// at the last sign of life.
    Unseen,
}

impl Why {
    /// What a model call that got no answer says.
    fn unanswered(self) -> &'static str {
        match self {
            Why::Stopped(_) => "the turn ended before the model answered",
            Why::Interrupted => "the turn was cut short before the model answered",
            Why::Unseen => "the turn ended unseen before the model answered",
        }
    }
}

/// A turn that is open: begun by a prompt (or by the first call of a turn whose prompt no
/// hook carried). `E` is what one agent alone keeps of a turn.
#[derive(Debug, Default)]
pub(in crate::sources::command_hooks) struct OpenTurn<E = ()> {
    /// When it began: sub-agents' session ids are made from it.
    pub at_ms: u64,
    /// Whether the agent reports a call it refused (opencode: a tool part with an error):
    /// then a call still pending at its stop failed. Otherwise a hook refused it, since these
    /// agents report every call that ran.
    pub reports_refusals: bool,
    /// Numbers for calls and model calls without an id of their own: ids only need to differ
    /// within a turn, and counting from its start gives the same ids on a re-read.
    pub calls: u32,
    pub model_calls: u32,
    pub pending: Vec<Pending>,
    /// Model calls asked and not answered, oldest first.
    pub models: Vec<Unanswered>,
    /// Model calls answered whose record waits for what the agent says of them after the
    /// answer (Kimi's step end: the first token's latency, the answer's id, why it ended): the
    /// turn's end sends them as they are, tokens and all.
    pub answered: Vec<CallSent<'static>>,
    /// A stop whose turn end is held back (another hook may answer it, and the agent goes
    /// on): when it came, and the reason the turn would end with.
    pub stop: Option<(u64, &'static str)>,
    /// Stops already seen in this turn (each held one that was answered makes one more).
    pub stops: u32,
    pub own: E,
}

impl<E: Default> OpenTurn<E> {
    pub fn new(at_ms: u64) -> Self {
        OpenTurn {
            at_ms,
            reports_refusals: false,
            calls: 0,
            model_calls: 0,
            pending: Vec::new(),
            models: Vec::new(),
            answered: Vec::new(),
            stop: None,
            stops: 0,
            own: E::default(),
        }
    }
}

impl<E> OpenTurn<E> {
    /// Starts a tool call (`id`, else the next number); returns its id.
    #[allow(clippy::too_many_arguments)] // the call's own fields, then where and when
    pub fn start_call(
        &mut self,
        session: &str,
        id: Option<String>,
        name: String,
        input: Option<Box<RawValue>>,
        key: Option<String>,
        at_ms: u64,
        out: &mut Vec<Record<'static>>,
    ) -> String {
        self.calls += 1;
        let id = id
            .filter(|i| !i.is_empty())
            .unwrap_or_else(|| format!("call-{}", self.calls));
        out.push(record(
            session,
            Event::Calling {
                at_ms,
                call: Call {
                    id: Cow::Owned(id.clone()),
                    name: Cow::Owned(name.clone()),
                    arguments: raw(&input),
                    within: None,
                },
            },
        ));
        self.pending.push(Pending {
            id: id.clone(),
            name,
            input,
            at_ms,
            key,
        });
        id
    }

    /// Ends pending call `i` at `at_ms`.
    pub fn end_call(
        &mut self,
        session: &str,
        i: usize,
        output: Option<Box<RawValue>>,
        outcome: Outcome,
        at_ms: u64,
        out: &mut Vec<Record<'static>>,
    ) {
        let pre = self.pending.remove(i);
        out.push(ended(session, pre, output).record(at_ms, outcome));
    }

    /// Ends every pending call as refused: the agent went on without them (Gemini asks the
    /// model again only once the calls it asked for are over).
    pub fn refuse_pending(&mut self, session: &str, at_ms: u64, out: &mut Vec<Record<'static>>) {
        for pre in std::mem::take(&mut self.pending) {
            out.push(ended(session, pre, None).record(at_ms, Outcome::Refused));
        }
    }

    /// Ends the model calls still unanswered at `at_ms`, with `why` as their error: the agent
    /// asked again, so no answer is coming.
    pub fn unanswered(
        &mut self,
        session: &str,
        at_ms: u64,
        why: &str,
        out: &mut Vec<Record<'static>>,
    ) {
        for call in std::mem::take(&mut self.models) {
            out.push(call.record(session, at_ms, why));
        }
    }

    /// Starts a model call (`id`, else the next number); returns its id.
    pub fn start_model(
        &mut self,
        id: Option<String>,
        model: String,
        provider: Cow<'static, str>,
        max_tokens: Option<u64>,
        at_ms: u64,
    ) -> String {
        self.model_calls += 1;
        let id = id.unwrap_or_else(|| format!("model-{}", self.model_calls));
        self.models.push(Unanswered {
            id: id.clone(),
            model,
            provider,
            max_tokens,
            started_ms: at_ms,
            first_token_ms: None,
        });
        id
    }

    /// The stop is held back from `at_ms`.
    pub fn hold(&mut self, at_ms: u64, reason: &'static str) {
        self.stop = Some((at_ms, reason));
    }

    /// A hook after a held stop: another hook answered it, and the turn goes on.
    pub fn went_on(&mut self) {
        self.stop = None;
    }

    /// Ends the turn at `at_ms`, for `why`: pending calls and model calls end with it (those
    /// answered as they are), then
    /// the turn (unless no hook saw it end: see [`Why::Unseen`]).
    pub fn flush(self, session: &str, at_ms: u64, why: Why, out: &mut Vec<Record<'static>>) {
        let calls = match why {
            Why::Stopped(_) if !self.reports_refusals => Some(Outcome::Refused),
            Why::Stopped(_) | Why::Interrupted => Some(Outcome::Failed),
            Why::Unseen => None,
        };
        if let Some(outcome) = calls {
            // A failed call says why it has no result of its own.
            let said = (outcome == Outcome::Failed)
                .then(|| Json::of("the turn ended before the call did").ok())
                .flatten()
                .map(|j| j.0.into_owned());
            for pre in self.pending {
                out.push(ended(session, pre, said.clone()).record(at_ms, outcome));
            }
        }
        for call in self.answered {
            out.push(record(session, Event::CallSent(call)));
        }
        for call in self.models {
            out.push(call.record(session, at_ms, why.unanswered()));
        }
        let reason = match why {
            Why::Stopped(reason) => reason,
            Why::Interrupted => "interrupted",
            Why::Unseen => return,
        };
        out.push(record(
            session,
            Event::TurnEnded {
                at_ms,
                reason: Some(Cow::Borrowed(reason)),
            },
        ));
    }
}

fn ended(session: &str, pre: Pending, output: Option<Box<RawValue>>) -> Ended<'_> {
    Ended {
        session,
        id: pre.id,
        name: pre.name,
        arguments: raw(&pre.input),
        output: raw(&output),
        started_ms: pre.at_ms,
    }
}
