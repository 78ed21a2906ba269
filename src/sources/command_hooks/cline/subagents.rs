//! Sub-agents: Cline's `spawn_agent` tool runs one, which sends the same hooks as its parent
//! with its own `agent_id` and its parent's as `parent_agent_id`, and names neither the call
//! that started it nor its task. It is a session of its own, under the `spawn_agent` call of
//! its parent whose `task` is the first message of its messages file (else the oldest still
//! without a sub-agent), with that file's model calls; its one turn's end closes it. Cline
//! runs its hooks without waiting for them, so a sub-agent's first hooks can reach the
//! journal before its call's: its records then wait for that call, a second at most.

use std::borrow::Cow;

use serde::Deserialize;

use crate::sources::command_hooks::engine::files::Transcripts;
use crate::sources::command_hooks::engine::records::session_opened_under;
use crate::sources::command_hooks::engine::session_key;
use super::{models, Adapter, Payload, Session, AGENT, READ_GRACE_MS};
use crate::protocol::{Event, Record};

/// The tool that starts a sub-agent.
pub const TOOL: &str = "spawn_agent";

/// What `spawn_agent` is called with.
#[derive(Debug, Deserialize)]
struct SpawnInput {
    #[serde(default)]
    task: Option<String>,
}

/// A sub-agent whose call has not come yet: where it will go, and its records meanwhile.
#[derive(Debug)]
pub(super) struct Waiting {
    /// Its parent agent's session.
    parent: String,
    at_ms: u64,
    cwd: Option<String>,
    task: Option<String>,
    held: Vec<Record<'static>>,
}

