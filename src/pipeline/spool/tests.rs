//! The spool's own tests: kept beside it so spool.rs stays readable; they reach into its
//! private parts (names, entries, claim suffixes).

use super::*;

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("albedo-otel-spool-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    d
}

#[test]
fn batches_come_back_oldest_first_and_survive_a_new_process() {
    let dir = temp("order");
    let mut s = Spool::open(&dir, crate::pipeline::defaults::SPOOL_MAX_BYTES).unwrap();
    s.push(b"one", 1).unwrap();
    s.push(b"two", 2).unwrap();
    assert_eq!((s.files(), s.spans(), s.bytes()), (2, 3, 6));
    // Another opener (a restarted exporter) sees the same batches.
    let mut again = Spool::open(&dir, crate::pipeline::defaults::SPOOL_MAX_BYTES).unwrap();
    assert_eq!(again.spans(), 3);
    let first = again.take_oldest().unwrap().unwrap();
    assert_eq!((first.body.as_slice(), first.spans()), (&b"one"[..], 1));
    // Claimed: the first spool cannot take it too.
    s.rescan().unwrap();
    assert_eq!(s.files(), 1);
    again.give_back(first).unwrap();
    let first = again.take_oldest().unwrap().unwrap();
    assert_eq!(first.body, b"one");
    again.done(first).unwrap();
    let second = again.take_oldest().unwrap().unwrap();
    assert_eq!(second.body, b"two");
    again.done(second).unwrap();
    assert!(again.take_oldest().unwrap().is_none());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_full_spool_drops_the_oldest_and_says_how_much() {
    let dir = temp("cap");
    let mut s = Spool::open(&dir, 10).unwrap();
    assert_eq!(s.push(b"aaaa", 4).unwrap(), Evicted::default());
    assert_eq!(s.push(b"bbbb", 5).unwrap(), Evicted::default());
    assert_eq!(s.push(b"cccc", 6).unwrap(), Evicted { files: 1, spans: 4 });
    assert_eq!(s.take_oldest().unwrap().unwrap().body, b"bbbb");
    assert_eq!(
        s.push(&[0; 11], 7).unwrap(),
        Evicted {
            files: 2,
            spans: 13
        },
        "too big even alone"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn claims_of_dead_processes_are_given_back() {
    let dir = temp("orphan");
    let mut s = Spool::open(&dir, crate::pipeline::defaults::SPOOL_MAX_BYTES).unwrap();
    s.push(b"x", 1).unwrap();
    let name = s.entries[0].name.clone();
    // A claim by a pid that cannot exist.
    fs::rename(
        dir.join(&name),
        dir.join(format!("{name}{CLAIM}4294967295")),
    )
    .unwrap();
    let s2 = Spool::open(&dir, crate::pipeline::defaults::SPOOL_MAX_BYTES).unwrap();
    assert_eq!(s2.spans(), 1);
    fs::remove_dir_all(&dir).unwrap();
}

/// A claim's suffix as a taker writes it, spelled out here rather than by [`claimer`]: the
/// form is read by other versions of albedo-otel, so it must not drift unnoticed.
#[cfg(any(target_os = "linux", target_os = "macos"))]
fn suffix(who: &ProcessId) -> String {
    let start = who.start.map(|s| format!("-s{s}")).unwrap_or_default();
    let ns = who.ns.map(|n| format!("-n{n}")).unwrap_or_default();
    format!("{}{start}{ns}", who.pid)
}

/// A batch in `dir`, claimed by whoever `suffix` names (as if that process had taken it);
/// its unclaimed name.
#[cfg(any(target_os = "linux", target_os = "macos"))]
fn claimed_by(dir: &Path, suffix: &str) -> String {
    let mut s = Spool::open(dir, crate::pipeline::defaults::SPOOL_MAX_BYTES).unwrap();
    s.push(b"x", 1).unwrap();
    let name = s.entries.back().unwrap().name.clone();
    fs::rename(dir.join(&name), dir.join(format!("{name}{CLAIM}{suffix}"))).unwrap();
    name
}

/// Which of `names` a spool opened now has back (unclaimed).
#[cfg(any(target_os = "linux", target_os = "macos"))]
fn given_back(dir: &Path, names: &[&str]) -> Vec<bool> {
    let s = Spool::open(dir, crate::pipeline::defaults::SPOOL_MAX_BYTES).unwrap();
    let back: Vec<&str> = s.entries.iter().map(|e| e.name.as_str()).collect();
    names.iter().map(|n| back.contains(n)).collect()
}

/// A process that runs until dropped, as the spool would see it.
#[cfg(any(target_os = "linux", target_os = "macos"))]
struct Sleeper(std::process::Child, ProcessId);

#[cfg(any(target_os = "linux", target_os = "macos"))]
impl Sleeper {
    fn start() -> Sleeper {
        let child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let who = ProcessId::of(child.id()).unwrap();
        Sleeper(child, who)
    }

    /// It ends (and is reaped); what it was is returned.
    fn end(mut self) -> ProcessId {
        self.0.kill().unwrap();
        self.0.wait().unwrap();
        self.1
    }
}

#[cfg(any(target_os = "linux", target_os = "macos"))]
impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

// Each test below has a live taker's claim beside the one it is about: a claim given back
// only because its name could not be read would otherwise pass for one judged rightly.

#[cfg(any(target_os = "linux", target_os = "macos"))]
#[test]
fn a_claim_by_a_process_that_is_gone_is_given_back() {
    let dir = temp("claim-dead");
    let (live, dead) = (Sleeper::start(), Sleeper::start().end());
    assert!(dead.start.is_some());
    let of_dead = claimed_by(&dir, &suffix(&dead));
    let of_live = claimed_by(&dir, &suffix(&live.1));
    assert_eq!(given_back(&dir, &[&of_dead, &of_live]), [true, false]);
    fs::remove_dir_all(&dir).unwrap();
}

/// The pid runs, but it is another process's now: `kill(pid, 0)` answers for it, and only
/// the start time tells.
#[cfg(any(target_os = "linux", target_os = "macos"))]
#[test]
fn a_claim_whose_pid_was_reused_is_given_back() {
    let dir = temp("claim-reused");
    let live = Sleeper::start();
    let earlier = ProcessId {
        start: live.1.start.map(|s| s - 1),
        ..live.1
    };
    let of_earlier = claimed_by(&dir, &suffix(&earlier));
    let of_live = claimed_by(&dir, &suffix(&live.1));
    assert_eq!(given_back(&dir, &[&of_earlier, &of_live]), [true, false]);
    fs::remove_dir_all(&dir).unwrap();
}

#[cfg(any(target_os = "linux", target_os = "macos"))]
#[test]
fn a_claim_by_this_very_process_names_it_and_is_kept() {
    let dir = temp("claim-self");
    let me = ProcessId::of(std::process::id()).unwrap();
    assert!(me.start.is_some());
    let mut s = Spool::open(&dir, crate::pipeline::defaults::SPOOL_MAX_BYTES).unwrap();
    s.push(b"x", 1).unwrap();
    let taken = s.take_oldest().unwrap().unwrap();
    let want = format!("{}{CLAIM}{}", taken.entry.name, suffix(&me));
    assert_eq!(taken.claimed.file_name().unwrap().to_str(), Some(&*want));
    assert_eq!(given_back(&dir, &[&taken.entry.name]), [false]);
    assert!(taken.claimed.exists());
    fs::remove_dir_all(&dir).unwrap();
}

/// `.claimed-{pid}`, as albedo-otel wrote claims before they carried a start time, is
/// still judged by its pid, beside claims of the newer form.
#[cfg(any(target_os = "linux", target_os = "macos"))]
#[test]
fn an_older_versions_claim_is_still_understood() {
    let dir = temp("claim-old");
    let (live, dead) = (Sleeper::start(), Sleeper::start().end());
    let old_live = claimed_by(&dir, &live.1.pid.to_string());
    let old_dead = claimed_by(&dir, &dead.pid.to_string());
    let new_live = claimed_by(&dir, &suffix(&live.1));
    assert_eq!(
        given_back(&dir, &[&old_live, &old_dead, &new_live]),
        [false, true, false]
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// A pid of another pid namespace (a container sharing the folder) says nothing here:
/// the claim is left to its taker, live or not.
#[cfg(target_os = "linux")]
#[test]
fn a_claim_from_another_pid_namespace_is_left_alone() {
    let dir = temp("claim-ns");
    let (live, dead) = (Sleeper::start(), Sleeper::start().end());
    let elsewhere = |who: &ProcessId| ProcessId {
        ns: who.ns.map(|n| n + 1),
        ..*who
    };
    let of_live = claimed_by(&dir, &suffix(&elsewhere(&live.1)));
    let of_dead = claimed_by(&dir, &suffix(&elsewhere(&dead)));
    assert_eq!(given_back(&dir, &[&of_live, &of_dead]), [false, false]);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn claim_suffixes_read_back() {
    let full = ProcessId {
        pid: 42,
        start: Some(7),
        ns: Some(4026531836),
    };
    assert_eq!(parse_claimer(&claimer(&full)), Some(full));
    let bare = ProcessId {
        pid: 42,
        start: None,
        ns: None,
    };
    assert_eq!(claimer(&bare), "42", "what older versions write and read");
    assert_eq!(parse_claimer("42"), Some(bare));
    assert_eq!(
        parse_claimer("42-s7-x9-n4026531836"),
        Some(full),
        "a later field"
    );
    for garbage in ["", "x", "42-sx", "-s7"] {
        assert_eq!(parse_claimer(garbage), None, "{garbage:?}");
    }
}

#[cfg(unix)]
#[test]
fn the_spool_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp("mode");
    let mut s = Spool::open(&dir, crate::pipeline::defaults::SPOOL_MAX_BYTES).unwrap();
    s.push(b"secret-ish", 1).unwrap();
    assert_eq!(
        fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let f = dir.join(&s.entries[0].name);
    assert_eq!(fs::metadata(f).unwrap().permissions().mode() & 0o777, 0o600);
    fs::remove_dir_all(&dir).unwrap();
}

/// An earlier version named a destination's folder after its endpoint, password and all: the
/// new name takes it over once, and what it held comes back from the new folder.
#[test]
fn a_former_folder_is_taken_over_with_what_it_holds() {
    let root = temp("adopt");
    let former = for_destination(&root, "http/protobuf http://u:SECRET@h:4318/v1/traces");
    let dir = for_destination(&root, "http/protobuf http://u:******@h:4318/v1/traces");
    Spool::open(&former, 1 << 20)
        .unwrap()
        .push(b"kept", 3)
        .unwrap();
    adopt(&former, &dir);
    assert!(!former.exists());
    let mut s = Spool::open(&dir, 1 << 20).unwrap();
    assert_eq!((s.files(), s.spans()), (1, 3));
    assert_eq!(s.take_oldest().unwrap().unwrap().body, b"kept");
    // Once there, the new folder is never replaced by an old one.
    Spool::open(&former, 1 << 20)
        .unwrap()
        .push(b"late", 1)
        .unwrap();
    adopt(&former, &dir);
    assert!(former.exists(), "left where it is, not over the new folder");
    fs::remove_dir_all(&root).unwrap();
}
