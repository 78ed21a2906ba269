//! Cursor's rules for the session engine ([`AgentRules`]), and its spec:
//! a `hooks.json` of Cursor's own, `{"version": 1, "hooks": {event: [{command}]}}`.

use super::{Adapter, Payload, Session, AGENT};
use crate::protocol::{Event, SessionInfo, Record};
use std::borrow::Cow;
use crate::sources::command_hooks::engine::records::record;
use crate::sources::command_hooks::engine::open_turn::Why;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::engine::files::Transcripts;
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Cursor.
pub const SPEC: Spec = Spec {
    name: "cursor",
    title: "Cursor",
    folder: module_path!(),
    holds: "Cursor's hooks (its own `hooks.json`, or Claude Code's settings) to records",
    extends: None,
    cli: None,
    // Cursor runs its hooks with the environment it was started with: its `OTEL_*` are the
    // user's shell's.
    passes_its_environment: true,
    streams: false,
    journal_under: super::conversation,
    rewrite: |payload, _| super::journaled(payload),
    runs_ours_too: super::runs_ours_too,
    install: spec::Install {
        about: "Cursor: ~/.cursor/hooks.json (default) or ./.cursor/hooks.json",
        user_file: |env| spec::under_home(env, ".cursor/hooks.json"),
        user_needs: "HOME",
        project_file: ".cursor/hooks.json",
        form: spec::Form::Flat(spec::Flat {
            events: super::HOOK_EVENTS,
            known: super::KNOWN_EVENTS,
            version: 1,
        }),
        asks_trust: false,
        one_run_per_command: false,
    },
};

/// The daemon's adapter for this agent (`grace_ms`: how long a `stop` waits for a
/// follow-up's continuation), for the list in `command_hooks/mod.rs`.
pub(crate) fn adapter(grace_ms: u64) -> Box<dyn crate::sources::command_hooks::engine::adapter::Dispatch> {
    Box::new(Adapter::with_grace(grace_ms))
}

impl AgentRules for Adapter {
    type Payload = Payload;
    type Session = Session;

    fn session_of(p: &Payload) -> &str {
        p.session()
    }

    fn sessions(&self) -> &Sessions<Session> {
        &self.sessions
    }

    fn busy(s: &Session) -> bool {
        s.turn.is_some()
    }

    /// Takes one payload that reached the journal at `at_ms`; appends records to `out`.
    fn take(
        &mut self,
        p: Payload,
        at_ms: u64,
        _: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let p = &p;
        let own = p.session();
        // A sub-agent's own conversation goes to the session made for it.
        let sid = self
            .aliases
            .get(own)
            .cloned()
            .unwrap_or_else(|| own.to_string());
        if !self.sessions.contains_key(&sid) {
            self.sessions.insert(sid.clone(), Session::default());
            out.push(record(
                &sid,
                Event::Session(SessionInfo {
                    at_ms,
                    agent: Some(Cow::Borrowed(AGENT)),
                    model: p.model.clone().map(Cow::Owned),
                    workspace: p.workspace().map(|w| Cow::Owned(w.to_string())),
                    parent: None,
                }),
            ));
        }
        let event = p.hook_event_name.as_str();
        match event {
            "beforeSubmitPrompt" => self.on_prompt(&sid, at_ms, p.prompt.as_deref(), out),
            "preToolUse"
            | "postToolUse"
            | "postToolUseFailure"
            | "beforeShellExecution"
            | "afterShellExecution"
            | "beforeMCPExecution"
            | "afterMCPExecution"
            | "afterFileEdit" => {
                // The agent goes on: a stop before this was answered with a follow-up.
                self.went_on(&sid);
                self.on_tool(&sid, event, at_ms, p, out);
            }
            "subagentStart" => {
                self.went_on(&sid);
                self.sub_agent_started(&sid, at_ms, p, out);
            }
            "subagentStop" => self.sub_agent_stopped(&sid, at_ms, p, out),
            "afterAgentResponse" => {
                if let Some(s) = self.sessions.get_mut(&sid) {
                    s.reply = p.text.clone();
                }
            }
            "stop" => self.on_stop(&sid, at_ms, p, out),
            "sessionEnd" => self.on_session_end(&sid, at_ms, p, out),
            // sessionStart (the session is known now), beforeReadFile, afterAgentThought,
            // preCompact, the Tab's.
            _ => {}
        }
    }

    fn grace_ms(&self) -> Option<u64> {
        Some(self.grace_ms)
    }

    /// The turn's held `stop`.
    fn held_stop(s: &Session) -> Option<(u64, &'static str)> {
        s.turn.as_ref()?.stop
    }

    /// Its sub-agents first (gone with it, if it ended unseen), then the turn itself.
    fn end_turn(&mut self, id: &str, at_ms: u64, why: Why, out: &mut Vec<Record<'static>>) {
        if self.at_rest(id) {
            return;
        }
        match why {
            Why::Unseen => self.sub_agents_gone(id, at_ms, out),
            _ => self.sub_agents_ended(id, at_ms, out),
        }
        if let Some(turn) = self.sessions.get_mut(id).and_then(|s| s.turn.take()) {
            turn.flush(id, at_ms, why, out);
        }
    }

    /// Gives up on a session that will send nothing more: its open turn is exported at
    /// `at_ms`, marked unfinished, with its calls still running, and the session is forgotten
    /// (closed then, if it was open).
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
        self.sub_agents_gone(id, at_ms, out);
        self.sessions.remove(id).map(|_| at_ms)
    }
}

/// How `import` reads this agent's history (apart from [`SPEC`], so that the hook, which reads
/// the spec, links none of it).
pub const HISTORY: spec::History = spec::History::Cannot("Cursor keeps no token usage in its files: there is nothing to count");
