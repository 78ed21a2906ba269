//! Cline CLI's rules for the session engine ([`AgentRules`]): its turns'
//! model calls are read from the session's messages file it is handed as `files`.

use super::{Adapter, Payload, Session, finish, READ_GRACE_MS};
use crate::protocol::{Event, Record};
use crate::sources::command_hooks::engine::records::record;
use crate::sources::command_hooks::engine::session_key;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::engine::files::{FileCursor, Transcripts};
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Cline CLI.
pub const SPEC: Spec = Spec {
    name: "cline",
    title: "Cline CLI",
    folder: module_path!(),
    holds: "Cline CLI's hooks for the turn and the calls, its messages files for the model calls, its sub-agents under their `spawn_agent` call; the hook scripts `install` writes",
    extends: None,
    cli: Some(spec::Cli {
        package: "cline",
        version: "3.0.65",
        bin: "cline",
        var: "CLINE_BIN",
        node22: false,
    }),
    // Cline runs its hooks with its own whole environment.
    passes_its_environment: true,
    streams: false,
    journal_under: super::root_session,
    rewrite: super::journaled,
    runs_ours_too: spec::runs_ours_once,
    install: spec::Install {
        about: "Cline CLI: a script per event in ~/.cline/hooks/ (default; $CLINE_DIR/hooks when set) or ./.cline/hooks/",
        user_file: |env| match env("CLINE_DIR").filter(|d| !d.is_empty()) {
            Some(dir) => Some(std::path::Path::new(&dir).join("hooks")),
            None => spec::under_home(env, ".cline/hooks"),
        },
        user_needs: "CLINE_DIR or HOME",
        project_file: ".cline/hooks",
        form: spec::Form::Scripts(spec::Scripts {
            events: super::HOOK_EVENTS,
            text: super::scripts::text,
            command_in: super::scripts::command_in,
        }),
        asks_trust: false,
        one_run_per_command: false,
    },
};

/// The daemon's adapter for this agent, for the list in `command_hooks/mod.rs`.
pub(crate) fn adapter(_grace_ms: u64) -> Box<dyn crate::sources::command_hooks::engine::adapter::Dispatch> {
    Box::new(Adapter::new())
}

impl AgentRules for Adapter {
    type Payload = Payload;
    type Session = Session;

    fn session_of(p: &Payload) -> &str {
        p.session()
    }

    fn sessions(&self) -> &Sessions<Session> {
        &self.sessions
    }

    fn busy(s: &Session) -> bool {
        s.turn.is_some() || !s.children.is_empty()
    }

    /// Takes one payload received at `received_ms`; appends records to `out`.
    fn take(
        &mut self,
        p: Payload,
        received_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let p = &p;
        let top = p.session();
        let at_ms = p.at_ms().unwrap_or(received_ms);
        let sid = match p.sub_agent() {
            Some((agent, parent)) => self.sub_agent(top, agent, parent, p, at_ms, files, out),
            // A parent named, but no agent of its own: whose payload it is cannot be told.
            None if p.parent_agent_id.as_deref().is_some_and(|a| !a.is_empty()) => return,
            None => top.to_string(),
        };
        self.route(&sid, p, at_ms, files, out);
    }

    /// Ends each turn whose end is old enough for its messages to be written.
    fn tick(&mut self, now_ms: u64, files: &mut dyn Transcripts, out: &mut Vec<Record<'static>>) {
        self.give_up_waiting(now_ms, files, out);
        let mut closed = Vec::new();
        for (sid, s) in self.sessions.iter_mut() {
            let Some(turn) = s.turn.as_ref() else {
                continue;
            };
            let Some((stop_at, _)) = turn.stop else {
                continue;
            };
            if now_ms < stop_at.saturating_add(READ_GRACE_MS) {
                continue;
            }
            let closes = turn.own.closes;
            finish(sid, s, now_ms, files, out);
            if closes {
                out.push(record(sid, Event::Closed { at_ms: stop_at }));
                closed.push(sid.clone());
            }
        }
        // Sub-agents first: a session's end gives up on those of its sub-agents still open.
        closed.sort_by_key(|sid| session_key::top(sid) == sid.as_str());
        for sid in closed {
            // A sub-agent still open when its session ended will send nothing more.
            let children = self.forget(&sid).map(|s| s.children).unwrap_or_default();
            for child in children {
                self.close_child(&child, now_ms, files, out);
            }
        }
    }

    /// Gives up on a session that will send nothing more, its sub-agents first: its open
    /// turn's model calls go out, its running calls stay open, and the session's close (when
    /// returned) marks them unfinished.
    fn give_up(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> Option<u64> {
        let children = self
            .sessions
            .get(id)
            .map(|s| s.children.clone())
            .unwrap_or_default();
        for child in children {
            self.close_child(&child, at_ms, files, out);
        }
        self.give_up_one(id, at_ms, files, out)
    }

    fn cursor(&self, id: &str) -> Option<FileCursor> {
        let s = self.sessions.get(id)?;
        s.read.clone().or_else(|| s.resumed.clone())
    }

    fn resume(&mut self, id: &str, at: FileCursor) {
        if at.offset > 0 {
            self.sessions.entry(id.to_string()).or_default().resumed = Some(at);
        }
    }
}

/// How `import` reads this agent's history (apart from [`SPEC`], so that the hook, which reads
/// the spec, links none of it).
pub const HISTORY: spec::History = spec::History::Files(spec::HistoryFiles {
    roots: super::history::roots,
    is_session: super::history::is_session,
    records: super::history::records,
});
