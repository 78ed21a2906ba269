//! Assemble: protocol records in, finished spans out. Pure: no I/O, no clock, no threads.
//!
//! One trace per turn. A turn's root opens at `prompted` (or at the first event of a turn that
//! was never prompted) and is emitted at `turn_ended`, `closed`, a new `prompted`, or the end of
//! input. Tool and model-call spans are emitted the moment they are complete, children before
//! their parents, and every span that is ever named as a parent is guaranteed to be emitted
//! later in the same trace: calls still open when their turn ends are closed there, marked
//! unfinished, and a `within` that names a call never seen gets a synthesized span. That is the
//! invariant the tests hold the assembly to: **no exported parent id dangles**.
//!
//! Bad ordering is repaired, never fatal: each repair is reported as a [`Note`] so the caller
//! can log it with the line that caused it.

mod build;
pub mod ids;
pub mod policy;
pub mod semconv;
pub mod span;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use hashlink::LinkedHashMap;

use build::{
    chat_span, stopping_event, turn_span, AgentInfo, Place, SessionAttrs, ToolSpan, TurnSummary,
};
use ids::Role;
pub use policy::ContentPolicy;
use span::SpanLink;
pub use span::{Span, SpanId, TraceId};

use crate::ingest::protocol::{Call, CallSent, Called, Event, Record, SessionInfo};

/// The agent name used when a session does not give one.
pub const DEFAULT_AGENT: &str = "albedo";

/// How long a chain of `within` may be before it is treated as a cycle.
const MAX_NESTING: usize = 256;

/// Open sessions kept before the least recently active one is closed and exported.
pub const DEFAULT_MAX_SESSIONS: usize = 20_000;
/// Calls remembered per turn (running ones, and finished ones that nested calls may name).
pub const DEFAULT_MAX_CALLS_PER_TURN: usize = 4_096;

#[derive(Debug, Clone)]
pub struct AssembleConfig {
    /// `gen_ai.agent.name` for sessions that do not name their agent.
    pub default_agent: String,
    pub policy: ContentPolicy,
    /// Memory bound: past this many open sessions, the least recently active one is ended.
    pub max_sessions: usize,
    /// Memory bound: past this many calls in one turn, the oldest finished ones are forgotten
    /// (then the oldest running ones are exported as unfinished).
    pub max_calls_per_turn: usize,
}

impl Default for AssembleConfig {
    fn default() -> Self {
        AssembleConfig {
            default_agent: DEFAULT_AGENT.to_string(),
            policy: ContentPolicy::default(),
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_calls_per_turn: DEFAULT_MAX_CALLS_PER_TURN,
        }
    }
}

/// What one step of assembly produced.
#[derive(Debug, Default)]
pub struct Output {
    pub spans: Vec<Span>,
    pub notes: Vec<Note>,
}

