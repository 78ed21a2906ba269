//! Gemini CLI's rules for the session engine ([`AgentRules`]), and its spec.

use super::{Adapter, Payload, Session, subagents};
use crate::protocol::Record;
use crate::sources::command_hooks::engine::open_turn::Why;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::engine::files::Transcripts;
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
pub(crate) fn adapter(grace_ms: u64) -> Box<dyn crate::sources::command_hooks::engine::adapter::Dispatch> {
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

    /// Takes one payload that reached the journal at `received_ms`; appends records to `out`.
    fn take(
        &mut self,
        p: Payload,
        received_ms: u64,
        _: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let p = &p;
        let sid = p.session_id.as_str();
        let at_ms = p.at_ms().unwrap_or(received_ms);
        self.ensure(sid, at_ms, p.cwd.as_deref(), out);
        // A model or tool hook is the running sub-agent's, if one runs; `invoke_agent`'s end
        // is its caller's, once the sub-agent is closed.
        let event = p.hook_event_name.as_str();
        if matches!(
            event,
            "BeforeModel" | "AfterModel" | "BeforeTool" | "AfterTool"
        ) {
            self.went_on(sid);
        }
        let target = self.target(sid, event, at_ms, p, out);
        let target = target.as_deref().unwrap_or(sid);
        match event {
            "BeforeAgent" => self.on_prompt(sid, at_ms, p, out),
            "BeforeModel" => self.on_model_start(target, at_ms, p, out),
            "AfterModel" => self.on_model_chunk(target, at_ms, p, out),
            "BeforeTool" => {
                let call = self.on_tool_start(target, at_ms, p, out);
                if let Some(call) = call.filter(|_| p.tool_name.as_deref() == Some(subagents::TOOL))
                {
                    self.sub_agent_started(sid, target, call, at_ms, p, out);
                }
            }
            "AfterTool" => self.on_tool_end(target, at_ms, p, out),
            "AfterAgent" => self.hold_stop(sid, at_ms),
            "SessionEnd" => self.close(sid, at_ms, out),
            // SessionStart (the session is known now), BeforeToolSelection, PreCompress
            // (fired before every model call, compressing or not), Notification.
            _ => {}
        }
    }

    fn grace_ms(&self) -> Option<u64> {
        Some(self.grace_ms)
    }

    /// The turn's held `AfterAgent`.
    fn held_stop(s: &Session) -> Option<(u64, &'static str)> {
        s.turn.as_ref()?.stop
    }

    /// Its sub-agents first, then the turn itself.
    fn end_turn(&mut self, id: &str, at_ms: u64, why: Why, out: &mut Vec<Record<'static>>) {
        if self.at_rest(id) {
            return;
        }
        self.sub_agents_stopped(id, at_ms, out);
        if let Some(turn) = self.sessions.get_mut(id).and_then(|s| s.turn.take()) {
            turn.flush(id, at_ms, why, out);
        }
    }

    /// Gives up on a session that will send nothing more: its open turn is exported at
    /// `at_ms`, marked unfinished, and the session is forgotten (closed then, if it was open).
    fn give_up(
        &mut self,
        id: &str,
        at_ms: u64,
        _: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> Option<u64> {
        // A stop held back did end its turn.
        self.end_held(id, out);
        self.end_turn(id, at_ms, Why::Unseen, out);
        self.sessions.remove(id).map(|_| at_ms)
    }
}

/// How `import` reads this agent's history (apart from [`SPEC`], so that the hook, which reads
/// the spec, links none of it).
pub const HISTORY: spec::History = spec::History::Untraced(spec::HistoryFiles {
    roots: super::history::roots,
    is_session: super::history::is_session,
    records: super::history::records,
});
