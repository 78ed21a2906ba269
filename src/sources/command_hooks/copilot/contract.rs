//! Copilot CLI's rules for the session engine ([`AgentRules`]): its turns'
//! calls are read from the session log it is handed as `files`.

use super::{Adapter, Payload, Session, finish, last_logged, ends, AGENT, LOG_GRACE_MS};
use crate::protocol::{Event, Record};
use crate::sources::command_hooks::engine::records::{record, session_opened};
use crate::sources::command_hooks::engine::open_turn::{OpenTurn, Why};
use crate::sources::command_hooks::engine::held::WentOut;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::engine::files::{FileCursor, Transcripts};
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Copilot CLI.
pub const SPEC: Spec = Spec {
    name: "copilot",
    title: "Copilot CLI",
    folder: module_path!(),
    holds: "Copilot CLI's hooks for the turn, its session log for the calls and its sub-agents",
    extends: None,
    cli: Some(spec::Cli {
        package: "@github/copilot",
        version: "1.0.102",
        bin: "copilot",
        var: "COPILOT_BIN",
        node22: false,
    }),
    passes_its_environment: false,
    streams: false,
    journal_under: super::sub_agents_parent,
    rewrite: super::with_log,
    runs_ours_too: spec::runs_ours_once,
    install: spec::Install {
        about: "Copilot CLI: a file of albedo-otel's own, $COPILOT_HOME/hooks/albedo-otel.json (default ~/.copilot), or ./.github/hooks/albedo-otel.json",
        user_file: |env| match env("COPILOT_HOME").filter(|h| !h.is_empty()) {
            Some(home) => Some(std::path::Path::new(&home).join("hooks/albedo-otel.json")),
            None => spec::under_home(env, ".copilot/hooks/albedo-otel.json"),
        },
        user_needs: "COPILOT_HOME or HOME",
        project_file: ".github/hooks/albedo-otel.json",
        form: spec::Form::Hooks(spec::Hooks {
            events: super::HOOK_EVENTS,
            tool_events: &[],
            timeout: 10,
            short: &[],
            named: false,
        }),
        asks_trust: false,
        one_run_per_command: false,
    },
};