/// A repair the assembly made to input that was out of order or inconsistent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// `finished_ms` was before `started_ms`; the span was given zero length.
    EndBeforeStart { session: String, id: String },
    /// A call named a `within` that was never seen; a span was synthesized for it.
    UnknownWithin {
        session: String,
        call: String,
        within: String,
    },
    /// Following `within` from this call leads back to it; it was attached to the turn instead.
    WithinCycle {
        session: String,
        call: String,
        within: String,
    },
    /// `turn_ended` arrived with no turn open.
    TurnEndedWithoutTurn { session: String },
    /// A call id was used twice in one turn; the second use got a span of its own.
    DuplicateCall { session: String, call: String },
    /// Calls were still open when their turn ended; they were exported as unfinished.
    Unfinished { session: String, calls: usize },
    /// A child session's parent call is not known here; its turns get traces of their own.
    ParentNotFound {
        session: String,
        parent_session: String,
        call: String,
    },
    /// Too many open sessions: the least recently active one was ended and exported.
    SessionEvicted { session: String, open: usize },
    /// Too many calls in one turn: the oldest were forgotten or exported as unfinished.
    CallsEvicted { session: String, calls: usize },
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::EndBeforeStart { session, id } => write!(
                f,
                "session {session}: `{id}` finished before it started; exported with zero length"
            ),
            Note::UnknownWithin { session, call, within } => write!(
                f,
                "session {session}: call `{call}` is within `{within}`, which was never seen; a span stands in for it"
            ),
            Note::WithinCycle { session, call, within } => write!(
                f,
                "session {session}: call `{call}` within `{within}` would make a cycle; attached to the turn instead"
            ),
            Note::TurnEndedWithoutTurn { session } => {
                write!(f, "session {session}: `turn_ended` with no turn open; ignored")
            }
            Note::DuplicateCall { session, call } => write!(
                f,
                "session {session}: call id `{call}` was used again in the same turn; exported as a separate span"
            ),
            Note::Unfinished { session, calls } => write!(
                f,
                "session {session}: {calls} call(s) still open when the turn ended; exported as unfinished"
            ),
            Note::ParentNotFound { session, parent_session, call } => write!(
                f,
                "session {session}: parent call `{call}` of session {parent_session} is unknown; its turns get traces of their own"
            ),
            Note::SessionEvicted { session, open } => write!(
                f,
                "session {session} ended early: {open} sessions are open, the most this exporter keeps (--max-sessions); it was the least recently active"
            ),
            Note::CallsEvicted { session, calls } => write!(
                f,
                "session {session}: a turn passed {calls} calls (--max-calls-per-turn); its oldest calls were let go"
            ),
        }
    }
}

impl Note {
    /// Whether the note is about input that is wrong (worth a warning) rather than merely
    /// incomplete (normal when a session is cut short).
    pub fn is_warning(&self) -> bool {
        matches!(
            self,
            Note::EndBeforeStart { .. }
                | Note::WithinCycle { .. }
                | Note::DuplicateCall { .. }
                | Note::UnknownWithin { .. }
                | Note::SessionEvicted { .. }
                | Note::CallsEvicted { .. }
        )
    }
}

/// Checks what every output of the assembly must satisfy: span ids unique, every parent id
/// present in the same trace, no span ending before it starts. Tests, property tests and the
/// fuzzer hold the assembly to it.
pub fn check_tree(spans: &[Span]) -> Result<(), String> {
    let ids: std::collections::HashSet<(TraceId, SpanId)> =
        spans.iter().map(|s| (s.trace_id, s.span_id)).collect();
    if ids.len() != spans.len() {
        return Err(format!("{} spans share an id", spans.len() - ids.len()));
    }
    for s in spans {
        if s.end_ns < s.start_ns {
            return Err(format!("{} ends before it starts", s.name));
        }
        if let Some(p) = s.parent_span_id {
            if !ids.contains(&(s.trace_id, p)) {
                return Err(format!("{} has a dangling parent {p}", s.name));
            }
        }
    }
    Ok(())
}

/// Events in, spans out. See the module docs for the rules.
#[derive(Debug)]
pub struct Assembler {
    config: AssembleConfig,
    /// In order of activity, least recent first: the front is evicted first.
    sessions: LinkedHashMap<String, Session>,
    /// The turn history of sessions that ended, so a session id that comes back does not
    /// reuse the ids of its earlier turns.
    ended: LinkedHashMap<String, TurnHistory>,
    /// Sessions being ended by [`Assembler::finish_some`], last to end first.
    finishing: Vec<(String, Session)>,
}

/// Agent name, model, workspace and parent `(session, call)`, owned.
type OwnedAgentInfo = (
    String,
    Option<String>,
    Option<String>,
    Option<(String, String)>,
);

#[derive(Debug)]
struct Session {
    attrs: SessionAttrs,
    agent: Option<String>,
    model: Option<String>,
    workspace: Option<String>,
    parent: Option<Parent>,
    turn: Option<Turn>,
    history: TurnHistory,
    prev_root: Option<SpanLink>,
}

