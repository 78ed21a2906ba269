//! Cline CLI's adapter under the contract every agent keeps ([`AgentAdapter`](crate::sources::command_hooks::adapter::AgentAdapter)): its turns'
//! model calls are read from the session's messages file it is handed as `files`.

use super::{Adapter, Payload};
use crate::sources::command_hooks::adapter::reads_files;
use crate::sources::command_hooks::files::FileCursor;
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Cline CLI.
pub const SPEC: Spec = Spec {
    name: "cline",
    title: "Cline CLI",
    // Cline runs its hooks with its own whole environment.
    passes_its_environment: true,
    streams: false,
    journal_under: super::root_session,
    rewrite: super::journaled,
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

/// The daemon's adapter for this agent, for the list in `agent.rs`.
pub(crate) fn adapter(_grace_ms: u64) -> Box<dyn crate::sources::command_hooks::adapter::Dispatch> {
    Box::new(Adapter::new())
}

reads_files!(Payload, |p| p.session());

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
