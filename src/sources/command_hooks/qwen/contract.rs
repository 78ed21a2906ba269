//! Qwen Code's rules for the session engine ([`AgentRules`]): its model
//! calls are read from the transcript it is handed as `files`.

use super::{Adapter, Payload, Session, Tail};
use crate::protocol::Record;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::files::{FileCursor, Transcripts};
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Qwen Code.
pub const SPEC: Spec = Spec {
    name: "qwen-code",
    title: "Qwen Code",
    folder: module_path!(),
    holds: "Qwen Code's hooks for the turn and tool calls, its transcript for the model calls and its background agents",
    extends: None,
    cli: Some(spec::Cli {
        package: "@qwen-code/qwen-code",
        version: "0.24.4",
        bin: "qwen",
        var: "QWEN_BIN",
        node22: true,
    }),
    passes_its_environment: true,
    streams: false,
    journal_under: spec::own_journal,
    rewrite: spec::as_sent,
    runs_ours_too: spec::runs_ours_once,
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

    fn tick(&mut self, now_ms: u64, files: &mut dyn Transcripts, out: &mut Vec<Record<'static>>) {
        Adapter::tick(self, now_ms, files, out);
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
        let s = self.sessions.get(id)?;
        let cursor = &s.tail.cursor;
        (s.resumed || s.transcript.is_some()).then(|| FileCursor {
            path: s.transcript.clone().unwrap_or_else(|| cursor.path.clone()),
            ..cursor.clone()
        })
    }

    fn resume(&mut self, id: &str, at: FileCursor) {
        if at.offset > 0 {
            let s = self.sessions.entry(id.to_string()).or_default();
            s.tail = Tail::resumed(at);
            s.resumed = true;
        }
    }
}

/// How `import` reads this agent's history (apart from [`SPEC`], so that the hook, which reads
/// the spec, links none of it).
pub const HISTORY: spec::History = spec::History::Files(spec::HistoryFiles {
    roots: super::history::roots,
    is_session: super::history::is_session,
    records: super::history::records,
});