/// What a session's ids depend on besides the turn's own start: how many turns it had, and
/// when the latest began. Kept for a while after the session ends, in case it returns.
#[derive(Debug, Clone, Default)]
struct TurnHistory {
    turns: u64,
    latest_start: Option<u64>,
}

/// Sessions remembered after they end (about 100 bytes each).
const ENDED_REMEMBERED: usize = 50_000;

impl TurnHistory {
    /// Records a turn starting at `at_ms` and returns what sets it apart from earlier turns
    /// of the session. Turns of a session start later and later, so normally nothing (0): the
    /// same turn then gets the same ids in any process that sees it (a replay, a restarted
    /// exporter). A turn that starts no later than one before it (the same turn sent twice,
    /// clocks gone backwards) is told apart by its number, which no other turn has.
    fn begin(&mut self, at_ms: u64) -> u64 {
        let seq = self.turns;
        self.turns += 1;
        let salt = match self.latest_start {
            Some(latest) if at_ms <= latest => seq,
            _ => 0,
        };
        self.latest_start = Some(self.latest_start.map_or(at_ms, |l| l.max(at_ms)));
        salt
    }
}

#[derive(Debug)]
struct Parent {
    session: String,
    call: String,
    /// The parent call's span, once it has been found.
    resolved: Option<(TraceId, SpanId)>,
    reported: bool,
}

#[derive(Debug)]
struct Turn {
    trace_id: TraceId,
    span_id: SpanId,
    parent: Option<SpanId>,
    prompted_ms: Option<u64>,
    first_ms: u64,
    last_ms: u64,
    /// In order of arrival, oldest first.
    calls: LinkedHashMap<String, CallNode>,
    /// How many times calls were let go (see `cap_calls`). Part of every tool span id made
    /// after that, so a call id seen again after its span was exported gets a new id.
    generation: u64,
    chats: u64,
    summary: TurnSummary,
}

#[derive(Debug)]
struct CallNode {
    span_id: SpanId,
    /// How many spans this call id has had in this turn before this one.
    nth: u64,
    /// The call this one is nested in. The graph of parents is kept acyclic.
    parent: Option<String>,
    open: Option<OpenCall>,
}

/// A call without its result yet.
#[derive(Debug)]
struct OpenCall {
    name: Option<String>,
    /// The `within` the call itself declared, for the span's attribute.
    within: Option<String>,
    /// When `calling` was seen; `None` for a call only named as a `within`.
    start_ms: Option<u64>,
    /// The time range its nested calls covered.
    children: Option<(u64, u64)>,
}

impl Assembler {
    pub fn new(config: AssembleConfig) -> Self {
        Assembler {
            config,
            sessions: LinkedHashMap::new(),
            ended: LinkedHashMap::new(),
            finishing: Vec::new(),
        }
    }

    /// How many sessions are open.
    pub fn open_sessions(&self) -> usize {
        self.sessions.len()
    }

