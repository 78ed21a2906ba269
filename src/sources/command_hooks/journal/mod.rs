//! The hand-off between a command hook and the background exporter: one append-only journal
//! per session on local disk.
//!
//! A hook process must return in a few milliseconds and must not talk to a collector, so it
//! only appends `{"received_ms":…,"host":…,"payload":…}` to its session's journal, under an exclusive
//! lock (albedo runs up to eight hooks at once; whole lines never interleave), and makes sure
//! the exporter daemon runs. Once the append returns, the event survives any crash: the daemon
//! reads journals from where it last stood, and a new daemon resumes an old one's. (A process
//! crash, that is: the append is not flushed to disk, which would cost the agent milliseconds
//! per event; the resume points are.)
//!
//! What a journal holds before a saved resume point is exported: the daemon then replaces the
//! journal with what comes after it ([`compact`]), so that a session left open for days keeps
//! on disk only what is not out yet, not every tool output it ever had.

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::assemble::SessionSeed;
use serde_json::value::RawValue;

use super::agent::Agent;
use super::HandOff;
use crate::fs::{create_private_dir, private_file_options, replace_durably};
use crate::process::ProcessId;
use crate::sources::command_hooks::engine::files::FileCursor;

pub const JOURNAL_SUFFIX: &str = ".journal";
const STATE_SUFFIX: &str = ".state";
pub const DAEMON_LOCK: &str = "daemon.lock";
pub const DAEMON_LOG: &str = "daemon.log";

/// A session id as a file name: safe characters kept, the rest replaced, and a hash so
/// different ids never share a file.
pub fn journal_name(session: &str) -> String {
    let safe: String = session
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    let hash = xxhash_rust::xxh3::xxh3_64(session.as_bytes());
    format!("{safe}-{hash:08x}{JOURNAL_SUFFIX}", hash = hash as u32)
}

fn open_append(path: &Path) -> io::Result<File> {
    private_file_options().create(true).append(true).open(path)
}

/// What a journal line says besides its payload.
#[derive(Debug, Clone, Copy)]
pub struct Stamp<'a> {
    pub received_ms: u64,
    /// The process that ran the hook (the agent), if the hook could tell.
    pub host: Option<ProcessId>,
    pub handoff: &'a HandOff,
    /// Whose hook it is, as its `--agent` named it: none for Claude Code's, so journals from
    /// before there were other agents read the same.
    pub agent: Option<&'a str>,
}

/// Appends one payload (JSON text, already checked) with its stamp.
pub fn append(dir: &Path, session: &str, payload: &str, stamp: &Stamp<'_>) -> io::Result<()> {
    let mut line = Vec::with_capacity(payload.len() + 64);
    line.extend_from_slice(b"{\"received_ms\":");
    line.extend_from_slice(stamp.received_ms.to_string().as_bytes());
    if let Some(host) = stamp.host {
        line.extend_from_slice(b",\"host\":");
        line.extend_from_slice(host.pid.to_string().as_bytes());
        if let Some(start) = host.start {
            line.extend_from_slice(b",\"host_start\":");
            line.extend_from_slice(start.to_string().as_bytes());
        }
        if let Some(ns) = host.ns {
            line.extend_from_slice(b",\"host_ns\":");
            line.extend_from_slice(ns.to_string().as_bytes());
        }
    }
    if let Some(agent) = stamp.agent {
        line.extend_from_slice(b",\"agent\":");
        serde_json::to_writer(&mut line, agent).map_err(io::Error::other)?;
    }
    if *stamp.handoff != HandOff::default() {
        line.extend_from_slice(b",\"handoff\":");
        // Paths and variable values serialize whatever they hold.
        serde_json::to_writer(&mut line, stamp.handoff).map_err(io::Error::other)?;
    }
    line.extend_from_slice(b",\"payload\":");
    line.extend_from_slice(payload.as_bytes());
    line.extend_from_slice(b"}\n");
    let path = dir.join(journal_name(session));
    let mut f = match open_append(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            create_private_dir(dir)?;
            open_append(&path)?
        }
        Err(e) => return Err(e),
    };
    // One writer at a time per journal, so lines never interleave whatever their size. The
    // lock goes with the file when it is closed.
    f.lock()?;
    // The daemon removes a journal it has read to the end, and replaces one with what it has
    // not read yet ([`compact`]), under this lock: one removed or replaced while this hook
    // waited for the lock is opened anew (as often as that happens), or the line would go to a
    // file nobody reads.
    for _ in 0..1000 {
        if !removed_meanwhile(&f, &path) {
            break;
        }
        f = open_append(&path).or_else(|_| {
            create_private_dir(dir)?;
            open_append(&path)
        })?;
        f.lock()?;
    }
    f.write_all(&line)
}

