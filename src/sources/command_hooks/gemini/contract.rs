//! Gemini CLI's rules for the session engine ([`AgentRules`]), and its spec.

use super::{Adapter, Payload, Session};
use crate::protocol::Record;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::files::Transcripts;
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Gemini CLI.
pub const SPEC: Spec = Spec {
    name: "gemini",
    title: "Gemini CLI",
    folder: module_path!(),
    holds: "Gemini CLI's payloads to records, its sub-agents under their call",
    extends: None,
    cli: Some(spec::Cli {
        package: "@google/gemini-cli",
        version: "0.61.0",
        bin: "gemini",
        var: "GEMINI_BIN",
        node22: false,
    }),
    passes_its_environment: true,
    streams: false,
    journal_under: spec::own_journal,
    rewrite: journaled,
    runs_ours_too: spec::runs_ours_once,
    install: spec::Install {
        about: "Gemini CLI: ~/.gemini/settings.json (default) or ./.gemini/settings.json (Gemini runs a project's hooks only in a folder it trusts)",
        user_file: |env| spec::under_home(env, ".gemini/settings.json"),
        user_needs: "HOME",
        project_file: ".gemini/settings.json",
        form: spec::Form::Hooks(spec::Hooks {
            events: super::HOOK_EVENTS,
            tool_events: &["BeforeTool", "AfterTool"],
            // Gemini counts milliseconds.
            timeout: 10_000,
            short: &[],
            named: true,
        }),
        asks_trust: false,
        one_run_per_command: false,
    },
};

/// The daemon's adapter for this agent (`grace_ms`: how long a held stop waits for its
/// continuation), for the list in `command_hooks/mod.rs`.
pub(crate) fn adapter(grace_ms: u64) -> Box<dyn crate::sources::command_hooks::adapter::Dispatch> {
    Box::new(Adapter::with_grace(grace_ms))
}

/// Gemini's model hooks are journaled without the history each of them repeats.
fn journaled(payload: &str, _: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    super::slim(payload)
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

    fn tick(&mut self, now_ms: u64, _: &mut dyn Transcripts, out: &mut Vec<Record<'static>>) {
        Adapter::tick(self, now_ms, out);
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
pub const HISTORY: spec::History = spec::History::Cannot(
    "Gemini CLI's hooks carry no id its chat files keep (no response id, and the files' message ids are their own): an import beside the live route would count its model calls twice",
);
