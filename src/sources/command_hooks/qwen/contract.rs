//! Qwen Code's adapter under the contract every agent keeps ([`AgentAdapter`](crate::sources::command_hooks::adapter::AgentAdapter)): its model
//! calls are read from the transcript it is handed as `files`.

use super::{Adapter, Payload};
use crate::sources::command_hooks::adapter::reads_files;
use crate::sources::command_hooks::files::FileCursor;
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Qwen Code.
pub const SPEC: Spec = Spec {
    name: "qwen-code",
    title: "Qwen Code",
    passes_its_environment: true,
    streams: false,
    journal_under: spec::own_journal,
    rewrite: spec::as_sent,
    install: spec::Install {
        about: "Qwen Code: ~/.qwen/settings.json (default) or ./.qwen/settings.json",
        user_file: |env| spec::under_home(env, ".qwen/settings.json"),
        user_needs: "HOME",
        project_file: ".qwen/settings.json",
        form: spec::Form::Hooks(spec::Hooks {
            events: super::HOOK_EVENTS,
            tool_events: &["PreToolUse", "PostToolUse", "PostToolUseFailure"],
            // Qwen 0.24 reads a command hook's timeout of 1000 or more as milliseconds (it
            // counted only milliseconds before): ten seconds either way.
            timeout: 10_000,
            short: &[],
            named: false,
        }),
        asks_trust: false,
        one_run_per_command: false,
    },
};

/// The daemon's adapter for this agent (`grace_ms`: how long a held stop waits for its
/// continuation), for the list in `agent.rs`.
pub(crate) fn adapter(grace_ms: u64) -> Box<dyn crate::sources::command_hooks::adapter::Dispatch> {
    Box::new(Adapter::new(grace_ms))
}

reads_files!(Payload, |p| &p.session_id);

/// What the contract asks of its files and sessions that only this adapter knows.
impl Adapter {
    pub(super) fn cursor(&self, id: &str) -> Option<FileCursor> {
        let s = self.sessions.get(id)?;
        if let Some(resumed) = &s.resumed {
            return Some(resumed.clone());
        }
        Some(FileCursor {
            path: s.transcript.clone()?,
            offset: s.offset,
            identity: s.identity,
        })
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
