//! Pi's rules for the session engine ([`AgentRules`]), and its spec.

use super::{Adapter, Payload, Session};
use crate::protocol::Record;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::files::Transcripts;
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Pi.
pub const SPEC: Spec = Spec {
    name: "pi",
    title: "Pi",
    folder: module_path!(),
    holds: "Pi's extension events to records; the extension `install` writes",
    extends: None,
    cli: Some(spec::Cli {
        package: "@earendil-works/pi-coding-agent",
        version: "1.6.0",
        bin: "pi",
        var: "PI_BIN",
        node22: true,
    }),
    passes_its_environment: true,
    streams: true,
    journal_under: spec::own_journal,
    rewrite: spec::as_sent,
    runs_ours_too: spec::runs_ours_once,
    install: spec::Install {
        about: "Pi: an extension of albedo-otel's own, $PI_CODING_AGENT_DIR/extensions/albedo-otel.js (default ~/.pi/agent), or ./.pi/extensions/albedo-otel.js (loaded once the project is trusted)",
        user_file: |env| match env("PI_CODING_AGENT_DIR").filter(|d| !d.is_empty()) {
            Some(dir) => Some(std::path::Path::new(&dir).join("extensions/albedo-otel.js")),
            None => spec::under_home(env, ".pi/agent/extensions/albedo-otel.js"),
        },
        user_needs: "PI_CODING_AGENT_DIR or HOME",
        project_file: ".pi/extensions/albedo-otel.js",
        form: spec::Form::Plugin(spec::Plugin {
            events: super::HOOK_EVENTS,
            text: super::extension,
            command_in: super::extension_command,
        }),
        asks_trust: false,
        one_run_per_command: false,
    },
};

/// The daemon's adapter for this agent (`grace_ms`: unused, Pi's `agent_settled` is final),
/// for the list in `command_hooks/mod.rs`.
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
        _: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        self.push(at_ms, &p, out);
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
pub const HISTORY: spec::History = spec::History::Files(spec::HistoryFiles {
    roots: super::history::roots,
    is_session: super::history::is_session,
    records: super::history::records,
});