/// The daemon's adapter for this agent (`grace_ms`: how long a held stop waits for its
/// continuation), for the list in `command_hooks/mod.rs`.
pub(crate) fn adapter(_grace_ms: u64) -> Box<dyn crate::sources::command_hooks::engine::adapter::Dispatch> {
    Box::new(Adapter::new())
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
        !s.rests()
    }

    /// Takes one payload received at `received_ms`; appends records to `out`.
    fn take(
        &mut self,
        p: Payload,
        received_ms: u64,
        logs: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let p = &p;
        let sid = p.session_id.as_str();
        // A sub-agent's hooks come under its own id: its turn and calls are read from the
        // parent's log instead.
        if p.agent_id.is_some() {
            return;
        }
        let at_ms = p.at_ms().unwrap_or(received_ms);
        let s = self.sessions.entry(sid.to_string()).or_default();
        if !s.started {
            s.started = true;
            out.push(session_opened(sid, at_ms, AGENT, p.cwd.as_deref()));
        }
        // A prompt still undecided is decided by any later hook: by then the log has had time.
        if let Some(u) = s.undecided.take() {
            ends::prompted(sid, s, u, true, logs, out);
        }
        match p.hook_event_name.as_str() {
            "UserPromptSubmit" => {
                // The hook adds the log's path: a turn killed before its `Stop` reads it.
                if s.log.is_none() {
                    s.log = p.transcript_path.clone().filter(|p| !p.is_empty());
                }
                let text = p.prompt.clone().unwrap_or_default();
                let u = ends::Undecided { at_ms, text };
                ends::prompted(sid, s, u, false, logs, out);
            }
            "Stop" => {
                // With no turn open, the stop ends what the agent did since the last went out
                // (its stop blocked late), which only the log has: in a new daemon, what the
                // log has past where the old one's turns had read it.
                if s.turn.is_none() {
                    let resumed = s.resumed.as_ref().map(|_| 0);
                    s.turn = s.went_out.continuation().or(resumed).map(OpenTurn::new);
                }
                if let Some(turn) = s.turn.as_mut() {
                    let log = p.transcript_path.clone().filter(|p| !p.is_empty());
                    s.log = log.or(s.log.take());
                    turn.hold(at_ms, "end_turn");
                }
            }
            "SessionEnd" => {
                s.closing = Some(at_ms);
                // A turn with no Stop (the model failed) ends with the session.
                if s.turn.as_ref().is_some_and(|t| t.stop.is_none()) {
                    finish(sid, s, at_ms, Why::Interrupted, logs, out);
                }
            }
            _ => {}
        }
    }

    /// Reads the log of each turn whose `Stop` is old enough, and closes the sessions that
    /// ended.
    fn tick(&mut self, now_ms: u64, logs: &mut dyn Transcripts, out: &mut Vec<Record<'static>>) {
        let mut closed = Vec::new();
        for (sid, s) in self.sessions.iter_mut() {
            if let Some(u) = s.undecided.take() {
                let late = now_ms >= u.at_ms.saturating_add(LOG_GRACE_MS);
                ends::prompted(sid, s, u, late, logs, out);
                if s.undecided.is_some() {
                    continue;
                }
            }
            if let Some(at) = s
                .turn
                .as_ref()
                .and_then(|t| t.stop)
                .map(|(at, _)| at)
                .filter(|at| now_ms >= at.saturating_add(LOG_GRACE_MS))
            {
                let log = s.log.clone();
                if log.is_some_and(|path| ends::went_on(s, at, now_ms, &path, logs)) {
                    // The stop was held: the turn goes on to the next `Stop`.
                    if let Some(turn) = s.turn.as_mut() {
                        turn.went_on();
                    }
                } else {
                    finish(sid, s, now_ms, Why::Interrupted, logs, out);
                    s.went_out = WentOut::at(at);
                }
            }
            if let Some(at) = s.closing.filter(|_| s.turn.is_none()) {
                out.push(record(sid, Event::Closed { at_ms: at }));
                closed.push(sid.clone());
            }
        }
        for sid in closed {
            self.sessions.remove(&sid);
        }
    }

    /// Gives up on a session that will send nothing more: what its log has of its turn goes
    /// out, and it is closed at `at_ms` (or when it said it ended), its open turn marked
    /// unfinished.
    fn give_up(
        &mut self,
        id: &str,
        at_ms: u64,
        logs: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> Option<u64> {
        let mut s = self.sessions.remove(id)?;
        {
            if let Some(u) = s.undecided.take() {
                ends::prompted(id, &mut s, u, true, logs, out);
            }
            // A continuation the agent died in (no `Stop` ended it) is in the log too.
            if s.turn.is_none() {
                s.turn = s.went_out.continuation().map(OpenTurn::new);
            }
            // Copilot's hooks say nothing of its calls, so the daemon may last have seen it
            // before a call its log holds began: each event logged since says it was alive
            // then.
            let at_ms = match (&s.log, &s.turn) {
                (Some(path), Some(turn)) => at_ms.max(last_logged(&s, turn.at_ms, path, logs)),
                _ => at_ms,
            };
            // A turn with no `Stop` did not end: the session's close marks it unfinished.
            finish(id, &mut s, at_ms, Why::Unseen, logs, out);
            // A session that said it ended (the agent exits right after) closed then.
            Some(s.closing.unwrap_or(at_ms))
        }
    }

    fn cursor(&self, id: &str) -> Option<FileCursor> {
        let s = self.sessions.get(id)?;
        s.read.clone().or_else(|| s.resumed.clone())
    }

    fn resume(&mut self, id: &str, at: FileCursor) {
        if at.offset > 0 {
            self.sessions.entry(id.to_string()).or_default().resumed = Some(at);
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