impl Adapter {
    /// The session of sub-agent `agent` (whose parent agent is `parent`) of top session
    /// `top`: opened by its first payload, under the call that started it, or waiting for it.
    #[allow(clippy::too_many_arguments)] // the sub-agent, then its payload, when, and where to
    pub(super) fn sub_agent(
        &mut self,
        top: &str,
        agent: &str,
        parent: &str,
        p: &Payload,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> String {
        let key = session_key::sub_agent(top, agent);
        if self.sessions.get(&key).is_some_and(|s| s.started) {
            return key;
        }
        // A sub-agent's sub-agent sits under its parent's session; the user's own agent is
        // the top session.
        let nested = session_key::sub_agent(top, parent);
        let parent = if self.sessions.contains_key(&nested) {
            nested
        } else {
            top.to_string()
        };
        let path = p.messages_path.as_deref().filter(|p| !p.is_empty());
        let task = path.and_then(|path| models::task(path, files));
        let cwd = p.workspace_roots.first().cloned();
        let s = self.sessions.entry(key.clone()).or_default();
        s.started = true;
        s.sub = true;
        s.waiting = Some(Waiting {
            parent,
            at_ms,
            cwd,
            task,
            held: Vec::new(),
        });
        let children = &mut self.sessions.entry(top.to_string()).or_default().children;
        if !children.contains(&key) {
            children.push(key.clone());
        }
        self.place(&key, false, files, out);
        key
    }

    /// Takes payload `p` of session `sid`: held back while `sid` waits for its call. A
    /// `spawn_agent` call may be the one a sub-agent waits for.
    pub(super) fn route(
        &mut self,
        sid: &str,
        p: &Payload,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        if self.sessions.get(sid).is_some_and(|s| s.waiting.is_some()) {
            let mut held = Vec::new();
            self.take(sid, p, at_ms, files, &mut held);
            if let Some(w) = self.sessions.get_mut(sid).and_then(|s| s.waiting.as_mut()) {
                w.held.append(&mut held);
            }
        } else {
            self.take(sid, p, at_ms, files, out);
        }
        let spawns =
            p.hook_name == "tool_call" && p.tool_call.as_ref().is_some_and(|c| c.name == TOOL);
        if !spawns {
            return;
        }
        let Some(top) = self.sessions.get(session_key::top(sid)) else {
            return;
        };
        let mut waiting: Vec<(u64, String)> = top
            .children
            .iter()
            .filter_map(|c| {
                let w = self.sessions.get(c)?.waiting.as_ref()?;
                (w.parent == sid).then(|| (w.at_ms, c.clone()))
            })
            .collect();
        waiting.sort();
        for (_, child) in waiting {
            self.place(&child, false, files, out);
        }
    }

    /// Sub-agents that waited a second for their call go out, under the oldest call still
    /// without one if there is one, else as traces of their own.
    pub(super) fn give_up_waiting(
        &mut self,
        now_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let mut late: Vec<(u64, String)> = self
            .sessions
            .iter()
            .filter_map(|(k, s)| Some((s.waiting.as_ref()?.at_ms, k.clone())))
            .filter(|(at, _)| now_ms >= at.saturating_add(READ_GRACE_MS))
            .collect();
        late.sort();
        for (_, child) in late {
            self.place(&child, true, files, out);
        }
    }

    /// Opens waiting sub-agent `child` under its call, then its records held so far; where
    /// no call is its yet, it waits on, unless `give_up`.
    pub(super) fn place(
        &mut self,
        child: &str,
        give_up: bool,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(s) = self.sessions.get_mut(child) else {
            return;
        };
        let Some(w) = s.waiting.as_mut() else {
            return;
        };
        if w.task.is_none() {
            // Its file may have been written since.
            w.task = s.messages.as_deref().and_then(|p| models::task(p, files));
        }
        let (parent, task, at_ms) = (w.parent.clone(), w.task.clone(), w.at_ms);
        let call = self
            .sessions
            .get_mut(&parent)
            .and_then(|ps| claim(ps, task.as_deref(), give_up, at_ms));
        if call.is_none() && !give_up {
            return;
        }
        let Some(s) = self.sessions.get_mut(child) else {
            return;
        };
        let Some(w) = s.waiting.take() else {
            return;
        };
        let cwd = w.cwd.as_deref();
        let under = call.as_ref().map(|(call, _)| (parent.as_str(), call.as_str()));
        out.push(session_opened_under(child, at_ms, AGENT, cwd, under));
        let task = task.or_else(|| call.and_then(|(_, given)| given));
        if w.held.is_empty() {
            // Its turn is still to begin: with its task as its prompt.
            s.task = task;
        } else {
            out.extend(
                w.held
                    .into_iter()
                    .map(|r| prompted_with(r, task.as_deref())),
            );
        }
    }
}

/// A held record, its turn's prompt (held before the task was known) given the `task`.
fn prompted_with(mut r: Record<'static>, task: Option<&str>) -> Record<'static> {
    if let (Event::Prompted { text, .. }, Some(task)) = (&mut r.event, task) {
        if text.is_empty() {
            *text = Cow::Owned(task.to_string());
        }
    }
    r
}

/// Takes the `spawn_agent` call of `ps`'s open turn that started a sub-agent begun at `at_ms`
/// with `task`: the one given that task; else, with no task known or `any`, the oldest
/// without a sub-agent. Returns its id and the task it gave.
fn claim(
    ps: &mut Session,
    task: Option<&str>,
    any: bool,
    at_ms: u64,
) -> Option<(String, Option<String>)> {
    let turn = ps.turn.as_mut()?;
    let given = |input: &Option<Box<serde_json::value::RawValue>>| {
        let input = input.as_ref()?;
        serde_json::from_str::<SpawnInput>(input.get()).ok()?.task
    };
    let free: Vec<(usize, Option<String>)> = turn
        .pending
        .iter()
        .enumerate()
        .filter(|(_, c)| c.name == TOOL && !turn.own.spawned.iter().any(|(s, _)| *s == c.id))
        .map(|(i, c)| (i, given(&c.input)))
        .collect();
    let named = free
        .iter()
        .find(|(_, t)| task.is_some() && t.as_deref() == task);
    let oldest = free.first().filter(|_| task.is_none() || any);
    let (i, given) = named.or(oldest).cloned()?;
    let id = turn.pending[i].id.clone();
    turn.own.spawned.push((id.clone(), at_ms));
    Some((id, given))
}
