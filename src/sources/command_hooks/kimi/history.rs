//! Kimi Code's history from its own files, for `import`: each session's main `wire.jsonl`
//! under `$KIMI_CODE_HOME/sessions/` (`~/.kimi-code` by default) read by the live route's own
//! wire reader, turn by turn (`turn.prompt` to `turn.ended`), so a turn, its calls and its model
//! calls are what the hooks would have made of it; each sub-agent's turn is read from its own
//! wire beside it, under the `Agent` call that started it. The one I/O: the sub-agents' wires.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::wire::Reader;
use super::{turns, Turn, AGENT};
use crate::protocol::{Event, Record, SessionInfo};
use crate::sources::command_hooks::files::{Files, Transcripts};
use crate::sources::command_hooks::records::record;
use crate::sources::command_hooks::open_turn::Why;
use crate::sources::command_hooks::spec::{self, Env, Reading};

/// Where Kimi Code keeps its sessions.
pub fn roots(env: Env<'_>) -> Vec<PathBuf> {
    match env("KIMI_CODE_HOME").filter(|h| !h.is_empty()) {
        Some(home) => vec![Path::new(&home).join("sessions")],
        None => spec::under_home(env, ".kimi-code/sessions").into_iter().collect(),
    }
}

/// A session's main wire: `<session>/agents/main/wire.jsonl` (a sub-agent's is read with it).
pub fn is_session(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "wire.jsonl")
        && path.parent().is_some_and(|d| d.ends_with("agents/main"))
}

/// The wire handed in, and the sub-agents' beside it from the disk.
struct Wires<'a> {
    path: &'a str,
    bytes: &'a [u8],
}

impl Transcripts for Wires<'_> {
    fn read_from(&mut self, path: &str, offset: u64) -> Vec<u8> {
        if path == self.path {
            return self.bytes[(offset as usize).min(self.bytes.len())..].to_vec();
        }
        Files.read_from(path, offset)
    }
}

/// What a session's wires say, as the records the live route would have made.
pub fn records(path: &Path, bytes: &[u8], _: Reading) -> Vec<Record<'static>> {
    let mut out = Vec::new();
    let Some(dir) = path.parent().and_then(Path::parent).and_then(Path::parent) else {
        return out;
    };
    let Some(sid) = dir.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return out;
    };
    let Some(first) = first_time(bytes) else {
        return out;
    };
    let info = SessionInfo {
        at_ms: first,
        agent: Some(Cow::Borrowed(AGENT)),
        ..SessionInfo::default()
    };
    out.push(record(&sid, Event::Session(info)));
    let (path, dir) = (path.to_string_lossy(), dir.to_string_lossy());
    let mut files = Wires { path: &path, bytes };
    let mut reader = Reader::new("main", sid.clone(), &dir, &path, 0);
    let mut turn: Option<Turn> = None;
    let mut last = first;
    loop {
        let before = reader.offset;
        // Long after the session: nothing is waited for.
        reader.read(&mut turn, 0, u64::MAX, &mut files, &mut out);
        last = last.max(reader.last_work);
        if let Some((at, reason)) = turn.as_ref().and_then(|t| t.own.ended) {
            let ended = turn.take().expect("a turn that ended");
            turns::end(ended, &sid, at, turns::why_of(reason), &mut out);
            last = last.max(at);
        }
        if reader.offset == before {
            break;
        }
    }
    if let Some(open) = turn {
        turns::end(open, &sid, last, Why::Unseen, &mut out);
    }
    out.push(record(&sid, Event::Closed { at_ms: last }));
    out
}

/// The time of the wire's first timed line.
fn first_time(bytes: &[u8]) -> Option<u64> {
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
        .find_map(|v| v["time"].as_u64())
}
