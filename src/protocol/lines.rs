//! Protocol lines as they travel from a reader to the assemble thread: numbered, in chunks, an
//! over-long line standing as its error. Below both the stream source that makes chunks and
//! the pipeline that decodes them.

use std::sync::Arc;

use super::DecodeError;

/// Consecutive complete lines from one source.
#[derive(Debug, Clone)]
pub struct LineChunk {
    /// Where the lines come from (`stdin`, a file name), for error messages.
    pub source: Arc<str>,
    /// The number (1-based) of the first line in `data`.
    pub first_line: u64,
    /// The lines, each ending in `\n`. An over-long line stands here as an empty line.
    pub data: Vec<u8>,
    /// Over-long lines: their number and their full length in bytes.
    pub oversize: Vec<(u64, usize)>,
    /// Cap that `oversize` lines broke, for the error message.
    pub max_line: usize,
}

impl LineChunk {
    /// Each non-blank line with its number; an over-long line as its error.
    pub fn lines(&self) -> impl Iterator<Item = (u64, Result<&[u8], DecodeError>)> + '_ {
        let mut oversize = self.oversize.iter().peekable();
        let mut number = self.first_line;
        let mut start = 0;
        // `data` ends in a newline, so every line, the last included, is followed by one.
        memchr::memchr_iter(b'\n', &self.data).filter_map(move |end| {
            let line = &self.data[start..end];
            start = end + 1;
            let n = number;
            number += 1;
            if let Some(&&(bad, len)) = oversize.peek() {
                if bad == n {
                    oversize.next();
                    return Some((
                        n,
                        Err(DecodeError::TooLong {
                            len,
                            max: self.max_line,
                        }),
                    ));
                }
            }
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                return None;
            }
            Some((n, Ok(line)))
        })
    }

    /// How many lines (blank ones included) the chunk holds.
    pub fn line_count(&self) -> u64 {
        memchr::memchr_iter(b'\n', &self.data).count() as u64
    }
}
