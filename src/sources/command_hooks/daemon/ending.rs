//! How sessions end when no hook says so: the agent gone with a turn open (its turn exported,
//! unfinished), the agent gone between turns (the session retired), and the checkpoints that
//! save resume points and remove the journals of sessions that ended.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::super::journal::{self, Resume};
use super::super::registry::Adapters;
use super::{now_ms, Checks, DaemonConfig, JournalState, Profiles};
use crate::protocol::Record;
use crate::sources::command_hooks::engine::files::Files;

/// One pass's look at a session: a session between turns whose agent is gone is retired; one
/// with a turn open whose agent is gone, or that went quiet for long, has its turn exported
/// unfinished (into `records`).
pub(super) fn look_after(
    config: &DaemonConfig,
    path: &Path,
    state: &mut JournalState,
    checks: Checks,
    adapter: &mut Adapters,
    profiles: &Profiles,
    records: &mut Vec<Record<'static>>,
) {
    if state.ended {
        return;
    }
    let at_rest = state.session.as_deref().is_none_or(|s| adapter.at_rest(s));
    if at_rest {
        if checks.rest && retire(config, path, state) {
            if let Some(s) = state.session.as_deref().filter(|s| !s.is_empty()) {
                // Nothing is open: what the adapter and the assembly kept of the session is
                // let go.
                let mut closed = Vec::new();
                adapter.abandon(s, state.alive_ms, &mut Files, &mut closed);
                if let Some(handle) = state.profile.and_then(|id| profiles.handle(id)) {
                    closed.into_iter().for_each(|r| {
                        handle.send(r);
                    });
                }
            }
            state.ended = true;
        }
        return;
    }
    let Some(s) = &state.session else { return };
    if checks.hosts {
        super::count::process_check();
        state.host.check();
        if state.host.running == Some(true) {
            state.alive_ms = state.alive_ms.max(now_ms());
            tracing::debug!("session {s}: its agent is alive, with a turn open");
        }
    }
    // The agent behind the session is gone (or its pid is another process's now): nothing
    // more will come.
    let gone = state.host.running == Some(false);
    // Or it has been silent for long: an hour when nobody can tell whether its agent runs,
    // much longer when it looks alive.
    let cap = if state.host.running == Some(true) {
        config.abandon_alive_after
    } else {
        config.abandon_after
    };
    let silent = state.last_activity.elapsed() >= cap;
    if !(gone || silent) {
        return;
    }
    if gone {
        tracing::info!(
            "session {s}: its agent (pid {}) is gone with a turn open; exporting it unfinished",
            state.host.known.map_or(0, |p| p.pid)
        );
    } else {
        tracing::info!("session {s} went quiet with a turn open; exporting it unfinished");
    }
    // Its open turn, and the calls still running in it, end when the agent was last known to
    // be there: the payload before the silence, or the check before it went.
    let at = if state.alive_ms > 0 {
        state.alive_ms
    } else {
        now_ms()
    };
    // What it leaves goes where its turn went: a sub-agent's records too, whatever its
    // agent calls its session (opencode's are sessions of their own, not `top/agent-…`).
    let mut left = Vec::new();
    adapter.abandon(s, at, &mut Files, &mut left);
    match state.profile.and_then(|id| profiles.handle(id)) {
        Some(handle) => left.into_iter().for_each(|r| {
            handle.send(r);
        }),
        None => records.extend(left),
    }
    state.ended = true;
}

/// Whether a session between turns is over though it sent no `SessionEnd` (its terminal was
/// closed, it crashed, the machine restarted): its agent is gone, or, when no one process is
/// known to be its agent, it has been silent for [`DaemonConfig::retire_after`]. Its journal
/// and state then go at the next checkpoint, with what they hold (prompts and tool outputs,
/// unscrubbed), and no later daemon reads them again.
fn retire(config: &DaemonConfig, path: &Path, state: &mut JournalState) -> bool {
    // Lines not read yet may be a resumed session's, from a new agent process.
    if std::fs::metadata(super::count::stat(path)).map_or(true, |m| m.len() != state.offset) {
        return false;
    }
    let gone = match state.host.known {
        Some(agent) => {
            super::count::process_check();
            agent.still_running() == Some(false)
        }
        None => false,
    };
    let silent = state.host.known.is_none()
        && std::fs::metadata(super::count::stat(path))
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|e| e >= config.retire_after));
    if gone || silent {
        let who = path.file_name().unwrap_or_default().to_string_lossy();
        if gone {
            tracing::info!("{who}: its agent is gone between turns; retiring the session");
        } else {
            tracing::info!("{who}: silent for long between turns; retiring the session");
        }
        if state.session.is_none() {
            // Never read by this daemon: nothing of it is in flight anywhere.
            state.session = Some(String::new());
        }
    }
    gone || silent
}

/// How long a checkpoint waits for the exporter to say what it knows of a session.
const SEED_WITHIN: Duration = Duration::from_secs(2);

/// Saves resume points for sessions between turns, once what was read is out of the
/// pipeline (delivered or spooled), and removes the journals of sessions that ended.
pub(super) fn checkpoint(
    adapter: &mut Adapters,
    journals: &mut HashMap<PathBuf, JournalState>,
    profiles: &mut Profiles,
) {
    let due: Vec<PathBuf> = journals
        .iter()
        .filter(|(_, s)| {
            s.session.as_deref().is_some_and(|id| adapter.at_rest(id))
                && (s.saved.offset != s.offset || s.ended || s.saved.host != s.host.known)
        })
        .map(|(p, _)| p.clone())
        .collect();
    if due.is_empty() {
        return;
    }
    if !profiles.flush(Duration::from_secs(10)) {
        // Not out yet; try again at the next checkpoint.
        return;
    }
    for path in due {
        let Some(state) = journals.get_mut(&path) else {
            continue;
        };
        if state.ended {
            match journal::remove_if_read(&path, state.offset) {
                Ok(true) => {}
                // Lines came after the end (a resumed session): they are read next.
                Ok(false) => {
                    state.ended = false;
                    continue;
                }
                Err(e) => tracing::warn!("cannot remove {}: {e}", path.display()),
            }
            if let Some(id) = state.profile {
                profiles.unbind(id);
            }
            if let Some(id) = state.session.as_deref().filter(|s| !s.is_empty()) {
                adapter.forget(id);
            }
            journals.remove(&path);
            continue;
        }
        let session = state.session.as_deref().filter(|s| !s.is_empty());
        // Asked after the flush: the exporter has assembled every line before `offset`. With
        // no answer, the resume point stays where it was, with the seed that goes with it.
        let seed = match session.zip(state.profile.and_then(|id| profiles.handle(id))) {
            Some((s, handle)) => match handle.seed(s, SEED_WITHIN) {
                Some(seed) => seed,
                None => {
                    tracing::warn!(
                        "session {s}: the exporter did not answer; its resume point stays"
                    );
                    continue;
                }
            },
            None => state.saved.seed.clone(),
        };
        let resume = Resume {
            offset: state.offset,
            transcript: session.and_then(|s| adapter.cursor(s)).unwrap_or_default(),
            host: state.host.known,
            file: None,
            before: None,
            seed,
        };
        // What came before the resume point is out: it leaves the disk too.
        match journal::compact(&path, resume) {
            Ok(saved) => {
                state.offset = saved.offset;
                state.saved = saved;
            }
            Err(e) => tracing::warn!("cannot save {}: {e}", path.display()),
        }
    }
}
