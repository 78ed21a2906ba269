//! How a Claude Code turn ends: at its `Stop` once the grace has passed (a stop another hook
//! blocks goes on), cut short by the next prompt or the agent's end (what the transcript holds
//! goes with it), or with its session.

use super::{Adapter, Payload, Transcripts};
use crate::protocol::{Event, Record};
use crate::sources::command_hooks::engine::open_turn::Why;
use crate::sources::command_hooks::engine::records::record;
use crate::sources::command_hooks::engine::AgentRules;

impl Adapter {
    pub(super) fn on_session_end(
        &mut self,
        sid: &str,
        at_ms: u64,
        p: &Payload,
        transcripts: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        self.read_transcript(sid, p.transcript_path.as_deref(), transcripts, out);
        self.end_held(sid, out);
        out.push(record(sid, Event::Closed { at_ms }));
        if let Some(s) = self.sessions.remove(sid) {
            // Sub-agents still open end with their parent.
            for child in s.agents.values() {
                out.push(record(child, Event::Closed { at_ms }));
                self.sessions.remove(child);
            }
        }
    }

    /// A turn that ends with no `Stop` (if one is open): what its transcript holds goes out
    /// with it, and it ends unseen: its calls still pending are left to the turn's end,
    /// unfinished (no hook says how they ended).
    pub(super) fn cut_short(
        &mut self,
        sid: &str,
        transcripts: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(s) = self.sessions.get(sid).filter(|s| s.turn.is_some()) else {
            return;
        };
        let path = s.transcript_path.clone();
        self.read_transcript(sid, path.as_deref(), transcripts, out);
        if let Some(turn) = self.sessions.get_mut(sid).and_then(|s| s.turn.take()) {
            // Nothing in it ends at a time of its own: Claude Code's model calls are the
            // transcript's, and its pending calls are left open.
            let at = turn.at_ms;
            turn.flush(sid, at, Why::Unseen, out);
        }
    }

    /// Ends every held-back turn now (the exporter is closing).
    pub fn flush(&mut self, out: &mut Vec<Record<'static>>) {
        let ids: Vec<String> = self.sessions.keys().cloned().collect();
        for id in ids {
            self.end_held(&id, out);
        }
    }
}
