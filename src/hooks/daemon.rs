//! The background exporter for command hooks: drains the session journals into the pipeline.
//!
//! It is started on demand by a hook, holds `daemon.lock` so only one runs, and exits once
//! every journal is drained and no turn is open for a while, so nothing is left running. It
//! remembers, per journal, a resume point between two turns whose events are all delivered or
//! spooled; a daemon that dies is replaced by the next hook's, which starts from there. Ids are
//! derived from the events, so the part of a turn read twice yields the same spans again.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::journal::{self, Entry, Resume};
use crate::ingest::claude_code::{Adapter, Files, Payload};
use crate::pipeline::PipelineHandle;

#[derive(Debug, Clone)]
pub struct DaemonConfig {
    pub dir: PathBuf,
    /// Exit after this long with nothing new and no turn open.
    pub idle_exit: Duration,
    /// How long a `Stop` waits for a held stop's continuation.
    pub stop_grace: Duration,
    /// A session silent this long with a turn open is given up on (its turn is exported,
    /// unfinished).
    pub abandon_after: Duration,
    /// How often journals are looked at.
    pub poll: Duration,
}

impl DaemonConfig {
    pub fn new(dir: PathBuf) -> Self {
        DaemonConfig {
            dir,
            idle_exit: Duration::from_secs(60),
            stop_grace: Duration::from_secs(15),
            abandon_after: Duration::from_secs(3600),
            poll: Duration::from_millis(25),
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Exit {
    /// Another daemon holds the lock.
    AlreadyRunning,
    /// Everything drained and quiet.
    Idle,
}

struct JournalState {
    session: Option<String>,
    /// Read position: complete lines before it were handed to the pipeline.
    offset: u64,
    saved: Resume,
    last_activity: Instant,
    ended: bool,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn try_lock(dir: &Path) -> io::Result<Option<File>> {
    crate::private_fs::create_dir(dir)?;
    let f = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(journal::DAEMON_LOCK))?;
    match f.try_lock() {
        Ok(()) => Ok(Some(f)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// The lock file says which process holds it (for `doctor`, and for people).
fn write_pid(lock: &File) {
    use std::io::Write;
    let mut f = lock;
    let _ = lock.set_len(0);
    let _ = f.write_all(std::process::id().to_string().as_bytes());
}

/// The pid written in the lock file, if a daemon holds it.
pub fn pid(dir: &Path) -> Option<u32> {
    if !running(dir) {
        return None;
    }
    std::fs::read_to_string(dir.join(journal::DAEMON_LOCK))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether a daemon holds the lock now.
pub fn running(dir: &Path) -> bool {
    matches!(try_lock(dir), Ok(None))
}

/// The right to drain a journal folder: one daemon at a time holds it.
pub struct Lock(File);

impl Lock {
    /// Takes the lock, or `None` if another daemon has it.
    pub fn acquire(dir: &Path) -> io::Result<Option<Lock>> {
        Ok(try_lock(dir)?.map(|f| {
            write_pid(&f);
            Lock(f)
        }))
    }
}

/// Runs until idle, holding `lock`. Records go to `pipeline`; the caller closes it afterwards.
pub fn run(config: &DaemonConfig, lock: Lock, pipeline: &PipelineHandle) -> io::Result<Exit> {
    let mut lock = lock.0;
    let mut adapter = Adapter::new(config.stop_grace.as_millis() as u64);
    let mut journals: HashMap<PathBuf, JournalState> = HashMap::new();
    let mut last_new = Instant::now();
    let mut last_checkpoint = Instant::now();
    loop {
        let mut got = false;
        let mut records = Vec::new();
        for path in journal::list(&config.dir) {
            let state = journals.entry(path.clone()).or_insert_with(|| {
                let saved = journal::load_resume(&path);
                JournalState {
                    session: None,
                    offset: saved.offset,
                    saved,
                    last_activity: Instant::now(),
                    ended: false,
                }
            });
            let (bytes, end) = match journal::read_from(&path, state.offset) {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!("cannot read {}: {e}", path.display());
                    continue;
                }
            };
            if bytes.is_empty() {
                continue;
            }
            got = true;
            state.last_activity = Instant::now();
            for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let parsed = serde_json::from_slice::<Entry>(line)
                    .map_err(|e| e.to_string())
                    .and_then(|e| {
                        serde_json::from_str::<Payload>(e.payload.get())
                            .map(|p| (e.received_ms, p))
                            .map_err(|e| e.to_string())
                    });
                let (received, payload) = match parsed {
                    Ok(p) => p,
                    Err(e) => {
                        tracing::warn!("{}: a hook payload was skipped: {e}", path.display());
                        continue;
                    }
                };
                if state.session.is_none() {
                    state.session = Some(payload.session_id.clone());
                    adapter.resume(&payload.session_id, state.saved.transcript);
                }
                if payload.hook_event_name == "SessionEnd" {
                    state.ended = true;
                }
                adapter.push(received, &payload, &mut Files, &mut records);
            }
            state.offset = end;
        }
        adapter.tick(now_ms(), &mut records);
        // Sessions silent for too long with a turn open: export what there is.
        for state in journals.values_mut() {
            if let Some(s) = &state.session {
                if !adapter.at_rest(s) && state.last_activity.elapsed() >= config.abandon_after {
                    tracing::info!(
                        "session {s} went quiet with a turn open; exporting it unfinished"
                    );
                    adapter.forget(s);
                    records.push(crate::ingest::Record {
                        session: std::borrow::Cow::Owned(s.clone()),
                        event: crate::ingest::Event::Closed { at_ms: now_ms() },
                    });
                }
            }
        }
        for r in records {
            if !pipeline.send(r) {
                return Ok(Exit::Idle);
            }
        }
        if got {
            last_new = Instant::now();
        }
        if last_checkpoint.elapsed() >= Duration::from_secs(1)
            || (!got && last_new.elapsed() >= config.poll * 4)
        {
            checkpoint(&config.dir, &adapter, &mut journals, pipeline);
            last_checkpoint = Instant::now();
        }
        if !got && last_new.elapsed() >= config.idle_exit && adapter.open_turns() == 0 {
            checkpoint(&config.dir, &adapter, &mut journals, pipeline);
            // Let go of the lock, then look once more: a hook that appended meanwhile saw the
            // lock held and started no daemon, so this one must not leave its lines behind.
            drop(lock);
            let pending = journal::list(&config.dir).iter().any(|p| {
                let offset = journals.get(p).map_or(0, |s| s.offset);
                std::fs::metadata(p).is_ok_and(|m| m.len() > offset)
            });
            if !pending {
                return Ok(Exit::Idle);
            }
            match try_lock(&config.dir)? {
                Some(l) => {
                    write_pid(&l);
                    lock = l;
                }
                None => return Ok(Exit::Idle),
            }
        }
        std::thread::sleep(config.poll);
    }
}

/// Saves resume points for sessions between turns, once what was read is out of the
/// pipeline (delivered or spooled), and removes the journals of sessions that ended.
fn checkpoint(
    _dir: &Path,
    adapter: &Adapter,
    journals: &mut HashMap<PathBuf, JournalState>,
    pipeline: &PipelineHandle,
) {
    let due: Vec<PathBuf> = journals
        .iter()
        .filter(|(_, s)| {
            s.session.as_deref().is_some_and(|id| adapter.at_rest(id)) && s.saved.offset != s.offset
        })
        .map(|(p, _)| p.clone())
        .collect();
    if due.is_empty() {
        return;
    }
    if !pipeline.flush(Duration::from_secs(10)) {
        // Not out yet; try again at the next checkpoint.
        return;
    }
    for path in due {
        let state = journals.get_mut(&path).expect("listed above");
        if state.ended {
            if let Err(e) = journal::remove(&path) {
                tracing::warn!("cannot remove {}: {e}", path.display());
            }
            journals.remove(&path);
            continue;
        }
        let resume = Resume {
            offset: state.offset,
            transcript: state
                .session
                .as_deref()
                .map_or(0, |s| adapter.transcript_offset(s)),
        };
        match journal::save_resume(&path, resume) {
            Ok(()) => state.saved = resume,
            Err(e) => tracing::warn!("cannot save {}: {e}", path.display()),
        }
    }
}
