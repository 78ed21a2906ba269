//! The agents' own transcripts and logs, which adapters read beside the hooks' payloads: the
//! one I/O an adapter does ([`Transcripts`], so that the adapter itself stays pure), and where
//! a reader stands in such a file ([`FileCursor`]), kept in the resume state so that a later
//! daemon reads on from there, and only while it is the same file. A leaf: every agent's
//! folder uses it, and it uses none of them.

use serde::{Deserialize, Deserializer, Serialize};

/// Reads what was appended to a transcript or log since `offset`.
pub trait Transcripts {
    fn read_from(&mut self, path: &str, offset: u64) -> Vec<u8>;

    /// At most `max` bytes of the file at `path` from `offset` (the engine's tail reader
    /// reads in steps of this, so that memory stays bounded).
    fn read_at_most(&mut self, path: &str, offset: u64, max: usize) -> Vec<u8> {
        let mut bytes = self.read_from(path, offset);
        bytes.truncate(max);
        bytes
    }

    /// The identity of the file at `path` (its inode, on Unix), where there is one: a file
    /// replaced under the same name (a log rotated, a session started anew) is another file,
    /// whose bytes at an old offset mean nothing.
    fn identity(&mut self, path: &str) -> Option<u64> {
        let _ = path;
        None
    }
}

/// No transcripts: for an agent whose payloads name none.
pub struct NoTranscripts;

impl Transcripts for NoTranscripts {
    fn read_from(&mut self, _: &str, _: u64) -> Vec<u8> {
        Vec::new()
    }
}

/// Transcripts on the local disk.
pub struct Files;

impl Transcripts for Files {
    fn read_from(&mut self, path: &str, offset: u64) -> Vec<u8> {
        use std::io::{Read, Seek, SeekFrom};
        let Ok(mut f) = std::fs::File::open(path) else {
            return Vec::new();
        };
        let mut buf = Vec::new();
        if f.seek(SeekFrom::Start(offset)).is_ok() {
            let _ = f.read_to_end(&mut buf);
        }
        buf
    }

    fn read_at_most(&mut self, path: &str, offset: u64, max: usize) -> Vec<u8> {
        use std::io::{Read, Seek, SeekFrom};
        let Ok(mut f) = std::fs::File::open(path) else {
            return Vec::new();
        };
        let mut buf = Vec::new();
        if f.seek(SeekFrom::Start(offset)).is_ok() {
            let _ = f.take(max as u64).read_to_end(&mut buf);
        }
        buf
    }

    #[cfg(unix)]
    fn identity(&mut self, path: &str) -> Option<u64> {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| m.ino())
    }
}

/// How far a reader got in one file: its path, the offset of the first byte not yet taken,
/// and the file's identity when it was read (see [`Transcripts::identity`]).
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct FileCursor {
    pub path: String,
    pub offset: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<u64>,
}

impl FileCursor {
    /// Where `path` is read on from: this cursor's offset if it is about that very file, else
    /// its start. A cursor that names no path (a state written before cursors named their
    /// file) or no identity trusts its offset, as it was trusted then.
    pub fn offset_in(&self, path: &str, files: &mut dyn Transcripts) -> u64 {
        if !self.path.is_empty() && self.path != path {
            return 0;
        }
        match (self.identity, files.identity(path)) {
            (Some(was), Some(is)) if was != is => 0,
            _ => self.offset,
        }
    }

    /// The cursor after reading `path` up to `offset`.
    pub fn at(path: &str, offset: u64, files: &mut dyn Transcripts) -> FileCursor {
        FileCursor {
            path: path.to_string(),
            offset,
            identity: files.identity(path),
        }
    }
}

/// A saved cursor, as this version writes it or as an older one did: the offset alone.
impl<'de> Deserialize<'de> for FileCursor {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Full {
            #[serde(default)]
            path: String,
            #[serde(default)]
            offset: u64,
            #[serde(default)]
            identity: Option<u64>,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Saved {
            Offset(u64),
            Full(Full),
        }
        Ok(match Saved::deserialize(d)? {
            Saved::Offset(offset) => FileCursor {
                offset,
                ..FileCursor::default()
            },
            Saved::Full(f) => FileCursor {
                path: f.path,
                offset: f.offset,
                identity: f.identity,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One file per path, with the identity a test gives it.
    struct Disk(Vec<(&'static str, u64)>);

    impl Transcripts for Disk {
        fn read_from(&mut self, _: &str, _: u64) -> Vec<u8> {
            Vec::new()
        }
        fn identity(&mut self, path: &str) -> Option<u64> {
            self.0.iter().find(|(p, _)| *p == path).map(|(_, id)| *id)
        }
    }

    #[test]
    fn a_cursor_holds_only_for_its_own_file() {
        let mut disk = Disk(vec![("/t/a.jsonl", 7)]);
        let cursor = FileCursor::at("/t/a.jsonl", 120, &mut disk);
        assert_eq!(cursor.identity, Some(7));
        assert_eq!(cursor.offset_in("/t/a.jsonl", &mut disk), 120);
        // Another path, or the same path now another file: from the start.
        assert_eq!(cursor.offset_in("/t/b.jsonl", &mut disk), 0);
        let mut replaced = Disk(vec![("/t/a.jsonl", 8)]);
        assert_eq!(cursor.offset_in("/t/a.jsonl", &mut replaced), 0);
        // Where identity is unknown (not Unix), the path decides.
        assert_eq!(cursor.offset_in("/t/a.jsonl", &mut NoTranscripts), 120);
    }

    #[test]
    fn an_older_state_holds_the_offset_alone() {
        let old: FileCursor = serde_json::from_str("4096").unwrap();
        assert_eq!(old.offset_in("/any/path", &mut NoTranscripts), 4096);
        let new = FileCursor {
            path: "/t/a.jsonl".into(),
            offset: 9,
            identity: Some(3),
        };
        let text = serde_json::to_string(&new).unwrap();
        assert_eq!(serde_json::from_str::<FileCursor>(&text).unwrap(), new);
        let bad = serde_json::from_str::<FileCursor>(r#""nine""#);
        assert!(bad.is_err());
    }
}
