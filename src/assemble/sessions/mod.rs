//! The session table: every open session, least recently active first, bounded; the turn
//! history of sessions that ended, so a session that comes back never reuses span ids; and
//! the link from a child session to the call that spawned it.

use std::sync::Arc;

use hashlink::linked_hash_map::RawEntryMut;
use hashlink::LinkedHashMap;

use super::attribution::Attribution;
use super::span::{SpanId, SpanLink, TraceId};
use super::spans::{turn_span, AgentInfo, SessionAttrs};
use super::turn::{Turn, TurnMut, WentOut};
use super::{AssembleConfig, Note, Output};
use crate::protocol::SessionInfo;

/// The tables are looked up by session id for every record: foldhash, seeded per process,
/// not SipHash.
type Fast = foldhash::fast::RandomState;

/// Sessions remembered after they end (about 100 bytes each).
const ENDED_REMEMBERED: usize = 50_000;

#[derive(Debug, Default)]
pub(super) struct SessionTable {
    /// In order of activity, least recent first: the front is evicted first.
    sessions: LinkedHashMap<String, Session, Fast>,
    /// The turn history of sessions that ended, so a session id that comes back does not
    /// reuse the ids of its earlier turns.
    ended: LinkedHashMap<String, TurnHistory, Fast>,
    /// Sessions being ended by [`SessionTable::finish_some`], last to end first.
    finishing: Vec<(String, Session)>,
}

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
    /// The last turn, if it ended at `turn_ended` and no prompt came since: what comes with
    /// no turn open continues it.
    went_out: Option<WentOut>,
    /// Who and where, for the turns that start from now on.
    attribution: Option<Arc<Attribution>>,
}

/// What a session's ids depend on besides the turn's own start: how many turns it had, and
/// when the latest began. Kept for a while after the session ends, in case it returns.
#[derive(Debug, Clone, Default)]
pub(super) struct TurnHistory {
    turns: u64,
    latest_start: Option<u64>,
}

impl TurnHistory {
    /// Records a turn starting at `at_ms`; returns its number (1 for the first) and what sets
    /// it apart from earlier turns of the session. Turns of a session start later and later,
    /// so normally nothing (0): the same turn then gets the same ids in any process that sees
    /// it (a replay, a restarted exporter). A turn that starts no later than one before it
    /// (the same turn sent twice, clocks gone backwards) is told apart by its number, which no
    /// other turn has.
    pub(super) fn begin(&mut self, at_ms: u64) -> (u64, u64) {
        let seq = self.turns;
        self.turns += 1;
        let salt = match self.latest_start {
            Some(latest) if at_ms <= latest => seq,
            _ => 0,
        };
        self.latest_start = Some(self.latest_start.map_or(at_ms, |l| l.max(at_ms)));
        (self.turns, salt)
    }
}

/// The session and call that started a child session.
#[derive(Debug)]
struct Parent {
    session: String,
    call: String,
    /// The parent call's span, once it has been found.
    resolved: Option<(TraceId, SpanId)>,
    reported: bool,
}

impl SessionTable {
    pub(super) fn len(&self) -> usize {
        self.sessions.len()
    }

    /// `sid`, made the most recently active session and opened if new; past the cap, the
    /// least recently active session is ended first.
    fn ensure(&mut self, sid: &str, config: &AssembleConfig, out: &mut Output) -> &mut Session {
        if !self.sessions.contains_key(sid) {
            while self.sessions.len() >= config.max_sessions.max(1) {
                let Some((key, mut old)) = self.sessions.pop_front() else {
                    break;
                };
                out.notes.push(Note::SessionEvicted {
                    session: old.attrs.id.to_string(),
                    open: self.sessions.len() + 1,
                });
                old.end_turn(None, None, None, config, out);
                self.remember_ended(key, old.history, config);
            }
        }
        match self.sessions.raw_entry_mut().from_key(sid) {
            RawEntryMut::Occupied(mut o) => {
                o.to_back();
                o.into_mut()
            }
            RawEntryMut::Vacant(v) => {
                let history = self.ended.remove(sid).unwrap_or_default();
                let id: Arc<str> = config.policy.label(sid).into();
                let session = Session {
                    attrs: SessionAttrs {
                        trace_session: id.clone(),
                        id,
                        agent: config.policy.name(&config.default_agent),
                    },
                    agent: None,
                    model: None,
                    workspace: None,
                    parent: None,
                    turn: None,
                    history,
                    prev_root: None,
                    went_out: None,
                    attribution: None,
                };
                v.insert(sid.to_string(), session).1
            }
        }
    }

