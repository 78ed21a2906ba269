//! The spool: batches the collector could not take, on disk, until it can.
//!
//! Each batch is one file holding the encoded `ExportTraceServiceRequest` (protobuf), the exact
//! bytes a retry sends, so a re-sent span keeps its ids and the backend sees it once. Files are
//! written to a temporary name, flushed to disk, and renamed into place (the folder flushed
//! too), so neither a crash nor a power loss leaves half a batch that looks whole. Several exporters (one per albedo session) may share a spool: a file is taken by
//! renaming it to a name that carries the taker's pid, which only one process can win, and
//! claims left by a process that died (asked portably, with `kill(pid, 0)`) are given back
//! when a spool is opened.
//!
//! The spool is capped in bytes; when a batch does not fit, the oldest files go first, and what
//! they held is counted. It is created 0700 and its files 0600: they hold the same scrubbed,
//! truncated content as the wire, but that is still the user's.

use std::collections::VecDeque;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::fs::{create_private_dir, private_file_options, sync_dir};

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

/// Whether process `pid` still runs (so its claims and half-written files are its own).
fn pid_alive(pid: u32) -> bool {
    pid != 0 && crate::process::alive(pid)
}

impl Spool {
    /// Opens (creating) the spool in `dir`, gives back claims of processes that are gone, and
    /// takes stock of what is there.
    pub fn open(dir: impl Into<PathBuf>, max_bytes: u64) -> io::Result<Spool> {
        let dir = dir.into();
        create_private_dir(&dir)?;
        let mut spool = Spool {
            dir,
            max_bytes: max_bytes.max(1),
            pid: std::process::id(),
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

    fn reclaim_orphans(&self) -> io::Result<()> {
        for e in fs::read_dir(&self.dir)? {
            let name = e?.file_name().to_string_lossy().into_owned();
            if let Some((base, pid)) = name.rsplit_once(CLAIM) {
                let owner: u32 = pid.parse().unwrap_or(0);
                if owner != self.pid && !pid_alive(owner) {
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
            let claimed = self.dir.join(format!("{}{CLAIM}{}", entry.name, self.pid));
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
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("albedo-otel-spool-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn batches_come_back_oldest_first_and_survive_a_new_process() {
        let dir = temp("order");
        let mut s = Spool::open(&dir, crate::pipeline::defaults::SPOOL_MAX_BYTES).unwrap();
        s.push(b"one", 1).unwrap();
        s.push(b"two", 2).unwrap();
        assert_eq!((s.files(), s.spans(), s.bytes()), (2, 3, 6));
        // Another opener (a restarted exporter) sees the same batches.
        let mut again = Spool::open(&dir, crate::pipeline::defaults::SPOOL_MAX_BYTES).unwrap();
        assert_eq!(again.spans(), 3);
        let first = again.take_oldest().unwrap().unwrap();
        assert_eq!((first.body.as_slice(), first.spans()), (&b"one"[..], 1));
        // Claimed: the first spool cannot take it too.
        s.rescan().unwrap();
        assert_eq!(s.files(), 1);
        again.give_back(first).unwrap();
        let first = again.take_oldest().unwrap().unwrap();
        assert_eq!(first.body, b"one");
        again.done(first).unwrap();
        let second = again.take_oldest().unwrap().unwrap();
        assert_eq!(second.body, b"two");
        again.done(second).unwrap();
        assert!(again.take_oldest().unwrap().is_none());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_full_spool_drops_the_oldest_and_says_how_much() {
        let dir = temp("cap");
        let mut s = Spool::open(&dir, 10).unwrap();
        assert_eq!(s.push(b"aaaa", 4).unwrap(), Evicted::default());
        assert_eq!(s.push(b"bbbb", 5).unwrap(), Evicted::default());
        assert_eq!(s.push(b"cccc", 6).unwrap(), Evicted { files: 1, spans: 4 });
        assert_eq!(s.take_oldest().unwrap().unwrap().body, b"bbbb");
        assert_eq!(
            s.push(&[0; 11], 7).unwrap(),
            Evicted {
                files: 2,
                spans: 13
            },
            "too big even alone"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn claims_of_dead_processes_are_given_back() {
        let dir = temp("orphan");
        let mut s = Spool::open(&dir, crate::pipeline::defaults::SPOOL_MAX_BYTES).unwrap();
        s.push(b"x", 1).unwrap();
        let name = s.entries[0].name.clone();
        // A claim by a pid that cannot exist.
        fs::rename(
            dir.join(&name),
            dir.join(format!("{name}{CLAIM}4294967295")),
        )
        .unwrap();
        let s2 = Spool::open(&dir, crate::pipeline::defaults::SPOOL_MAX_BYTES).unwrap();
        assert_eq!(s2.spans(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn the_spool_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp("mode");
        let mut s = Spool::open(&dir, crate::pipeline::defaults::SPOOL_MAX_BYTES).unwrap();
        s.push(b"secret-ish", 1).unwrap();
        assert_eq!(
            fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        let f = dir.join(&s.entries[0].name);
        assert_eq!(fs::metadata(f).unwrap().permissions().mode() & 0o777, 0o600);
        fs::remove_dir_all(&dir).unwrap();
    }
}
