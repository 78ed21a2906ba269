//! Kimi Code's history from its own files, for `import`: each session's main `wire.jsonl`
//! under `$KIMI_CODE_HOME/sessions/` (`~/.kimi-code` by default) read by the live route's own
//! wire reader, turn by turn (`turn.prompt` to `turn.ended`), so a turn, its calls and its model
//! calls are what the hooks would have made of it; each sub-agent's turn is read from its own
//! wire beside it, under the `Agent` call that started it. The one I/O: the sub-agents' wires.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::wire::Reader;
use super::{ends, Turn, AGENT};
use crate::protocol::{Event, Record, SessionInfo};
use crate::sources::command_hooks::engine::files::{Files, Transcripts};
use crate::sources::command_hooks::engine::records::record;
use crate::sources::command_hooks::engine::open_turn::Why;
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
    /// Bytes of the main wire handed to the reader so far.
    handed: usize,
}

impl Transcripts for Wires<'_> {
    fn read_from(&mut self, path: &str, offset: u64) -> Vec<u8> {
        self.read_at_most(path, offset, usize::MAX)
    }

    fn read_at_most(&mut self, path: &str, offset: u64, max: usize) -> Vec<u8> {
        if path != self.path {
            return Files.read_at_most(path, offset, max);
        }
        let rest = &self.bytes[(offset as usize).min(self.bytes.len())..];
        let handed = &rest[..max.min(rest.len())];
        self.handed += handed.len();
        handed.to_vec()
    }
}

/// What a session's wires say, as the records the live route would have made.
pub fn records(path: &Path, bytes: &[u8], _: Reading) -> Vec<Record<'static>> {
    read(path, bytes).0
}

/// [`records`], and how many bytes of the main wire its reader was handed.
fn read(path: &Path, bytes: &[u8]) -> (Vec<Record<'static>>, usize) {
    let mut out = Vec::new();
    let Some(dir) = path.parent().and_then(Path::parent).and_then(Path::parent) else {
        return (out, 0);
    };
    let Some(sid) = dir.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return (out, 0);
    };
    let Some(first) = first_time(bytes) else {
        return (out, 0);
    };
    let info = SessionInfo {
        at_ms: first,
        agent: Some(Cow::Borrowed(AGENT)),
        ..SessionInfo::default()
    };
    out.push(record(&sid, Event::Session(info)));
    let (path, dir) = (path.to_string_lossy(), dir.to_string_lossy());
    let mut files = Wires {
        path: &path,
        bytes,
        handed: 0,
    };
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
            ends::end(ended, &sid, at, ends::why_of(reason), &mut out);
            last = last.max(at);
        }
        if reader.offset == before {
            break;
        }
    }
    if let Some(open) = turn {
        ends::end(open, &sid, last, Why::Unseen, &mut out);
    }
    out.push(record(&sid, Event::Closed { at_ms: last }));
    (out, files.handed)
}

/// The time of the wire's first timed line.
fn first_time(bytes: &[u8]) -> Option<u64> {
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
        .find_map(|v| v["time"].as_u64())
}

#[cfg(test)]
mod tests {
    use super::super::wire::WINDOW;
    use super::*;

    /// A session of `turns` turns, each a prompt, a line of `pad` bytes the reader passes
    /// over, and its end.
    fn wire(turns: u64, pad: usize) -> String {
        let mut w = String::new();
        for t in 0..turns {
            let at = 1_000_000 + t * 10;
            w += &format!(
                "{{\"type\":\"turn.prompt\",\"time\":{at},\"input\":\"turn {t:05}\"}}\n"
            );
            w += &format!(
                "{{\"type\":\"note\",\"time\":{},\"text\":\"{}\"}}\n",
                at + 1,
                "x".repeat(pad)
            );
            w += &format!(
                "{{\"type\":\"turn.ended\",\"time\":{},\"reason\":\"end_turn\"}}\n",
                at + 2
            );
        }
        w
    }

    fn prompts(out: &[Record<'static>]) -> usize {
        out.iter()
            .filter(|r| matches!(r.event, Event::Prompted { .. }))
            .count()
    }

    #[test]
    fn a_long_session_is_read_in_time_linear_in_its_length_every_turn_kept() {
        let path = Path::new("/h/.kimi-code/sessions/wd/session_1/agents/main/wire.jsonl");
        // Small turns: each turn's end used to hand the reader the whole rest again, so twice
        // the turns were four times the bytes.
        let (short, long) = (wire(4_000, 20), wire(8_000, 20));
        let (out, handed_short) = read(path, short.as_bytes());
        assert_eq!(prompts(&out), 4_000);
        let (out, handed_long) = read(path, long.as_bytes());
        assert_eq!(prompts(&out), 8_000);
        assert!(
            10 * handed_long <= 21 * handed_short
                && handed_long <= 3 * long.len() + 8_000 * WINDOW,
            "{handed_short} bytes handed for {} turns, {handed_long} for twice as many ({} bytes)",
            4_000,
            long.len()
        );
        // Lines longer than the window are handed whole.
        let w = wire(3, 3 * WINDOW);
        assert_eq!(prompts(&read(path, w.as_bytes()).0), 3);
    }
}
