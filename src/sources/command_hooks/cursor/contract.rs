//! Cursor's rules for the session engine ([`AgentRules`]), and its spec:
//! a `hooks.json` of Cursor's own, `{"version": 1, "hooks": {event: [{command}]}}`.

use super::{Adapter, Payload, Session};
use crate::protocol::Record;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::files::Transcripts;
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Cursor.
pub const SPEC: Spec = Spec {
    name: "cursor",
    title: "Cursor",
    folder: module_path!(),
    holds: "Cursor's hooks (its own `hooks.json`, or Claude Code's settings) to records",
    extends: None,
    cli: None,
    // Cursor runs its hooks with the environment it was started with: its `OTEL_*` are the
    // user's shell's.
    passes_its_environment: true,
    streams: false,
    journal_under: super::conversation,
    rewrite: |payload, _| super::journaled(payload),
    runs_ours_too: super::runs_ours_too,
    install: spec::Install {
        about: "Cursor: ~/.cursor/hooks.json (default) or ./.cursor/hooks.json",
        user_file: |env| spec::under_home(env, ".cursor/hooks.json"),
        user_needs: "HOME",
        project_file: ".cursor/hooks.json",
        form: spec::Form::Flat(spec::Flat {
            events: super::HOOK_EVENTS,
            known: super::KNOWN_EVENTS,
            version: 1,
        }),
        asks_trust: false,
        one_run_per_command: false,
    },
};

/// The daemon's adapter for this agent (`grace_ms`: how long a `stop` waits for a
/// follow-up's continuation), for the list in `command_hooks/mod.rs`.
pub(crate) fn adapter(grace_ms: u64) -> Box<dyn crate::sources::command_hooks::adapter::Dispatch> {
    Box::new(Adapter::with_grace(grace_ms))
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
        s.turn.is_some()
    }

    fn take(
        &mut self,
        p: Payload,
        at_ms: u64,
        _: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        self.push(at_ms, &p, out);
    }

    fn tick(&mut self, now_ms: u64, _: &mut dyn Transcripts, out: &mut Vec<Record<'static>>) {
        Adapter::tick(self, now_ms, out);
    }

    fn give_up(
        &mut self,
        id: &str,
        at_ms: u64,
        _: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> Option<u64> {
        Adapter::give_up(self, id, at_ms, out)
    }
}

/// How `import` reads this agent's history (apart from [`SPEC`], so that the hook, which reads
/// the spec, links none of it).
pub const HISTORY: spec::History = spec::History::Cannot("Cursor keeps no token usage in its files: there is nothing to count");
