//! opencode's adapter under the contract every agent keeps ([`AgentAdapter`](super::super::adapter::AgentAdapter), by [`payloads_only`]); its payload is
//! boxed, the largest by far.

use super::{Adapter, Payload};
use crate::sources::command_hooks::adapter::payloads_only;
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of opencode.
pub const SPEC: Spec = Spec {
    name: "opencode",
    title: "opencode",
    passes_its_environment: true,
    streams: true,
    journal_under: spec::own_journal,
    rewrite: spec::as_sent,
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
/// continuation), for the list in `agent.rs`.
pub(crate) fn adapter(_grace_ms: u64) -> Box<dyn crate::sources::command_hooks::adapter::Dispatch> {
    Box::new(Adapter::new())
}

payloads_only!(Box<Payload>, |p| &p.session_id, ticks);
