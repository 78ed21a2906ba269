//! What Cline CLI hands a hook script on stdin (observed: docs/agents/cline.md), and what
//! the hook adds before journaling it: Cline names neither the session in `session_id` nor
//! its messages file, so the hook writes both in, from the payload's root session and the
//! variables Cline runs its hooks with. A sub-agent's payloads name the root session too, and
//! its own messages file is `<agent_id>.messages.json` beside the session's.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::sources::command_hooks::engine::records::rfc3339_ms;
use super::super::spec::Env;

#[derive(Debug, Deserialize, Default)]
pub struct Payload {
    /// The root session: written in by the hook ([`journaled`]); Cline's own is
    /// `sessionContext.rootSessionId`.
    #[serde(default)]
    pub session_id: String,
    /// `agent_start`, `tool_call`, `tool_result`, `agent_end`, `agent_error`, `agent_abort`,
    /// `session_shutdown`, ... (the hook files' events, by Cline's inner names).
    #[serde(default, rename = "hookName")]
    pub hook_name: String,
    /// When Cline fired the hook: `2026-12-03T15:49:07.352Z`.
    #[serde(default)]
    pub timestamp: Option<String>,
    #[serde(default, rename = "sessionContext")]
    pub session_context: Option<SessionContext>,
    /// The agent that sent it: the user's own, or a sub-agent (`agent_1796328285111_exil42`).
    #[serde(default)]
    pub agent_id: Option<String>,
    /// A sub-agent's parent agent (`null` for the user's own agent).
    #[serde(default)]
    pub parent_agent_id: Option<String>,
    #[serde(default, rename = "workspaceRoots")]
    pub workspace_roots: Vec<String>,
    #[serde(default)]
    pub tool_call: Option<ToolCall>,
    #[serde(default)]
    pub tool_result: Option<ToolResult>,
    /// The session's messages file: written in by the hook ([`journaled`]).
    #[serde(default)]
    pub messages_path: Option<String>,
}

#[derive(Debug, Deserialize, Default)]
pub struct SessionContext {
    #[serde(default, rename = "rootSessionId")]
    pub root_session_id: Option<String>,
}

/// `PreToolUse`'s call.
#[derive(Debug, Deserialize, Default)]
pub struct ToolCall {
    pub id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub input: Option<Box<RawValue>>,
}

/// `PostToolUse`'s call, with its times and output; `error` when it failed.
#[derive(Debug, Deserialize, Default)]
pub struct ToolResult {
    pub id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub input: Option<Box<RawValue>>,
    #[serde(default)]
    pub output: Option<Box<RawValue>>,
    #[serde(default)]
    pub error: Option<Box<RawValue>>,
    #[serde(default, rename = "startedAt")]
    pub started_at: Option<String>,
    #[serde(default, rename = "endedAt")]
    pub ended_at: Option<String>,
}

impl Payload {
    /// The payload's own time in Unix ms, if it has a readable one.
    pub fn at_ms(&self) -> Option<u64> {
        rfc3339_ms(self.timestamp.as_deref()?)
    }

    /// The session: the hook's `session_id`, else Cline's root session.
    pub fn session(&self) -> &str {
        if !self.session_id.is_empty() {
            return &self.session_id;
        }
        self.session_context
            .as_ref()
            .and_then(|c| c.root_session_id.as_deref())
            .unwrap_or_default()
    }

    /// The sub-agent that sent it and its parent agent, if a sub-agent did.
    pub fn sub_agent(&self) -> Option<(&str, &str)> {
        let parent = self.parent_agent_id.as_deref().filter(|a| !a.is_empty())?;
        let agent = self.agent_id.as_deref().filter(|a| !a.is_empty())?;
        Some((agent, parent))
    }
}

/// A name Cline gives that can become a path: no separator, not hidden.
fn plain(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
}

/// The root session a payload names, if it is a name Cline gives (it becomes a path).
pub fn root_session(payload: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Root<'a> {
        #[serde(borrow, rename = "sessionContext")]
        context: Option<Context<'a>>,
    }
    #[derive(Deserialize)]
    struct Context<'a> {
        #[serde(borrow, rename = "rootSessionId")]
        root: Option<std::borrow::Cow<'a, str>>,
    }
    let root = serde_json::from_str::<Root<'_>>(payload)
        .ok()?
        .context?
        .root?;
    plain(&root).then(|| root.into_owned())
}

