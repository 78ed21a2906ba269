//! opencode's rules for the session engine ([`AgentRules`]), and its spec; its payload is
//! boxed, the largest by far.

use super::subagents::OPENING_GRACE_MS;
use super::{Adapter, Payload, Session, EXITED};
use crate::protocol::{Event, Record};
use crate::sources::command_hooks::engine::records::record;
use crate::sources::command_hooks::engine::open_turn::Why;
use crate::sources::command_hooks::engine::files::NoTranscripts;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::engine::files::Transcripts;
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of opencode.
pub const SPEC: Spec = Spec {
    name: "opencode",
    title: "opencode",
    folder: module_path!(),
    holds: "opencode's plugin events to records, its sub-agents under their `task` call; the plugin `install` writes",
    extends: None,
    cli: Some(spec::Cli {
        package: "opencode-ai",
        version: "1.18.33",
        bin: "opencode",
        var: "OPENCODE_BIN",
        node22: false,
    }),
    passes_its_environment: true,
    streams: true,
    journal_under: spec::own_journal,
    rewrite: spec::as_sent,
    runs_ours_too: spec::runs_ours_once,
    install: spec::Install {
        about: "opencode: a plugin of albedo-otel's own, $XDG_CONFIG_HOME/opencode/plugin/albedo-otel.js (default ~/.config), or ./.opencode/plugin/albedo-otel.js",
        // opencode takes the XDG layout everywhere, macOS too.
        user_file: |env| match env("XDG_CONFIG_HOME").filter(|h| !h.is_empty()) {
            Some(dir) => Some(std::path::Path::new(&dir).join("opencode/plugin/albedo-otel.js")),
            None => spec::under_home(env, ".config/opencode/plugin/albedo-otel.js"),
        },
        user_needs: "XDG_CONFIG_HOME or HOME",
        project_file: ".opencode/plugin/albedo-otel.js",
        form: spec::Form::Plugin(spec::Plugin {
            events: super::HOOK_EVENTS,
            text: super::plugin,
            command_in: super::plugin_command,
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
    type Payload = Box<Payload>;
    type Session = Session;

    fn session_of(p: &Box<Payload>) -> &str {
        &p.session_id
    }

    fn sessions(&self) -> &Sessions<Session> {
        &self.sessions
    }

    fn busy(s: &Session) -> bool {
        s.turn.is_some()
    }

    /// Takes one event that reached the journal at `received_ms`; appends records to `out`.
    fn take(
        &mut self,
        p: Box<Payload>,
        received_ms: u64,
        _: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let p = &p;
        let sid = p.own_session();
        if sid.is_empty() {
            return;
        }
        if self.waits(sid, received_ms, p, out) {
            return;
        }
        let seen = p.seen_ms().unwrap_or(received_ms);
        let props = &p.properties;
        match p.hook_event_name.as_str() {
            "session.created" => {
                let info = props.info.as_ref();
                let at = info.and_then(|i| i.time.created).unwrap_or(seen);
                let parent = info.and_then(|i| i.parent_id.as_deref());
                self.open_session(
                    sid,
                    at,
                    info.and_then(|i| i.directory.as_deref()),
                    parent,
                    out,
                );
            }
            "chat.message" => {
                let message = props.message.as_ref();
                let at = message.and_then(|m| m.time.created).unwrap_or(seen);
                let id = message.and_then(|m| m.id.clone()).unwrap_or_default();
                let text = props.text.clone().unwrap_or_default();
                self.on_prompt(sid, at, id, text, out);
            }
            "message.updated" => match props.info.as_ref() {
                Some(info) if info.role.as_deref() == Some("assistant") => {
                    self.on_message(sid, seen, info, out);
                }
                _ => {}
            },
            "message.part.updated" => match props.part.as_ref() {
                Some(part) if part.kind == "step-start" => self.on_first_chunk(sid, seen, part),
                Some(part) if part.kind == "tool" => self.on_tool(sid, seen, part, out),
                _ => {}
            },
            "session.idle" => self.end_turn(sid, seen, Why::Stopped("end_turn"), out),
            EXITED => self.abandon(sid, seen, &mut NoTranscripts, out),
            _ => {}
        }
    }

    /// Sub-agents that held their events for [`OPENING_GRACE_MS`] open without their call.
    fn tick(&mut self, now_ms: u64, _: &mut dyn Transcripts, out: &mut Vec<Record<'static>>) {
        let due = now_ms.saturating_sub(OPENING_GRACE_MS);
        for child in self.holding(None, Some(due)) {
            self.release(&child, None, out);
        }
    }

    /// Gives up on a session that will send nothing more (opencode is gone): its open turn
    /// is exported, marked unfinished, and the session is forgotten (closed then, if it was
    /// opened), its sub-agents first. A later `run --session` opens it again.
    fn give_up(
        &mut self,
        id: &str,
        at_ms: u64,
        _: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> Option<u64> {
        // Its sub-agents (and theirs) first: they run inside its calls. Each once, whatever
        // loops the parent ids make.
        let mut family = vec![id.to_string()];
        let mut i = 0;
        while i < family.len() {
            let children: Vec<String> = self
                .sessions
                .iter()
                .filter(|(c, s)| {
                    s.parent.as_deref() == Some(family[i].as_str()) && !family.contains(c)
                })
                .map(|(c, _)| c.clone())
                .collect();
            family.extend(children);
            i += 1;
        }
        // Those still waiting for their call open now, with what they held.
        let holding = self.holding(None, None);
        for sid in family.iter().filter(|s| holding.contains(s)) {
            self.release(sid, None, out);
        }
        // The model calls still streaming go out as errors (they were lost); the calls still
        // running end with their session, unfinished.
        let mut closes = None;
        for sid in family.iter().rev() {
            let Some(mut s) = self.sessions.remove(sid) else {
                continue;
            };
            // A sub-agent whose call never ran was never opened: nothing to close.
            if !s.started {
                continue;
            }
            if let Some(turn) = s.turn.take() {
                turn.flush(sid, at_ms, Why::Unseen, out);
            }
            // The session itself is last, closed by the engine.
            if sid == id {
                closes = Some(at_ms);
            } else {
                out.push(record(sid, Event::Closed { at_ms }));
            }
        }
        closes
    }
}

/// How `import` reads this agent's history (apart from [`SPEC`], so that the hook, which reads
/// the spec, links none of it).
#[cfg(feature = "store")]
pub const HISTORY: spec::History = spec::History::Database(spec::HistoryDatabase {
    roots: super::history::roots,
    is_database: super::history::is_database,
    records: super::history::records,
});

/// Without the store, nothing to import into.
#[cfg(not(feature = "store"))]
pub const HISTORY: spec::History = spec::History::Cannot("this build has no local store");