    /// Takes one record; appends finished spans and repair notes to `out`.
    pub fn push(&mut self, record: &Record<'_>, out: &mut Output) {
        let sid = record.session.as_ref();
        match &record.event {
            Event::Session(info) => return self.on_session(sid, info, out),
            Event::Closed { .. } => {
                if let Some(mut s) = self.sessions.remove(sid) {
                    s.end_turn(None, None, &self.config, out);
                    self.remember_ended(sid.to_string(), s.history);
                }
                return;
            }
            _ => {}
        }
        self.ensure_session(sid, out);
        // First the turn the event belongs to: a prompt starts a new one (ending whatever turn
        // was cut short), anything else opens one if none is open.
        match &record.event {
            Event::Prompted { at_ms, .. } => {
                let Assembler {
                    config, sessions, ..
                } = self;
                let s = sessions.get_mut(sid).expect("session exists");
                s.end_turn(None, None, config, out);
                self.open_turn(sid, *at_ms, true, out);
            }
            Event::Calling { at_ms, .. } | Event::Stopping { at_ms, .. } => {
                self.turn(sid, *at_ms, out)
            }
            Event::Called(c) => self.turn(sid, c.started_ms, out),
            Event::CallSent(c) => self.turn(sid, c.started_ms, out),
            _ => {}
        }
        let Assembler {
            config, sessions, ..
        } = self;
        let s = sessions.get_mut(sid).expect("session exists");
        let policy = &config.policy;
        match &record.event {
            Event::Prompted { text, .. } => {
                if policy.capture_messages {
                    let turn = s.turn.as_mut().expect("turn was just opened");
                    turn.summary.prompt = Some(policy.content(text));
                }
            }
            Event::Calling { at_ms, call } => {
                s.on_calling(*at_ms, call, policy, out);
                s.cap_calls(config.max_calls_per_turn, policy, out);
            }
            Event::Called(called) => {
                s.on_called(called, policy, out);
                s.cap_calls(config.max_calls_per_turn, policy, out);
            }
            Event::CallSent(sent) => s.on_call_sent(sent, policy, out),
            Event::Stopping { at_ms, reply, held } => {
                let turn = s.turn.as_mut().expect("turn is open");
                turn.touch(*at_ms);
                turn.summary
                    .events
                    .push(stopping_event(*at_ms, reply, *held, policy));
            }
            Event::TurnEnded { at_ms, reason } => {
                if s.turn.is_none() {
                    out.notes.push(Note::TurnEndedWithoutTurn {
                        session: s.attrs.id.to_string(),
                    });
                } else {
                    s.end_turn(Some(*at_ms), reason.as_deref(), config, out);
                }
            }
            Event::Session(_) | Event::Closed { .. } => unreachable!("handled above"),
        }
    }

    /// End of input: every open turn is exported, marked unfinished.
    pub fn finish(&mut self, out: &mut Output) {
        while self.finish_some(out, usize::MAX) {}
    }

    /// End of input, a few sessions at a time: ends up to `max` open sessions and says
    /// whether any are left. Ten thousand open turns ended at once would be tens of
    /// megabytes of spans; taken `max` at a time, a caller can send them on as they come.
    pub fn finish_some(&mut self, out: &mut Output, max: usize) -> bool {
        if self.finishing.is_empty() {
            if self.sessions.is_empty() {
                return false;
            }
            self.finishing = self.sessions.drain().collect();
            // A stable order keeps output reproducible; reversed, so `pop` takes the first.
            self.finishing.sort_by(|a, b| b.0.cmp(&a.0));
        }
        for _ in 0..max {
            let Some((_, mut s)) = self.finishing.pop() else {
                break;
            };
            s.end_turn(None, None, &self.config, out);
        }
        !self.finishing.is_empty() || !self.sessions.is_empty()
    }

    fn session(&mut self, sid: &str) -> &mut Session {
        self.sessions.get_mut(sid).expect("session exists")
    }

    /// Makes `sid` the most recently active session, opening it if new; past the cap, the
    /// least recently active session is ended first.
    fn ensure_session(&mut self, sid: &str, out: &mut Output) {
        if self.sessions.to_back(sid).is_none() {
            while self.sessions.len() >= self.config.max_sessions.max(1) {
                let Some((key, mut old)) = self.sessions.pop_front() else {
                    break;
                };
                out.notes.push(Note::SessionEvicted {
                    session: old.attrs.id.to_string(),
                    open: self.sessions.len() + 1,
                });
                old.end_turn(None, None, &self.config, out);
                self.remember_ended(key, old.history);
            }
            let history = self.ended.remove(sid).unwrap_or_default();
            let id: Arc<str> = self.config.policy.label(sid).into();
            self.sessions.insert(
                sid.to_string(),
                Session {
                    attrs: SessionAttrs { id },
                    agent: None,
                    model: None,
                    workspace: None,
                    parent: None,
                    turn: None,
                    history,
                    prev_root: None,
                },
            );
        }
    }

