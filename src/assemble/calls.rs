//! A turn's tool calls: the graph of which call runs inside which (a cell's calls name it as
//! their `within`), kept acyclic and bounded, and the repairs for calls out of order: a call
//! named before it is seen gets a stand-in, a cycle is broken at the turn, a call still open
//! when the turn ends is exported unfinished.

use std::collections::HashMap;

use super::ids::{self, Role};
use super::node::{CallNode, OpenCall};
use super::policy::ContentPolicy;
use super::span::SpanId;
use super::spans::{Place, SessionAttrs, ToolSpan};
use super::turn::{Turn, TurnMut};
use super::{Note, Output};
use crate::protocol::{Call, Called};

/// How long a chain of `within` may be before it is treated as a cycle.
const MAX_NESTING: usize = 256;

impl Turn {
    /// The span id of the `nth` use of call id `id` in this turn.
    fn tool_span(&self, id: &str, nth: u64) -> SpanId {
        ids::child_span(self.span_id, Role::Tool, id, nth + (self.generation << 32))
    }

    /// The span id of a stand-in for call `id`, never one a real use of `id` has.
    fn stand_in_span(&self, id: &str) -> SpanId {
        ids::child_span(
            self.span_id,
            Role::Tool,
            id,
            (1 << 31) + (self.generation << 32),
        )
    }

    fn span_of(&self, call: &str) -> Option<SpanId> {
        self.calls.get(call).map(|c| c.span_id)
    }

    /// The span a call nested in `parent` hangs from: that call's, or the turn's root.
    fn parent_span(&self, parent: Option<&str>) -> SpanId {
        parent.and_then(|p| self.span_of(p)).unwrap_or(self.span_id)
    }

    /// Whether `ancestor` is `start` or above it in the parent chain of `start`.
    fn is_ancestor(&self, ancestor: &str, start: &str) -> bool {
        let mut current = Some(start);
        for _ in 0..MAX_NESTING {
            match current {
                None => return false,
                Some(c) if c == ancestor => return true,
                Some(c) => current = self.calls.get(c).and_then(|n| n.parent.as_deref()),
            }
        }
        // A chain this long is treated as the cycle it almost certainly is.
        true
    }

    /// The parent call for call `id` that declared `within`, creating a stand-in span for a
    /// `within` never seen, and refusing a parent that would close a cycle.
    fn parent_for(
        &mut self,
        session: &str,
        id: &str,
        within: Option<&str>,
        out: &mut Output,
    ) -> Option<String> {
        let w = within?;
        if !self.calls.contains_key(w) && w != id {
            out.notes.push(Note::UnknownWithin {
                session: session.to_string(),
                call: id.to_string(),
                within: w.to_string(),
            });
            let span_id = self.stand_in_span(w);
            self.calls.insert(
                w.to_string(),
                CallNode {
                    span_id,
                    nth: 0,
                    parent: None,
                    open: Some(OpenCall {
                        name: None,
                        within: None,
                        start_ms: None,
                        children: None,
                    }),
                },
            );
        }
        if self.is_ancestor(id, w) {
            out.notes.push(Note::WithinCycle {
                session: session.to_string(),
                call: id.to_string(),
                within: w.to_string(),
            });
            return None;
        }
        Some(w.to_string())
    }

    /// Widens the time range of the open calls above `parent` to cover `start..end`, so a
    /// call that ends up synthesized spans all of its nested calls.
    fn cover(&mut self, parent: Option<&str>, start: u64, end: u64) {
        let mut current = parent.map(str::to_string);
        for _ in 0..MAX_NESTING {
            let Some(c) = current else { return };
            let Some(node) = self.calls.get_mut(&c) else {
                return;
            };
            if let Some(open) = node.open.as_mut() {
                open.children = Some(match open.children {
                    Some((a, b)) => (a.min(start), b.max(end)),
                    None => (start, end),
                });
            }
            current = node.parent.clone();
        }
    }

    /// Emits every call still open, ending at `end_ms` (its turn is ending); returns how many.
    pub(super) fn close_open_calls(
        &mut self,
        end_ms: u64,
        policy: &ContentPolicy,
        session: &SessionAttrs,
        out: &mut Output,
    ) -> usize {
        // Open calls may be nested in finished ones or in each other: keep every span id
        // before the open nodes are taken out.
        let spans: HashMap<String, SpanId> = self
            .calls
            .iter()
            .map(|(k, n)| (k.clone(), n.span_id))
            .collect();
        let mut open: Vec<(String, CallNode)> = self
            .calls
            .drain()
            .filter(|(_, n)| n.open.is_some())
            .collect();
        open.sort_by(|a, b| a.0.cmp(&b.0));
        let count = open.len();
        for (id, node) in open {
            let parent = node
                .parent
                .as_deref()
                .and_then(|p| spans.get(p).copied())
                .unwrap_or(self.span_id);
            self.emit_open(&id, node, parent, end_ms, policy, session, out);
        }
        count
    }

    /// The span of a call that never got its result.
    #[allow(clippy::too_many_arguments)]
    fn emit_open(
        &self,
        id: &str,
        node: CallNode,
        parent: SpanId,
        end_ms: u64,
        policy: &ContentPolicy,
        session: &SessionAttrs,
        out: &mut Output,
    ) {
        let Some(open) = node.open else {
            return;
        };
        let (start, end) = match (open.start_ms, open.children) {
            (Some(s), Some((a, b))) => (s.min(a), end_ms.max(b).max(s)),
            (Some(s), None) => (s, end_ms.max(s)),
            (None, Some((a, b))) => (a, b),
            (None, None) => (end_ms, end_ms),
        };
        let place = Place {
            trace_id: self.trace_id,
            span_id: node.span_id,
            parent: Some(parent),
        };
        out.spans.push(
            ToolSpan {
                place,
                who: self.summary.attribution.as_deref(),
                call_id: id,
                name: open.name.as_deref(),
                within: open.within.as_deref(),
                start_ms: start,
                end_ms: end,
            }
            .unfinished(open.start_ms.is_none(), policy, session),
        );
    }
}

