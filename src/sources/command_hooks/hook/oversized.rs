//! A payload too large to journal whole still keeps its event: what identifies it (session,
//! event, tool, ids) is journaled with a `truncated` mark, so a tool call still ends, a turn
//! still closes, and only the bulk (a tool's input or output) is lost.

use std::io::Read;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The mark on a payload that stands for one too large to keep.
pub const TRUNCATED: &str = "albedo_otel_truncated";

/// The fields of a payload that say which event it is, whatever the agent. Everything else is
/// skipped as it streams by, so a payload of any size costs no more memory than these.
#[derive(Debug, Default, Deserialize, Serialize)]
struct Identity {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hook_event_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    transcript_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool_use_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    agent_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parent_agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    request_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    turn_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timestamp: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    duration_ms: Option<u64>,
    /// What says that another agent ran Claude Code's hook (see `foreign`): Cursor's own
    /// fields and Grok's camelCase keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    conversation_id: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    generation_id: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cursor_version: Option<Value>,
    #[serde(default, rename = "sessionId", skip_serializing_if = "Option::is_none")]
    session_id_camel: Option<Value>,
    #[serde(
        default,
        rename = "hookEventName",
        skip_serializing_if = "Option::is_none"
    )]
    hook_event_camel: Option<Value>,
    #[serde(
        default,
        rename = "transcriptPath",
        skip_serializing_if = "Option::is_none"
    )]
    transcript_path_camel: Option<Value>,
    #[serde(default, rename = "albedo_otel_truncated")]
    truncated: bool,
}

/// Reads a whole payload of which `head` (at most `limit` bytes) is already read and `rest`
/// follows, and returns the JSON that stands for it: its identifying fields, marked
/// truncated. An error says why it could not be read as a JSON object.
pub fn identify(head: &[u8], rest: impl Read) -> Result<String, serde_json::Error> {
    let mut id: Identity = serde_json::from_reader(head.chain(rest))?;
    id.truncated = true;
    serde_json::to_string(&id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_payload_keeps_what_identifies_it() {
        let big = "x".repeat(3 << 20);
        let payload = serde_json::json!({
            "session_id": "s1",
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": big},
            "tool_use_id": "toolu_1",
            "tool_response": {"stdout": big},
            "cwd": "/w",
        })
        .to_string();
        let bytes = payload.as_bytes();
        let (head, rest) = bytes.split_at(1 << 20);
        let kept = identify(head, rest).unwrap();
        let v: Value = serde_json::from_str(&kept).unwrap();
        assert_eq!(v["session_id"], "s1");
        assert_eq!(v["hook_event_name"], "PostToolUse");
        assert_eq!(v["tool_use_id"], "toolu_1");
        assert_eq!(v["tool_name"], "Bash");
        assert_eq!(v[TRUNCATED], true);
        assert!(v.get("tool_input").is_none() && kept.len() < 300, "{kept}");
    }

    #[test]
    fn a_huge_cursor_payload_still_says_it_is_cursors() {
        let payload = serde_json::json!({
            "conversation_id": "c1",
            "generation_id": "g1",
            "hook_event_name": "beforeReadFile",
            "cursor_version": "1.7.52",
            "content": "x".repeat(2 << 20),
        })
        .to_string();
        let (head, rest) = payload.as_bytes().split_at(1 << 20);
        let v: Value = serde_json::from_str(&identify(head, rest).unwrap()).unwrap();
        assert_eq!(v["conversation_id"], "c1");
        assert_eq!(v["cursor_version"], "1.7.52");
        assert!(v.get("content").is_none());
    }

    #[test]
    fn what_is_not_an_object_is_an_error() {
        assert!(identify(b"[1,2", &b""[..]).is_err());
    }
}
