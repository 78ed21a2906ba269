//! Claude Code's rules for the session engine ([`AgentRules`]), and its spec.

use super::{Adapter, Payload, Session, Transcripts};
use crate::protocol::{Event, Record};
use crate::sources::command_hooks::engine::records::record;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::engine::files::FileCursor;
use crate::sources::command_hooks::spec::{self, Spec};
use crate::sources::command_hooks::engine::open_turn::Why;

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
pub(crate) fn adapter(grace_ms: u64) -> Box<dyn crate::sources::command_hooks::engine::adapter::Dispatch> {
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
        transcripts: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let p = &p;
        let sid = p.session_id.as_str();
        self.ensure(sid, at_ms, p.cwd.as_deref(), out);
        if let Some(path) = p.transcript_path.as_deref().filter(|t| !t.is_empty()) {
            if let Some(s) = self.sessions.get_mut(sid) {
                if s.transcript_path.as_deref() != Some(path) {
                    s.transcript_path = Some(path.to_string());
                }
            }
        }
        let target = self.target(p);
        match p.hook_event_name.as_str() {
            "UserPromptSubmit" => self.on_prompt(sid, at_ms, p, transcripts, out),
            "PreToolUse" => self.on_pre_tool(sid, &target, at_ms, p, out),
            "PostToolUse" | "PostToolUseFailure" => self.on_post_tool(&target, at_ms, p, out),
            "PostToolBatch" => self.on_batch(sid, &target, at_ms, p, out),
            "SubagentStart" => self.on_subagent_start(sid, at_ms, p, out),
            "SubagentStop" => self.on_subagent_stop(sid, at_ms, p, transcripts, out),
            "Stop" => self.on_stop(sid, at_ms, p, transcripts, out),
            "SessionEnd" => self.on_session_end(sid, at_ms, p, transcripts, out),
            // SessionStart, InstructionsLoaded, Notification, PreCompact, ...: the session
            // is known now; nothing else to trace.
            _ => {}
        }
    }

    fn grace_ms(&self) -> Option<u64> {
        Some(self.grace_ms)
    }

    /// The turn's held `Stop`.
    fn held_stop(s: &Session) -> Option<(u64, &'static str)> {
        s.turn.as_ref()?.stop
    }

    /// The turn goes out as it stands: Claude Code's sub-agents end at their own
    /// `SubagentStop`, or with the session.
    fn end_turn(&mut self, id: &str, at_ms: u64, why: Why, out: &mut Vec<Record<'static>>) {
        if let Some(turn) = self.sessions.get_mut(id).and_then(|s| s.turn.take()) {
            turn.flush(id, at_ms, why, out);
        }
    }

    /// Gives up on a session that will send nothing more (its agent is gone, or it went
    /// quiet without a `SessionEnd`): the model calls its transcript holds go out with the
    /// open turn, its sub-agents are closed at `at_ms` (when the agent was last known alive),
    /// so their open turns are exported, marked unfinished, and the session is forgotten (and
    /// closed then, if it was one).
    fn give_up(
        &mut self,
        id: &str,
        at_ms: u64,
        transcripts: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> Option<u64> {
        self.cut_short(id, transcripts, out);
        let s = self.sessions.remove(id)?;
        for child in s.agents.values() {
            out.push(record(child, Event::Closed { at_ms }));
            self.sessions.remove(child);
        }
        Some(at_ms)
    }

    /// Where session `id`'s transcript has been read to (to resume after a restart).
    fn cursor(&self, id: &str) -> Option<FileCursor> {
        let s = self.sessions.get(id)?;
        if let Some(resumed) = &s.resumed {
            return Some(resumed.clone());
        }
        Some(FileCursor {
            path: s.transcript_path.clone().unwrap_or_default(),
            offset: s.transcript.offset,
            identity: s.read_identity,
        })
    }

    /// Resumes a session whose transcript an earlier process read up to `at`.
    fn resume(&mut self, id: &str, at: FileCursor) {
        let s = self.sessions.entry(id.to_string()).or_default();
        s.transcript.offset = at.offset;
        s.resumed = Some(at);
    }

    /// How much of session `id`'s conversation its model calls carry as their input, in
    /// bytes; 0 when its messages are not exported (capture off).
    fn message_budget(&mut self, id: &str, bytes: usize) {
        let s = self.sessions.entry(id.to_string()).or_default();
        s.transcript.set_message_budget(bytes);
    }
}

/// How `import` reads this agent's history (apart from [`SPEC`], so that the hook, which reads
/// the spec, links none of it).
pub const HISTORY: spec::History = spec::History::Files(spec::HistoryFiles {
    roots: super::history::roots,
    is_session: super::history::is_session,
    records: super::history::records,
});
