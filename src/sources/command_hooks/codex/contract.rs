//! Codex CLI's rules for the session engine ([`AgentRules`]): Claude Code's pairing
//! underneath, and no transcript of Claude Code's shape to read; and its spec.

use super::{payload, target, Adapter, Payload, SPAWN_TOOL};
use crate::protocol::Record;
use crate::sources::command_hooks::claude_code;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::engine::files::{NoTranscripts, Transcripts};
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Codex CLI.
pub const SPEC: Spec = Spec {
    name: "codex",
    title: "Codex CLI",
    folder: module_path!(),
    holds: "Codex CLI's payloads: its model hooks, and the rest through Claude Code's adapter (the same shape)",
    extends: Some("claude-code"),
    cli: Some(spec::Cli {
        package: "@openai/codex",
        version: "0.171.0",
        bin: "codex",
        var: "CODEX_BIN",
        node22: false,
    }),
    passes_its_environment: true,
    streams: false,
    journal_under: spec::own_journal,
    rewrite: spec::as_sent,
    runs_ours_too: spec::runs_ours_once,
    install: spec::Install {
        about: "Codex CLI: $CODEX_HOME/hooks.json (default ~/.codex/hooks.json) or ./.codex/hooks.json; Codex runs a hook only once it is trusted (--trust)",
        user_file: |env| match env("CODEX_HOME").filter(|h| !h.is_empty()) {
            Some(home) => Some(std::path::Path::new(&home).join("hooks.json")),
            None => spec::under_home(env, ".codex/hooks.json"),
        },
        user_needs: "CODEX_HOME or HOME",
        project_file: ".codex/hooks.json",
        form: spec::Form::Hooks(spec::Hooks {
            events: super::HOOK_EVENTS,
            tool_events: &["PreToolUse", "PostToolUse"],
            timeout: 10,
            // Codex cuts these to three seconds, and says so on every run if ours is longer.
            short: &["SessionEnd", "Interrupt"],
            named: false,
        }),
        asks_trust: true,
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
    type Session = claude_code::Session;

    fn session_of(p: &Payload) -> &str {
        &p.hook.session_id
    }

    fn sessions(&self) -> &Sessions<claude_code::Session> {
        self.claude_code().sessions()
    }

    fn busy(s: &claude_code::Session) -> bool {
        claude_code::Adapter::busy(s)
    }

    fn take(
        &mut self,
        p: Payload,
        at_ms: u64,
        _: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let Payload { mut hook, model } = p;
        // Claude Code's reader would take Codex's rollout for a transcript of its own.
        hook.transcript_path = None;
        hook.agent_transcript_path = None;
        match hook.hook_event_name.as_str() {
            // Codex asks its model again, and stops, only once the calls it asked for are
            // over: one still pending then was denied by another hook (Codex sends no
            // PostToolBatch).
            "PreModelRequest" | "Stop" => {
                let by = target(&hook);
                if hook.hook_event_name == "PreModelRequest" {
                    // Asked again after a `Stop` another hook blocked: the turn goes on.
                    self.claude_code.stop_was_held(&by);
                }
                self.claude_code.end_pending(&by, at_ms, true, out);
                self.claude_code
                    .forget_spawning(&hook.session_id, Some(&by));
            }
            // Ctrl-C: what was running ends now, failed, and the model call in flight with an
            // error; the turn is exported unfinished when the next begins or the session ends.
            "Interrupt" => {
                self.claude_code
                    .end_pending(&target(&hook), at_ms, false, out);
                self.claude_code.forget_spawning(&hook.session_id, None);
                self.unanswered(&hook.session_id, at_ms, out);
            }
            // A sub-agent's prompt opens no turn of the parent's: its SubagentStart opened it.
            "UserPromptSubmit" if hook.agent_id.is_some() => return,
            "UserPromptSubmit" => self.claude_code.forget_spawning(&hook.session_id, None),
            "SessionEnd" => {
                self.unanswered(&hook.session_id, at_ms, out);
            }
            "PreToolUse" if hook.tool_name.as_deref() == Some(SPAWN_TOOL) => {
                if let Some(call) = hook.tool_use_id.as_deref() {
                    let prompt = payload::spawn_prompt(&hook);
                    let (sid, by) = (&hook.session_id, target(&hook));
                    self.claude_code.spawning(sid, &by, call, &prompt);
                }
            }
            "PostToolUse" if hook.tool_name.as_deref() == Some(SPAWN_TOOL) => {
                if let Some(call) = hook.tool_use_id.as_deref() {
                    let agent = payload::spawned(&hook);
                    let (prompt, by) = (payload::spawn_prompt(&hook), target(&hook));
                    let sid = &hook.session_id;
                    self.claude_code
                        .spawned(sid, agent.as_deref(), &by, call, &prompt);
                }
            }
            _ => {}
        }
        // Claude Code's adapter takes every event: it ignores the model hooks, but learns of
        // the session from whichever payload comes first.
        // No transcript is read: Codex's rollout is not Claude Code's transcript.
        // A model hook is Codex's own after that, and is kept for it; any other is handed on
        // as it is.
        if matches!(
            hook.hook_event_name.as_str(),
            "PreModelRequest" | "PostModelRequest"
        ) {
            let taken = hook.clone();
            AgentRules::take(&mut self.claude_code, taken, at_ms, &mut NoTranscripts, out);
            self.on_model(at_ms, &hook, &model, out);
        } else {
            AgentRules::take(&mut self.claude_code, hook, at_ms, &mut NoTranscripts, out);
        }
    }

    fn tick(&mut self, now_ms: u64, files: &mut dyn Transcripts, out: &mut Vec<Record<'static>>) {
        AgentRules::tick(&mut self.claude_code, now_ms, files, out);
    }

    /// Gives up on a session that will send nothing more (see Claude Code's `give_up`); its
    /// model calls in flight go out with an error.
    fn give_up(
        &mut self,
        id: &str,
        at_ms: u64,
        _: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> Option<u64> {
        self.unanswered(id, at_ms, out);
        // Codex's payloads name no transcript of Claude Code's shape: nothing to read.
        AgentRules::give_up(&mut self.claude_code, id, at_ms, &mut NoTranscripts, out)
    }

    /// Model calls waiting for their answer.
    fn kept_besides(&self) -> usize {
        self.started.len()
    }
}

/// How `import` reads this agent's history (apart from [`SPEC`], so that the hook, which reads
/// the spec, links none of it).
pub const HISTORY: spec::History = spec::History::Files(spec::HistoryFiles {
    roots: super::history::roots,
    is_session: super::history::is_session,
    records: super::history::records,
});