#[cfg(unix)]
fn removed_meanwhile(f: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (f.metadata(), fs::metadata(path)) {
        (Ok(open), Ok(named)) => (open.dev(), open.ino()) != (named.dev(), named.ino()),
        (Ok(_), Err(_)) => true,
        _ => false,
    }
}

#[cfg(not(unix))]
fn removed_meanwhile(_: &File, path: &Path) -> bool {
    !path.exists()
}

/// One journal line.
#[derive(Deserialize)]
pub struct Entry {
    pub received_ms: u64,
    /// The process that ran the hook (the agent), when the hook could tell: its pid, when it
    /// started, and its pid namespace (see [`Entry::host`]).
    #[serde(default)]
    pub host: Option<u32>,
    #[serde(default)]
    pub host_start: Option<u64>,
    #[serde(default)]
    pub host_ns: Option<u64>,
    /// The settings the payload was handed off with.
    #[serde(default)]
    pub handoff: HandOff,
    /// Whose hook it is (see [`Stamp::agent`]).
    #[serde(default)]
    pub agent: Option<String>,
    pub payload: Box<RawValue>,
}

impl Entry {
    /// The agent whose hook wrote this line, or the name a newer albedo-otel wrote that this
    /// one does not know.
    pub fn agent(&self) -> Result<Agent, &str> {
        match self.agent.as_deref() {
            None => Ok(Agent::default()),
            Some(name) => Agent::from_name(name).ok_or(name),
        }
    }

    /// The agent process the hook named.
    pub fn host(&self) -> Option<ProcessId> {
        self.host.map(|pid| ProcessId {
            pid,
            start: self.host_start,
            ns: self.host_ns,
        })
    }
}

/// Where the daemon stands in a journal: everything before `offset` is delivered or spooled
/// and ends between two turns; `transcript` is how far the session's transcript or log was
/// read then (an older state's is its offset alone).
#[derive(Debug, Default, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Resume {
    pub offset: u64,
    #[serde(default)]
    pub transcript: FileCursor,
    /// The session's agent process, once known: a later daemon, which reads none of the lines
    /// before `offset` again, still knows whose end retires the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<ProcessId>,
    /// Which file the state is about (its inode, on Unix). A state outlives its journal for
    /// a moment at the session's end; a new journal of the same name must not start at the
    /// old one's offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<u64>,
    /// The file the journal was before the daemon last compacted it, and the offset in it
    /// (see [`compact`]): should the compacted file not have taken the journal's name (a
    /// crash), the state applies to that one, at that offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<(u64, u64)>,
    /// What the exporter knew of the session at `offset` (its turns, and the turn that went
    /// out last): a later daemon's exporter goes on from there, so that what the agent does
    /// after a stop blocked long after its turn went out still goes into that turn's trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<SessionSeed>,
}

/// The identity of the file at `path`, where the OS gives one.
#[cfg(unix)]
fn identity(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(path).ok().map(|m| m.ino())
}

#[cfg(not(unix))]
fn identity(_: &Path) -> Option<u64> {
    None
}

fn state_path(journal: &Path) -> PathBuf {
    let mut name = journal.file_name().unwrap_or_default().to_os_string();
    name.push(STATE_SUFFIX);
    journal.with_file_name(name)
}

/// Where [`compact`] writes the journal's new contents before they take its name.
fn compacting_path(journal: &Path) -> PathBuf {
    let mut name = journal.file_name().unwrap_or_default().to_os_string();
    name.push(".compacting");
    journal.with_file_name(name)
}

/// Where an earlier daemon stood in `journal`; the start for a journal it never saw, or for a
/// state that is another file's (see [`Resume::file`]).
pub fn load_resume(journal: &Path) -> Resume {
    let saved: Resume = fs::read(state_path(journal))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    match (saved.file, identity(journal)) {
        (Some(theirs), Some(ours)) if theirs != ours => match saved.before {
            Some((file, offset)) if file == ours => Resume {
                offset,
                file: Some(ours),
                before: None,
                ..saved
            },
            _ => Resume::default(),
        },
        _ => saved,
    }
}