    fn remember_ended(&mut self, sid: String, history: TurnHistory) {
        self.ended.replace(sid, history);
        while self.ended.len() > ENDED_REMEMBERED.max(self.config.max_sessions) {
            self.ended.pop_front();
        }
    }

    fn on_session(&mut self, sid: &str, info: &SessionInfo<'_>, out: &mut Output) {
        self.ensure_session(sid, out);
        let s = self.session(sid);
        s.agent = info.agent.as_deref().map(str::to_string).or(s.agent.take());
        s.model = info.model.as_deref().map(str::to_string).or(s.model.take());
        s.workspace = info
            .workspace
            .as_deref()
            .map(str::to_string)
            .or(s.workspace.take());
        if let Some(p) = &info.parent {
            s.parent = Some(Parent {
                session: p.session.to_string(),
                call: p.call.to_string(),
                resolved: None,
                reported: false,
            });
            self.resolve_parent(sid, out);
        }
    }

    /// Finds the span of the call that started child session `sid`, if it is known now.
    fn resolve_parent(&mut self, sid: &str, out: &mut Output) {
        let Some(parent) = self.sessions.get(sid).and_then(|s| s.parent.as_ref()) else {
            return;
        };
        if parent.resolved.is_some() {
            return;
        }
        let found = self
            .sessions
            .get(&parent.session)
            .and_then(|ps| ps.turn.as_ref())
            .and_then(|t| t.calls.get(&parent.call).map(|c| (t.trace_id, c.span_id)));
        let parent = self.session(sid).parent.as_mut().expect("checked above");
        match found {
            Some(r) => parent.resolved = Some(r),
            None if !parent.reported => {
                parent.reported = true;
                out.notes.push(Note::ParentNotFound {
                    session: sid.to_string(),
                    parent_session: parent.session.clone(),
                    call: parent.call.clone(),
                });
            }
            None => {}
        }
    }

    /// The open turn of `sid`, opening one (not prompted) at `at_ms` if there is none.
    fn turn(&mut self, sid: &str, at_ms: u64, out: &mut Output) {
        if self.session(sid).turn.is_none() {
            self.open_turn(sid, at_ms, false, out);
        }
    }

    fn open_turn(&mut self, sid: &str, at_ms: u64, prompted: bool, out: &mut Output) {
        self.resolve_parent(sid, out);
        let s = self.session(sid);
        let number = s.history.turns + 1;
        let salt = s.history.begin(at_ms);
        let resolved = s.parent.as_ref().and_then(|p| p.resolved);
        let label = s.attrs.id.clone();
        let trace_id = match resolved {
            Some((trace, _)) => trace,
            None => ids::turn_trace(&label, at_ms, salt),
        };
        let span_id = ids::turn_span(trace_id, &label, at_ms, salt);
        s.turn = Some(Turn {
            trace_id,
            span_id,
            parent: resolved.map(|(_, span)| span),
            prompted_ms: prompted.then_some(at_ms),
            first_ms: at_ms,
            last_ms: at_ms,
            calls: LinkedHashMap::new(),
            generation: 0,
            chats: 0,
            summary: TurnSummary {
                number,
                prompted,
                link: s.prev_root,
                ..TurnSummary::default()
            },
        });
    }
}

impl Turn {
    /// The span id of the `nth` use of call id `id` in this turn.
    fn tool_span(&self, id: &str, nth: u64) -> SpanId {
        ids::child_span(self.span_id, Role::Tool, id, nth + (self.generation << 32))
    }

    /// The span id of a stand-in for call `id`, never one a real use of `id` has.
    fn stand_in_span(&self, id: &str) -> SpanId {
        ids::child_span(
            self.span_id,
            Role::Tool,
            id,
            (1 << 31) + (self.generation << 32),
        )
    }

    fn touch(&mut self, at_ms: u64) {
        self.first_ms = self.first_ms.min(at_ms);
        self.last_ms = self.last_ms.max(at_ms);
    }

