//! The idle daemon's work does not grow with the journals on disk (issue 27's promise, H2):
//! counted per file on a real daemon run over quiet journals, 1 against 2,000.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::count::{self, Counts};
use super::{run, DaemonConfig, Exit, Lock, Profiles, QUIET_LOOK, REST_CHECK};
use crate::process::ProcessId;
use crate::sources::command_hooks::journal::{self, Resume};

/// A daemon's run until it idles out, over `n` quiet journals (read to their end by an
/// earlier daemon, their agents alive: terminals left open). Returns what it did and for how
/// long it ran.
fn idle_run(n: usize) -> (Counts, Duration) {
    let dir = std::env::temp_dir().join(format!("albedo-otel-idle-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let alive = ProcessId::of(std::process::id());
    for i in 0..n {
        let path = dir.join(format!("quiet-{i:05}-00000000{}", journal::JOURNAL_SUFFIX));
        let line = "{\"a quiet session's\":\"last turn\"}\n".repeat(20);
        std::fs::write(&path, &line).unwrap();
        let resume = Resume {
            offset: line.len() as u64,
            transcript: Default::default(),
            host: alive,
            file: None,
            before: None,
            seed: None,
        };
        // As `journal::save_resume` writes it, without its two thousand fsyncs.
        let mut state = path.clone().into_os_string();
        state.push(".state");
        std::fs::write(state, serde_json::to_vec(&resume).unwrap()).unwrap();
    }
    let mut config = DaemonConfig::new(dir.clone());
    config.idle_exit = Duration::from_millis(2_500);
    let lock = Lock::acquire(&dir)
        .unwrap()
        .expect("the folder is this test's");
    let mut profiles = Profiles::new(Default::default(), Box::new(|_| None));
    count::take();
    let started = Instant::now();
    let exit = run(&config, lock, &mut profiles).unwrap();
    let took = started.elapsed();
    eprintln!("{n} quiet journals: the daemon ran {took:?}");
    let counts = count::take();
    assert_eq!(exit, Exit::Idle);
    let left = journal::list(&dir).len();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(left, n, "no quiet session with a live agent is retired");
    (counts, took)
}

/// Times a thing due every `every` can be done in `took`, the first pass's included.
fn at_most(took: Duration, every: Duration) -> usize {
    (took.as_millis() / every.as_millis()) as usize + 1
}

/// The most any one journal got.
fn most(per_file: &std::collections::HashMap<PathBuf, usize>) -> usize {
    per_file.values().copied().max().unwrap_or(0)
}

#[test]
fn an_idle_daemons_work_per_journal_does_not_grow_with_the_journals_on_disk() {
    let (few, many) = std::thread::scope(|s| {
        let few = s.spawn(|| idle_run(1));
        let many = s.spawn(|| idle_run(2_000));
        (few.join().unwrap(), many.join().unwrap())
    });
    for (n, (counts, took)) in [(1, few), (2_000, many)] {
        let looks = at_most(took, QUIET_LOOK);
        let rests = at_most(took, REST_CHECK);
        // Each journal: a stat a look, one a check on its agent, one on the way out.
        let stats = most(&counts.stats);
        assert!(
            stats <= looks + rests + 1,
            "{n} journals: one was stat'ed {stats} times in {took:?} ({} passes), more than \
             once a second",
            counts.passes
        );
        // Each journal's state is read once; a quiet journal is never opened.
        let opens = most(&counts.opens);
        assert!(opens <= 1, "{n} journals: one was opened {opens} times");
        assert!(
            counts.process_checks <= n * rests,
            "{n} journals: {} checks on agents, more than one a journal every {REST_CHECK:?}",
            counts.process_checks
        );
        // The folder is listed in full once a second at most (and when it changes).
        assert!(
            counts.listed <= n * (looks + 1),
            "{n} journals: {} folder entries read in {took:?} ({} listings, {} passes)",
            counts.listed,
            counts.listings,
            counts.passes
        );
    }
}
