//! Opening a session, a sub-agent's under the `task` call that started it: opencode creates
//! the sub-agent's session while that call is still pending, and the call's running state
//! names it, so the opening waits. The sub-agent's own first events can reach the plugin
//! before that running state does (its prompt comes by a plugin hook, the call's state by
//! the event bus, which lags under load): they are held until the call runs, a grace at most.


use crate::sources::command_hooks::engine::records::session_opened_under;
use super::{Adapter, Payload, EXITED};
use crate::sources::command_hooks::engine::AgentRules;
use crate::sources::command_hooks::engine::files::NoTranscripts;
use crate::protocol::Record;

/// How long a sub-agent's events wait for the call that starts it before it opens without
/// one (under its parent's latest `task` call, or as a turn of its own).
pub const OPENING_GRACE_MS: u64 = 2_000;

/// A sub-agent's session created but not opened yet: when it was created, where, and the
/// events it sent while waiting for its call (each with when the journal got it).
#[derive(Debug, Default)]
pub(super) struct Opening {
    at_ms: u64,
    cwd: Option<String>,
    held: Vec<(u64, Payload)>,
}

impl Adapter {
    /// Opens session `sid` (once). A sub-agent's `session.created` comes while the `task`
    /// call that starts it is still pending: its opening waits for that call to run (and
    /// name it).
    pub(super) fn open_session(
        &mut self,
        sid: &str,
        at_ms: u64,
        cwd: Option<&str>,
        parent: Option<&str>,
        out: &mut Vec<Record<'static>>,
    ) {
        let s = self.sessions.entry(sid.to_string()).or_default();
        if s.started {
            return;
        }
        let cwd = cwd.map(str::to_string);
        match parent.filter(|p| *p != sid) {
            Some(p) => {
                s.parent = Some(p.to_string());
                s.opening = Some(Opening {
                    at_ms,
                    cwd,
                    held: Vec::new(),
                });
            }
            None => self.opened(sid, at_ms, cwd, None, out),
        }
    }

    /// Whether event `p` of session `sid` waits: `sid` is a sub-agent whose call has not
    /// run yet. One of its parent's `task` calls already running without a sub-agent is
    /// taken as its call instead (an opencode whose running state names none).
    pub(super) fn waits(
        &mut self,
        sid: &str,
        received_ms: u64,
        p: &Payload,
        out: &mut Vec<Record<'static>>,
    ) -> bool {
        let waiting = self
            .sessions
            .get(sid)
            .is_some_and(|s| !s.started && s.opening.is_some());
        if !waiting || p.hook_event_name == EXITED || p.hook_event_name == "session.created" {
            return false;
        }
        if let Some(call) = self.unclaimed_task(sid) {
            self.release(sid, Some(call), out);
            return false;
        }
        let s = self.sessions.get_mut(sid).expect("waiting, above");
        let w = s.opening.as_mut().expect("waiting, above");
        w.held.push((received_ms, p.clone()));
        true
    }

    /// The latest `task` call of `sid`'s parent that is running without a sub-agent.
    fn unclaimed_task(&self, sid: &str) -> Option<(String, String)> {
        let p = self.sessions.get(sid)?.parent.clone()?;
        let ps = self.sessions.get(&p)?;
        let call = ps
            .turn
            .as_ref()?
            .pending
            .iter()
            .filter(|c| c.name == "task" && !ps.spawned.contains(&c.id))
            .max_by_key(|c| c.at_ms)?;
        Some((p, call.id.clone()))
    }

    /// Opens waiting sub-agent `child` under `call` or, with none given, under its parent's
    /// latest `task` call still running without a sub-agent (as a turn of its own if there
    /// is none), then takes the events it held.
    pub(super) fn release(
        &mut self,
        child: &str,
        call: Option<(String, String)>,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(w) = self.sessions.get_mut(child).and_then(|s| s.opening.take()) else {
            return;
        };
        let call = call.or_else(|| self.unclaimed_task(child));
        self.opened(child, w.at_ms, w.cwd, call, out);
        for (received_ms, p) in w.held {
            self.take(Box::new(p), received_ms, &mut NoTranscripts, out);
        }
    }

    /// Sub-agents of `parent` (or of any session, with `None`) that hold events and, with
    /// `due_ms`, have held them since that time or earlier: oldest first.
    pub(super) fn holding(&self, parent: Option<&str>, due_ms: Option<u64>) -> Vec<String> {
        let mut found: Vec<(u64, String)> = self
            .sessions
            .iter()
            .filter(|(_, s)| parent.is_none_or(|p| s.parent.as_deref() == Some(p)))
            .filter_map(|(id, s)| Some((s.opening.as_ref()?.held.first()?.0, id.clone())))
            .filter(|(since, _)| due_ms.is_none_or(|due| *since <= due))
            .collect();
        found.sort();
        found.into_iter().map(|(_, id)| id).collect()
    }

    /// Says session `sid` opened, under `call` (its parent session and the call's id).
    pub(super) fn opened(
        &mut self,
        sid: &str,
        at_ms: u64,
        cwd: Option<String>,
        call: Option<(String, String)>,
        out: &mut Vec<Record<'static>>,
    ) {
        let mut floor_ms = 0;
        if let Some((parent, id)) = &call {
            if let Some(ps) = self.sessions.get_mut(parent) {
                ps.spawned.insert(id.clone());
                let started = ps
                    .turn
                    .as_ref()
                    .and_then(|t| t.pending.iter().find(|c| &c.id == id).map(|c| c.at_ms));
                floor_ms = started.unwrap_or(0);
            }
        }
        let s = self.sessions.entry(sid.to_string()).or_default();
        s.floor_ms = floor_ms;
        s.started = true;
        s.opening = None;
        let under = call.as_ref().map(|(session, call)| (session.as_str(), call.as_str()));
        out.push(session_opened_under(sid, at_ms, self.agent, cwd.as_deref(), under));
    }
}
