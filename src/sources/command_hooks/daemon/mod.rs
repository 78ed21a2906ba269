//! The background exporter for command hooks: drains the session journals into the pipeline.
//!
//! It is started on demand by a hook, holds `daemon.lock` so only one runs, and exits once
//! every journal is drained and no turn is open for a while, so nothing is left running. A
//! hook of a newer albedo-otel starts one that takes over (see `lock.rs`); a line of an agent
//! this build does not know is left where it is, unread, for that one. It
//! remembers, per journal, a resume point between two turns whose events are all delivered or
//! spooled; a daemon that dies is replaced by the next hook's, which starts from there. Ids are
//! derived from the events, so the part of a turn read twice yields the same spans again.
//!
//! An agent that is killed mid-turn (Ctrl-C, a closed terminal) sends no `Stop` and no
//! `SessionEnd`. Each hook records the agent process that ran it; once two hooks of a session
//! name the same process, that is the session's agent, and when it is gone the session's open
//! turn is exported, marked unfinished, within seconds. A session whose hooks name a different
//! process each time (a host that runs every hook from a fresh runner) has no known agent and
//! falls back to a long silence timer. A live agent keeps its turn open however long a tool
//! runs, up to a day of silence. A process is named by its pid, its start time and its pid
//! namespace, so a reused pid is not taken for the agent, and a daemon in another namespace
//! (a container sharing the folder) falls back to the silence timer rather than taking live
//! agents for dead ones.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod count;
mod ending;
mod journal_line;
mod lock;
pub mod log;
mod watch;

use super::foreign::Dropped;
use super::journal::{self, Entry, Resume};
use super::profiles::ProfileId;
pub use super::profiles::Profiles;
use super::registry::Adapters;
use super::{doctor, Head};
use crate::clock::unix_ms as now_ms;
use crate::sources::command_hooks::engine::files::Files;
use journal_line::{read_line, Unread};
pub use lock::{holder, older, pid, running, successor_waits, Holder, Lock, VERSION};
use lock::{try_lock, write_holder};
use watch::{AgentProcess, Blocked, Listing};

/// How much of a journal is read at a time: a long backlog is handed on in pieces rather than
/// read whole on every pass.
const READ_CHUNK: u64 = 1 << 20;

#[derive(Debug, Clone)]
pub struct DaemonConfig {
    pub dir: PathBuf,
    /// Exit after this long with nothing new and no turn open.
    pub idle_exit: Duration,
    /// How long a `Stop` waits for a held stop's continuation.
    pub stop_grace: Duration,
    /// A session silent this long with a turn open, and no agent process known to be alive,
    /// is given up on (its turn is exported, unfinished).
    pub abandon_after: Duration,
    /// A session silent this long with a turn open is given up on even while its agent
    /// looks alive: a process that cannot be told apart from the agent (its start time not
    /// to be had) must not keep a turn open forever.
    pub abandon_alive_after: Duration,
    /// How often the agents behind sessions with a turn open are checked on.
    pub host_check: Duration,
    /// How often journals are looked at.
    pub poll: Duration,
    /// A session between turns whose agent cannot be told gone (its hooks name no one
    /// process) is retired after this long a silence: its journal and state go.
    pub retire_after: Duration,
}

