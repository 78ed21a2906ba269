//! Factory Droid's rules for the session engine ([`AgentRules`]): Claude Code's turns
//! underneath, its own session file read for the prompt, the call ids and the model calls;
//! and its spec.

use super::{input, made_up, remember, Adapter, Ledger, Payload, Reading, Tail};
use crate::protocol::Record;
use crate::sources::command_hooks::claude_code;
use crate::sources::command_hooks::engine::{AgentRules, Sessions};
use crate::sources::command_hooks::engine::files::{FileCursor, NoTranscripts, Transcripts};
use crate::sources::command_hooks::spec::{self, Spec};

/// What the shared hook and daemon need to know of Factory Droid.
pub const SPEC: Spec = Spec {
    name: "droid",
    title: "Factory Droid",
    folder: module_path!(),
    holds: "Factory Droid's payloads through Claude Code's adapter (the same shape), and its session file for the prompt, the call ids and the model calls",
    extends: Some("claude-code"),
    cli: Some(spec::Cli {
        package: "droid",
        version: "0.215.0",
        bin: "droid",
        var: "DROID_BIN",
        node22: false,
    }),
    passes_its_environment: true,
    streams: false,
    journal_under: spec::own_journal,
    rewrite: spec::as_sent,
    runs_ours_too: spec::runs_ours_once,
    install: spec::Install {
        about: "Factory Droid: ~/.factory/settings.json (default) or ./.factory/settings.json",
        user_file: |env| spec::under_home(env, ".factory/settings.json"),
        user_needs: "HOME",
        project_file: ".factory/settings.json",
        form: spec::Form::Hooks(spec::Hooks {
            events: super::HOOK_EVENTS,
            tool_events: &["PreToolUse", "PostToolUse"],
            timeout: 10,
            short: &[],
            named: false,
        }),
        asks_trust: false,
        // Droid runs a command both scopes name once (its docs: identical commands are
        // deduplicated).
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
    type Session = claude_code::Session;

    fn session_of(p: &Payload) -> &str {
        &p.hook.session_id
    }

    fn sessions(&self) -> &Sessions<claude_code::Session> {
        self.claude_code.sessions()
    }

    fn busy(s: &claude_code::Session) -> bool {
        claude_code::Adapter::busy(s)
    }

    fn take(
        &mut self,
        p: Payload,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let Payload { mut hook, own } = p;
        let sid = hook.session_id.clone();
        let event = hook.hook_event_name.clone();
        // Claude Code's reader would take Droid's session file for a transcript of its own.
        let path = hook.transcript_path.take().filter(|p| !p.is_empty());
        let r = self.readings.entry(sid.clone()).or_default();
        r.since.get_or_insert(at_ms);
        let announced = own.message_id.as_deref().filter(|_| event == "UserPromptSubmit");
        let already = announced.is_some_and(|id| r.prompts.iter().any(|p| p == id));
        if let Some(id) = announced.filter(|_| !already) {
            remember(&mut r.prompts, id);
        }
        if let Some(path) = &path {
            let last = event == "SessionEnd";
            self.read(&sid, at_ms, &hook, path, last, files, out);
        }
        let r = self.readings.entry(sid.clone()).or_default();
        match event.as_str() {
            // Opened already from the session file, read before this hook was.
            "UserPromptSubmit" if already => return,
            "PreToolUse" => {
                let name = hook.tool_name.clone().unwrap_or_default();
                let id = match r.asked.iter().position(|(_, n)| *n == name) {
                    Some(i) => r.asked.remove(i).map(|(id, _)| id).unwrap_or_default(),
                    None => made_up(r),
                };
                r.open.push((id.clone(), name, input(&hook)));
                hook.tool_use_id = Some(id);
            }
            "PostToolUse" => {
                let (name, given) = (hook.tool_name.clone().unwrap_or_default(), input(&hook));
                let alike = |c: &&(String, String, String)| c.1 == name;
                let i = (r.open.iter().position(|c| alike(&c) && c.2 == given))
                    .or_else(|| r.open.iter().position(|c| alike(&c)));
                hook.tool_use_id = Some(match i {
                    Some(i) => r.open.remove(i).0,
                    None => made_up(r),
                });
            }
            // Droid stops only once the calls it asked for are over: one still open was not
            // run (another hook refused it, and no `PostToolUse` came).
            "Stop" => {
                r.open.clear();
                // A `tool_use` no `PreToolUse` took (an input Droid refused) is not the
                // next call's.
                r.asked.clear();
                if hook.last_assistant_message.is_none() {
                    hook.last_assistant_message = Some(r.reply.clone());
                }
                self.claude_code.end_pending(&sid, at_ms, true, out);
            }
            _ => {}
        }
        AgentRules::take(&mut self.claude_code, hook, at_ms, &mut NoTranscripts, out);
        if event == "SessionEnd" {
            self.readings.remove(&sid);
        }
    }

    /// Droid writes a turn's last usage after its stop hooks, and sends no hook after them
    /// until the next prompt: the calls waiting for it are settled as it shows, before the
    /// held stop's grace ends the turn.
    fn tick(&mut self, now_ms: u64, files: &mut dyn Transcripts, out: &mut Vec<Record<'static>>) {
        let waiting: Vec<String> = (self.readings.iter())
            .filter(|(_, r)| !r.ledger.is_empty())
            .map(|(id, _)| id.clone())
            .collect();
        for id in waiting {
            self.settle(&id, files, false, out);
        }
        AgentRules::tick(&mut self.claude_code, now_ms, files, out);
    }

    /// Its calls waiting for their usage go out with what they have, then Claude Code's
    /// adapter ends the turn.
    fn give_up(
        &mut self,
        id: &str,
        at_ms: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> Option<u64> {
        self.settle(id, files, true, out);
        self.readings.remove(id);
        AgentRules::give_up(&mut self.claude_code, id, at_ms, &mut NoTranscripts, out)
    }

    /// Sessions whose file is being read.
    fn kept_besides(&self) -> usize {
        self.readings.len()
    }

    /// Where the session's file has been read to.
    fn cursor(&self, id: &str) -> Option<FileCursor> {
        let r = self.readings.get(id)?;
        (!r.tail.cursor.path.is_empty()).then(|| r.tail.cursor.clone())
    }

    /// A session an earlier daemon read part of: its file goes on from there. (A new
    /// session's journal resumes from nothing: it is met as any new session.)
    fn resume(&mut self, id: &str, at: FileCursor) {
        if at.offset == 0 {
            return;
        }
        let resumed = Reading {
            tail: Tail::resumed(at),
            ledger: Ledger::resumed(),
            since: Some(0),
            ..Reading::default()
        };
        self.readings.insert(id.to_string(), resumed);
    }

    /// Model calls waiting for their usage keep their session in flight: the daemon neither
    /// exits nor saves a resume point past them.
    fn open_turns(&self) -> usize {
        let busy = |(id, s): (&String, &claude_code::Session)| {
            claude_code::Adapter::busy(s) || self.readings.get(id).is_some_and(Reading::waits)
        };
        self.claude_code.sessions().iter().filter(|&s| busy(s)).count()
    }

    fn at_rest(&self, id: &str) -> bool {
        let turn = (self.claude_code.sessions().get(id)).is_some_and(claude_code::Adapter::busy);
        !turn && !self.readings.get(id).is_some_and(Reading::waits)
    }
}

/// How `import` reads this agent's history (apart from [`SPEC`], so that the hook, which reads
/// the spec, links none of it).
pub const HISTORY: spec::History = spec::History::Cannot(
    "not read yet: Droid keeps its sessions under ~/.factory/sessions/, with usage only per session",
);
