//! The stream source: a byte stream (stdin, a recorded file) split into numbered lines, in
//! chunks, for the assemble thread to decode.
//!
//! The reader hands on every complete line it has after each `read`, so a busy stream travels
//! in large chunks (one channel send per read, not per line) while a quiet one, a host writing
//! an event a second, is passed on at once. A line longer than the cap is never buffered whole:
//! its bytes are counted and dropped, and its number is reported as an error, so a hostile or
//! broken producer cannot make the exporter's memory grow.

use std::io::{self, BufRead, BufReader, Read};
use std::sync::Arc;

pub use crate::protocol::LineChunk;

const READ_BUFFER: usize = 256 * 1024;

/// What a finished read saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadSummary {
    pub lines: u64,
    pub bytes: u64,
}

/// Reads `input` to its end, handing chunks of whole lines to `emit`. Stops early, without an
/// error, when `emit` returns `false` (the pipeline is gone).
pub fn read_lines<R: Read>(
    source: Arc<str>,
    input: R,
    max_line: usize,
    mut emit: impl FnMut(LineChunk) -> bool,
) -> io::Result<ReadSummary> {
    let mut reader = BufReader::with_capacity(READ_BUFFER, input);
    let mut summary = ReadSummary::default();
    // The start of a line that the last read did not finish.
    let mut partial: Vec<u8> = Vec::new();
    let mut partial_len = 0usize;
    let mut discarding = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut chunk = LineChunk {
            source: source.clone(),
            first_line: summary.lines + 1,
            data: Vec::with_capacity(buf.len() + partial.len() + 1),
            oversize: Vec::new(),
            max_line,
        };
        if buf.is_empty() {
            // End of input: a last line without a newline still counts.
            if partial_len > 0 {
                summary.lines += 1;
                end_line(
                    &mut chunk,
                    &partial,
                    &[],
                    partial_len,
                    discarding,
                    summary.lines,
                );
            }
            if !chunk.data.is_empty() {
                emit(chunk);
            }
            return Ok(summary);
        }
        let mut start = 0;
        for newline in memchr::memchr_iter(b'\n', buf) {
            let piece = &buf[start..newline];
            summary.lines += 1;
            end_line(
                &mut chunk,
                &partial,
                piece,
                partial_len + piece.len(),
                discarding,
                summary.lines,
            );
            partial.clear();
            partial_len = 0;
            discarding = false;
            start = newline + 1;
        }
        let rest = &buf[start..];
        partial_len += rest.len();
        if !discarding {
            if partial_len > max_line {
                discarding = true;
                partial = Vec::new();
            } else {
                partial.extend_from_slice(rest);
            }
        }
        let consumed = buf.len();
        summary.bytes += consumed as u64;
        reader.consume(consumed);
        if !chunk.data.is_empty() && !emit(chunk) {
            return Ok(summary);
        }
    }
}

fn end_line(
    chunk: &mut LineChunk,
    partial: &[u8],
    piece: &[u8],
    len: usize,
    discarding: bool,
    number: u64,
) {
    if discarding || len > chunk.max_line {
        chunk.oversize.push((number, len));
    } else {
        chunk.data.extend_from_slice(partial);
        chunk.data.extend_from_slice(piece);
    }
    chunk.data.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::DecodeError;

    /// Feeds `input` through a reader that returns at most `step` bytes per read.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn collect(input: &[u8], step: usize, max: usize) -> Vec<(u64, Result<String, DecodeError>)> {
        let mut out = Vec::new();
        read_lines("t".into(), Trickle { data: input, step }, max, |chunk| {
            for (n, line) in chunk.lines() {
                out.push((n, line.map(|l| String::from_utf8(l.to_vec()).unwrap())));
            }
            true
        })
        .unwrap();
        out
    }

    #[test]
    fn numbers_lines_across_any_read_size_and_rejects_long_ones() {
        let input = b"one\n\ntwo\r\n0123456789ABCDEF\nthree\nlast";
        for step in [1, 2, 3, 7, 1000] {
            let got = collect(input, step, 10);
            assert_eq!(
                got,
                vec![
                    (1, Ok("one".into())),
                    (3, Ok("two".into())),
                    (4, Err(DecodeError::TooLong { len: 16, max: 10 })),
                    (5, Ok("three".into())),
                    (6, Ok("last".into())),
                ],
                "read size {step}"
            );
        }
    }

    #[test]
    fn an_endless_line_is_not_buffered() {
        // 8 MiB without a newline, with a 1 KiB cap: only the error comes out.
        let big = vec![b'x'; 8 << 20];
        let got = collect(&big, 64 * 1024, 1024);
        assert_eq!(
            got,
            vec![(
                1,
                Err(DecodeError::TooLong {
                    len: 8 << 20,
                    max: 1024
                })
            )]
        );
    }
}