    fn turn_place(&self, span_id: SpanId) -> Place {
        Place {
            trace_id: self.trace_id,
            span_id,
            parent: Some(self.span_id),
        }
    }

    fn span_of(&self, call: &str) -> Option<SpanId> {
        self.calls.get(call).map(|c| c.span_id)
    }

    /// Whether `ancestor` is `start` or above it in the parent chain of `start`.
    fn is_ancestor(&self, ancestor: &str, start: &str) -> bool {
        let mut current = Some(start);
        for _ in 0..MAX_NESTING {
            match current {
                None => return false,
                Some(c) if c == ancestor => return true,
                Some(c) => current = self.calls.get(c).and_then(|n| n.parent.as_deref()),
            }
        }
        // A chain this long is treated as the cycle it almost certainly is.
        true
    }

    /// The parent call for call `id` that declared `within`, creating a stand-in span for a
    /// `within` never seen, and refusing a parent that would close a cycle.
    fn parent_for(
        &mut self,
        session: &str,
        id: &str,
        within: Option<&str>,
        out: &mut Output,
    ) -> Option<String> {
        let w = within?;
        if !self.calls.contains_key(w) && w != id {
            out.notes.push(Note::UnknownWithin {
                session: session.to_string(),
                call: id.to_string(),
                within: w.to_string(),
            });
            let span_id = self.stand_in_span(w);
            self.calls.insert(
                w.to_string(),
                CallNode {
                    span_id,
                    nth: 0,
                    parent: None,
                    open: Some(OpenCall {
                        name: None,
                        within: None,
                        start_ms: None,
                        children: None,
                    }),
                },
            );
        }
        if self.is_ancestor(id, w) {
            out.notes.push(Note::WithinCycle {
                session: session.to_string(),
                call: id.to_string(),
                within: w.to_string(),
            });
            return None;
        }
        Some(w.to_string())
    }

    /// Widens the time range of the open calls above `parent` to cover `start..end`, so a
    /// call that ends up synthesized spans all of its nested calls.
    fn cover(&mut self, parent: Option<&str>, start: u64, end: u64) {
        let mut current = parent.map(str::to_string);
        for _ in 0..MAX_NESTING {
            let Some(c) = current else { return };
            let Some(node) = self.calls.get_mut(&c) else {
                return;
            };
            if let Some(open) = node.open.as_mut() {
                open.children = Some(match open.children {
                    Some((a, b)) => (a.min(start), b.max(end)),
                    None => (start, end),
                });
            }
            current = node.parent.clone();
        }
    }

    fn parent_span(&self, parent: Option<&str>) -> SpanId {
        parent.and_then(|p| self.span_of(p)).unwrap_or(self.span_id)
    }
}

impl Session {
    /// Keeps the turn's call map within `max`: finished calls are forgotten first (they are
    /// exported already), then running ones are exported as unfinished.
    fn cap_calls(&mut self, max: usize, policy: &ContentPolicy, out: &mut Output) {
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        let max = max.max(1);
        if turn.calls.len() <= max {
            return;
        }
        let excess = turn.calls.len() - max;
        let done: Vec<String> = turn
            .calls
            .iter()
            .filter(|(_, n)| n.open.is_none())
            .map(|(k, _)| k.clone())
            .take(excess)
            .collect();
        for k in &done {
            turn.calls.remove(k);
        }
        turn.generation += 1;
        while turn.calls.len() > max {
            let Some((id, node)) = turn.calls.pop_front() else {
                break;
            };
            let parent = turn.parent_span(node.parent.as_deref());
            let end = turn.last_ms;
            emit_open(turn, &id, node, parent, end, policy, &self.attrs, out);
        }
        out.notes.push(Note::CallsEvicted {
            session: self.attrs.id.to_string(),
            calls: max,
        });
    }

    fn agent_info(&self, default_agent: &str) -> OwnedAgentInfo {
        (
            self.agent
                .clone()
                .unwrap_or_else(|| default_agent.to_string()),
            self.model.clone(),
            self.workspace.clone(),
            self.parent
                .as_ref()
                .map(|p| (p.session.clone(), p.call.clone())),
        )
    }

