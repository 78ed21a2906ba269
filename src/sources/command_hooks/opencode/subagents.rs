//! Opening a session, a sub-agent's under the `task` call that started it: opencode creates
//! the sub-agent's session while that call is still pending, and the call's running state
//! names it, so the opening waits.

use std::borrow::Cow;

use super::super::records::{record, session_opened};
use super::Adapter;
use crate::protocol::{Event, ParentRef, Record, SessionInfo};

impl Adapter {
    /// Opens session `sid` (once). A sub-agent's `session.created` comes while the `task`
    /// call that starts it is still pending: its opening waits for that call to run (and
    /// name it), or for its own first event.
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
        if let Some(p) = parent.filter(|p| *p != sid) {
            s.parent = Some(p.to_string());
            s.opening = Some((at_ms, cwd.map(str::to_string)));
            return;
        }
        let (at_ms, cwd) = s.opening.take().unwrap_or((at_ms, cwd.map(str::to_string)));
        // Its call never named it: the latest `task` call still running without a sub-agent.
        let call = s.parent.clone().and_then(|p| {
            let ps = self.sessions.get(&p)?;
            let call = ps
                .turn
                .as_ref()?
                .pending
                .iter()
                .filter(|c| c.name == "task" && !ps.spawned.contains(&c.id))
                .max_by_key(|c| c.at_ms)?;
            Some((p, call.id.clone()))
        });
        self.opened(sid, at_ms, cwd, call, out);
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
        match call {
            Some((session, call)) => out.push(record(
                sid,
                Event::Session(SessionInfo {
                    at_ms,
                    agent: Some(Cow::Borrowed(self.agent)),
                    model: None,
                    workspace: cwd.map(Cow::Owned),
                    parent: Some(ParentRef {
                        session: Cow::Owned(session),
                        call: Cow::Owned(call),
                    }),
                }),
            )),
            None => out.push(session_opened(sid, at_ms, self.agent, cwd.as_deref())),
        }
    }
}
