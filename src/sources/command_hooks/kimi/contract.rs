//! Kimi Code's rules for the session engine ([`AgentRules`]): its turns'
//! calls are read from the session's `wire.jsonl` files, handed as `files`; and its spec:
//! `[[hooks]]` tables in Kimi's `config.toml`.

use super::{Adapter, Payload, Session, end_now, read, settle, why_of, ends, AGENT};
use crate::protocol::{Event, Record};
use std::borrow::Cow;
use crate::sources::command_hooks::engine::records::{record, session_opened};
use crate::sources::command_hooks::engine::open_turn::Why;
use crate::sources::command_hooks::engine::held::WentOut;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::engine::files::{FileCursor, Transcripts};
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Kimi Code.
pub const SPEC: Spec = Spec {
    name: "kimi",
    title: "Kimi Code",
    folder: module_path!(),
    holds: "Kimi Code's hooks for the turn, its `wire.jsonl` files for the calls and sub-agents",
    extends: None,
    cli: Some(spec::Cli {
        package: "@moonshot-ai/kimi-code",
        version: "2.1.0",
        bin: "kimi",
        var: "KIMI_BIN",
        node22: true,
    }),
    // Kimi runs its hooks with its own whole environment: its `OTEL_*` are the user's shell's.
    passes_its_environment: true,
    streams: false,
    journal_under: spec::own_journal,
    rewrite: super::with_home,
    runs_ours_too: spec::runs_ours_once,
    install: spec::Install {
        about: "Kimi Code: [[hooks]] tables in $KIMI_CODE_HOME/config.toml (default ~/.kimi-code); Kimi has no project scope",
        user_file: |env| match env("KIMI_CODE_HOME").filter(|h| !h.is_empty()) {
            Some(home) => Some(std::path::Path::new(&home).join("config.toml")),
            None => spec::under_home(env, ".kimi-code/config.toml"),
        },
        user_needs: "KIMI_CODE_HOME or HOME",
        // Kimi reads hooks from its home's `config.toml` alone.
        project_file: "",
        form: spec::Form::TomlTables(spec::TomlTables {
            events: super::HOOK_EVENTS,
            tool_events: &[],
            timeout: 10,
        }),
        asks_trust: false,
        one_run_per_command: false,
    },
};

/// The daemon's adapter for this agent, for the list in `command_hooks/mod.rs`.
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
        s.turn.is_some()
    }

    /// Takes one payload received at `at_ms`; appends records to `out`.
    fn take(
        &mut self,
        p: Payload,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let p = &p;
        let sid = p.session_id.as_str();
        let s = self.sessions.entry(sid.to_string()).or_default();
        if !s.started {
            s.started = true;
            out.push(session_opened(sid, at_ms, AGENT, p.cwd.as_deref()));
        }
        if p.kimi_home.is_some() {
            s.home.clone_from(&p.kimi_home);
        }
        match p.hook_event_name.as_str() {
            "UserPromptSubmit" => {
                // What the last turn left in the wire is its own; a turn still open now was
                // cut short, unless its wire says it ended. (With none open, the wire's older
                // lines are the turns before, which the reads from this prompt's time on
                // leave out.)
                end_now(sid, s, at_ms, Why::Interrupted, files, out);
                s.turn = Some(ends::begin(at_ms));
                s.went_out = WentOut::default();
                s.closing = None;
                let text = Cow::Owned(p.prompt_text());
                out.push(record(sid, Event::Prompted { at_ms, text }));
            }
            "Stop" | "StopFailure" | "Interrupt" => {
                // With no turn open, the stop ends what the agent did since the last went out
                // (its stop blocked late), which only the wire has: in a new daemon, what the
                // wire has past where the old one had read it.
                if s.turn.is_none() {
                    let resumed = s.resumed.as_ref().map(|_| 0);
                    s.turn = s.went_out.continuation().or(resumed).map(ends::begin);
                }
                let Some(turn) = s.turn.as_mut() else { return };
                let reason = match p.hook_event_name.as_str() {
                    "Stop" => "end_turn",
                    "Interrupt" => "interrupted",
                    _ => "error",
                };
                turn.hold(at_ms, reason);
                settle(sid, s, at_ms, files, out);
            }
            "SessionEnd" => {
                s.closing = Some(at_ms);
                let held = s.turn.as_ref().and_then(|t| t.stop);
                let why = held.map_or(Why::Interrupted, |(_, reason)| why_of(reason));
                end_now(sid, s, at_ms, why, files, out);
            }
            _ => {}
        }
    }

    /// Reads the open turns' wires, ends the turns that are over, and closes the sessions
    /// that ended.
    fn tick(&mut self, now_ms: u64, files: &mut dyn Transcripts, out: &mut Vec<Record<'static>>) {
        let mut closed = Vec::new();
        for (sid, s) in self.sessions.iter_mut() {
            if s.turn.is_some() {
                settle(sid, s, now_ms, files, out);
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

    /// Gives up on a session that will send nothing more: what its wire has goes out, and it
    /// is closed at `at_ms` (or when it was ending), its open turn, its calls in flight and
    /// its sub-agents unfinished.
    fn give_up(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> Option<u64> {
        let mut s = self.sessions.remove(id)?;
        if s.turn.is_some() {
            read(id, &mut s, u64::MAX, files, out);
        }
        // Kimi's wire says it was alive when it last wrote there.
        let seen = s.reader.as_ref().map_or(0, |r| r.last_work);
        let at_ms = at_ms.max(seen);
        if let Some(turn) = s.turn.take() {
            match turn.own.ended {
                Some((end, reason)) => ends::end(turn, id, end, why_of(reason), out),
                None => ends::end(turn, id, at_ms, Why::Unseen, out),
            }
        }
        Some(s.closing.unwrap_or(at_ms))
    }

    /// Where the session's main wire has been read to.
    fn cursor(&self, id: &str) -> Option<FileCursor> {
        let s = self.sessions.get(id)?;
        match &s.reader {
            Some(r) => Some(FileCursor {
                path: r.path.clone(),
                offset: r.offset,
                identity: r.identity,
            }),
            None => s.resumed.clone(),
        }
    }

    fn resume(&mut self, id: &str, at: FileCursor) {
        if at.offset > 0 && !at.path.is_empty() {
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
