//! The tail reader on files held in memory: whole lines only, each once, in bounded reads.

use super::super::files::{FileCursor, Transcripts};
use super::{Tail, CHUNK, MAX_LINE};

/// One file, its identity, and the size of every read asked of it.
struct Disk {
    text: Vec<u8>,
    identity: u64,
    reads: Vec<usize>,
}

impl Transcripts for Disk {
    fn read_from(&mut self, _: &str, offset: u64) -> Vec<u8> {
        self.text[(offset as usize).min(self.text.len())..].to_vec()
    }
    fn read_at_most(&mut self, path: &str, offset: u64, max: usize) -> Vec<u8> {
        let mut bytes = self.read_from(path, offset);
        bytes.truncate(max);
        self.reads.push(bytes.len());
        bytes
    }
    fn identity(&mut self, _: &str) -> Option<u64> {
        Some(self.identity)
    }
}

fn disk(text: &str) -> Disk {
    Disk {
        text: text.as_bytes().to_vec(),
        identity: 1,
        reads: Vec::new(),
    }
}

fn lines(tail: &mut Tail, disk: &mut Disk) -> Vec<String> {
    let mut got = Vec::new();
    tail.read("/s.jsonl", disk, |l| {
        got.push(String::from_utf8_lossy(l).into_owned())
    });
    got
}

#[test]
fn each_whole_line_comes_once_and_a_line_being_written_waits() {
    let mut d = disk("a\nb\nhalf");
    let mut tail = Tail::default();
    assert_eq!(lines(&mut tail, &mut d), ["a", "b"]);
    assert_eq!(tail.cursor.offset, 4);
    d.text.extend_from_slice(b" done\nc\n");
    assert_eq!(lines(&mut tail, &mut d), ["half done", "c"]);
    assert!(lines(&mut tail, &mut d).is_empty());
    assert_eq!(tail.cursor.offset, d.text.len() as u64);
}

#[test]
fn a_resumed_tail_reads_on_and_a_replaced_file_from_its_start() {
    let mut d = disk("a\nb\n");
    let mut first = Tail::default();
    lines(&mut first, &mut d);
    d.text.extend_from_slice(b"c\n");
    let mut resumed = Tail::resumed(first.cursor.clone());
    assert_eq!(lines(&mut resumed, &mut d), ["c"]);
    // The same name, another file: what it holds is new.
    let mut replaced = disk("x\n");
    replaced.identity = 2;
    assert_eq!(lines(&mut resumed, &mut replaced), ["x"]);
    let elsewhere = FileCursor {
        path: "/other.jsonl".into(),
        ..first.cursor
    };
    assert_eq!(
        lines(&mut Tail::resumed(elsewhere), &mut disk("y\n")),
        ["y"]
    );
}

#[test]
fn a_line_too_long_to_keep_is_skipped_and_counted_and_reads_stay_bounded() {
    let long = "x".repeat(MAX_LINE + CHUNK + 10);
    let text = format!("a\n{long}\nb\n{}\nc\n", "y".repeat(CHUNK * 2));
    let mut d = disk(&text);
    let mut tail = Tail::default();
    let got = lines(&mut tail, &mut d);
    assert_eq!(got.len(), 4, "a, the 2 MiB line, b and c");
    assert_eq!((got[0].as_str(), got[1].as_str()), ("a", "b"));
    assert_eq!(got[2].len(), CHUNK * 2);
    assert_eq!(got[3], "c");
    assert_eq!(tail.skipped, 1);
    assert_eq!(tail.cursor.offset, text.len() as u64);
    assert!(d.reads.iter().all(|&n| n <= CHUNK), "{:?}", d.reads);
}

#[test]
fn a_long_line_still_being_written_is_skipped_to_its_end_across_reads() {
    let mut d = disk(&format!("a\n{}", "x".repeat(MAX_LINE + 1)));
    let mut tail = Tail::default();
    assert_eq!(lines(&mut tail, &mut d), ["a"]);
    d.text.extend_from_slice(b"xxxx\nb\n");
    assert_eq!(lines(&mut tail, &mut d), ["b"]);
    assert_eq!(tail.skipped, 1);
}

#[test]
fn a_line_just_over_the_limit_is_skipped_even_when_one_read_holds_it_whole() {
    let text = format!("{}\nz\n", "x".repeat(MAX_LINE + 100));
    let mut d = disk(&text);
    let mut tail = Tail::default();
    assert_eq!(lines(&mut tail, &mut d), ["z"]);
    assert_eq!(tail.skipped, 1);
}
