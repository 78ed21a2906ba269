//! Cursor's adapter under the contract every agent keeps ([`AgentAdapter`](super::super::adapter::AgentAdapter), by [`payloads_only`]), and its spec:
//! a `hooks.json` of Cursor's own, `{"version": 1, "hooks": {event: [{command}]}}`.

use super::{Adapter, Payload};
use crate::sources::command_hooks::adapter::payloads_only;
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Cursor.
pub const SPEC: Spec = Spec {
    name: "cursor",
    title: "Cursor",
    // Cursor runs its hooks with the environment it was started with: its `OTEL_*` are the
    // user's shell's.
    passes_its_environment: true,
    streams: false,
    journal_under: super::conversation,
    rewrite: |payload, _| super::journaled(payload),
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
/// follow-up's continuation), for the list in `agent.rs`.
pub(crate) fn adapter(grace_ms: u64) -> Box<dyn crate::sources::command_hooks::adapter::Dispatch> {
    Box::new(Adapter::with_grace(grace_ms))
}

payloads_only!(Payload, |p| p.session(), ticks);
