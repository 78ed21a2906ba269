//! The journal's promises: whole lines under concurrent hooks, private files, resume points
//! that are only their own journal's.

use super::*;
use crate::sources::command_hooks::engine::files::FileCursor;

#[test]
fn concurrent_appends_never_interleave() {
    let dir = std::env::temp_dir().join(format!("albedo-otel-journal-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let big = format!("{{\"x\":\"{}\"}}", "y".repeat(200_000));
    std::thread::scope(|s| {
        for t in 0..8 {
            let (dir, big) = (&dir, &big);
            s.spawn(move || {
                for i in 0..20 {
                    let payload = if i % 2 == 0 {
                        big.clone()
                    } else {
                        format!("{{\"t\":{t},\"i\":{i}}}")
                    };
                    let stamp = Stamp {
                        received_ms: 1000 + i,
                        host: Some(ProcessId {
                            pid: 7,
                            start: Some(99),
                            ns: Some(4026531836),
                        }),
                        handoff: &HandOff::default(),
                        agent: None,
                    };
                    append(dir, "same session", &payload, &stamp).unwrap();
                }
            });
        }
    });
    let journals = list(&dir);
    assert_eq!(journals.len(), 1);
    let (bytes, end) = read_from(&journals[0], 0, u64::MAX).unwrap();
    assert_eq!(end as usize, bytes.len());
    let lines: Vec<_> = bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(lines.len(), 160);
    for l in lines {
        let e: Entry = serde_json::from_slice(l).expect("every line is whole");
        assert!(e.received_ms >= 1000);
        assert_eq!(
            e.host(),
            Some(ProcessId {
                pid: 7,
                start: Some(99),
                ns: Some(4026531836)
            })
        );
    }
    let host = Some(ProcessId {
        pid: 7,
        start: Some(99),
        ns: None,
    });
    save_resume(
        &journals[0],
        Resume {
            offset: 7,
            transcript: FileCursor {
                path: "/t/transcript.jsonl".into(),
                offset: 9,
                identity: Some(4),
            },
            host,
            file: None,
            before: None,
            seed: None,
        },
    )
    .unwrap();
    let loaded = load_resume(&journals[0]);
    assert_eq!(
        (loaded.offset, loaded.transcript.offset, loaded.host),
        (7, 9, host)
    );
    assert_eq!(loaded.transcript.path, "/t/transcript.jsonl");
    assert_eq!(loaded.transcript.identity, Some(4));
    // A state an older version wrote: the transcript's offset alone.
    let older: Resume = serde_json::from_str(r#"{"offset":7,"transcript":9}"#).unwrap();
    assert_eq!((older.offset, older.transcript.offset), (7, 9));
    fs::remove_dir_all(&dir).unwrap();
}

/// A state left behind by a journal removed at its session's end (the daemon died between
/// the two removals) is not taken for a new journal's of the same name.
#[test]
fn a_state_is_only_its_own_journals() {
    let dir = std::env::temp_dir().join(format!("albedo-otel-journal-id-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let stamp = Stamp {
        received_ms: 1,
        host: None,
        handoff: &HandOff::default(),
        agent: None,
    };
    append(&dir, "s", "{}", &stamp).unwrap();
    let path = dir.join(journal_name("s"));
    let resume = Resume {
        offset: fs::metadata(&path).unwrap().len(),
        ..Resume::default()
    };
    save_resume(&path, resume.clone()).unwrap();
    assert_eq!(load_resume(&path).offset, resume.offset);
    // The journal is removed and the state is not (the crash); a hook makes a new one,
    // which a file kept open meanwhile keeps from taking the old inode.
    let keep = File::open(&path).unwrap();
    fs::remove_file(&path).unwrap();
    append(&dir, "s", "{}", &stamp).unwrap();
    drop(keep);
    #[cfg(unix)]
    assert_eq!(
        load_resume(&path).offset,
        0,
        "the new journal is read from its start"
    );
    remove(&path).unwrap();
    assert!(!state_path(&path).exists() && !path.exists());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn names_are_safe_and_distinct() {
    assert_ne!(journal_name("a/b"), journal_name("a_b"));
    assert!(journal_name("../../etc/passwd").starts_with("______etc_passwd-"));
}

/// Journals hold tool arguments and outputs before any scrubbing: only their owner reads.
#[cfg(unix)]
#[test]
fn journals_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!(
        "albedo-otel-journal-mode-{}/hooks",
        std::process::id()
    ));
    let _ = fs::remove_dir_all(dir.parent().unwrap());
    let stamp = Stamp {
        received_ms: 1,
        host: None,
        handoff: &HandOff::default(),
        agent: None,
    };
    append(&dir, "s", "{}", &stamp).unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&list(&dir)[0]), 0o600);
    fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

#[test]
fn a_journal_with_lines_not_yet_read_is_not_removed() {
    let dir = std::env::temp_dir().join(format!("albedo-otel-journal-rm-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let stamp = Stamp {
        received_ms: 1,
        host: None,
        handoff: &HandOff::default(),
        agent: Some("gemini"),
    };
    append(&dir, "s", "{}", &stamp).unwrap();
    let path = dir.join(journal_name("s"));
    let read = fs::metadata(&path).unwrap().len();
    append(&dir, "s", "{}", &stamp).unwrap();
    assert!(
        !remove_if_read(&path, read).unwrap(),
        "a line came after the read"
    );
    assert!(fs::read_to_string(&path)
        .unwrap()
        .contains(r#""agent":"gemini""#));
    let all = fs::metadata(&path).unwrap().len();
    assert!(remove_if_read(&path, all).unwrap());
    assert!(!path.exists());
    // A hook that appends after the removal makes a new journal rather than writing
    // into the removed one.
    append(&dir, "s", "{}", &stamp).unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap().lines().count(), 1);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn reads_come_in_pieces_of_whole_lines() {
    let dir = std::env::temp_dir().join(format!("albedo-otel-chunks-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join("j");
    let long = "x".repeat(100);
    fs::write(&path, format!("a\nb\n{long}\nc\npartial")).unwrap();
    assert_eq!(read_from(&path, 0, 5).unwrap(), (b"a\nb\n".to_vec(), 4));
    // A line longer than the limit comes whole, with the rest of the piece it ends in
    // ("c\n" here), and no more: "partial" has no newline yet.
    let (lines, end) = read_from(&path, 4, 5).unwrap();
    assert_eq!((lines.len(), end), (103, 107));
    assert_eq!(read_from(&path, 4, 101).unwrap().1, 105);
    assert_eq!(
        read_from(&path, 105, 1 << 20).unwrap(),
        (b"c\n".to_vec(), 107)
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// A daemon compacting a journal after each read, while eight hooks append to it: every line
/// is read once, none lost to the file that was replaced, none read twice (issue 37, item 7).
#[cfg(unix)]
#[test]
fn compacting_while_hooks_append_loses_no_line() {
    let dir = std::env::temp_dir().join(format!("albedo-otel-compact-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let mut seen = std::collections::HashSet::new();
    let mut compactions = 0;
    std::thread::scope(|s| {
        for t in 0..8 {
            let (dir, done) = (&dir, &done);
            s.spawn(move || {
                for i in 0..200 {
                    let stamp = Stamp {
                        received_ms: i,
                        host: None,
                        handoff: &HandOff::default(),
                        agent: None,
                    };
                    let payload =
                        format!("{{\"t\":{t},\"i\":{i},\"pad\":\"{}\"}}", "x".repeat(500));
                    append(dir, "compacted", &payload, &stamp).unwrap();
                }
                done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            });
        }
        let path = dir.join(journal_name("compacted"));
        let mut offset = 0;
        loop {
            let finished = done.load(std::sync::atomic::Ordering::SeqCst) == 8;
            let Ok((bytes, end)) = read_from(&path, offset, u64::MAX) else {
                continue;
            };
            for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let e: Entry = serde_json::from_slice(line).expect("a whole line");
                let v: serde_json::Value = serde_json::from_str(e.payload.get()).unwrap();
                assert!(
                    seen.insert((v["t"].as_u64().unwrap(), v["i"].as_u64().unwrap())),
                    "read twice: {v}"
                );
            }
            let resume = Resume {
                offset: end,
                ..Resume::default()
            };
            offset = compact(&path, resume).unwrap().offset;
            compactions += 1;
            assert_eq!(load_resume(&path).offset, offset);
            if finished && read_from(&path, offset, u64::MAX).unwrap().0.is_empty() {
                break;
            }
        }
    });
    assert_eq!(seen.len(), 8 * 200, "after {compactions} compactions");
    assert_eq!(list(&dir).len(), 1, "no other file is left");
    let left = fs::metadata(dir.join(journal_name("compacted")))
        .unwrap()
        .len();
    assert_eq!(left, 0, "everything read is gone from the journal");
    fs::remove_dir_all(&dir).unwrap();
}

/// A crash after the compacted file's state was saved but before it took the journal's name:
/// the state still applies to the old file, at the offset it had in it.
#[cfg(unix)]
#[test]
fn a_compaction_cut_short_leaves_the_old_file_at_its_offset() {
    use std::os::unix::fs::MetadataExt;
    let dir = std::env::temp_dir().join(format!("albedo-otel-cut-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join(journal_name("cut"));
    fs::write(&path, "{\"a\":1}\n{\"b\":2}\n").unwrap();
    let old = fs::metadata(&path).unwrap().ino();
    let state = Resume {
        offset: 0,
        file: Some(old + 1),
        before: Some((old, 8)),
        ..Resume::default()
    };
    fs::write(state_path(&path), serde_json::to_vec(&state).unwrap()).unwrap();
    assert_eq!(load_resume(&path).offset, 8);
    // The rename happened: the new file, from its start.
    let tail = dir.join("tail");
    fs::write(&tail, "{\"b\":2}\n").unwrap();
    let state = Resume {
        file: Some(fs::metadata(&tail).unwrap().ino()),
        ..state
    };
    fs::write(state_path(&path), serde_json::to_vec(&state).unwrap()).unwrap();
    fs::rename(&tail, &path).unwrap();
    assert_eq!(load_resume(&path).offset, 0);
    fs::remove_dir_all(&dir).unwrap();
}
