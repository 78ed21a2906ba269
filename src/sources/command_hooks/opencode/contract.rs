//! opencode's rules for the session engine ([`AgentRules`]), and its spec; its payload is
//! boxed, the largest by far.

use super::{Adapter, Payload, Session};
use crate::protocol::Record;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::files::Transcripts;
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of opencode.
pub const SPEC: Spec = Spec {
    name: "opencode",
    title: "opencode",
    folder: module_path!(),
    holds: "opencode's plugin events to records, its sub-agents under their `task` call; the plugin `install` writes",
    extends: None,
    cli: Some(spec::Cli {
        package: "opencode-ai",
        version: "1.18.33",
        bin: "opencode",
        var: "OPENCODE_BIN",
        node22: false,
    }),
    passes_its_environment: true,
    streams: true,
    journal_under: spec::own_journal,
    rewrite: spec::as_sent,
    runs_ours_too: spec::runs_ours_once,
    install: spec::Install {
        about: "opencode: a plugin of albedo-otel's own, $XDG_CONFIG_HOME/opencode/plugin/albedo-otel.js (default ~/.config), or ./.opencode/plugin/albedo-otel.js",
        // opencode takes the XDG layout everywhere, macOS too.
        user_file: |env| match env("XDG_CONFIG_HOME").filter(|h| !h.is_empty()) {
            Some(dir) => Some(std::path::Path::new(&dir).join("opencode/plugin/albedo-otel.js")),
            None => spec::under_home(env, ".config/opencode/plugin/albedo-otel.js"),
        },
        user_needs: "XDG_CONFIG_HOME or HOME",
        project_file: ".opencode/plugin/albedo-otel.js",
        form: spec::Form::Plugin(spec::Plugin {
            events: super::HOOK_EVENTS,
            text: super::plugin,
            command_in: super::plugin_command,
        }),
        asks_trust: false,
        one_run_per_command: false,
    },
};

/// The daemon's adapter for this agent (`grace_ms`: how long a held stop waits for its
/// continuation), for the list in `command_hooks/mod.rs`.
pub(crate) fn adapter(_grace_ms: u64) -> Box<dyn crate::sources::command_hooks::adapter::Dispatch> {
    Box::new(Adapter::new())
}

impl AgentRules for Adapter {
    type Payload = Box<Payload>;
    type Session = Session;

    fn session_of(p: &Box<Payload>) -> &str {
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
        p: Box<Payload>,
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
#[cfg(feature = "store")]
pub const HISTORY: spec::History = spec::History::Database(spec::HistoryDatabase {
    roots: super::history::roots,
    is_database: super::history::is_database,
    records: super::history::records,
});

/// Without the store, nothing to import into.
#[cfg(not(feature = "store"))]
pub const HISTORY: spec::History = spec::History::Cannot("this build has no local store");
