//! One open turn: its trace and root span, the summary its root will report, and the model
//! calls and stops that happen in it. Its tool calls are in [`super::calls`].

use hashlink::LinkedHashMap;

use super::ids::{self, Role};
use super::node::CallNode;
use super::policy::ContentPolicy;
use super::pricing::Pricer;
use super::span::{SpanId, SpanLink, TraceId};
use super::spans::{chat_span, stopping_event, Place, SessionAttrs, TurnSummary};
use super::{Note, Output};
use crate::protocol::CallSent;

/// A turn that went out at the agent's stop, which the agent may yet go on from: a stop hook
/// can block the stop long after the turn was exported (a verifier that runs the tests), and
/// the agent then works on with no prompt. What it does then, until the next prompt, is a
/// continuation: a span of its own under this turn's root, in its trace (late children of an
/// exported span are fine in OTLP), so that none of it makes a trace of its own.
#[derive(Debug, Clone, Copy)]
pub(super) struct WentOut {
    /// The turn's root, already exported.
    pub(super) root: (TraceId, SpanId),
    pub(super) number: u64,
    /// Continuations opened under it so far.
    pub(super) pieces: u64,
}

#[derive(Debug)]
pub(super) struct Turn {
    pub(super) trace_id: TraceId,
    pub(super) span_id: SpanId,
    /// The spawning call's span, for a child session's turn in its parent's trace.
    parent: Option<SpanId>,
    prompted_ms: Option<u64>,
    first_ms: u64,
    pub(super) last_ms: u64,
    /// In order of arrival, oldest first.
    /// By call id, looked up for every call record: foldhash, not SipHash.
    pub(super) calls: LinkedHashMap<String, CallNode, foldhash::fast::RandomState>,
    /// How many times calls were let go (see `cap_calls`). Part of every tool span id made
    /// after that, so a call id seen again after its span was exported gets a new id.
    pub(super) generation: u64,
    chats: u64,
    pub(super) summary: TurnSummary,
    /// Where a continuation after this turn goes: under its root, or, for a continuation,
    /// under the root of the turn it continues.
    pub(super) went_out: WentOut,
}

/// An open turn and the session it belongs to: what every event inside a turn works on. Being
/// handed one is the proof that the turn is open.
pub(super) struct TurnMut<'a> {
    pub(super) turn: &'a mut Turn,
    pub(super) session: &'a SessionAttrs,
}

impl Turn {
    /// A turn of session `label` beginning at `at_ms`: its `number` in the session, and the
    /// `salt` that tells it from an earlier turn that began no earlier.
    pub(super) fn open(
        label: &str,
        at_ms: u64,
        number: u64,
        salt: u64,
        prompted: bool,
        parent: Option<(TraceId, SpanId)>,
        prev_root: Option<SpanLink>,
    ) -> Turn {
        let trace_id = match parent {
            Some((trace, _)) => trace,
            None => ids::turn_trace(label, at_ms, salt),
        };
        let span_id = ids::turn_span(trace_id, label, at_ms, salt);
        Turn {
            trace_id,
            span_id,
            parent: parent.map(|(_, span)| span),
            prompted_ms: prompted.then_some(at_ms),
            first_ms: at_ms,
            last_ms: at_ms,
            calls: LinkedHashMap::default(),
            generation: 0,
            chats: 0,
            summary: TurnSummary {
                number,
                prompted,
                link: prev_root,
                ..TurnSummary::default()
            },
            went_out: WentOut {
                root: (trace_id, span_id),
                number,
                pieces: 0,
            },
        }
    }

    /// A continuation of the turn that went out as `w`, beginning at `at_ms`: in its trace,
    /// under its root, with its number. Its salt is one no turn of the session has, so its
    /// ids differ from the root's whenever it begins.
    pub(super) fn continuing(label: &str, at_ms: u64, w: WentOut) -> Turn {
        let w = WentOut {
            pieces: w.pieces + 1,
            ..w
        };
        let salt = u64::MAX - w.pieces;
        let mut t = Turn::open(label, at_ms, w.number, salt, false, Some(w.root), None);
        t.summary.continued = true;
        t.went_out = w;
        t
    }

    /// The root a continuation after this turn goes under, as a link.
    pub(super) fn root_link(&self) -> SpanLink {
        let (trace_id, span_id) = self.went_out.root;
        SpanLink { trace_id, span_id }
    }

    /// The trace and span of call `call` in this turn, if it was seen.
    pub(super) fn call_span(&self, call: &str) -> Option<(TraceId, SpanId)> {
        self.calls.get(call).map(|c| (self.trace_id, c.span_id))
    }