    fn remember_ended(&mut self, sid: String, history: TurnHistory, config: &AssembleConfig) {
        self.ended.replace(sid, history);
        while self.ended.len() > ENDED_REMEMBERED.max(config.max_sessions) {
            self.ended.pop_front();
        }
    }

    /// Who and where, for `sid`'s turns from its next one on.
    pub(super) fn attribute(
        &mut self,
        sid: &str,
        attribution: Arc<Attribution>,
        config: &AssembleConfig,
        out: &mut Output,
    ) {
        self.ensure(sid, config, out).attribution = Some(attribution);
    }

    /// The folder `sid` works in, else the nearest of its parents' that names one.
    pub(super) fn workspace(&self, sid: &str) -> Option<&str> {
        let mut s = self.sessions.get(sid)?;
        // A chain of parents is short; the bound only stops a cycle a host could send.
        for _ in 0..16 {
            if let Some(w) = &s.workspace {
                return Some(w);
            }
            s = self.sessions.get(&s.parent.as_ref()?.session)?;
        }
        None
    }

    /// `session`: what the session is; a child names the call that spawned it.
    pub(super) fn describe(
        &mut self,
        sid: &str,
        info: &SessionInfo<'_>,
        config: &AssembleConfig,
        out: &mut Output,
    ) {
        // A child's traces belong to the session at the top of its chain of parents.
        let trace_session = info.parent.as_ref().map(|p| {
            self.sessions
                .get(p.session.as_ref())
                .map(|parent| parent.attrs.trace_session.clone())
                .unwrap_or_else(|| config.policy.label(&p.session).into())
        });
        let s = self.ensure(sid, config, out);
        if let Some(t) = trace_session {
            s.attrs.trace_session = t;
        }
        if let Some(a) = info.agent.as_deref() {
            s.attrs.agent = config.policy.name(a);
        }
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

    /// `closed`: the session's open turn ends, and the session is forgotten.
    pub(super) fn close(
        &mut self,
        sid: &str,
        at_ms: u64,
        config: &AssembleConfig,
        out: &mut Output,
    ) {
        if let Some(mut s) = self.sessions.remove(sid) {
            // The agent was there until its session closed: a turn cut short by the close
            // (its calls still running with it) lasted until then.
            s.end_turn(None, None, Some(at_ms), config, out);
            self.remember_ended(sid.to_string(), s.history, config);
        }
    }

    /// The open turn of `sid`, opening one (not prompted) at `at_ms` if there is none: a
    /// continuation of the last turn if it ended and no prompt came since (a child session's
    /// turns go under the call that spawned it instead).
    pub(super) fn turn(
        &mut self,
        sid: &str,
        at_ms: u64,
        config: &AssembleConfig,
        out: &mut Output,
    ) -> TurnMut<'_> {
        let parent = match self.ensure(sid, config, out).turn {
            Some(_) => None,
            None => self.resolve_parent(sid, out),
        };
        self.ensure(sid, config, out)
            .turn_or_open(at_ms, false, parent)
    }