/// The sub-agent a payload is from (its `agent_id`, where `parent_agent_id` is set), if it is
/// a name Cline gives (it becomes a path).
fn sub_agent_of(payload: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Agents<'a> {
        #[serde(borrow, default)]
        agent_id: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow, default)]
        parent_agent_id: Option<std::borrow::Cow<'a, str>>,
    }
    let a = serde_json::from_str::<Agents<'_>>(payload).ok()?;
    a.parent_agent_id.filter(|p| !p.is_empty())?;
    let agent = a.agent_id?;
    plain(&agent).then(|| agent.into_owned())
}

/// Where Cline keeps session `root`'s messages: `CLINE_SESSION_DATA_DIR`, else
/// `$CLINE_DATA_DIR/sessions`, else `$CLINE_DIR/data/sessions`, else
/// `~/.cline/data/sessions`; then `<root>/<root>.messages.json`, or a sub-agent's
/// `<root>/<agent>.messages.json`.
pub fn messages_path(root: &str, agent: Option<&str>, env: Env<'_>) -> Option<PathBuf> {
    let set = |k: &str| env(k).filter(|v| !v.trim().is_empty()).map(PathBuf::from);
    let sessions = set("CLINE_SESSION_DATA_DIR")
        .or_else(|| set("CLINE_DATA_DIR").map(|d| d.join("sessions")))
        .or_else(|| set("CLINE_DIR").map(|d| d.join("data/sessions")))
        .or_else(|| set("HOME").map(|h| Path::new(&h).join(".cline/data/sessions")))?;
    let file = agent.unwrap_or(root);
    Some(sessions.join(root).join(format!("{file}.messages.json")))
}

/// The hook file a payload's event (`hookName`) runs, which the daemon knows it by.
fn event_of(payload: &str) -> &'static str {
    #[derive(Deserialize)]
    struct Name<'a> {
        #[serde(borrow, rename = "hookName")]
        name: Option<std::borrow::Cow<'a, str>>,
    }
    let name = serde_json::from_str::<Name<'_>>(payload)
        .ok()
        .and_then(|n| n.name);
    match name.as_deref() {
        Some("agent_start") => "TaskStart",
        Some("agent_resume") => "TaskResume",
        Some("agent_abort") => "TaskCancel",
        Some("agent_end") => "TaskComplete",
        Some("agent_error") => "TaskError",
        Some("tool_call") => "PreToolUse",
        Some("tool_result") => "PostToolUse",
        Some("prompt_submit") => "UserPromptSubmit",
        // The daemon's name for a session's end: the journal goes once the turn is out (a
        // session that goes on after it gets a journal again, as a resumed one does).
        Some("session_shutdown") => "SessionEnd",
        _ => "other",
    }
}

/// The payload as journaled: with `session_id`, `hook_event_name` and `messages_path` first, written into the
/// object's text rather than re-encoding it (a tool's output can be large). `None` for a
/// payload with no root session or that is not an object: it is journaled as it came.
pub fn journaled(payload: &str, env: Env<'_>) -> Option<String> {
    let root = root_session(payload)?;
    let body = payload.trim_start().strip_prefix('{')?;
    let mut out = String::with_capacity(payload.len() + 200);
    out.push('{');
    let event = serde_json::to_string(event_of(payload)).ok()?;
    let session = serde_json::to_string(&root).ok()?;
    out.push_str(&format!(
        "\"session_id\":{session},\"hook_event_name\":{event}"
    ));
    let agent = sub_agent_of(payload);
    if let Some(path) = messages_path(&root, agent.as_deref(), env) {
        let path = serde_json::to_string(&path.to_string_lossy()).ok()?;
        out.push_str(&format!(",\"messages_path\":{path}"));
    }
    if !body.trim_start().starts_with('}') {
        out.push(',');
    }
    // One journal line: a pretty-printed payload's newlines are whitespace between tokens.
    out.extend(
        body.chars()
            .map(|c| if c == '\n' || c == '\r' { ' ' } else { c }),
    );
    Some(out)
}
