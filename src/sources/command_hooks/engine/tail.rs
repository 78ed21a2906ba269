//! Reading an agent's append-only JSONL file from where the last read stopped: whole lines
//! only, in bounded memory however large the file or a line, written once for every agent.

use super::files::{FileCursor, Transcripts};

/// How much of a file one read takes at most: a file grown by more is read in steps.
const CHUNK: usize = 1 << 20;
/// The longest line kept: a longer one (a tool's huge output) is skipped whole, counted.
pub(crate) const MAX_LINE: usize = 8 << 20;

/// Where one file has been read to, and whether a line too long to keep is being skipped.
#[derive(Debug, Default, Clone)]
pub(crate) struct Tail {
    pub cursor: FileCursor,
    /// Inside a line longer than [`MAX_LINE`]: bytes up to its newline are not a line.
    skipping: bool,
    /// Lines skipped for their length, so far.
    pub skipped: u64,
}

impl Tail {
    /// A tail that goes on from `cursor` (a resume point an earlier daemon saved).
    pub fn resumed(cursor: FileCursor) -> Tail {
        Tail {
            cursor,
            ..Tail::default()
        }
    }

    /// Hands `each` every whole line `path` gained since the last read (without its newline),
    /// oldest first. A line still being written is left for the next read; another file
    /// under the path, or another path, is read from its start.
    pub fn read(&mut self, path: &str, files: &mut dyn Transcripts, mut each: impl FnMut(&[u8])) {
        let mut offset = self.cursor.offset_in(path, files);
        if offset != self.cursor.offset || self.cursor.path != path {
            self.skipping = false;
        }
        // The bytes from `offset` on that are not a whole line yet (none while skipping).
        let mut carried: Vec<u8> = Vec::new();
        loop {
            let chunk = files.read_at_most(path, offset + carried.len() as u64, CHUNK);
            let mut rest = &chunk[..];
            while let Some(n) = rest.iter().position(|&b| b == b'\n') {
                let line = &rest[..n];
                let whole = carried.len() + n + 1;
                if std::mem::take(&mut self.skipping) {
                    // The end of a line too long to keep.
                } else if whole > MAX_LINE + 1 {
                    // Too long, though its end came in the same read as its start.
                    self.skipped += 1;
                } else if carried.is_empty() {
                    each(line);
                } else {
                    carried.extend_from_slice(line);
                    each(&carried);
                }
                offset += whole as u64;
                carried.clear();
                rest = &rest[n + 1..];
            }
            if self.skipping {
                offset += rest.len() as u64;
            } else if carried.len() + rest.len() > MAX_LINE {
                // A line longer than any kept: skipped up to its newline, counted once.
                self.skipping = true;
                self.skipped += 1;
                offset += (carried.len() + rest.len()) as u64;
                carried.clear();
            } else {
                carried.extend_from_slice(rest);
            }
            if chunk.len() < CHUNK {
                break;
            }
        }
        self.cursor = FileCursor::at(path, offset, files);
    }
}

#[cfg(test)]
mod tests;