    /// `prompted`: a new turn, ending whatever turn was cut short.
    pub(super) fn prompted(
        &mut self,
        sid: &str,
        at_ms: u64,
        config: &AssembleConfig,
        out: &mut Output,
    ) -> TurnMut<'_> {
        let s = self.ensure(sid, config, out);
        s.end_turn(None, None, None, config, out);
        s.went_out = None;
        let parent = self.resolve_parent(sid, out);
        self.ensure(sid, config, out)
            .turn_or_open(at_ms, true, parent)
    }

    /// `turn_ended`: the open turn ends at `at_ms`.
    pub(super) fn turn_ended(
        &mut self,
        sid: &str,
        at_ms: u64,
        reason: Option<&str>,
        config: &AssembleConfig,
        out: &mut Output,
    ) {
        let s = self.ensure(sid, config, out);
        if s.turn.is_none() {
            out.notes.push(Note::TurnEndedWithoutTurn {
                session: s.attrs.id.to_string(),
            });
        } else {
            s.end_turn(Some(at_ms), reason, None, config, out);
        }
    }

    /// Finds the span of the call that started child session `sid`, if it is known now.
    fn resolve_parent(&mut self, sid: &str, out: &mut Output) -> Option<(TraceId, SpanId)> {
        let parent = self.sessions.get(sid)?.parent.as_ref()?;
        if parent.resolved.is_some() {
            return parent.resolved;
        }
        let found = self
            .sessions
            .get(&parent.session)
            .and_then(|ps| ps.turn.as_ref())
            .and_then(|t| t.call_span(&parent.call));
        let parent = self.sessions.get_mut(sid)?.parent.as_mut()?;
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
        found
    }

    /// End of input, a few sessions at a time: ends up to `max` open sessions and says
    /// whether any are left.
    pub(super) fn finish_some(
        &mut self,
        config: &AssembleConfig,
        out: &mut Output,
        max: usize,
    ) -> bool {
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
            s.end_turn(None, None, None, config, out);
        }
        !self.finishing.is_empty() || !self.sessions.is_empty()
    }
}

impl Session {
    /// The open turn, opened at `at_ms` if there is none; `parent` is the span of the call
    /// that spawned this (child) session, if it is known.
    fn turn_or_open(
        &mut self,
        at_ms: u64,
        prompted: bool,
        parent: Option<(TraceId, SpanId)>,
    ) -> TurnMut<'_> {
        let Session {
            attrs,
            turn,
            history,
            prev_root,
            went_out,
            attribution,
            parent: self_parent,
            ..
        } = self;
        let went_out =
            (*went_out).filter(|_| parent.is_none() && !prompted && self_parent.is_none());
        let turn = turn.get_or_insert_with(|| {
            if let Some(w) = went_out {
                let mut t = Turn::continuing(&attrs.id, at_ms, w);
                t.summary.attribution = attribution.clone();
                return t;
            }
            let (number, salt) = history.begin(at_ms);
            let mut t = Turn::open(&attrs.id, at_ms, number, salt, prompted, parent, *prev_root);
            t.summary.attribution = attribution.clone();
            t
        });
        TurnMut {
            turn,
            session: attrs,
        }
    }

    /// Ends the open turn, if any: at `at_ms` when `turn_ended` said so, otherwise (cut short)
    /// at its last activity or `alive_ms`, whichever is later, marked unfinished. Calls still
    /// open are closed with it.
    fn end_turn(
        &mut self,
        at_ms: Option<u64>,
        reason: Option<&str>,
        alive_ms: Option<u64>,
        config: &AssembleConfig,
        out: &mut Output,
    ) {
        let Some(turn) = self.turn.take() else {
            return;
        };
        // The next prompt's turn links to the root of the turn this one continues, if it does.
        self.prev_root = Some(turn.root_link());
        self.went_out = at_ms.map(|_| turn.went_out);
        let policy = &config.policy;
        let (place, start_ms, end_ms, summary) =
            turn.end(at_ms, alive_ms, policy, &self.attrs, out);
        let agent = self
            .agent
            .clone()
            .unwrap_or_else(|| config.default_agent.clone());
        let info = AgentInfo {
            name: &agent,
            model: self.model.as_deref(),
            workspace: self.workspace.as_deref(),
            parent: self
                .parent
                .as_ref()
                .map(|p| (p.session.as_str(), p.call.as_str())),
        };
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

mod handover;