impl TurnMut<'_> {
    /// `calling`: a call starts; it becomes a node of the graph, open until its `called`.
    pub(super) fn calling(
        &mut self,
        at_ms: u64,
        call: &Call<'_>,
        policy: &ContentPolicy,
        out: &mut Output,
    ) {
        let (turn, session) = (&mut *self.turn, self.session);
        let sid = &session.id;
        turn.touch(at_ms);
        let id = call.id.as_ref();
        let within = call.within.as_deref();
        let nth = match turn.calls.get(id) {
            None => 0,
            // Only named as a `within` so far: now we know what it is.
            Some(CallNode {
                open: Some(OpenCall { start_ms: None, .. }),
                ..
            }) => {
                let parent = turn.parent_for(sid, id, within, out);
                if let Some(node) = turn.calls.get_mut(id) {
                    node.parent = parent;
                    if let Some(open) = node.open.as_mut() {
                        open.start_ms = Some(at_ms);
                        open.name = Some(call.name.to_string());
                        open.within = within.map(str::to_string);
                    }
                }
                return;
            }
            // Announced twice while still running: the first is cut short here.
            Some(CallNode { open: Some(_), .. }) => {
                out.notes.push(Note::DuplicateCall {
                    session: sid.to_string(),
                    call: id.to_string(),
                });
                let Some(node) = turn.calls.remove(id) else {
                    return;
                };
                let nth = node.nth + 1;
                let parent = turn.parent_span(node.parent.as_deref());
                turn.emit_open(id, node, parent, at_ms, policy, session, out);
                nth
            }
            Some(done) => done.nth + 1,
        };
        let parent = turn.parent_for(sid, id, within, out);
        turn.calls.insert(
            id.to_string(),
            CallNode {
                span_id: turn.tool_span(id, nth),
                nth,
                parent,
                open: Some(OpenCall {
                    name: Some(call.name.to_string()),
                    within: within.map(str::to_string),
                    start_ms: Some(at_ms),
                    children: None,
                }),
            },
        );
    }

    /// `called`: the call has its result; its span is emitted now.
    pub(super) fn called(&mut self, called: &Called<'_>, policy: &ContentPolicy, out: &mut Output) {
        let (turn, session) = (&mut *self.turn, self.session);
        let sid = &session.id;
        let id = called.call.id.as_ref();
        let clamped = called.finished_ms < called.started_ms;
        if clamped {
            out.notes.push(Note::EndBeforeStart {
                session: sid.to_string(),
                id: id.to_string(),
            });
        }
        let (start, end) = (called.started_ms, called.finished_ms.max(called.started_ms));
        turn.touch(start);
        turn.touch(end);
        turn.summary.tool_calls += 1;

        let (span_id, nth) = match turn.calls.get(id) {
            Some(node) if node.open.is_some() => (node.span_id, node.nth),
            Some(node) => {
                out.notes.push(Note::DuplicateCall {
                    session: sid.to_string(),
                    call: id.to_string(),
                });
                let nth = node.nth + 1;
                (turn.tool_span(id, nth), nth)
            }
            None => (turn.tool_span(id, 0), 0),
        };
        let parent = turn.parent_for(sid, id, called.call.within.as_deref(), out);
        turn.cover(parent.as_deref(), start, end);
        let place = Place {
            trace_id: turn.trace_id,
            span_id,
            parent: Some(turn.parent_span(parent.as_deref())),
        };
        let span = ToolSpan {
            place,
            who: turn.summary.attribution.as_deref(),
            call_id: id,
            name: Some(&called.call.name),
            within: called.call.within.as_deref(),
            start_ms: start,
            end_ms: end,
        }
        .finished(called, clamped, policy, session);
        out.spans.push(span);
        turn.calls.insert(
            id.to_string(),
            CallNode {
                span_id,
                nth,
                parent,
                open: None,
            },
        );
    }

    /// Keeps the turn's call map within `max`: finished calls are forgotten first (they are
    /// exported already), then running ones are exported as unfinished.
    pub(super) fn cap_calls(&mut self, max: usize, policy: &ContentPolicy, out: &mut Output) {
        let (turn, session) = (&mut *self.turn, self.session);
        let max = max.max(1);
        if turn.calls.len() <= max {
            return;
        }
        let excess = turn.calls.len() - max;
        let done: Vec<String> = turn
            .calls
            .iter()
            .filter(|(_, n)| n.open.is_none())
            .map(|(k, _)| k.clone())
            .take(excess)
            .collect();
        for k in &done {
            turn.calls.remove(k);
        }
        turn.generation += 1;
        while turn.calls.len() > max {
            let Some((id, node)) = turn.calls.pop_front() else {
                break;
            };
            let parent = turn.parent_span(node.parent.as_deref());
            let end = turn.last_ms;
            turn.emit_open(&id, node, parent, end, policy, session, out);
        }
        out.notes.push(Note::CallsEvicted {
            session: session.id.to_string(),
            calls: max,
        });
    }
}