/// Discards what comes before `resume.offset` (delivered or spooled, and between two turns)
/// and saves where the daemon stands: the lines after it are copied to a new file that takes
/// the journal's name, under the journal's lock, so that no hook appends meanwhile (one that
/// opened the old file finds it replaced and opens the new: see [`append`]). A session left
/// open for days keeps on disk only what is not exported yet, not every tool output it ever
/// had. The state is saved first, for the new file at offset 0 and, should the rename not
/// happen (a crash), the old one at `resume.offset`. What the daemon now stands at is returned.
///
/// Unix only: elsewhere a hook cannot tell that the file it opened was replaced, and the
/// state is saved as it is.
#[cfg(unix)]
pub fn compact(journal: &Path, resume: Resume) -> io::Result<Resume> {
    use std::os::unix::fs::MetadataExt;
    let mut f = File::open(journal)?;
    f.lock()?;
    let old = f.metadata()?.ino();
    if resume.offset == 0 || identity(journal) != Some(old) {
        save_resume(journal, resume.clone())?;
        return Ok(resume);
    }
    f.seek(SeekFrom::Start(resume.offset))?;
    let mut tail = Vec::new();
    f.read_to_end(&mut tail)?;
    let tmp = compacting_path(journal);
    let compacted = (|| {
        let _ = fs::remove_file(&tmp);
        let mut new = private_file_options()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        new.write_all(&tail)?;
        new.sync_data()?;
        let compacted = Resume {
            offset: 0,
            file: Some(new.metadata()?.ino()),
            before: Some((old, resume.offset)),
            ..resume
        };
        let text = serde_json::to_vec(&compacted).map_err(io::Error::other)?;
        replace_durably(&state_path(journal), &text)?;
        fs::rename(&tmp, journal)?;
        Ok(compacted)
    })();
    if compacted.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    // The lock on the old file goes with it: hooks waiting for it find the new one.
    drop(f);
    compacted.map(|c| Resume { before: None, ..c })
}

#[cfg(not(unix))]
pub fn compact(journal: &Path, resume: Resume) -> io::Result<Resume> {
    save_resume(journal, resume.clone())?;
    Ok(resume)
}

/// Saves where the daemon stands, atomically and durably.
pub fn save_resume(journal: &Path, mut resume: Resume) -> io::Result<()> {
    resume.file = identity(journal);
    let text = serde_json::to_vec(&resume).map_err(io::Error::other)?;
    replace_durably(&state_path(journal), &text)
}

/// Removes a journal that is done with (its session ended and everything left). The journal
/// goes first: a crash between the two leaves a state that names a file no longer there,
/// never a journal without its state (which a new daemon would export again from the start).
pub fn remove(journal: &Path) -> io::Result<()> {
    fs::remove_file(journal)?;
    // What a compaction cut short left (see [`compact`]).
    let _ = fs::remove_file(compacting_path(journal));
    match fs::remove_file(state_path(journal)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Removes a journal read to `offset`, unless more was appended: under the journal's lock, so
/// that no hook appends meanwhile (a hook that opened it before then finds it gone, and opens
/// it anew: see [`append`]). Whether it was removed.
pub fn remove_if_read(journal: &Path, offset: u64) -> io::Result<bool> {
    let f = match File::open(journal) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(e),
    };
    f.lock()?;
    if f.metadata()?.len() != offset {
        return Ok(false);
    }
    remove(journal)?;
    Ok(true)
}

/// Every journal in `dir`.
pub fn list(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(JOURNAL_SUFFIX))
        .collect();
    out.sort();
    out
}

/// The complete lines of `journal` from `offset`, and the offset after the last of them.
pub fn read_from(journal: &Path, offset: u64, limit: u64) -> io::Result<(Vec<u8>, u64)> {
    let mut f = File::open(journal)?;
    let len = f.metadata()?.len();
    if len <= offset {
        return Ok((Vec::new(), offset));
    }
    f.seek(SeekFrom::Start(offset))?;
    let step = limit.max(1);
    let mut left = len - offset;
    let mut buf = Vec::with_capacity(left.min(step) as usize);
    loop {
        // A line longer than the limit (a large payload) is read on to its end.
        let from = buf.len();
        let want = left.min(step);
        (&mut f).take(want).read_to_end(&mut buf)?;
        left -= want;
        if left == 0 || buf[from..].contains(&b'\n') {
            break;
        }
    }
    // Writers hold the lock for a whole line, but a read may still land between two of their
    // writes only if a writer died mid-line; keep whatever has no newline yet for later.
    let complete = buf.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    buf.truncate(complete);
    Ok((buf, offset + complete as u64))
}

#[cfg(test)]
mod tests;
