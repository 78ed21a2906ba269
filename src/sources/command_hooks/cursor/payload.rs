//! What Cursor hands a command hook on stdin, as its hooks documentation describes it
//! (docs/agents/cursor.md): every payload names its conversation, the generation (one agent
//! loop), the event and Cursor's version; the rest depends on the event. No payload has a
//! time of its own. Fields are read leniently: one of a type no one expected is dropped, never
//! the payload with it.

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::Value;

#[derive(Debug, Deserialize, Default, Clone)]
pub struct Payload {
    /// The conversation: Cursor's session, named on every event.
    #[serde(default, deserialize_with = "text")]
    pub conversation_id: Option<String>,
    /// Only on `sessionStart` and `sessionEnd` (and, journaled, on every payload: the hook
    /// writes the conversation there, see [`journaled`]).
    #[serde(default, deserialize_with = "text")]
    pub session_id: Option<String>,
    #[serde(default)]
    pub hook_event_name: String,
    /// The agent loop the event is part of: one per prompt.
    #[serde(default, deserialize_with = "text")]
    pub generation_id: Option<String>,
    #[serde(default, deserialize_with = "text")]
    pub model: Option<String>,
    #[serde(default, deserialize_with = "text")]
    pub cursor_version: Option<String>,
    #[serde(default, deserialize_with = "texts")]
    pub workspace_roots: Vec<String>,
    #[serde(default, deserialize_with = "text")]
    pub cwd: Option<String>,
    /// `beforeSubmitPrompt`.
    #[serde(default, deserialize_with = "text")]
    pub prompt: Option<String>,
    /// `preToolUse`, `postToolUse`, `postToolUseFailure` (`Shell`, `Read`, `Write`, `Task`,
    /// `MCP:…`), and the MCP server's tool on `before/afterMCPExecution`.
    #[serde(default, deserialize_with = "text")]
    pub tool_name: Option<String>,
    /// An object on the generic tool events; a JSON string on the MCP ones.
    #[serde(default)]
    pub tool_input: Option<Box<RawValue>>,
    #[serde(default, deserialize_with = "text")]
    pub tool_use_id: Option<String>,
    /// `postToolUse`: the result, a JSON string.
    #[serde(default)]
    pub tool_output: Option<Box<RawValue>>,
    /// How long the tool, command or MCP call ran, in milliseconds.
    #[serde(default, deserialize_with = "number")]
    pub duration: Option<f64>,
    /// `postToolUseFailure`: `error`, `timeout` or `permission_denied`.
    #[serde(default, deserialize_with = "text")]
    pub failure_type: Option<String>,
    #[serde(default, deserialize_with = "text")]
    pub error_message: Option<String>,
    /// `before/afterShellExecution`.
    #[serde(default, deserialize_with = "text")]
    pub command: Option<String>,
    #[serde(default)]
    pub output: Option<Box<RawValue>>,
    /// `afterMCPExecution`.
    #[serde(default)]
    pub result_json: Option<Box<RawValue>>,
    /// `afterFileEdit`.
    #[serde(default, deserialize_with = "text")]
    pub file_path: Option<String>,
    #[serde(default)]
    pub edits: Option<Box<RawValue>>,
    /// `afterAgentResponse`: the agent's answer.
    #[serde(default, deserialize_with = "text")]
    pub text: Option<String>,
    /// `stop` and `subagentStop`: `completed`, `aborted` or `error`.
    #[serde(default, deserialize_with = "text")]
    pub status: Option<String>,
    /// `stop`: how many follow-ups a stop hook has asked for in this conversation.
    #[serde(default, deserialize_with = "number")]
    pub loop_count: Option<f64>,
    /// `sessionEnd`: `completed`, `aborted`, `error`, `window_close`, `user_close`.
    #[serde(default, deserialize_with = "text")]
    pub reason: Option<String>,
    /// `subagentStart` (and `subagentStop`, where it names it).
    #[serde(default, deserialize_with = "text")]
    pub subagent_id: Option<String>,
    #[serde(default, deserialize_with = "text")]
    pub subagent_type: Option<String>,
    #[serde(default, deserialize_with = "text")]
    pub task: Option<String>,
    /// `subagentStart`: the call (the `Task` tool's) that started it.
    #[serde(default, deserialize_with = "text")]
    pub tool_call_id: Option<String>,
    #[serde(default, deserialize_with = "text")]
    pub subagent_model: Option<String>,
    /// `subagentStop`: what the sub-agent answered.
    #[serde(default, deserialize_with = "text")]
    pub summary: Option<String>,
}