    pub(super) fn touch(&mut self, at_ms: u64) {
        self.first_ms = self.first_ms.min(at_ms);
        self.last_ms = self.last_ms.max(at_ms);
    }

    /// A place directly under the turn's root.
    pub(super) fn turn_place(&self, span_id: SpanId) -> Place {
        Place {
            trace_id: self.trace_id,
            span_id,
            parent: Some(self.span_id),
        }
    }

    /// Ends the turn: calls still open are emitted, unfinished, and what the root span needs
    /// is returned: its place, its start and end, its summary. It ends at `at_ms` when
    /// `turn_ended` said so, otherwise at its last activity, or at `alive_ms` if the agent was
    /// known to be there later (a call it still ran then had not ended before).
    pub(super) fn end(
        mut self,
        at_ms: Option<u64>,
        alive_ms: Option<u64>,
        policy: &ContentPolicy,
        session: &SessionAttrs,
        out: &mut Output,
    ) -> (Place, u64, u64, TurnSummary) {
        let end_ms = at_ms.unwrap_or_else(|| self.last_ms.max(alive_ms.unwrap_or(0)));
        let open = self.close_open_calls(end_ms, policy, session, out);
        if open > 0 {
            out.notes.push(Note::Unfinished {
                session: session.id.to_string(),
                calls: open,
            });
        }
        let place = Place {
            trace_id: self.trace_id,
            span_id: self.span_id,
            parent: self.parent,
        };
        let start_ms = self.prompted_ms.unwrap_or(self.first_ms);
        (place, start_ms, end_ms, std::mem::take(&mut self.summary))
    }
}

impl TurnMut<'_> {
    /// `call_sent`: a model call, a span of its own under the turn.
    pub(super) fn call_sent(
        &mut self,
        sent: &CallSent<'_>,
        policy: &ContentPolicy,
        pricer: &mut Pricer,
        out: &mut Output,
    ) {
        let turn = &mut *self.turn;
        let clamped = sent.finished_ms < sent.started_ms;
        if clamped {
            out.notes.push(Note::EndBeforeStart {
                session: self.session.id.to_string(),
                id: sent.id.as_deref().unwrap_or("call_sent").to_string(),
            });
        }
        turn.touch(sent.started_ms);
        turn.touch(sent.finished_ms.max(sent.started_ms));
        let s = &mut turn.summary;
        s.model_calls += 1;
        s.input_tokens = s.input_tokens.saturating_add(sent.usage.total_input());
        s.output_tokens = s.output_tokens.saturating_add(sent.usage.output_tokens);
        s.cache_read_tokens = s
            .cache_read_tokens
            .saturating_add(sent.usage.cache_read_tokens);
        s.cache_write_tokens = s
            .cache_write_tokens
            .saturating_add(sent.usage.cache_write_tokens);
        // Priced as billed: the model that answered, if the response names it.
        let model = sent
            .response
            .as_ref()
            .and_then(|r| r.model.as_deref())
            .filter(|m| !m.is_empty())
            .unwrap_or(&sent.request.model);
        let cost = pricer.cost(
            sent.request.provider.as_deref(),
            model,
            &sent.usage,
            sent.started_ms,
        );
        if let Some(c) = cost {
            s.cost = Some(s.cost.unwrap_or(0.0) + c.total);
        }
        let key = sent.id.as_deref().unwrap_or("");
        let span_id = ids::child_span(turn.span_id, Role::Chat, key, turn.chats);
        turn.chats += 1;
        let place = turn.turn_place(span_id);
        let who = turn.summary.attribution.as_deref();
        out.spans.push(chat_span(
            place,
            sent,
            clamped,
            cost,
            who,
            policy,
            self.session,
        ));
    }

    /// `stopping`: an event on the turn's root.
    pub(super) fn stopping(&mut self, at_ms: u64, reply: &str, held: u32, policy: &ContentPolicy) {
        self.turn.touch(at_ms);
        if policy.capture_messages {
            self.turn.summary.reply = Some(policy.content(reply));
        }
        self.turn
            .summary
            .events
            .push(stopping_event(at_ms, reply, held, policy));
    }

    /// `prompted` with message capture on: the prompt goes on the root.
    pub(super) fn prompt(&mut self, text: &str, policy: &ContentPolicy) {
        if policy.capture_messages {
            self.turn.summary.prompt = Some(policy.content(text));
        }
    }
}