    fn on_calling(
        &mut self,
        at_ms: u64,
        call: &Call<'_>,
        policy: &ContentPolicy,
        out: &mut Output,
    ) {
        let sid = self.attrs.id.clone();
        let turn = self.turn.as_mut().expect("turn is open");
        turn.touch(at_ms);
        let id = call.id.as_ref();
        let within = call.within.as_deref();
        let nth = match turn.calls.get(id) {
            None => 0,
            // Only named as a `within` so far: now we know what it is.
            Some(CallNode {
                open: Some(OpenCall { start_ms: None, .. }),
                ..
            }) => {
                let parent = turn.parent_for(&sid, id, within, out);
                let node = turn.calls.get_mut(id).expect("present");
                node.parent = parent;
                let open = node.open.as_mut().expect("open");
                open.start_ms = Some(at_ms);
                open.name = Some(call.name.to_string());
                open.within = within.map(str::to_string);
                return;
            }
            // Announced twice while still running: the first is cut short here.
            Some(CallNode { open: Some(_), .. }) => {
                out.notes.push(Note::DuplicateCall {
                    session: sid.to_string(),
                    call: id.to_string(),
                });
                let node = turn.calls.remove(id).expect("present");
                let nth = node.nth + 1;
                let parent = turn.parent_span(node.parent.as_deref());
                emit_open(turn, id, node, parent, at_ms, policy, &self.attrs, out);
                nth
            }
            Some(done) => done.nth + 1,
        };
        let parent = turn.parent_for(&sid, id, within, out);
        turn.calls.insert(
            id.to_string(),
            CallNode {
                span_id: turn.tool_span(id, nth),
                nth,
                parent,
                open: Some(OpenCall {
                    name: Some(call.name.to_string()),
                    within: within.map(str::to_string),
                    start_ms: Some(at_ms),
                    children: None,
                }),
            },
        );
    }

    fn on_called(&mut self, called: &Called<'_>, policy: &ContentPolicy, out: &mut Output) {
        let sid = self.attrs.id.clone();
        let turn = self.turn.as_mut().expect("turn is open");
        let id = called.call.id.as_ref();
        let clamped = called.finished_ms < called.started_ms;
        if clamped {
            out.notes.push(Note::EndBeforeStart {
                session: sid.to_string(),
                id: id.to_string(),
            });
        }
        let (start, end) = (called.started_ms, called.finished_ms.max(called.started_ms));
        turn.touch(start);
        turn.touch(end);
        turn.summary.tool_calls += 1;

        let (span_id, nth) = match turn.calls.get(id) {
            Some(node) if node.open.is_some() => (node.span_id, node.nth),
            Some(node) => {
                out.notes.push(Note::DuplicateCall {
                    session: sid.to_string(),
                    call: id.to_string(),
                });
                let nth = node.nth + 1;
                (turn.tool_span(id, nth), nth)
            }
            None => (turn.tool_span(id, 0), 0),
        };
        let parent = turn.parent_for(&sid, id, called.call.within.as_deref(), out);
        turn.cover(parent.as_deref(), start, end);
        let place = Place {
            trace_id: turn.trace_id,
            span_id,
            parent: Some(turn.parent_span(parent.as_deref())),
        };
        let span = ToolSpan {
            place,
            call_id: id,
            name: Some(&called.call.name),
            within: called.call.within.as_deref(),
            start_ms: start,
            end_ms: end,
        }
        .finished(called, clamped, policy, &self.attrs);
        out.spans.push(span);
        turn.calls.insert(
            id.to_string(),
            CallNode {
                span_id,
                nth,
                parent,
                open: None,
            },
        );
    }

