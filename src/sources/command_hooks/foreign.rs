//! Other agents that run Claude Code's hooks: Cursor, Grok Build, Devin CLI and Continue's CLI
//! read `~/.claude/settings.json` and run the hooks there, so the hook `install claude-code`
//! wrote is handed their payloads too. Those must never go into a Claude Code session, nor
//! make sessions of their own under Claude Code's name.
//!
//! The hook tells them apart ([`recognise`]) from what it already reads of every payload
//! ([`Minimal`]), in the same single pass: Cursor's fields (`cursor_version`,
//! `conversation_id`, `generation_id`) and Grok's camelCase keys (`sessionId`,
//! `hookEventName`, `transcriptPath`) name them outright. Devin's and Continue's payloads
//! are Claude Code's shape, without the transcript Claude Code always names; only then does
//! the hook look at the variables each caller sets for its hooks (`DEVIN_PROJECT_DIR`,
//! `CONTINUE_PROJECT_DIR`, `GROK_HOOK_EVENT`). A payload that names a
//! transcript, as every Claude Code payload does, costs no variable lookup, and a Claude Code
//! run from inside one of those agents (their variables inherited) stays Claude Code's.
//!
//! A recognised caller whose agent has an adapter ([`Caller::agent`], by its name) has its
//! payload journaled under that agent, as that agent's own hook journals it, and traced by
//! it: Cursor's become Cursor traces, the same as from Cursor's own `hooks.json`. One without
//! (Grok, Devin and Continue, today) has only what identifies it journaled, in a journal of its own: its session and event,
//! none of its prompts, commands or file contents. The daemon drops those with one line in
//! its log per session ([`Dropped`]); the calling agent sees nothing either way.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::agent::{Agent, Env};
use super::{HandOff, HookError, Minimal};

/// An agent other than Claude Code that runs Claude Code's hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Caller {
    Cursor,
    Grok,
    Devin,
    Continue,
}

impl Caller {
    pub const ALL: [Caller; 4] = [
        Caller::Cursor,
        Caller::Grok,
        Caller::Devin,
        Caller::Continue,
    ];

    /// Its name in the journal, and the name of the agent whose adapter would trace it.
    pub fn name(self) -> &'static str {
        match self {
            Caller::Cursor => "cursor",
            Caller::Grok => "grok",
            Caller::Devin => "devin",
            Caller::Continue => "continue",
        }
    }

    /// Its name as its users know it.
    pub fn title(self) -> &'static str {
        match self {
            Caller::Cursor => "Cursor",
            Caller::Grok => "Grok Build",
            Caller::Devin => "Devin CLI",
            Caller::Continue => "Continue's CLI (cn)",
        }
    }

    pub fn from_name(name: &str) -> Option<Caller> {
        Caller::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The agent whose adapter takes this caller's payloads, once there is one: an adapter
    /// registered under the caller's name (a Cursor adapter as `cursor`) plugs in here.
    pub fn agent(self) -> Option<Agent> {
        Agent::from_name(self.name())
    }
}

/// The variable each caller sets for the hooks it runs, and Claude Code does not. Not
/// Cursor's: its payloads always say whose they are, and its variables may be in a terminal
/// a Claude Code session was started from.
const VARIABLES: [(Caller, &str); 3] = [
    (Caller::Grok, "GROK_HOOK_EVENT"),
    (Caller::Devin, "DEVIN_PROJECT_DIR"),
    (Caller::Continue, "CONTINUE_PROJECT_DIR"),
];

/// Whose a payload handed to Claude Code's hook is, when it is not Claude Code's. `fields`
/// is what the hook read of it; `env` the hook's variables, looked at only for a payload
/// that names no transcript (Claude Code's always do).
pub(crate) fn recognise(fields: &Minimal<'_>, env: Env<'_>) -> Option<Caller> {
    // `albedo-otel doctor`'s test payload is ours, wherever the doctor runs.
    if fields.doctor_id.is_some() {
        return None;
    }
    if fields.cursor_version.is_some()
        || fields.conversation_id.is_some()
        || fields.generation_id.is_some()
    {
        return Some(Caller::Cursor);
    }
    if fields.session_id_camel.is_some()
        || fields.hook_event_camel.is_some()
        || fields.transcript_path_camel.is_some()
    {
        return Some(Caller::Grok);
    }
    if fields.transcript_path.is_some_and(names_something) {
        return None;
    }
    VARIABLES
        .into_iter()
        .find(|(_, k)| env(k).is_some_and(|v| !v.is_empty()))
        .map(|(c, _)| c)
}

