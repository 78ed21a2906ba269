//! What Kimi Code hands a command hook (the events `install` names), and where its own
//! record of a session, `wire.jsonl`, is found: Kimi's hooks name no file, so the hook adds
//! Kimi's home folder to each payload, and the daemon looks the session up in its index.

use serde::Deserialize;
use serde_json::Value;

/// A hook payload. Kimi sends no time, no call ids of its model calls and no transcript: the
/// hooks mark a turn's start and end, and the session's `wire.jsonl` has the rest, timed.
#[derive(Debug, Deserialize, Default)]
pub struct Payload {
    pub hook_event_name: String,
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub cwd: Option<String>,
    /// `UserPromptSubmit`: the prompt's parts (`[{"type": "text", "text": …}]`).
    #[serde(default)]
    pub prompt: Option<Value>,
    /// Kimi's home folder (`$KIMI_CODE_HOME`, else `~/.kimi-code`), added by the hook.
    #[serde(default)]
    pub kimi_home: Option<String>,
}

impl Payload {
    /// The prompt's text: its text parts, joined.
    pub fn prompt_text(&self) -> String {
        match &self.prompt {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        }
    }
}

/// The payload with Kimi's home folder added, from the hook's environment (Kimi runs hooks
/// with its own): the daemon finds the session's folder from there.
pub fn with_home(payload: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if payload.contains("\"kimi_home\"") {
        return None;
    }
    let mut v: Value = serde_json::from_str(payload).ok()?;
    let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    let home = set("KIMI_CODE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| set("HOME").map(|h| std::path::Path::new(&h).join(".kimi-code")))?;
    v.as_object_mut()?.insert(
        "kimi_home".into(),
        Value::String(home.to_str()?.to_string()),
    );
    Some(v.to_string())
}

/// A name that can only name one folder (Kimi's sub-agent ids, `agent-0`): letters, digits,
/// `-` and `_`, so no separator and no `..`.
pub(super) fn is_plain(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The session's folder, from Kimi's `session_index.jsonl` (`{"sessionId", "sessionDir"}` a
/// line; the last line for a session wins).
pub(super) fn session_dir(index: &[u8], session: &str) -> Option<String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Entry {
        session_id: String,
        session_dir: String,
    }
    index
        .split(|b| *b == b'\n')
        .rev()
        .filter_map(|line| serde_json::from_slice::<Entry>(line).ok())
        .find(|e| e.session_id == session && std::path::Path::new(&e.session_dir).is_absolute())
        .map(|e| e.session_dir)
}

/// An agent's `wire.jsonl` in a session's folder (`main`, or a sub-agent's id).
pub(super) fn wire_of(session_dir: &str, agent: &str) -> String {
    format!("{session_dir}/agents/{agent}/wire.jsonl")
}

/// The session's folder, from its main agent's `wire.jsonl` path.
pub(super) fn dir_of_wire(wire: &str) -> Option<&str> {
    wire.strip_suffix("/agents/main/wire.jsonl")
}
