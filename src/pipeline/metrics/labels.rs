//! A metric point's attributes, taken from a span for every exported span: so without
//! allocating, and compared by identity while counting, by text only once per export.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::names::*;
use crate::assemble::span::Value;

/// A label's text: a span's own shared string (names are interned by the assembly, so this
/// is a reference count, not a copy) or a constant.
#[derive(Debug, Clone)]
pub(super) enum Text {
    Static(&'static str),
    Shared(Arc<str>),
}

impl Text {
    pub(super) fn as_str(&self) -> &str {
        match self {
            Text::Static(s) => s,
            Text::Shared(s) => s,
        }
    }

    /// Where the text lives. Two texts at one address are equal; equal texts at two
    /// addresses are merged when the interval is encoded ([`Labels::by_text`]).
    fn address(&self) -> (usize, usize) {
        let s = self.as_str();
        (s.as_ptr() as usize, s.len())
    }

    /// A label's text, from a span attribute's value; `None` for numbers and lists.
    pub(super) fn of(v: &Value) -> Option<Text> {
        match v {
            Value::Shared(s) => Some(Text::Shared(s.clone())),
            Value::Static(s) => Some(Text::Static(s)),
            Value::Str(s) => Some(Text::Shared(Arc::from(s.as_str()))),
            _ => None,
        }
    }
}

/// A point's attributes: one slot per [`POINT_KEYS`] entry, in that order whatever the
/// span's, so equal label sets are one series; then the overflow mark.
///
/// While an interval is counted, labels are equal when their texts are the same strings
/// (a hash of a few addresses, not of the texts: this is looked up for every exported
/// span). Each text is held, so no address is reused for another text meanwhile.
#[derive(Debug, Clone, Default)]
pub(super) struct Labels {
    pub values: [Option<Text>; POINT_KEYS.len()],
    pub overflow: bool,
}

impl PartialEq for Labels {
    fn eq(&self, other: &Self) -> bool {
        self.overflow == other.overflow
            && self
                .values
                .iter()
                .zip(&other.values)
                .all(|(a, b)| a.as_ref().map(Text::address) == b.as_ref().map(Text::address))
    }
}
impl Eq for Labels {}

impl Hash for Labels {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for v in &self.values {
            v.as_ref().map(Text::address).hash(state);
        }
        self.overflow.hash(state);
    }
}

impl Labels {
    /// The series every point past the limit goes to.
    pub(super) fn overflow() -> Labels {
        Labels {
            overflow: true,
            ..Labels::default()
        }
    }

    /// The (key, value) pairs, in order.
    pub(super) fn pairs(&self) -> impl Iterator<Item = (&'static str, &str)> + '_ {
        POINT_KEYS
            .iter()
            .zip(&self.values)
            .filter_map(|(k, v)| Some((*k, v.as_ref()?.as_str())))
            .chain(self.overflow.then_some((OTEL_METRIC_OVERFLOW, "true")))
    }

    /// The labels as text, for merging the series of one interval whose texts are equal
    /// but were different strings, and for ordering the points of an export.
    pub(super) fn by_text(&self) -> Vec<(&'static str, String)> {
        self.pairs().map(|(k, v)| (k, v.to_string())).collect()
    }
}

/// Where `key` goes in [`Labels::values`]: its place in [`POINT_KEYS`]. A `match`, not a
/// search of the list, since every attribute of every exported span asks.
pub(super) fn slot(key: &str) -> Option<usize> {
    Some(match key {
        GEN_AI_OPERATION_NAME => 0,
        GEN_AI_PROVIDER_NAME => 1,
        GEN_AI_REQUEST_MODEL => 2,
        GEN_AI_RESPONSE_MODEL => 3,
        GEN_AI_TOOL_NAME => 4,
        GEN_AI_AGENT_NAME => 5,
        ERROR_TYPE => ERROR_SLOT,
        USER_ID => 7,
        VCS_REPOSITORY_URL_FULL => 8,
        _ => return None,
    })
}

/// `error.type`'s slot: on durations, never on tokens or cost.
pub(super) const ERROR_SLOT: usize = 6;
