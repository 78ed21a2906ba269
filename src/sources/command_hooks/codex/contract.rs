//! Codex CLI's rules for the session engine ([`AgentRules`]): Claude Code's pairing
//! underneath, and no transcript of Claude Code's shape to read; and its spec.

use super::{Adapter, Payload};
use crate::protocol::Record;
use crate::sources::command_hooks::claude_code;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::files::Transcripts;
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Codex CLI.
pub const SPEC: Spec = Spec {
    name: "codex",
    title: "Codex CLI",
    folder: module_path!(),
    holds: "Codex CLI's payloads: its model hooks, and the rest through Claude Code's adapter (the same shape)",
    extends: Some("claude-code"),
    cli: Some(spec::Cli {
        package: "@openai/codex",
        version: "0.171.0",
        bin: "codex",
        var: "CODEX_BIN",
        node22: false,
    }),
    passes_its_environment: true,
    streams: false,
    journal_under: spec::own_journal,
    rewrite: spec::as_sent,
    runs_ours_too: spec::runs_ours_once,
    install: spec::Install {
        about: "Codex CLI: $CODEX_HOME/hooks.json (default ~/.codex/hooks.json) or ./.codex/hooks.json; Codex runs a hook only once it is trusted (--trust)",
        user_file: |env| match env("CODEX_HOME").filter(|h| !h.is_empty()) {
            Some(home) => Some(std::path::Path::new(&home).join("hooks.json")),
            None => spec::under_home(env, ".codex/hooks.json"),
        },
        user_needs: "CODEX_HOME or HOME",
        project_file: ".codex/hooks.json",
        form: spec::Form::Hooks(spec::Hooks {
            events: super::HOOK_EVENTS,
            tool_events: &["PreToolUse", "PostToolUse"],
            timeout: 10,
            // Codex cuts these to three seconds, and says so on every run if ours is longer.
            short: &["SessionEnd", "Interrupt"],
            named: false,
        }),
        asks_trust: true,
        one_run_per_command: false,
    },
};

/// The daemon's adapter for this agent (`grace_ms`: how long a held stop waits for its
/// continuation), for the list in `command_hooks/mod.rs`.
pub(crate) fn adapter(grace_ms: u64) -> Box<dyn crate::sources::command_hooks::adapter::Dispatch> {
    Box::new(Adapter::new(grace_ms))
}

impl AgentRules for Adapter {
    type Payload = Payload;
    type Session = claude_code::Session;

    fn session_of(p: &Payload) -> &str {
        &p.hook.session_id
    }

    fn sessions(&self) -> &Sessions<claude_code::Session> {
        self.claude_code().sessions()
    }

    fn busy(s: &claude_code::Session) -> bool {
        claude_code::Adapter::busy(s)
    }

    fn take(
        &mut self,
        p: Payload,
        at_ms: u64,
        _: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        self.push(at_ms, p, out);
    }

    fn tick(&mut self, now_ms: u64, _: &mut dyn Transcripts, out: &mut Vec<Record<'static>>) {
        self.claude_code_mut().tick(now_ms, out);
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

    /// Model calls waiting for their answer.
    fn kept_besides(&self) -> usize {
        self.started.len()
    }
}

/// How `import` reads this agent's history (apart from [`SPEC`], so that the hook, which reads
/// the spec, links none of it).
pub const HISTORY: spec::History = spec::History::Files(spec::HistoryFiles {
    roots: super::history::roots,
    is_session: super::history::is_session,
    records: super::history::records,
});
