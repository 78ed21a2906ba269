//! Kilo Code CLI's spec, and its adapter under the contract every agent keeps: opencode's
//! ([`AgentRules`](super::super::engine::AgentRules) are implemented there) under Kilo's
//! name.

use super::{opencode, AGENT};
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Kilo Code CLI.
pub const SPEC: Spec = Spec {
    name: AGENT,
    title: "Kilo Code CLI",
    folder: module_path!(),
    holds: "Kilo Code CLI: opencode's plugin and adapter under Kilo's name",
    extends: Some("opencode"),
    // 7.7.7: the newest whose platform package (@kilocode/cli-linux-x64, pinned to the same
    // version) the registry has; a Bun executable, started by a Node script (Node 20 does).
    cli: Some(spec::Cli {
        package: "@kilocode/cli",
        version: "7.7.7",
        bin: "kilo",
        var: "KILO_BIN",
        node22: false,
    }),
    // Kilo runs plugins in its own process: the hook they start has its whole environment.
    passes_its_environment: true,
    streams: true,
    journal_under: spec::own_journal,
    rewrite: spec::as_sent,
    runs_ours_too: spec::runs_ours_once,
    install: spec::Install {
        about: "Kilo Code CLI: a plugin of albedo-otel's own (opencode's), $XDG_CONFIG_HOME/kilo/plugin/albedo-otel.js (default ~/.config), or ./.kilo/plugin/albedo-otel.js",
        // Kilo takes the XDG layout everywhere, macOS too, as opencode does.
        user_file: |env| match env("XDG_CONFIG_HOME").filter(|h| !h.is_empty()) {
            Some(dir) => Some(std::path::Path::new(&dir).join("kilo/plugin/albedo-otel.js")),
            None => spec::under_home(env, ".config/kilo/plugin/albedo-otel.js"),
        },
        user_needs: "XDG_CONFIG_HOME or HOME",
        project_file: ".kilo/plugin/albedo-otel.js",
        form: spec::Form::Plugin(spec::Plugin {
            events: opencode::HOOK_EVENTS,
            text: opencode::plugin,
            command_in: opencode::plugin_command,
        }),
        asks_trust: false,
        one_run_per_command: false,
    },
};

/// The daemon's adapter for this agent, for the list in `command_hooks/mod.rs`: opencode's, naming its
/// sessions `kilo`. No stop is held, so `grace_ms` is unused.
pub(crate) fn adapter(_grace_ms: u64) -> Box<dyn crate::sources::command_hooks::engine::adapter::Dispatch> {
    Box::new(opencode::Adapter::named(AGENT))
}

/// How `import` reads this agent's history (apart from [`SPEC`], so that the hook, which reads
/// the spec, links none of it).
#[cfg(feature = "store")]
pub const HISTORY: spec::History = spec::History::Database(spec::HistoryDatabase {
    roots: |env| opencode::history::roots_of(env, "kilo"),
    is_database: |path| path.file_name().is_some_and(|n| n == "kilo.db"),
    records: |path, since_ms, each| opencode::history::records_as(AGENT, path, since_ms, each),
});

/// Without the store, nothing to import into.
#[cfg(not(feature = "store"))]
pub const HISTORY: spec::History = spec::History::Cannot("this build has no local store");
