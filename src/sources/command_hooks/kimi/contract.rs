//! Kimi Code's rules for the session engine ([`AgentRules`]): its turns'
//! calls are read from the session's `wire.jsonl` files, handed as `files`; and its spec:
//! `[[hooks]]` tables in Kimi's `config.toml`.

use super::{Adapter, Payload, Session};
use crate::protocol::Record;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::files::{FileCursor, Transcripts};
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Kimi Code.
pub const SPEC: Spec = Spec {
    name: "kimi",
    title: "Kimi Code",
    folder: module_path!(),
    holds: "Kimi Code's hooks for the turn, its `wire.jsonl` files for the calls and sub-agents",
    extends: None,
    cli: Some(spec::Cli {
        package: "@moonshot-ai/kimi-code",
        version: "2.1.0",
        bin: "kimi",
        var: "KIMI_BIN",
        node22: true,
    }),
    // Kimi runs its hooks with its own whole environment: its `OTEL_*` are the user's shell's.
    passes_its_environment: true,
    streams: false,
    journal_under: spec::own_journal,
    rewrite: super::with_home,
    runs_ours_too: spec::runs_ours_once,
    install: spec::Install {
        about: "Kimi Code: [[hooks]] tables in $KIMI_CODE_HOME/config.toml (default ~/.kimi-code); Kimi has no project scope",
        user_file: |env| match env("KIMI_CODE_HOME").filter(|h| !h.is_empty()) {
            Some(home) => Some(std::path::Path::new(&home).join("config.toml")),
            None => spec::under_home(env, ".kimi-code/config.toml"),
        },
        user_needs: "KIMI_CODE_HOME or HOME",
        // Kimi reads hooks from its home's `config.toml` alone.
        project_file: "",
        form: spec::Form::TomlTables(spec::TomlTables {
            events: super::HOOK_EVENTS,
            tool_events: &[],
            timeout: 10,
        }),
        asks_trust: false,
        one_run_per_command: false,
    },
};

/// The daemon's adapter for this agent, for the list in `command_hooks/mod.rs`.
pub(crate) fn adapter(_grace_ms: u64) -> Box<dyn crate::sources::command_hooks::adapter::Dispatch> {
    Box::new(Adapter::new())
}

impl AgentRules for Adapter {
    type Payload = Payload;
    type Session = Session;

    fn session_of(p: &Payload) -> &str {
        &p.session_id
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
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        self.push(at_ms, &p, files, out);
    }

    fn tick(&mut self, now_ms: u64, files: &mut dyn Transcripts, out: &mut Vec<Record<'static>>) {
        Adapter::tick(self, now_ms, files, out);
    }

    fn give_up(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> Option<u64> {
        Adapter::give_up(self, id, at_ms, files, out)
    }

    fn cursor(&self, id: &str) -> Option<FileCursor> {
        Adapter::cursor(self, id)
    }

    fn resume(&mut self, id: &str, at: FileCursor) {
        Adapter::resume(self, id, at);
    }
}

/// How `import` reads this agent's history (apart from [`SPEC`], so that the hook, which reads
/// the spec, links none of it).
pub const HISTORY: spec::History = spec::History::Files(spec::HistoryFiles {
    roots: super::history::roots,
    is_session: super::history::is_session,
    records: super::history::records,
});
