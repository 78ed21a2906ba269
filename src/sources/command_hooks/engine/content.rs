//! A message's content as Anthropic's API shapes it, and as the agents that speak it keep it in
//! their files (Claude Code's transcripts, Cline's messages files): a string, or blocks of text,
//! `tool_use` and `tool_result`. Read by the importers that turn those files into records.

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum Content {
    Text(String),
    Blocks(Vec<Block>),
}

impl Default for Content {
    fn default() -> Self {
        Content::Blocks(Vec::new())
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct Block {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub text: Option<String>,
    /// A `tool_use`'s call id.
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub input: Option<Value>,
    /// A `tool_result`'s call id.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    #[serde(default)]
    pub is_error: Option<bool>,
}

impl Content {
    /// Its blocks (none for a string).
    pub(crate) fn blocks(&self) -> &[Block] {
        match self {
            Content::Blocks(b) => b,
            Content::Text(_) => &[],
        }
    }

    /// Its text: the string, or its text blocks' joined by `sep`.
    pub(crate) fn text(&self, sep: &str) -> String {
        match self {
            Content::Text(t) => t.clone(),
            Content::Blocks(b) => b
                .iter()
                .filter_map(|b| b.text.as_deref())
                .collect::<Vec<_>>()
                .join(sep),
        }
    }
}
