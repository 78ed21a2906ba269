//! Copilot CLI's adapter under the contract every agent keeps ([`AgentAdapter`](crate::sources::command_hooks::adapter::AgentAdapter)): its turns'
//! calls are read from the session log it is handed as `files`.

use super::{Adapter, Payload};
use crate::sources::command_hooks::adapter::reads_files;
use crate::sources::command_hooks::files::FileCursor;
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Copilot CLI.
pub const SPEC: Spec = Spec {
    name: "copilot",
    title: "Copilot CLI",
    passes_its_environment: false,
    streams: false,
    journal_under: super::sub_agents_parent,
    rewrite: super::with_log,
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
/// continuation), for the list in `agent.rs`.
pub(crate) fn adapter(_grace_ms: u64) -> Box<dyn crate::sources::command_hooks::adapter::Dispatch> {
    Box::new(Adapter::new())
}

reads_files!(Payload, |p| &p.session_id);

/// What the contract asks of its files and sessions that only this adapter knows.
impl Adapter {
    pub(super) fn cursor(&self, id: &str) -> Option<FileCursor> {
        let s = self.sessions.get(id)?;
        s.read.clone().or_else(|| s.resumed.clone())
    }

    pub(super) fn resume(&mut self, id: &str, at: FileCursor) {
        if at.offset > 0 {
            self.sessions.entry(id.to_string()).or_default().resumed = Some(at);
        }
    }

    pub(super) fn kept(&self) -> usize {
        self.sessions.len()
    }
}