impl Payload {
    /// The session the payload belongs to: its conversation (Cursor names a `session_id`
    /// only on `sessionStart` and `sessionEnd`).
    pub fn session(&self) -> &str {
        self.conversation_id
            .as_deref()
            .or(self.session_id.as_deref())
            .unwrap_or_default()
    }

    /// Where the agent works: the first workspace root, else the command's folder.
    pub fn workspace(&self) -> Option<&str> {
        self.workspace_roots
            .first()
            .map(String::as_str)
            .or(self.cwd.as_deref())
    }

    /// The tool's input as an object: the MCP events send it as a JSON string.
    pub fn input(&self) -> Option<Box<RawValue>> {
        let raw = self.tool_input.as_ref()?;
        match serde_json::from_str::<String>(raw.get()) {
            Ok(inner) => RawValue::from_string(inner)
                .ok()
                .or_else(|| Some(raw.clone())),
            Err(_) => Some(raw.clone()),
        }
    }

    /// The shell command, on either family of events.
    pub fn shell_command(&self) -> Option<String> {
        if let Some(c) = &self.command {
            return Some(c.clone());
        }
        let input: Value = serde_json::from_str(self.tool_input.as_ref()?.get()).ok()?;
        input.get("command")?.as_str().map(str::to_string)
    }

    /// The duration, in whole milliseconds, if it is one.
    pub fn duration_ms(&self) -> Option<u64> {
        self.duration
            .filter(|d| d.is_finite() && *d >= 0.0)
            .map(|d| d.round() as u64)
    }
}

/// A string, or nothing: a field of another type is left out rather than failing the payload.
fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

fn texts<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Array(a) => a
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    })
}

fn number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(Value::deserialize(d)?.as_f64())
}

/// The conversation whose journal a payload goes in (the hook's
/// [`Spec::journal_under`](super::super::spec::Spec::journal_under)): its own, or, for a
/// sub-agent's hook that names its parent's (`parent_conversation_id`), the parent's, so that
/// the daemon reads it in one order with the `subagentStart` that opened it.
pub fn conversation(payload: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Key {
        #[serde(default, deserialize_with = "text")]
        conversation_id: Option<String>,
        #[serde(default, deserialize_with = "text")]
        parent_conversation_id: Option<String>,
    }
    let key = serde_json::from_str::<Key>(payload).ok()?;
    key.parent_conversation_id
        .or(key.conversation_id)
        .filter(|c| !c.is_empty())
}

/// The payload as journaled: its session is its conversation (the daemon reads every
/// payload's `session_id`, which Cursor sends on two events only; one it did send is kept as
/// `cursor_session_id`), and without the user's e-mail address, which no span carries.
/// `None` when it is not a Cursor payload with a conversation (kept as it came).
pub fn journaled(payload: &str) -> Option<String> {
    let mut v: serde_json::Map<String, Value> = serde_json::from_str(payload).ok()?;
    let conversation = v
        .get("conversation_id")?
        .as_str()
        .filter(|c| !c.is_empty())?
        .to_string();
    v.remove("user_email");
    if let Some(own) = v.remove("session_id") {
        if own.as_str() != Some(conversation.as_str()) {
            v.insert("cursor_session_id".into(), own);
        }
    }
    v.insert("session_id".into(), Value::String(conversation));
    Some(Value::Object(v).to_string())
}
