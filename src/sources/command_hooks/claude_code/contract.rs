//! Claude Code's rules for the session engine ([`AgentRules`]), and its spec.

use super::{Adapter, Payload, Session, Transcripts};
use crate::protocol::Record;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::files::FileCursor;
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Claude Code, and albedo's `hooks` extension, which sends its payloads.
pub const SPEC: Spec = Spec {
    name: "claude-code",
    title: "Claude Code",
    folder: module_path!(),
    holds: "Claude Code's payloads and transcripts to records, its sub-agents' transcripts under their `Agent` call",
    extends: None,
    cli: Some(spec::Cli {
        package: "@anthropic-ai/claude-code",
        version: "2.1.332",
        bin: "claude",
        var: "CLAUDE_BIN",
        node22: false,
    }),
    passes_its_environment: false,
    streams: false,
    journal_under: spec::own_journal,
    rewrite: spec::as_sent,
    runs_ours_too: spec::runs_ours_once,
    install: spec::Install {
        about: "Claude Code: ~/.claude/settings.json (default) or ./.claude/settings.json",
        user_file: |env| spec::under_home(env, ".claude/settings.json"),
        user_needs: "HOME",
        project_file: ".claude/settings.json",
        form: spec::Form::Hooks(spec::Hooks {
            events: super::HOOK_EVENTS,
            tool_events: &["PreToolUse", "PostToolUse", "PostToolUseFailure"],
            timeout: 10,
            short: &[],
            named: false,
        }),
        asks_trust: false,
        one_run_per_command: true,
    },
};

/// The daemon's adapter for this agent (`grace_ms`: how long a held stop waits for its
/// continuation), for the list in `command_hooks/mod.rs`.
pub(crate) fn adapter(grace_ms: u64) -> Box<dyn crate::sources::command_hooks::adapter::Dispatch> {
    Box::new(Adapter::new(grace_ms))
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

    /// A turn open (its stop held, maybe), or sub-agents still running in the background
    /// after it ended.
    fn busy(s: &Session) -> bool {
        s.turn.is_some() || !s.agents.is_empty()
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

    fn tick(&mut self, now_ms: u64, _: &mut dyn Transcripts, out: &mut Vec<Record<'static>>) {
        Adapter::tick(self, now_ms, out);
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
        Adapter::cursor(self, id)
    }

    fn resume(&mut self, id: &str, at: FileCursor) {
        Adapter::resume(self, id, at);
    }

    fn message_budget(&mut self, id: &str, bytes: usize) {
        Adapter::message_budget(self, id, bytes);
    }
}

/// How `import` reads this agent's history (apart from [`SPEC`], so that the hook, which reads
/// the spec, links none of it).
pub const HISTORY: spec::History = spec::History::Files(spec::HistoryFiles {
    roots: super::history::roots,
    is_session: super::history::is_session,
    records: super::history::records,
});
