//! A session's state between two turns, handed from one assembler to the next (see
//! [`SessionSeed`]): read from the session table, and sown into a new one.

use super::{Session, SessionTable, TurnHistory};
use crate::assemble::seed::{Continued, Root, SessionSeed};
use crate::assemble::span::SpanLink;
use crate::assemble::turn::WentOut;
use crate::assemble::{AssembleConfig, Output};

impl Session {
    fn seed(&self) -> SessionSeed {
        let (turns, latest_start_ms) = (self.history.turns, self.history.latest_start);
        SessionSeed {
            turns,
            latest_start_ms,
            last_root: self.prev_root.map(|l| Root::of(l.trace_id, l.span_id)),
            went_out: self.went_out.map(|w| {
                let (trace, span) = w.root;
                Continued {
                    root: Root::of(trace, span),
                    number: w.number,
                    pieces: w.pieces,
                }
            }),
        }
    }
}

impl SessionTable {
    /// What a later assembler needs to go on with `sid`, if it is open with no turn open
    /// (between two turns: a turn in progress is read again from the journal instead).
    pub(in crate::assemble) fn seed_of(&self, sid: &str) -> Option<SessionSeed> {
        self.sessions
            .get(sid)
            .filter(|s| s.turn.is_none())
            .map(Session::seed)
    }

    /// Goes on with `sid` from where an earlier assembler left it. What this one already
    /// knows of the session wins: a seed applies only to a session with no turn open that
    /// has had fewer turns here than the seed says.
    pub(in crate::assemble) fn resume(
        &mut self,
        sid: &str,
        seed: &SessionSeed,
        config: &AssembleConfig,
        out: &mut Output,
    ) {
        if self.known_turns(sid) >= seed.turns {
            return;
        }
        let s = self.ensure(sid, config, out);
        if s.turn.is_some() {
            return;
        }
        s.history = TurnHistory {
            turns: seed.turns,
            latest_start: seed.latest_start_ms,
        };
        s.prev_root = seed
            .last_root
            .as_ref()
            .and_then(Root::ids)
            .map(|(trace_id, span_id)| SpanLink { trace_id, span_id });
        s.went_out = seed.went_out.as_ref().and_then(|w| {
            Some(WentOut {
                root: w.root.ids()?,
                number: w.number,
                pieces: w.pieces,
            })
        });
    }
}

impl SessionTable {
    /// How many turns `sid` had here, open or ended.
    fn known_turns(&self, sid: &str) -> u64 {
        match self.sessions.get(sid) {
            Some(s) => s.history.turns,
            None => self.ended.get(sid).map_or(0, |h| h.turns),
        }
    }
}
