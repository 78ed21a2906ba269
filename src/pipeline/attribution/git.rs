//! A git checkout's branch, commit and remote, read from its files (`HEAD`, refs,
//! `packed-refs`, `config`), never by running `git`: a process per turn would cost the
//! exporter milliseconds, and what `git` runs (hooks, `core.fsmonitor`) is the checkout's
//! to choose, not ours. Worktrees (a `.git` file naming its `gitdir:`), packed refs and a
//! detached HEAD are read as git reads them; anything else that is not as expected (a broken
//! `.git`, a reftable repository) gives fewer facts, never an error.

use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use super::gitconfig::{self, GitConfig};

/// HEAD and a loose ref are one line; this is far more than either needs.
const MAX_SMALL: u64 = 4096;
/// `packed-refs` of a large repository runs to megabytes; past this it is not read.
const MAX_PACKED: u64 = 64 << 20;
/// Symbolic refs followed at most this deep (git's own limit is 5).
const MAX_SYMREF: usize = 5;

/// Where a checkout's git data is: its own folder (`HEAD`), and the folder it shares with
/// its other worktrees (refs, `packed-refs`, `config`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Checkout {
    pub git_dir: PathBuf,
    pub common_dir: PathBuf,
}

/// What was read, and the files it was read from, to tell later whether it still holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Facts {
    pub repository: Option<String>,
    pub branch: Option<String>,
    pub revision: Option<String>,
    pub email: Option<String>,
    /// The files the facts came from, with what they were then.
    pub stamps: Vec<Stamp>,
}

/// A file as it was: a branch moves when its ref file is replaced (a new inode), a commit
/// lands within the same second as the last read on a coarse clock, so all three count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Stamp {
    path: PathBuf,
    seen: Option<(SystemTime, u64, u64)>,
}

impl Stamp {
    pub fn of(path: PathBuf) -> Stamp {
        let seen = std::fs::metadata(&path).ok().map(|m| {
            let modified = m.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            (modified, m.len(), inode(&m))
        });
        Stamp { path, seen }
    }

    pub fn changed(&self) -> bool {
        Stamp::of(self.path.clone()).seen != self.seen
    }
}

#[cfg(unix)]
fn inode(m: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(m)
}

#[cfg(not(unix))]
fn inode(_: &std::fs::Metadata) -> u64 {
    0
}

/// The text of a regular file no bigger than `max` bytes. Anything else in its place (a FIFO,
/// a device, a socket) is not read: opening a FIFO waits for a writer, and this runs on the
/// assemble thread every session's turns go through, so one checkout could stop them all.
pub(super) fn small_file(path: &Path, max: u64) -> Option<String> {
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let file = open_without_waiting(path).ok()?;
    // What was opened may not be what was looked at: it is checked again, on the open file.
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(max + 1).read_to_string(&mut text).ok()?;
    (text.len() as u64 <= max).then_some(text)
}

