//! A session handed from one pipeline to the next (a hook daemon that exits between turns,
//! and the one that goes on after it): what the old one's assembly knew of it, read after a
//! flush, and given to the new one before its next records.

use std::time::Duration;

use crossbeam_channel::bounded;

use super::{Control, Input, PipelineHandle};
use crate::assemble::SessionSeed;

impl PipelineHandle {
    /// Goes on with `session` from where an earlier pipeline left it (its
    /// [`seed`](Self::seed)), before the records handed over after this: a restarted exporter
    /// numbers and links the session's turns as the old one would have, and puts what the
    /// agent does after its turn went out into that turn's trace. `false` once closed.
    pub fn resume(&self, session: &str, seed: SessionSeed) -> bool {
        let input = Input::Resume(Box::new((session.to_string(), seed)));
        self.events.send(input).is_ok()
    }

    /// What a later pipeline needs to go on with `session` (see
    /// [`Assembler::seed`](crate::assemble::Assembler::seed)), once everything handed over so
    /// far is assembled: `Some(None)` for a session not open between two turns here, `None`
    /// when the pipeline gives no answer within `timeout` (closed, or held up).
    pub fn seed(&self, session: &str, timeout: Duration) -> Option<Option<SessionSeed>> {
        let (tx, rx) = bounded(1);
        self.control
            .send(Control::Seed(session.to_string(), tx))
            .ok()?;
        rx.recv_timeout(timeout).ok()
    }
}
