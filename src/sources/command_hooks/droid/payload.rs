//! What Factory Droid hands a command hook: Claude Code's payload without `tool_use_id`, plus
//! the `message_id` its prompt and stop carry.

use serde::Deserialize;

use super::claude_code;

/// One payload, read twice: as Claude Code's, and for Droid's own fields.
#[derive(Debug)]
pub struct Payload {
    pub hook: claude_code::Payload,
    pub own: Own,
}

#[derive(Debug, Deserialize, Default)]
pub struct Own {
    /// On `UserPromptSubmit`, the prompt's line in the session file; on `Stop`, the answer's.
    #[serde(default)]
    pub message_id: Option<String>,
}

impl Payload {
    pub fn parse(json: &str) -> Result<Payload, serde_json::Error> {
        Ok(Payload {
            hook: serde_json::from_str(json)?,
            own: serde_json::from_str(json)?,
        })
    }
}

/// Read twice, as Claude Code's hook and for Droid's fields (`flatten` would lose the raw
/// JSON Claude Code's payload keeps).
impl<'de> Deserialize<'de> for Payload {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Box::<serde_json::value::RawValue>::deserialize(d)?;
        Payload::parse(raw.get()).map_err(serde::de::Error::custom)
    }
}