/// Opens `path` to read without waiting: on unix with `O_NONBLOCK`, which opens a FIFO put in
/// place since the check at once instead of waiting for its writer (and changes nothing for
/// reading a regular file).
#[cfg(unix)]
fn open_without_waiting(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

/// Elsewhere there are no FIFOs on a file path to wait for; the metadata check is the guard.
#[cfg(not(unix))]
fn open_without_waiting(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// The checkout `dir` is in, looking up from it as git does; `None` when there is none, or
/// its `.git` is neither a folder nor a readable `gitdir:` file.
pub(super) fn find(dir: &Path) -> Option<Checkout> {
    for d in dir.ancestors() {
        let dot = d.join(".git");
        let Ok(meta) = std::fs::metadata(&dot) else {
            continue;
        };
        let git_dir = if meta.is_dir() {
            dot
        } else {
            let text = small_file(&dot, MAX_SMALL)?;
            let target = text.trim().strip_prefix("gitdir:")?.trim();
            d.join(target)
        };
        let common_dir = match small_file(&git_dir.join("commondir"), MAX_SMALL) {
            Some(c) => git_dir.join(c.trim()),
            None => git_dir.clone(),
        };
        return Some(Checkout {
            git_dir,
            common_dir,
        });
    }
    None
}

/// Branch, commit, `origin` and `user.email` of `c`, with what they were read from. `home`
/// expands `~` in the config's includes.
pub(super) fn read(c: &Checkout, home: Option<&Path>) -> Facts {
    let head_path = c.git_dir.join("HEAD");
    let config_path = c.common_dir.join("config");
    let mut facts = Facts {
        stamps: vec![
            Stamp::of(head_path.clone()),
            Stamp::of(config_path.clone()),
            Stamp::of(c.common_dir.join("packed-refs")),
        ],
        ..Facts::default()
    };
    if let Some(head) = small_file(&head_path, MAX_SMALL) {
        let head = head.trim();
        match head.strip_prefix("ref:") {
            Some(name) => {
                let name = name.trim();
                facts.branch = name
                    .strip_prefix("refs/heads/")
                    // A reftable repository's HEAD names this placeholder.
                    .filter(|b| !b.is_empty() && *b != ".invalid")
                    .map(str::to_string);
                if facts.branch.is_some() {
                    facts.revision = resolve(c, name, 0, &mut facts.stamps);
                }
            }
            None if is_object_id(head) => facts.revision = Some(head.to_string()),
            None => {}
        }
    }
    let GitConfig { origin_url, email } = gitconfig::read(&config_path, Some(&c.git_dir), home);
    facts.repository = origin_url.as_deref().and_then(web_address);
    facts.email = email.filter(|e| !e.trim().is_empty());
    facts
}

/// The commit `name` points at: its loose file in the worktree's folder or the shared one,
/// then `packed-refs`. The loose file looked at is stamped, so a commit to the branch shows.
fn resolve(c: &Checkout, name: &str, depth: usize, stamps: &mut Vec<Stamp>) -> Option<String> {
    if depth > MAX_SYMREF || !safe_ref(name) {
        return None;
    }
    for dir in [&c.git_dir, &c.common_dir] {
        let path = dir.join(name);
        let Some(text) = small_file(&path, MAX_SMALL) else {
            continue;
        };
        stamps.push(Stamp::of(path));
        let text = text.trim();
        return match text.strip_prefix("ref:") {
            Some(next) => resolve(c, next.trim(), depth + 1, stamps),
            None => is_object_id(text).then(|| text.to_string()),
        };
    }
    // Not loose: its ref file, once written, is what a later read must notice.
    stamps.push(Stamp::of(c.common_dir.join(name)));
    let packed = small_file(&c.common_dir.join("packed-refs"), MAX_PACKED)?;
    packed
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('^'))
        .filter_map(|l| l.split_once(' '))
        .find(|(_, r)| r.trim() == name)
        .map(|(id, _)| id.to_string())
        .filter(|id| is_object_id(id))
}

/// A ref name that stays inside the git folder.
fn safe_ref(name: &str) -> bool {
    name.starts_with("refs/")
        && Path::new(name)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

/// A SHA-1 or SHA-256 object id.
fn is_object_id(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A remote as the address a browser opens (`vcs.repository.url.full`): `https://host/path`,
/// without user, password or token, query or fragment, and without `.git`. SSH remotes
/// (`git@host:o/r.git`, `ssh://...`) become the host's https address; a local path, which
/// no browser opens, gives none.
pub(super) fn web_address(remote: &str) -> Option<String> {
    let remote = remote.trim();
    let (scheme, rest) = match remote.split_once("://") {
        Some((s, rest)) => match s.to_ascii_lowercase().as_str() {
            "https" => ("https", rest),
            "http" => ("http", rest),
            "ssh" | "git" | "git+ssh" | "ssh+git" => ("ssh", rest),
            _ => return None,
        },
        None => {
            // `[user@]host:path`, git's scp-like form; a path with a colon after a slash
            // is a local one.
            let colon = remote.find(':')?;
            if remote[..colon].contains('/') || remote.starts_with('/') {
                return None;
            }
            ("scp", remote)
        }
    };
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    // Whatever precedes the last `@` is credentials, however odd their characters.
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    let (host, path) = if scheme == "scp" {
        rest.split_once(':')?
    } else {
        rest.split_once('/').unwrap_or((rest, ""))
    };
    let host = match scheme {
        // The port of an SSH remote is not the web server's.
        "ssh" | "scp" => strip_port(host),
        _ => host,
    };
    if host.is_empty() || host.contains(['\\', ' ']) {
        return None;
    }
    let path = path.trim_matches('/');
    let path = path
        .strip_suffix(".git")
        .unwrap_or(path)
        .trim_end_matches('/');
    let scheme = if scheme == "http" { "http" } else { "https" };
    Some(if path.is_empty() {
        format!("{scheme}://{host}")
    } else {
        format!("{scheme}://{host}/{path}")
    })
}

fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.split_inclusive(']').next().unwrap_or(host);
    }
    host.split(':').next().unwrap_or(host)
}
