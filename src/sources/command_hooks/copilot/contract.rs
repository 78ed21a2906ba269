//! Copilot CLI's rules for the session engine ([`AgentRules`]): its turns'
//! calls are read from the session log it is handed as `files`.

use super::{Adapter, Payload, Session};
use crate::protocol::Record;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::files::{FileCursor, Transcripts};
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Copilot CLI.
pub const SPEC: Spec = Spec {
    name: "copilot",
    title: "Copilot CLI",
    folder: module_path!(),
    holds: "Copilot CLI's hooks for the turn, its session log for the calls and its sub-agents",
    extends: None,
    cli: Some(spec::Cli {
        package: "@github/copilot",
        version: "1.0.102",
        bin: "copilot",
        var: "COPILOT_BIN",
        node22: false,
    }),
    passes_its_environment: false,
    streams: false,
    journal_under: super::sub_agents_parent,
    rewrite: super::with_log,
    runs_ours_too: spec::runs_ours_once,
    install: spec::Install {
        about: "Copilot CLI: a file of albedo-otel's own, $COPILOT_HOME/hooks/albedo-otel.json (default ~/.copilot), or ./.github/hooks/albedo-otel.json",
        user_file: |env| match env("COPILOT_HOME").filter(|h| !h.is_empty()) {
            Some(home) => Some(std::path::Path::new(&home).join("hooks/albedo-otel.json")),
            None => spec::under_home(env, ".copilot/hooks/albedo-otel.json"),
        },
        user_needs: "COPILOT_HOME or HOME",
        project_file: ".github/hooks/albedo-otel.json",
        form: spec::Form::Hooks(spec::Hooks {
            events: super::HOOK_EVENTS,
            tool_events: &[],
            timeout: 10,
            short: &[],
            named: false,
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
    type Payload = Payload;
    type Session = Session;

    fn session_of(p: &Payload) -> &str {
        &p.session_id
    }

    fn sessions(&self) -> &Sessions<Session> {
        &self.sessions
    }

    fn busy(s: &Session) -> bool {
        !s.rests()
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
