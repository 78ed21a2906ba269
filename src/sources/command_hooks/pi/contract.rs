//! Pi's adapter under the contract every agent keeps ([`AgentAdapter`](super::super::adapter::AgentAdapter), by [`payloads_only`]), and its spec.

use super::{Adapter, Payload};
use crate::sources::command_hooks::adapter::payloads_only;
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Pi.
pub const SPEC: Spec = Spec {
    name: "pi",
    title: "Pi",
    passes_its_environment: true,
    streams: true,
    journal_under: spec::own_journal,
    rewrite: spec::as_sent,
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
/// for the list in `agent.rs`.
pub(crate) fn adapter(_grace_ms: u64) -> Box<dyn crate::sources::command_hooks::adapter::Dispatch> {
    Box::new(Adapter::new())
}

payloads_only!(Payload, |p| &p.session_id);
