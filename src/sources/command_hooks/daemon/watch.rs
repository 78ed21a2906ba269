//! What the daemon watches besides the journals' lines: which journals a pass looks at,
//! which process is a session's agent (to export a killed agent's open turn), and why a
//! journal waits, if it does.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::super::journal;
use super::{count, JournalState, QUIET_LOOK};

use crate::process::ProcessId;

/// Why a journal waits: its next payload's settings failed to resolve with the configuration
/// file as it was then.
pub(super) struct Blocked {
    pub(super) config: Option<PathBuf>,
    pub(super) stamp: Option<super::super::profiles::Stamp>,
    pub(super) since: Instant,
}

/// A blocked journal is tried again this often even if its file did not change: settings can
/// also fail on what no file says (a spool folder that cannot be made).
const RETRY_BLOCKED: Duration = Duration::from_secs(30);

impl Blocked {
    /// Whether nothing that could unblock the journal has happened since.
    pub(super) fn still(&self) -> bool {
        self.since.elapsed() < RETRY_BLOCKED
            && self.config.as_ref().and_then(super::super::profiles::stamp) == self.stamp
    }
}

/// Which process is the agent behind a session, as its hooks tell.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct AgentProcess {
    /// What the latest hook said.
    pub(super) last: Option<ProcessId>,
    /// Two hooks in a row named this process: it is the agent.
    pub(super) known: Option<ProcessId>,
    /// Whether the known agent ran at the last check: `None` before one, or when this daemon
    /// cannot tell (the agent is in another pid namespace).
    pub(super) running: Option<bool>,
}

impl AgentProcess {
    pub(super) fn saw(&mut self, host: Option<ProcessId>) {
        let known = match (self.last, host) {
            (Some(a), Some(b)) if a == b => Some(b),
            _ => None,
        };
        if known != self.known {
            self.running = None;
        }
        self.known = known;
        self.last = host;
    }

    pub(super) fn check(&mut self) {
        self.running = self.known.and_then(|p| p.still_running());
    }
}

/// Which journals a pass looks at: every one in the folder once a [`QUIET_LOOK`] or when the
/// folder changed (a session began or ended), else only the active ones, so that a pass
/// lists no folder and touches no quiet journal's file.
#[derive(Default)]
pub(super) struct Listing {
    /// When the folder was last listed, and how it looked then.
    last: Option<(Instant, Option<std::time::SystemTime>)>,
}

impl Listing {
    pub(super) fn paths(
        &mut self,
        dir: &Path,
        journals: &HashMap<PathBuf, JournalState>,
    ) -> Vec<PathBuf> {
        let stamp = std::fs::metadata(dir).and_then(|m| m.modified()).ok();
        let fresh = self
            .last
            .is_some_and(|(at, was)| was == stamp && stamp.is_some() && at.elapsed() < QUIET_LOOK);
        if fresh {
            let now = Instant::now();
            let mut active: Vec<PathBuf> = journals
                .iter()
                .filter(|(_, s)| s.active(now))
                .map(|(p, _)| p.clone())
                .collect();
            active.sort();
            return active;
        }
        self.last = Some((Instant::now(), stamp));
        count::listed(journal::list(dir))
    }
}