/// Whether a raw JSON value is a string with something in it.
fn names_something(raw: &RawValue) -> bool {
    let text = raw.get();
    text.starts_with('"') && text != "\"\""
}

/// The session a recognised caller's payload belongs to, by that caller's own field: what
/// its journal is named after (with the caller's name before it, so that it never shares
/// Claude Code's).
pub(crate) fn session_of(caller: Caller, fields: &Minimal<'_>) -> String {
    let own = match caller {
        Caller::Cursor => fields.conversation_id,
        Caller::Grok => fields.session_id_camel,
        Caller::Devin | Caller::Continue => None,
    };
    own.and_then(|r| serde_json::from_str::<Cow<'_, str>>(r.get()).ok())
        .or_else(|| fields.session_id.clone())
        .map(Cow::into_owned)
        .unwrap_or_default()
}

/// The journal line kept of a payload whose agent nothing traces: its session and event,
/// and nothing it says.
pub(crate) fn identity(session: &str, fields: &Minimal<'_>) -> String {
    let event = fields
        .hook_event_name
        .or(fields.hook_event_camel)
        .and_then(|r| serde_json::from_str::<Cow<'_, str>>(r.get()).ok())
        .unwrap_or_default();
    serde_json::json!({ "session_id": session, "hook_event_name": event }).to_string()
}

/// Journals a payload of another agent that ran Claude Code's hook (see the module), apart
/// from every Claude Code session: whole, under its agent, when that agent has an adapter;
/// else only what identifies it, for the daemon to drop with a line in its log.
pub(super) fn hand_off(
    dir: &Path,
    raw: &RawValue,
    fields: &Minimal<'_>,
    handoff: &HandOff,
    caller: Caller,
    received_ms: u64,
) -> Result<(), HookError> {
    let env = |k: &str| std::env::var(k).ok();
    // Cursor runs its own hooks files too: where ours is there, that route journals it.
    if caller == Caller::Cursor && super::cursor::runs_ours_too(raw.get(), &env) {
        return Ok(());
    }
    // As that agent's own hook names the journal (a Cursor sub-agent's: its parent's).
    let session = caller
        .agent()
        .and_then(|a| (a.spec().journal_under)(raw.get()))
        .unwrap_or_else(|| session_of(caller, fields));
    let journal = format!("{}.{session}", caller.name());
    let (line, handoff) = match caller.agent() {
        // As that agent's own hook journals it (Cursor's: its conversation as its session).
        Some(agent) => match (agent.spec().rewrite)(raw.get(), &env) {
            Some(line) => (line, handoff.clone()),
            None if raw.get().contains('\n') => {
                let v: serde_json::Value =
                    serde_json::from_str(raw.get()).map_err(HookError::NotJson)?;
                (v.to_string(), handoff.clone())
            }
            None => (raw.get().to_string(), handoff.clone()),
        },
        // Its prompts and file contents are not ours to keep, nor its settings.
        None => (identity(&session, fields), HandOff::default()),
    };
    let host = match caller.agent() {
        Some(_) => crate::process::hook_host(),
        None => None,
    };
    let stamp = super::journal::Stamp {
        received_ms,
        host,
        handoff: &handoff,
        agent: Some(caller.name()),
    };
    super::journal::append(dir, &journal, &line, &stamp).map_err(|source| HookError::Journal {
        dir: dir.display().to_string(),
        source,
    })
}

/// What the daemon reads of such a line.
#[derive(Deserialize)]
pub(crate) struct Identity {
    #[serde(default)]
    pub session_id: String,
}

/// The sessions of callers nothing traces that the daemon has said it drops: one log line a
/// session. Bounded, so that a daemon that never idles does not grow; past the bound a
/// session may be named again.
#[derive(Debug, Default)]
pub struct Dropped {
    said: HashSet<(Caller, String)>,
}

const REMEMBERED: usize = 4096;

impl Dropped {
    /// Notes a payload of `caller`'s `session` that was dropped, logging it if it is the
    /// session's first.
    pub fn note(&mut self, caller: Caller, session: &str) {
        if self.said.contains(&(caller, session.to_string())) {
            return;
        }
        if self.said.len() >= REMEMBERED {
            self.said.clear();
        }
        self.said.insert((caller, session.to_string()));
        let title = caller.title();
        let which = if session.is_empty() {
            "a session that names no id".to_string()
        } else {
            format!("session {session}")
        };
        tracing::info!(
            "{title} runs Claude Code's hooks: its {which} is not traced (albedo-otel has no {title} adapter yet); its payloads are dropped, none of what they say kept"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(json: &str) -> Minimal<'_> {
        serde_json::from_str(json).unwrap()
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn cursor_and_grok_are_told_by_their_fields() {
        let cursor = r#"{"conversation_id":"c1","generation_id":"g1","hook_event_name":"beforeSubmitPrompt","cursor_version":"1.7.2","prompt":"p"}"#;
        assert_eq!(recognise(&fields(cursor), &no_env), Some(Caller::Cursor));
        assert_eq!(session_of(Caller::Cursor, &fields(cursor)), "c1");
        let grok =
            r#"{"hookEventName":"PreToolUse","sessionId":"g-1","cwd":"/w","transcriptPath":"/t"}"#;
        assert_eq!(recognise(&fields(grok), &no_env), Some(Caller::Grok));
        assert_eq!(session_of(Caller::Grok, &fields(grok)), "g-1");
        let kept: serde_json::Value =
            serde_json::from_str(&identity("c1", &fields(cursor))).unwrap();
        assert_eq!(
            kept,
            serde_json::json!({"session_id": "c1", "hook_event_name": "beforeSubmitPrompt"}),
            "nothing the payload says is kept"
        );
    }

    #[test]
    fn a_payload_naming_a_transcript_is_claude_codes_whatever_the_environment() {
        let claude = r#"{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"Stop"}"#;
        let everything = |_: &str| Some("1".to_string());
        assert_eq!(recognise(&fields(claude), &everything), None);
        let doctor = r#"{"session_id":"s","hook_event_name":"albedo-otel.doctor","doctor_id":"d"}"#;
        assert_eq!(recognise(&fields(doctor), &everything), None);
        // A session started from a Cursor terminal: Cursor's variables, Claude Code's payload.
        let bare = r#"{"session_id":"s","hook_event_name":"UserPromptSubmit"}"#;
        let cursor_terminal = |k: &str| k.starts_with("CURSOR_").then(|| "1".to_string());
        assert_eq!(recognise(&fields(bare), &cursor_terminal), None);
    }

    #[test]
    fn devin_and_continue_are_told_by_their_variables() {
        let devin = r#"{"session_id":"d1","hook_event_name":"PreToolUse","tool_name":"exec"}"#;
        assert_eq!(recognise(&fields(devin), &no_env), None);
        let devin_env = |k: &str| (k == "DEVIN_PROJECT_DIR").then(|| "/w".to_string());
        assert_eq!(recognise(&fields(devin), &devin_env), Some(Caller::Devin));
        let cn = r#"{"session_id":"n1","transcript_path":"","cwd":"/w","hook_event_name":"Stop"}"#;
        let cn_env = |k: &str| {
            matches!(k, "CONTINUE_PROJECT_DIR" | "CLAUDE_PROJECT_DIR").then(|| "/w".to_string())
        };
        assert_eq!(recognise(&fields(cn), &cn_env), Some(Caller::Continue));
        assert_eq!(session_of(Caller::Continue, &fields(cn)), "n1");
    }

    #[test]
    fn a_caller_is_found_by_its_name() {
        for c in Caller::ALL {
            assert_eq!(Caller::from_name(c.name()), Some(c));
        }
        assert_eq!(Caller::from_name("claude-code"), None);
    }
}
