//! Pi's rules for the session engine ([`AgentRules`]), and its spec.

use super::{Adapter, Payload, Session, EXITED};
use crate::protocol::Record;
use crate::sources::command_hooks::engine::open_turn::Why;
use crate::sources::command_hooks::engine::files::NoTranscripts;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::engine::files::Transcripts;
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Pi.
pub const SPEC: Spec = Spec {
    name: "pi",
    title: "Pi",
    folder: module_path!(),
    holds: "Pi's extension events to records; the extension `install` writes",
    extends: None,
    cli: Some(spec::Cli {
        package: "@earendil-works/pi-coding-agent",
        version: "1.6.0",
        bin: "pi",
        var: "PI_BIN",
        node22: true,
    }),
    passes_its_environment: true,
    streams: true,
    journal_under: spec::own_journal,
    rewrite: spec::as_sent,
    runs_ours_too: spec::runs_ours_once,
    install: spec::Install {
        about: "Pi: an extension of albedo-otel's own, $PI_CODING_AGENT_DIR/extensions/albedo-otel.js (default ~/.pi/agent), or ./.pi/extensions/albedo-otel.js (loaded once the project is trusted)",
        user_file: |env| match env("PI_CODING_AGENT_DIR").filter(|d| !d.is_empty()) {
            Some(dir) => Some(std::path::Path::new(&dir).join("extensions/albedo-otel.js")),
            None => spec::under_home(env, ".pi/agent/extensions/albedo-otel.js"),
        },
        user_needs: "PI_CODING_AGENT_DIR or HOME",
        project_file: ".pi/extensions/albedo-otel.js",
        form: spec::Form::Plugin(spec::Plugin {
            events: super::HOOK_EVENTS,
            text: super::extension,
            command_in: super::extension_command,
        }),
        asks_trust: false,
        one_run_per_command: false,
    },
};

/// The daemon's adapter for this agent (`grace_ms`: unused, Pi's `agent_settled` is final),
/// for the list in `command_hooks/mod.rs`.
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

    /// Takes one event that reached the journal at `received_ms`; appends records to `out`.
    fn take(
        &mut self,
        p: Payload,
        received_ms: u64,
        _: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let p = &p;
        let sid = p.session_id.as_str();
        let at = p.at_ms.unwrap_or(received_ms);
        match p.hook_event_name.as_str() {
            "session_start" => self.open_session(sid, at, p.cwd.as_deref(), out),
            "before_agent_start" => {
                // A turn that never settled (Pi was stopped mid-run) ends where the next begins.
                self.end_turn(sid, at, Why::Interrupted, out);
                self.begin(sid, at, p.prompt.clone().unwrap_or_default(), out);
            }
            "before_provider_request" => {
                let model = p.model.clone().unwrap_or_default();
                let provider = p.provider.clone().unwrap_or_default();
                self.on_request(sid, at, model, provider, out);
            }
            "message_start" => self.on_response(sid, at, p.message.as_ref(), out),
            "message_update" => self.on_first_chunk(sid, at, out),
            "message_end" => {
                if let Some(m) = &p.message {
                    self.on_message(sid, at, m, out);
                }
            }
            "tool_execution_start" => self.on_tool_start(sid, at, p, out),
            "tool_execution_end" => self.on_tool_end(sid, at, p, out),
            "agent_settled" => {
                let why = if p.aborted {
                    Why::Interrupted
                } else {
                    Why::Stopped("end_turn")
                };
                self.end_turn(sid, at, why, out);
            }
            EXITED => self.abandon(sid, at, &mut NoTranscripts, out),
            // `session_shutdown`: the hook's input closes right after, and it says EXITED.
            _ => {}
        }
    }

    /// Gives up on a session that will send nothing more (Pi is gone, or on to another
    /// session): its open turn is exported, marked unfinished, and the session is forgotten
    /// (and closed then, if it was opened). A later `pi --session` opens it again.
    fn give_up(
        &mut self,
        id: &str,
        at_ms: u64,
        _: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> Option<u64> {
        let s = self.sessions.remove(id)?;
        if !s.started {
            return None;
        }
        if let Some(turn) = s.turn {
            turn.flush(id, at_ms, Why::Unseen, out);
        }
        Some(at_ms)
    }
}

/// How `import` reads this agent's history (apart from [`SPEC`], so that the hook, which reads
/// the spec, links none of it).
pub const HISTORY: spec::History = spec::History::Files(spec::HistoryFiles {
    roots: super::history::roots,
    is_session: super::history::is_session,
    records: super::history::records,
});
