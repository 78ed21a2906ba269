//! What albedo-otel's opencode plugin (`plugin.js`) writes for each event it keeps: the bus
//! event's type and `properties` as opencode gave them, with the session and the time the
//! plugin saw it (observed: docs/agents/opencode.md). Every field but the session and the
//! event may be missing: a field that cannot be read costs that field, not the event.

use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Debug, Deserialize, Default, Clone)]
pub struct Payload {
    /// The journal's session: the top session, for a sub-agent's events.
    pub session_id: String,
    /// The event's own session, when it is a sub-agent's.
    #[serde(default)]
    pub session: Option<String>,
    /// The bus event's `type` (`message.updated`, `session.idle`, …), or `chat.message` for
    /// the plugin hook that carries the prompt.
    pub hook_event_name: String,
    /// When the plugin saw the event, in Unix ms: for events that carry no time of their own.
    #[serde(default)]
    pub at_ms: Option<u64>,
    #[serde(default)]
    pub properties: Properties,
}

#[derive(Debug, Deserialize, Default, Clone)]
pub struct Properties {
    /// `session.created`: the session; `message.updated`: the message.
    #[serde(default)]
    pub info: Option<Info>,
    /// `message.part.updated`: the part.
    #[serde(default)]
    pub part: Option<Part>,
    /// `message.part.updated`: when the part changed, in Unix ms.
    #[serde(default)]
    pub time: Option<u64>,
    /// `chat.message`: the user's message, and its text parts joined.
    #[serde(default)]
    pub message: Option<Info>,
    #[serde(default)]
    pub text: Option<String>,
}

/// A session's or a message's `info`: the two share these names.
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
pub struct Info {
    #[serde(default)]
    pub id: Option<String>,
    /// `user` or `assistant` (a message's only).
    #[serde(default)]
    pub role: Option<String>,
    /// A session's: the session that started it (a sub-agent's); a message's: the user
    /// message it answers.
    #[serde(default, rename = "parentID")]
    pub parent_id: Option<String>,
    #[serde(default)]
    pub time: Times,
    #[serde(default, rename = "modelID")]
    pub model_id: Option<String>,
    #[serde(default, rename = "providerID")]
    pub provider_id: Option<String>,
    /// The agent that wrote the message (`build`, `plan`, or a sub-agent's).
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub tokens: Option<Tokens>,
    /// Why the model stopped: `stop`, `tool-calls`, `length`, …
    #[serde(default)]
    pub finish: Option<String>,
    /// A model call that failed: `{name, data: {message, …}}`.
    #[serde(default)]
    pub error: Option<Box<RawValue>>,
    /// A session's working folder.
    #[serde(default)]
    pub directory: Option<String>,
}

#[derive(Debug, Deserialize, Default, Clone, Copy)]
pub struct Times {
    #[serde(default)]
    pub created: Option<u64>,
    #[serde(default)]
    pub completed: Option<u64>,
    #[serde(default)]
    pub start: Option<u64>,
    #[serde(default)]
    pub end: Option<u64>,
}

/// opencode's token counts: `input` leaves out the cached tokens and `output` the reasoning
/// ones (for 1002 prompt tokens, 300 cached, and 22 completion tokens, 5 reasoning, it
/// records input 702, cache read 300, output 17, reasoning 5).
#[derive(Debug, Deserialize, Default, Clone, Copy)]
pub struct Tokens {
    #[serde(default)]
    pub input: Option<u64>,
    #[serde(default)]
    pub output: Option<u64>,
    #[serde(default)]
    pub reasoning: Option<u64>,
    #[serde(default)]
    pub cache: Cache,
}

#[derive(Debug, Deserialize, Default, Clone, Copy)]
pub struct Cache {
    #[serde(default)]
    pub read: Option<u64>,
    #[serde(default)]
    pub write: Option<u64>,
}

/// A message part: a model call's `step-start` and `step-finish`, or a `tool` call.
#[derive(Debug, Deserialize, Default, Clone)]
pub struct Part {
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default, rename = "messageID")]
    pub message_id: Option<String>,
    #[serde(default, rename = "callID")]
    pub call_id: Option<String>,
    #[serde(default)]
    pub tool: Option<String>,
    #[serde(default)]
    pub state: Option<ToolState>,
}

/// A tool call's state: `pending`, `running`, then `completed` or `error`.
#[derive(Debug, Deserialize, Default, Clone)]
pub struct ToolState {
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub input: Option<Box<RawValue>>,
    #[serde(default)]
    pub output: Option<Box<RawValue>>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub time: Times,
    #[serde(default)]
    pub metadata: Option<ToolMetadata>,
}

/// What a tool adds to its state: the `task` tool names the sub-agent's session.
#[derive(Debug, Deserialize, Default, Clone)]
pub struct ToolMetadata {
    #[serde(default, rename = "sessionId")]
    pub session_id: Option<String>,
}

impl Payload {
    /// The session the event is about.
    pub fn own_session(&self) -> &str {
        self.session
            .as_deref()
            .filter(|s| !s.is_empty())
            .unwrap_or(&self.session_id)
    }

    /// The time a part changed, else when the plugin saw the event.
    pub fn seen_ms(&self) -> Option<u64> {
        self.properties.time.or(self.at_ms)
    }
}