    fn on_call_sent(&mut self, sent: &CallSent<'_>, policy: &ContentPolicy, out: &mut Output) {
        let sid = self.attrs.id.clone();
        let turn = self.turn.as_mut().expect("turn is open");
        let clamped = sent.finished_ms < sent.started_ms;
        if clamped {
            out.notes.push(Note::EndBeforeStart {
                session: sid.to_string(),
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
        let key = sent.id.as_deref().unwrap_or("");
        let span_id = ids::child_span(turn.span_id, Role::Chat, key, turn.chats);
        turn.chats += 1;
        let place = turn.turn_place(span_id);
        out.spans
            .push(chat_span(place, sent, clamped, policy, &self.attrs));
    }

    /// Ends the open turn, if any: at `at_ms` when `turn_ended` said so, otherwise (cut short)
    /// at its last activity, marked unfinished. Calls still open are closed with it.
    fn end_turn(
        &mut self,
        at_ms: Option<u64>,
        reason: Option<&str>,
        config: &AssembleConfig,
        out: &mut Output,
    ) {
        let Some(mut turn) = self.turn.take() else {
            return;
        };
        let policy = &config.policy;
        let end_ms = at_ms.unwrap_or(turn.last_ms);
        // Open calls may be nested in finished ones or in each other: keep every span id
        // before the open nodes are taken out.
        let spans: HashMap<String, SpanId> = turn
            .calls
            .iter()
            .map(|(k, n)| (k.clone(), n.span_id))
            .collect();
        let mut open: Vec<(String, CallNode)> = turn
            .calls
            .drain()
            .filter(|(_, n)| n.open.is_some())
            .collect();
        if !open.is_empty() {
            out.notes.push(Note::Unfinished {
                session: self.attrs.id.to_string(),
                calls: open.len(),
            });
        }
        open.sort_by(|a, b| a.0.cmp(&b.0));
        for (id, node) in open {
            let parent = node
                .parent
                .as_deref()
                .and_then(|p| spans.get(p).copied())
                .unwrap_or(turn.span_id);
            emit_open(&turn, &id, node, parent, end_ms, policy, &self.attrs, out);
        }
        let start_ms = turn.prompted_ms.unwrap_or(turn.first_ms);
        let (agent, model, workspace, parent) = self.agent_info(&config.default_agent);
        let info = AgentInfo {
            name: &agent,
            model: model.as_deref(),
            workspace: workspace.as_deref(),
            parent: parent.as_ref().map(|(s, c)| (s.as_str(), c.as_str())),
        };
        let place = Place {
            trace_id: turn.trace_id,
            span_id: turn.span_id,
            parent: turn.parent,
        };
        self.prev_root = Some(SpanLink {
            trace_id: turn.trace_id,
            span_id: turn.span_id,
        });
        let summary = std::mem::take(&mut turn.summary);
        out.spans.push(turn_span(
            place,
            start_ms,
            end_ms,
            summary,
            &info,
            reason,
            at_ms.is_none(),
            policy,
            &self.attrs,
        ));
    }
}

#[allow(clippy::too_many_arguments)]
fn emit_open(
    turn: &Turn,
    id: &str,
    node: CallNode,
    parent: SpanId,
    end_ms: u64,
    policy: &ContentPolicy,
    session: &SessionAttrs,
    out: &mut Output,
) {
    let open = node.open.expect("only open calls are emitted here");
    let (start, end) = match (open.start_ms, open.children) {
        (Some(s), Some((a, b))) => (s.min(a), end_ms.max(b).max(s)),
        (Some(s), None) => (s, end_ms.max(s)),
        (None, Some((a, b))) => (a, b),
        (None, None) => (end_ms, end_ms),
    };
    let place = Place {
        trace_id: turn.trace_id,
        span_id: node.span_id,
        parent: Some(parent),
    };
    out.spans.push(
        ToolSpan {
            place,
            call_id: id,
            name: open.name.as_deref(),
            within: open.within.as_deref(),
            start_ms: start,
            end_ms: end,
        }
        .unfinished(open.start_ms.is_none(), policy, session),
    );
}

#[cfg(test)]
mod tests;
