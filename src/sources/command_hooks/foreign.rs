//! Other agents that run Claude Code's hooks: Cursor, Grok Build, Devin CLI and Continue's CLI
//! read `~/.claude/settings.json` and run the hooks there, so the hook `install claude-code`
//! wrote is handed their payloads too. Those must never go into a Claude Code session, nor
//! make sessions of their own under Claude Code's name.
//!
//! The hook tells them apart ([`recognise`]) from what it already reads of every payload
//! ([`RawHead`]), in the same single pass: Cursor's fields (`cursor_version`,
//! `conversation_id`, `generation_id`) and Grok's camelCase keys (`sessionId`,
//! `hookEventName`, `transcriptPath`) name them outright. Devin's and Continue's payloads
//! are Claude Code's shape, without the transcript Claude Code always names; only then does
//! the hook look at the variables each of them sets for its hooks (`DEVIN_PROJECT_DIR`,
//! `CONTINUE_PROJECT_DIR`, `GROK_HOOK_EVENT`). A payload that names a
//! transcript, as every Claude Code payload does, costs no variable lookup, and a Claude Code
//! run from inside one of those agents (their variables inherited) stays Claude Code's.
//!
//! Such a [`Borrower`] that albedo-otel has an adapter for ([`Borrower::Traced`], by that
//! [`Agent`]) has its payload journaled under that agent, as that agent's own hook journals it,
//! and traced by it: Cursor's become Cursor traces, the same as from Cursor's own `hooks.json`.
//! One without (Grok, Devin and Continue, today) has only what identifies it journaled, in a
//! journal of its own: its session and event, none of its prompts, commands or file contents.
//! The daemon drops those with one line in its log per session ([`Dropped`]); the borrower
//! sees nothing either way.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::agent::{Agent, Env};
use super::{HandOff, HookError, RawHead};

/// An agent other than Claude Code that borrows Claude Code's hooks (runs those in
/// `~/.claude/settings.json`): one of the [`Agent`]s, traced by its own adapter, or one only
/// recognised, whose payloads are dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Borrower {
    /// An agent albedo-otel has an adapter for (Cursor).
    Traced(Agent),
    Grok,
    Devin,
    Continue,
}

impl Borrower {
    pub const ALL: [Borrower; 4] = [
        Borrower::Traced(Agent::Cursor),
        Borrower::Grok,
        Borrower::Devin,
        Borrower::Continue,
    ];

    /// Its name in the journal: a traced one's is its agent's.
    pub fn name(self) -> &'static str {
        match self {
            Borrower::Traced(agent) => agent.name(),
            Borrower::Grok => "grok",
            Borrower::Devin => "devin",
            Borrower::Continue => "continue",
        }
    }

    /// Its name as its users know it.
    pub fn title(self) -> &'static str {
        match self {
            Borrower::Traced(agent) => agent.title(),
            Borrower::Grok => "Grok Build",
            Borrower::Devin => "Devin CLI",
            Borrower::Continue => "Continue's CLI (cn)",
        }
    }

    pub fn from_name(name: &str) -> Option<Borrower> {
        Borrower::ALL.into_iter().find(|b| b.name() == name)
    }

    /// The agent whose adapter takes this borrower's payloads, if albedo-otel has one.
    pub fn agent(self) -> Option<Agent> {
        match self {
            Borrower::Traced(agent) => Some(agent),
            Borrower::Grok | Borrower::Devin | Borrower::Continue => None,
        }
    }
}

/// The variable each borrower sets for the hooks it runs, and Claude Code does not. Not
/// Cursor's: its payloads always say whose they are, and its variables may be in a terminal
/// a Claude Code session was started from.
const VARIABLES: [(Borrower, &str); 3] = [
    (Borrower::Grok, "GROK_HOOK_EVENT"),
    (Borrower::Devin, "DEVIN_PROJECT_DIR"),
    (Borrower::Continue, "CONTINUE_PROJECT_DIR"),
];

