//! The spool: batches the collector could not take, on disk, until it can.
//!
//! Each batch is one file holding the encoded `ExportTraceServiceRequest` (protobuf), the exact
//! bytes a retry sends, so a re-sent span keeps its ids and the backend sees it once. Files are
//! written to a temporary name, flushed to disk, and renamed into place (the folder flushed
//! too), so neither a crash nor a power loss leaves half a batch that looks whole.
//!
//! Several exporters (one per albedo session) may share a spool: a file is taken by renaming
//! it to a name that names the taker, which only one process can win, and claims left by a
//! process that is gone are given back when a spool is opened. A pid alone would not do: it
//! is reused (a dead taker's claim would look live, and its spans never be sent), and a
//! container sharing the folder counts pids in a namespace of its own (a live taker there
//! could look dead here). So a claim carries the taker's [`ProcessId`], pid, start and pid
//! namespace, and is given back only when that very process is known to be gone.
//!
//! The spool is capped in bytes; when a batch does not fit, the oldest files go first, and what
//! they held is counted. It is created 0700 and its files 0600: they hold the same scrubbed,
//! truncated content as the wire, but that is still the user's.

use std::collections::VecDeque;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::fs::{create_private_dir, private_file_options, sync_dir};
use crate::process::ProcessId;

const SUFFIX: &str = ".otlp";
const CLAIM: &str = ".claimed-";

/// One spooled batch.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    name: String,
    bytes: u64,
    spans: u64,
}

/// A batch taken out of the spool to be sent; [`Spool::done`] or [`Spool::give_back`] it.
#[derive(Debug)]
pub struct Claimed {
    entry: Entry,
    claimed: PathBuf,
    pub body: Vec<u8>,
}

impl Claimed {
    pub fn spans(&self) -> u64 {
        self.entry.spans
    }
}

/// What making room cost.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    pub files: u64,
    pub spans: u64,
}

#[derive(Debug)]
pub struct Spool {
    dir: PathBuf,
    max_bytes: u64,
    pid: u32,
    /// What this process's claims end with: `CLAIM`, then `claimer` of this process.
    claim: String,
    seq: u64,
    /// Unclaimed files, oldest first, as last seen on disk.
    entries: VecDeque<Entry>,
    bytes: u64,
}

/// `{ns:020}-{pid}-{seq:06}-{spans}.otlp`: names sort by age, and carry their span count so a
/// spool can be sized and accounted without reading it.
fn parse_name(name: &str) -> Option<u64> {
    let stem = name.strip_suffix(SUFFIX)?;
    let mut parts = stem.split('-');
    let (ns, pid, seq, spans) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || ns.len() != 20 {
        return None;
    }
    for p in [ns, pid, seq] {
        p.parse::<u64>().ok()?;
    }
    spans.parse().ok()
}

/// Whether process `pid` still runs (so its half-written files are its own).
fn pid_alive(pid: u32) -> bool {
    pid != 0 && crate::process::alive(pid)
}

/// A claim's suffix, after [`CLAIM`]: `{pid}`, then `-s{start}` and `-n{ns}` for what the OS
/// told. With neither (not Linux nor macOS) it is the pid alone, as older versions wrote it,
/// so they can still judge it.
fn claimer(who: &ProcessId) -> String {
    let mut out = who.pid.to_string();
    if let Some(start) = who.start {
        out.push_str(&format!("-s{start}"));
    }
    if let Some(ns) = who.ns {
        out.push_str(&format!("-n{ns}"));
    }
    out
}

/// The taker a claim's suffix names; `{pid}` alone is an older version's claim. A field this
/// version does not know (a later one's) is passed over: the ones it knows still name the
/// process.
fn parse_claimer(suffix: &str) -> Option<ProcessId> {
    let mut parts = suffix.split('-');
    let pid = parts.next()?.parse().ok()?;
    let mut who = ProcessId {
        pid,
        start: None,
        ns: None,
    };
    for part in parts {
        if let Some(start) = part.strip_prefix('s') {
            who.start = Some(start.parse().ok()?);
        } else if let Some(ns) = part.strip_prefix('n') {
            who.ns = Some(ns.parse().ok()?);
        }
    }
    Some(who)
}

/// Whether a claim is to be given back: its taker is known to be gone. One whose taker cannot
/// be judged (another pid namespace's) is left alone: it may be sending that batch now. One
/// that names no process at all is nobody's.
fn orphaned(suffix: &str) -> bool {
    parse_claimer(suffix).is_none_or(|who| who.still_running() == Some(false))
}

