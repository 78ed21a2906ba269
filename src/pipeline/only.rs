//! The traces a pipeline is to send when it is to send only some: `import --export` sends
//! what no collector has had (see the store's `sent`). The others are dropped as they are
//! made, before the metrics count them, the store writes them or the export sends them; the
//! traces that were sent are noted, for the import to mark once they are delivered.

use std::collections::HashSet;
use std::fmt;
use std::sync::Mutex;

use crate::assemble::{Span, TraceId};

/// The traces to send, and those of them met so far.
pub struct OnlyTraces {
    wanted: HashSet<TraceId>,
    met: Mutex<HashSet<TraceId>>,
}

impl OnlyTraces {
    pub fn new(wanted: HashSet<TraceId>) -> OnlyTraces {
        OnlyTraces {
            wanted,
            met: Mutex::default(),
        }
    }

    /// Whether `span` is to be sent (its trace is wanted); a wanted one's trace is noted.
    pub fn keeps(&self, span: &Span) -> bool {
        let keeps = self.wanted.contains(&span.trace_id);
        if keeps {
            if let Ok(mut met) = self.met.lock() {
                met.insert(span.trace_id);
            }
        }
        keeps
    }

    /// The wanted traces that spans of were sent.
    pub fn met(&self) -> HashSet<TraceId> {
        self.met.lock().map(|m| m.clone()).unwrap_or_default()
    }
}

impl fmt::Debug for OnlyTraces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OnlyTraces({} wanted)", self.wanted.len())
    }
}
