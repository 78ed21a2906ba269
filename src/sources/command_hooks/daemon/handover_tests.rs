//! Taking over from an older daemon (issue 37, item 4): an older albedo-otel's daemon may not
//! know a newer agent's payloads, so it hands the folder over to a newer one that waits.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::{run, DaemonConfig, Exit, Lock, Profiles};

/// A folder of this test's own, empty.
fn fresh(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("albedo-otel-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn versions_order_as_releases_do() {
    use super::lock::older;
    assert!(older(Some("0.1.0"), "0.2.0"));
    assert!(older(Some("0.9.9"), "0.10.0"));
    assert!(older(Some("1.0.0-rc.1"), "1.0.0"));
    assert!(
        older(None, "0.1.0"),
        "a lock without a version is a daemon's from before them"
    );
    assert!(!older(Some("0.2.0"), "0.2.0"));
    assert!(!older(Some("0.3.0"), "0.2.0"));
    assert!(!older(Some("not a version"), "0.2.0"));
}

/// A daemon of an older albedo-otel (`0.0.1` here) holds the folder: one of this version
/// waits for it and takes over, and the older one, once it sees it wait, hands over (no turn
/// is open) and exits. One of the same version does not wait.
#[test]
fn an_older_daemon_hands_over_to_a_newer_one_that_waits() {
    let dir = fresh("handover");
    let mut config = DaemonConfig::new(dir.clone());
    config.idle_exit = Duration::from_secs(120);
    let old = Lock::acquire_as(&dir, "0.0.1").unwrap().unwrap();
    assert_eq!(
        super::holder(&dir).unwrap().version.as_deref(),
        Some("0.0.1")
    );
    let started = Instant::now();
    let old_run = std::thread::spawn(move || {
        let mut profiles = Profiles::new(Default::default(), Box::new(|_| None));
        run(&config, old, &mut profiles).unwrap()
    });
    // Blocks until the old one lets go.
    let new = Lock::acquire_or_take_over(&dir)
        .unwrap()
        .expect("a newer daemon takes over");
    assert_eq!(old_run.join().unwrap(), Exit::HandedOver);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "handed over within seconds, not at its idle exit: {:?}",
        started.elapsed()
    );
    let holder = super::holder(&dir).unwrap();
    assert_eq!(holder.version.as_deref(), Some(super::VERSION));
    assert_eq!(holder.pid, Some(std::process::id()));
    assert!(
        !super::successor_waits(&dir),
        "no successor is left waiting"
    );
    // As new as the holder: nothing to take over, no waiting.
    assert!(Lock::acquire_or_take_over(&dir).unwrap().is_none());
    drop(new);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A successor that died while it waited leaves its pid in `daemon.next`: hooks start no
/// other while it is there, so the holder empties it, whatever version it names.
#[test]
fn a_successor_that_died_is_forgotten() {
    let dir = fresh("dead-successor");
    let lock = Lock::acquire(&dir).unwrap().unwrap();
    // As new as the holder (a successor of a daemon since gone): not one to hand over to,
    // and not one to wait for.
    let next = format!("4000000 {}", super::VERSION);
    std::fs::write(dir.join(super::lock::DAEMON_NEXT), next).unwrap();
    assert!(super::successor_waits(&dir));
    assert!(!super::lock::newer_waits(&dir, super::VERSION));
    assert!(!super::successor_waits(&dir));
    drop(lock);
    let _ = std::fs::remove_dir_all(&dir);
}