/// Whose a payload handed to Claude Code's hook is, when it is not Claude Code's. `fields`
/// is what the hook read of it; `env` the hook's variables, looked at only for a payload
/// that names no transcript (Claude Code's always do).
pub(crate) fn recognise(fields: &RawHead<'_>, env: Env<'_>) -> Option<Borrower> {
    // `albedo-otel doctor`'s test payload is ours, wherever the doctor runs.
    if fields.doctor_id.is_some() {
        return None;
    }
    if fields.cursor_version.is_some()
        || fields.conversation_id.is_some()
        || fields.generation_id.is_some()
    {
        return Some(Borrower::Traced(Agent::Cursor));
    }
    if fields.session_id_camel.is_some()
        || fields.hook_event_camel.is_some()
        || fields.transcript_path_camel.is_some()
    {
        return Some(Borrower::Grok);
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

/// The session a borrower's payload belongs to, by that borrower's own field: what its
/// journal is named after (with the borrower's name before it, so that it never shares
/// Claude Code's).
pub(crate) fn session_of(borrower: Borrower, fields: &RawHead<'_>) -> String {
    let own = match borrower {
        Borrower::Traced(Agent::Cursor) => fields.conversation_id,
        Borrower::Grok => fields.session_id_camel,
        Borrower::Traced(_) | Borrower::Devin | Borrower::Continue => None,
    };
    own.and_then(|r| serde_json::from_str::<Cow<'_, str>>(r.get()).ok())
        .or_else(|| fields.session_id.clone())
        .map(Cow::into_owned)
        .unwrap_or_default()
}

/// The journal line kept of a payload whose agent nothing traces: its session and event,
/// and nothing it says.
pub(crate) fn identity(session: &str, fields: &RawHead<'_>) -> String {
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
    fields: &RawHead<'_>,
    handoff: &HandOff,
    borrower: Borrower,
    received_ms: u64,
) -> Result<(), HookError> {
    let env = |k: &str| std::env::var(k).ok();
    // An agent that runs its own hooks files too (Cursor): where ours is there, that route
    // journals it.
    if borrower
        .agent()
        .is_some_and(|a| (a.spec().runs_ours_too)(raw.get(), &env))
    {
        return Ok(());
    }
    // As that agent's own hook names the journal (a Cursor sub-agent's: its parent's).
    let session = borrower
        .agent()
        .and_then(|a| (a.spec().journal_under)(raw.get()))
        .unwrap_or_else(|| session_of(borrower, fields));
    let journal = format!("{}.{session}", borrower.name());
    let (line, handoff) = match borrower.agent() {
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
    let host = match borrower.agent() {
        Some(_) => crate::process::hook_host(),
        None => None,
    };
    let stamp = super::journal::Stamp {
        received_ms,
        host,
        handoff: &handoff,
        agent: Some(borrower.name()),
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

/// The sessions of borrowers nothing traces that the daemon has said it drops: one log line a
/// session. Bounded, so that a daemon that never idles does not grow; past the bound a
/// session may be named again.
#[derive(Debug, Default)]
pub struct Dropped {
    said: HashSet<(Borrower, String)>,
}

const REMEMBERED: usize = 4096;

impl Dropped {
    /// Notes a payload of `borrower`'s `session` that was dropped, logging it if it is the
    /// session's first.
    pub fn note(&mut self, borrower: Borrower, session: &str) {
        if self.said.contains(&(borrower, session.to_string())) {
            return;
        }
        if self.said.len() >= REMEMBERED {
            self.said.clear();
        }
        self.said.insert((borrower, session.to_string()));
        let title = borrower.title();
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

    fn fields(json: &str) -> RawHead<'_> {
        serde_json::from_str(json).unwrap()
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn cursor_and_grok_are_told_by_their_fields() {
        let cursor = r#"{"conversation_id":"c1","generation_id":"g1","hook_event_name":"beforeSubmitPrompt","cursor_version":"1.7.2","prompt":"p"}"#;
        assert_eq!(
            recognise(&fields(cursor), &no_env),
            Some(Borrower::Traced(Agent::Cursor))
        );
        assert_eq!(
            session_of(Borrower::Traced(Agent::Cursor), &fields(cursor)),
            "c1"
        );
        let grok =
            r#"{"hookEventName":"PreToolUse","sessionId":"g-1","cwd":"/w","transcriptPath":"/t"}"#;
        assert_eq!(recognise(&fields(grok), &no_env), Some(Borrower::Grok));
        assert_eq!(session_of(Borrower::Grok, &fields(grok)), "g-1");
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
        assert_eq!(recognise(&fields(devin), &devin_env), Some(Borrower::Devin));
        let cn = r#"{"session_id":"n1","transcript_path":"","cwd":"/w","hook_event_name":"Stop"}"#;
        let cn_env = |k: &str| {
            matches!(k, "CONTINUE_PROJECT_DIR" | "CLAUDE_PROJECT_DIR").then(|| "/w".to_string())
        };
        assert_eq!(recognise(&fields(cn), &cn_env), Some(Borrower::Continue));
        assert_eq!(session_of(Borrower::Continue, &fields(cn)), "n1");
    }

    #[test]
    fn a_borrower_is_found_by_its_name() {
        for c in Borrower::ALL {
            assert_eq!(Borrower::from_name(c.name()), Some(c));
        }
        assert_eq!(Borrower::from_name("claude-code"), None);
    }
}