impl Spool {
    /// Opens (creating) the spool in `dir`, gives back claims of processes that are gone, and
    /// takes stock of what is there.
    pub fn open(dir: impl Into<PathBuf>, max_bytes: u64) -> io::Result<Spool> {
        let dir = dir.into();
        create_private_dir(&dir)?;
        let pid = std::process::id();
        let me = ProcessId::of(pid).unwrap_or(ProcessId {
            pid,
            start: None,
            ns: None,
        });
        let mut spool = Spool {
            dir,
            max_bytes: max_bytes.max(1),
            pid,
            claim: format!("{CLAIM}{}", claimer(&me)),
            seq: 0,
            entries: VecDeque::new(),
            bytes: 0,
        };
        spool.reclaim_orphans()?;
        spool.rescan()?;
        Ok(spool)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Gives back the claims of processes that are gone (also done at open): for a long-lived
    /// reader, whose peers come and go after it opened the spool.
    pub fn reclaim_orphans(&self) -> io::Result<()> {
        for e in fs::read_dir(&self.dir)? {
            let name = e?.file_name().to_string_lossy().into_owned();
            if let Some((base, owner)) = name.rsplit_once(CLAIM) {
                if orphaned(owner) {
                    let _ = fs::rename(self.dir.join(&name), self.dir.join(base));
                }
            } else if name.ends_with(".tmp") {
                // A write that never finished; its batch was never counted as spooled.
                let owner = name
                    .split('-')
                    .nth(1)
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(0);
                if owner != self.pid && !pid_alive(owner) {
                    let _ = fs::remove_file(self.dir.join(&name));
                }
            }
        }
        Ok(())
    }

    /// Re-reads the directory: other processes add and take files too.
    pub fn rescan(&mut self) -> io::Result<()> {
        let mut entries = Vec::new();
        for e in fs::read_dir(&self.dir)? {
            let e = e?;
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(spans) = parse_name(&name) else {
                continue;
            };
            let bytes = e.metadata().map(|m| m.len()).unwrap_or(0);
            entries.push(Entry { name, bytes, spans });
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        self.bytes = entries.iter().map(|e| e.bytes).sum();
        self.entries = entries.into();
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The cap it was opened with.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    pub fn files(&self) -> usize {
        self.entries.len()
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn spans(&self) -> u64 {
        self.entries.iter().map(|e| e.spans).sum()
    }

    /// Writes a batch. Makes room first by dropping the oldest batches; what they held is
    /// returned so it can be counted.
    pub fn push(&mut self, body: &[u8], spans: u64) -> io::Result<Evicted> {
        let size = body.len() as u64;
        let mut evicted = Evicted::default();
        while self.bytes + size > self.max_bytes {
            let Some(oldest) = self.entries.pop_front() else {
                break;
            };
            self.bytes = self.bytes.saturating_sub(oldest.bytes);
            // Another process may have taken it meanwhile; then it is not ours to count.
            if fs::remove_file(self.dir.join(&oldest.name)).is_ok() {
                evicted.files += 1;
                evicted.spans += oldest.spans;
            }
        }
        if size > self.max_bytes {
            // A batch larger than the whole spool cannot be kept.
            evicted.files += 1;
            evicted.spans += spans;
            return Ok(evicted);
        }
        let ns = crate::clock::unix_ns();
        self.seq += 1;
        let name = format!("{ns:020}-{}-{:06}-{spans}{SUFFIX}", self.pid, self.seq);
        let tmp = self.dir.join(format!("{name}.tmp"));
        let mut f = private_file_options()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        // On disk before the rename, and the rename on disk after it: a batch that looks whole
        // after a power loss is whole.
        if let Err(e) = f.write_all(body).and_then(|_| f.sync_all()) {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        drop(f);
        fs::rename(&tmp, self.dir.join(&name))?;
        sync_dir(&self.dir)?;
        self.bytes += size;
        self.entries.push_back(Entry {
            name,
            bytes: size,
            spans,
        });
        Ok(evicted)
    }

    /// Takes the oldest batch, if one can be had: renames it so no other process sends it too.
    pub fn take_oldest(&mut self) -> io::Result<Option<Claimed>> {
        while let Some(entry) = self.entries.pop_front() {
            self.bytes = self.bytes.saturating_sub(entry.bytes);
            let from = self.dir.join(&entry.name);
            let claimed = self.dir.join(format!("{}{}", entry.name, self.claim));
            match fs::rename(&from, &claimed) {
                Ok(()) => {}
                // Someone else took it (or evicted it).
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            }
            let body = fs::read(&claimed)?;
            return Ok(Some(Claimed {
                entry,
                claimed,
                body,
            }));
        }
        Ok(None)
    }

    /// The batch was delivered (or is undeliverable): remove it.
    pub fn done(&mut self, c: Claimed) -> io::Result<()> {
        fs::remove_file(&c.claimed)
    }

    /// The batch could not be delivered now: put it back in its place by age (several may
    /// be out at once, and come back in any order).
    pub fn give_back(&mut self, c: Claimed) -> io::Result<()> {
        fs::rename(&c.claimed, self.dir.join(&c.entry.name))?;
        self.bytes += c.entry.bytes;
        let at = self.entries.partition_point(|e| e.name < c.entry.name);
        self.entries.insert(at, c.entry);
        Ok(())
    }
}

/// Takes over `former`, the folder an earlier version gave the destination that `dir` is for,
/// when `dir` is not there yet: what it holds is then sent as if spooled under the new name.
pub fn adopt(former: &Path, dir: &Path) {
    if former == dir || !former.is_dir() || dir.exists() {
        return;
    }
    match std::fs::rename(former, dir) {
        Ok(()) => tracing::info!("the spool {} is now {}", former.display(), dir.display()),
        Err(e) => tracing::warn!(
            "cannot move the spool {} to {}: {e}; what it holds waits there",
            former.display(),
            dir.display()
        ),
    }
}

/// The spool folder for one destination under `root`.
pub fn for_destination(root: &Path, destination: &str) -> PathBuf {
    let hash = xxhash_rust::xxh3::xxh3_64(destination.as_bytes());
    let readable: String = destination
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(48)
        .collect();
    root.join(format!("{readable}-{hash:016x}"))
}

#[cfg(test)]
mod tests;