impl DaemonConfig {
    pub fn new(dir: PathBuf) -> Self {
        DaemonConfig {
            dir,
            idle_exit: Duration::from_secs(60),
            stop_grace: Duration::from_secs(15),
            abandon_after: Duration::from_secs(3600),
            abandon_alive_after: Duration::from_secs(24 * 3600),
            host_check: Duration::from_secs(1),
            poll: Duration::from_millis(25),
            retire_after: Duration::from_secs(7 * 24 * 3600),
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Exit {
    /// Another daemon holds the lock.
    AlreadyRunning,
    /// Everything drained and quiet.
    Idle,
    /// A newer albedo-otel's daemon took over (see `lock.rs`).
    HandedOver,
}

/// A daemon asked to hand over does so once no turn is open, or after this long at most (its
/// open turns are then read again by the next daemon, from their resume points).
const HAND_OVER_WITHIN: Duration = Duration::from_secs(30);

struct JournalState {
    session: Option<String>,
    /// Read position: complete lines before it were handed to the pipeline.
    offset: u64,
    saved: Resume,
    last_activity: Instant,
    ended: bool,
    host: AgentProcess,
    /// The settings the session's current turn goes out with.
    profile: Option<ProfileId>,
    /// The next payload's settings did not resolve: the journal waits, unread, until they may.
    blocked: Option<Blocked>,
    /// When the session's agent was last known to be there (a payload, or a check that
    /// found it running), in ms since the epoch: where a turn it left open ends.
    alive_ms: u64,
    /// When the journal was last looked at: a quiet one is looked at less often.
    looked: Option<Instant>,
    /// Its lines are an agent's this build does not know: never read, skipped or removed
    /// here, they wait for a daemon that knows it.
    not_ours: bool,
}

/// A journal quiet this long is looked at every [`QUIET_LOOK`] rather than every poll, so an
/// idle daemon's work does not grow with the sessions on disk.
const QUIET_AFTER: Duration = Duration::from_secs(5);
const QUIET_LOOK: Duration = Duration::from_secs(1);
/// How often the agents of sessions between turns are checked on, to retire those gone.
pub(super) const REST_CHECK: Duration = Duration::from_secs(5);

/// Which checks are due on this pass.
#[derive(Clone, Copy)]
struct Checks {
    /// Whether the agents of sessions with a turn open run.
    hosts: bool,
    /// Whether the agents of sessions between turns run (to retire those gone).
    rest: bool,
}

impl JournalState {
    fn new(saved: Resume) -> Self {
        let mut host = AgentProcess::default();
        host.known = saved.host;
        JournalState {
            session: None,
            offset: saved.offset,
            saved,
            // Quiet until it gives something: a daemon that starts among many journals does
            // not look at each on every pass.
            last_activity: Instant::now()
                .checked_sub(QUIET_AFTER)
                .unwrap_or_else(Instant::now),
            ended: false,
            host,
            profile: None,
            blocked: None,
            alive_ms: 0,
            looked: None,
            not_ours: false,
        }
    }

    /// Whether the journal gave something lately: it is looked at on every pass.
    fn active(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.last_activity) < QUIET_AFTER
    }

    /// Whether this pass should look at the journal.
    fn due(&self) -> bool {
        self.last_activity.elapsed() < QUIET_AFTER
            || self.looked.is_none_or(|t| t.elapsed() >= QUIET_LOOK)
    }
}

/// Runs until idle, holding `lock`. Records go to the pipeline of the settings their payloads
/// were handed off with (`profiles`); the caller closes them afterwards.
pub fn run(config: &DaemonConfig, lock: Lock, profiles: &mut Profiles) -> io::Result<Exit> {
    let version = lock.version.clone();
    let mut lock = lock.file;
    let mut handing_over: Option<Instant> = None;
    let mut adapter = Adapters::new(config.stop_grace.as_millis() as u64);
    let mut dropped = Dropped::default();
    let mut journals: HashMap<PathBuf, JournalState> = HashMap::new();
    let mut last_new = Instant::now();
    let mut last_checkpoint = Instant::now();
    let mut last_host_check = Instant::now();
    // The first pass checks too: journals an earlier daemon left may be of agents long gone.
    let mut last_rest_check: Option<Instant> = None;
    let mut looked_at = Listing::default();
    loop {
        count::pass();
        let mut got = false;
        for path in looked_at.paths(&config.dir, &journals) {
            let state = journals
                .entry(path.clone())
                .or_insert_with(|| JournalState::new(journal::load_resume(count::open(&path))));
            if !state.due() {
                continue;
            }
            state.looked = Some(Instant::now());
            if drain(config, &path, state, &mut adapter, profiles, &mut dropped) {
                got = true;
            }
        }
        let mut records = Vec::new();
        adapter.tick(now_ms(), &mut Files, &mut records);
        let check_hosts = last_host_check.elapsed() >= config.host_check;
        if check_hosts {
            last_host_check = Instant::now();
        }
        let check_rest = last_rest_check.is_none_or(|t| t.elapsed() >= REST_CHECK);
        if check_rest {
            last_rest_check = Some(Instant::now());
        }
        for (path, state) in journals.iter_mut() {
            let checks = Checks {
                hosts: check_hosts,
                rest: check_rest,
            };
            ending::look_after(
                config,
                path,
                state,
                checks,
                &mut adapter,
                profiles,
                &mut records,
            );
        }
        // Records made outside a journal's lines (turns ended by time) go where their
        // session's turn went.
        for r in records {
            let owner = crate::sources::command_hooks::engine::session_key::top(&r.session);
            let target = journals
                .values()
                .find(|s| s.session.as_deref() == Some(owner))
                .and_then(|s| s.profile)
                .and_then(|id| profiles.handle(id));
            match target {
                Some(handle) => {
                    handle.send(r);
                }
                None => tracing::warn!("session {owner}: a record has no pipeline to go to"),
            }
        }
        if got {
            last_new = Instant::now();
        }
        if last_checkpoint.elapsed() >= Duration::from_secs(1)
            || (!got && last_new.elapsed() >= config.poll * 4)
        {
            ending::checkpoint(&mut adapter, &mut journals, profiles);
            log::keep_bounded(&config.dir, log::MAX_LOG);
            last_checkpoint = Instant::now();
            if handing_over.is_none() && lock::newer_waits(&config.dir, &version) {
                tracing::info!(
                    "a newer albedo-otel's daemon waits to drain this folder: handing over to it"
                );
                handing_over = Some(Instant::now());
            }
        }
        if handing_over
            .is_some_and(|t| adapter.open_turns() == 0 || t.elapsed() >= HAND_OVER_WITHIN)
        {
            ending::checkpoint(&mut adapter, &mut journals, profiles);
            return Ok(Exit::HandedOver);
        }
        if !got && last_new.elapsed() >= config.idle_exit && adapter.open_turns() == 0 {
            ending::checkpoint(&mut adapter, &mut journals, profiles);
            // Let go of the lock, then look once more: a hook that appended meanwhile saw the
            // lock held and started no daemon, so this one must not leave its lines behind.
            // A journal that waits for its settings is not work: the next hook's daemon tries
            // it again.
            drop(lock);
            let pending = count::listed(journal::list(&config.dir)).iter().any(|p| {
                let state = journals.get(p);
                let offset = state.map_or(0, |s| s.offset);
                let waits = state
                    .is_some_and(|s| s.not_ours || s.blocked.as_ref().is_some_and(Blocked::still));
                // A whole line, not the torn tail a writer that died mid-line left.
                !waits
                    && std::fs::metadata(count::stat(p)).is_ok_and(|m| m.len() > offset)
                    && journal::read_from(count::open(p), offset, READ_CHUNK)
                        .is_ok_and(|(b, _)| !b.is_empty())
            });
            if !pending {
                return Ok(Exit::Idle);
            }
            match try_lock(&config.dir)? {
                Some(l) => {
                    write_holder(&l, &version);
                    lock = l;
                }
                None => return Ok(Exit::Idle),
            }
        }
        std::thread::sleep(config.poll);
    }
}

/// Reads what is new in one journal and hands its payloads on; says whether there was any.
/// A payload whose settings do not resolve (a malformed configuration file) stops the
/// journal there: it and those after it wait, unread, until the file changes.
fn drain(
    config: &DaemonConfig,
    path: &Path,
    state: &mut JournalState,
    adapter: &mut Adapters,
    profiles: &mut Profiles,
    dropped: &mut Dropped,
) -> bool {
    if state.not_ours || state.blocked.as_ref().is_some_and(Blocked::still) {
        return false;
    }
    state.blocked = None;
    // A stat, not an open, for the usual journal with nothing new.
    if std::fs::metadata(count::stat(path)).is_ok_and(|m| m.len() <= state.offset) {
        return false;
    }
    let (bytes, _) = match journal::read_from(count::open(path), state.offset, READ_CHUNK) {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!("cannot read {}: {e}", path.display());
            return false;
        }
    };
    let mut got = false;
    for raw in bytes.split_inclusive(|b| *b == b'\n') {
        let next = state.offset + raw.len() as u64;
        let line = raw.strip_suffix(b"\n").unwrap_or(raw);
        let (entry, agent, payload, parsed) = match read_line(line, adapter) {
            Ok(read) => read,
            Err(Unread::Skip(e)) => {
                tracing::warn!("{}: a hook payload was skipped: {e}", path.display());
                state.offset = next;
                continue;
            }
            Err(Unread::Foreign(borrower, session)) => {
                // Never a Claude Code session's: said once a session, and the journal goes at
                // the next checkpoint, with nothing of it in flight.
                dropped.note(borrower, &session);
                state.session.get_or_insert_with(String::new);
                state.ended = true;
                state.offset = next;
                continue;
            }
            Err(Unread::NotOurs(message)) => {
                // Not ours to read: said once, and left where it is, this line and those after
                // it, for a daemon that knows its agent (a newer hook's takes over).
                profiles.log_once(format!("{}: {message}", path.display()));
                state.not_ours = true;
                break;
            }
        };
        if payload.hook_event_name == doctor::EVENT && payload.doctor_id.is_some() {
            answer_doctor(config, &entry, &payload, profiles);
            state.offset = next;
            // A doctor's journal has served once it is answered: it goes at the next
            // checkpoint, so that no later daemon answers it (and sends its trace) again.
            state
                .session
                .get_or_insert_with(|| payload.session_id.clone());
            state.ended = true;
            continue;
        }
        adapter.note(agent, &payload.session_id);
        // A turn keeps the settings it began with; between turns, the payload's own apply.
        let at_rest = state.session.as_deref().is_none_or(|s| adapter.at_rest(s));
        if state.profile.is_none() || at_rest {
            let bound = profiles
                .settings(&entry.handoff)
                .and_then(|(id, settings)| {
                    if state.profile == Some(id) {
                        return Ok(());
                    }
                    profiles
                        .bind(id, &settings)
                        .map_err(|e| format!("cannot start exporting: {e}"))?;
                    if let Some(old) = state.profile.replace(id) {
                        profiles.unbind(old);
                    }
                    adapter.message_budget(
                        &payload.session_id,
                        settings.pipeline.assemble.policy.message_budget(),
                    );
                    Ok(())
                });
            if let Err(message) = bound {
                profiles.log_once(format!("{}: {message}", path.display()));
                let config = entry.handoff.config.clone();
                state.blocked = Some(Blocked {
                    stamp: config.as_ref().and_then(super::profiles::stamp),
                    config,
                    since: Instant::now(),
                });
                break;
            }
        }
        got = true;
        state.last_activity = Instant::now();
        if state.session.is_none() {
            state.session = Some(payload.session_id.clone());
            adapter.resume(&payload.session_id, state.saved.transcript.clone());
            // The exporter goes on with the session where the earlier daemon's left it.
            let handle = state.profile.and_then(|id| profiles.handle(id));
            if let Some((seed, handle)) = state.saved.seed.clone().zip(handle) {
                handle.resume(&payload.session_id, seed);
            }
        }
        // A session that ended can go on: a resumed Gemini session keeps its id. Cursor
        // spells it `sessionEnd`.
        state.ended = payload.hook_event_name.eq_ignore_ascii_case("SessionEnd")
            || payload.hook_event_name == super::hook::streaming::EXITED;
        state.host.saw(entry.host());
        state.alive_ms = state.alive_ms.max(entry.received_ms);
        let mut records = Vec::new();
        adapter.push(parsed, entry.received_ms, &mut Files, &mut records);
        if let Some(handle) = state.profile.and_then(|id| profiles.handle(id)) {
            for r in records {
                handle.send(r);
            }
        }
        state.offset = next;
    }
    got
}

/// A doctor's test payload: send a test trace with the payload's settings, and write down
/// what happened where the doctor waits for it.
fn answer_doctor(config: &DaemonConfig, entry: &Entry, payload: &Head, profiles: &mut Profiles) {
    let Some(id) = payload.doctor_id.as_deref() else {
        return;
    };
    let answer = match profiles.settings(&entry.handoff) {
        Ok((_, settings)) => doctor::probe(&settings, Duration::from_secs(10)),
        Err(message) => doctor::Answer {
            ok: false,
            message,
            trace_id: String::new(),
        },
    };
    tracing::info!("doctor's test: {}", answer.message);
    if let Err(e) = doctor::write_answer(&config.dir, id, &answer) {
        tracing::warn!("cannot write the doctor's answer: {e}");
    }
}

#[cfg(test)]
mod handover_tests;
#[cfg(test)]
mod tests;
