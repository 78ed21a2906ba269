//! Qwen Code's rules for the session engine ([`AgentRules`]): its model
//! calls are read from the transcript it is handed as `files`.

use super::{Adapter, Payload, Session, Tail, AGENT};
use crate::protocol::Record;
use crate::sources::command_hooks::engine::records::session_opened;
use crate::sources::command_hooks::engine::open_turn::Why;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::engine::files::{FileCursor, Transcripts};
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

    fn busy(s: &Session) -> bool {
        s.turn.is_some() || !s.agents.is_empty()
    }

    /// Takes one payload that reached the journal at `received_ms`; appends records to `out`.
    fn take(
        &mut self,
        p: Payload,
        received_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let p = &p;
        let sid = p.session_id.as_str();
        let at_ms = p.at_ms().unwrap_or(received_ms);
        let s = self.sessions.entry(sid.to_string()).or_default();
        if !s.started {
            s.started = true;
            // A session met anew (`--resume` in a new process, a new daemon with no resume
            // point) takes none of the calls its transcript held before: they were exported
            // with their turns.
            if !s.resumed {
                s.since = at_ms;
            }
            out.push(session_opened(sid, at_ms, AGENT, p.cwd.as_deref()));
        }
        s.seen_ms = s.seen_ms.max(at_ms);
        if let Some(path) = p.transcript_path.as_deref().filter(|t| !t.is_empty()) {
            // Another file is read from its start (the tail knows which it read).
            if s.transcript.as_deref() != Some(path) {
                s.transcript = Some(path.to_string());
            }
        }
        // The model calls made up to this hook, before what the hook says: the call that
        // asked for a tool ended before the tool started.
        self.read(sid, files, out);
        let event = p.hook_event_name.as_str();
        let target = self.target(sid, event, p.agent_id.as_deref(), at_ms, out);
        let top = target == sid;
        match event {
            "UserPromptSubmit" if top => self.on_prompt(sid, at_ms, p, out),
            "PreToolUse" => self.on_pre_tool(sid, &target, at_ms, p, out),
            "PostToolUse" | "PostToolUseFailure" => self.on_post_tool(sid, &target, at_ms, p, out),
            "PostToolBatch" => self.on_batch(sid, at_ms, p, out),
            "SubagentStart" => self.sub_agent_started(sid, at_ms, p, out),
            "SubagentStop" => self.sub_agent_stopped(sid, at_ms, p, out),
            "Stop" | "StopFailure" if top => self.on_stop(sid, at_ms, p, out),
            "SessionEnd" => AgentRules::abandon(self, sid, at_ms, files, out),
            // SessionStart (the session is known now), Notification, PreCompact, ...
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

    /// Its sub-agents and background agents with it, then its calls still pending.
    fn end_turn(&mut self, id: &str, at_ms: u64, why: Why, out: &mut Vec<Record<'static>>) {
        if self.sessions.get(id).is_none_or(|s| s.turn.is_none()) {
            return;
        }
        self.close_children(id, at_ms, out);
        if let Some(turn) = self.sessions.get_mut(id).and_then(|s| s.turn.take()) {
            turn.flush(id, at_ms, why, out);
        }
    }

    /// With what the transcript has gained since the stop (the background agents' calls).
    fn end_held_stop(
        &mut self,
        id: &str,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        self.read(id, files, out);
        self.end_held(id, out);
    }

    /// Gives up on session `id`, which will send nothing more (its agent is gone; `-p` sends
    /// no `SessionEnd`): what its transcript holds goes out, a held stop ends its turn, and
    /// the session is closed at `at_ms`, so a turn still open is exported unfinished.
    fn give_up(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> Option<u64> {
        self.read(id, files, out);
        // The daemon last saw the agent alive up to a second before what its last payload
        // says it did: the session closes no earlier than that.
        let at_ms = self
            .sessions
            .get(id)
            .map_or(at_ms, |s| at_ms.max(s.seen_ms));
        if !self.end_held(id, out) {
            self.close_children(id, at_ms, out);
            if let Some(turn) = self.sessions.get_mut(id).and_then(|s| s.turn.take()) {
                turn.flush(id, at_ms, Why::Unseen, out);
            }
        }
        self.sessions.remove(id).map(|_| at_ms)
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
