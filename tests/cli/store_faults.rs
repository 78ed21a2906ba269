//! A file where the store should be that is not albedo-otel's store (a damaged one, a note,
//! another program's database): every command names it and says how to start anew, nothing
//! writes over it, and the export goes on without the store.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::*;

const DEMO: &str = "examples/demo-session.ndjson";

fn run(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .output()
        .unwrap()
}

/// Every command that reads or writes the store, against `file` put where the store goes.
fn left_alone(name: &str, make: impl FnOnce(&Path)) {
    let home = scratch(name);
    let path = home.join("data/albedo-otel/store.sqlite");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    make(&path);
    let before = std::fs::read(&path).unwrap();
    for args in [
        &["report"][..],
        &["report", "--json"],
        &["sessions"],
        &["show", "demo-7f3a"],
        &["store"],
    ] {
        let out = run(&home, args);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} went on: {said}");
        assert!(
            said.contains(&path.display().to_string())
                && said.contains("is not albedo-otel's store")
                && said.contains("albedo-otel import"),
            "{args:?}: {said}"
        );
    }
    // The export goes on without the store, and says what the store missed.
    let out = run(&home, &["replay", DEMO, "--exporter", "console"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("21 delivered"), "{said}");
    assert!(said.contains("is not albedo-otel's store"), "{said}");
    assert!(said.contains("never reached the local store"), "{said}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file was written to"
    );
}

#[test]
fn a_damaged_or_foreign_file_is_named_left_alone_and_the_export_goes_on() {
    left_alone("store-notes", |p| {
        std::fs::write(p, "my notes, not a database\n".repeat(200)).unwrap()
    });
    left_alone("store-foreign", |p| {
        let db = rusqlite::Connection::open(p).unwrap();
        db.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');")
            .unwrap();
    });
}

/// A disk that fills while the store is written (a limit on the size of the files the process
/// writes, which fails a write past it as a full disk would): the export goes on, every span
/// reaching the collector; the replay says how many rows the store missed; and the store is
/// still good, so that a replay with room again fills it in, nothing counted twice.
#[cfg(unix)]
#[test]
fn a_full_disk_costs_the_store_its_rows_not_the_export_and_says_so() {
    use std::os::unix::process::CommandExt;
    /// Room for the store's tables and some of its rows, not for all of them.
    const ROOM: libc::rlim_t = 256 << 10;
    let home = scratch("store-full-disk");
    let (lines, expected) = crate::support::exporter::stream(300);
    let file = home.join("stream.ndjson");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let replay = |rx: &Receiver, room: Option<libc::rlim_t>| {
        let endpoint = rx.grpc_url();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
        cmd.args(["replay", file.to_str().unwrap(), "--no-spool"])
            .args(["--protocol", "grpc", "--endpoint", &endpoint])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_STATE_HOME", home.join("state"))
            .env("XDG_CONFIG_HOME", home.join("config"));
        if let Some(room) = room {
            // SAFETY: between fork and exec, only async-signal-safe calls.
            unsafe {
                cmd.pre_exec(move || {
                    // A write past the limit fails with EFBIG rather than kill the process.
                    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                    let limit = libc::rlimit {
                        rlim_cur: room,
                        rlim_max: room,
                    };
                    if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        cmd.output().unwrap()
    };
    // What `albedo-otel store` says it holds: "N turns, N model calls, N tool calls, ...".
    let stored = || {
        let out = run(&home, &["store"]);
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{said}");
        let count = |what: &str| -> u64 {
            let before = said.split(what).next().unwrap_or_default();
            before
                .rsplit([' ', ','])
                .find(|w| !w.is_empty())
                .unwrap()
                .parse()
                .unwrap()
        };
        (count(" turns"), count(" model calls"), count(" tool calls"))
    };
    let all = (expected.turns, expected.chat_spans, expected.tool_spans);

    let rx = Receiver::start();
    let out = replay(&rx, Some(ROOM));
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        rx.spans().len() as u64,
        expected.spans(),
        "the export lost spans: {said}"
    );
    let missed: u64 = said
        .split(" rows never reached the local store")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of what the store missed: {said}"));
    assert!(missed > 0, "{said}");
    let partly = stored();
    assert!(
        partly.1 < all.1,
        "the limit left room for every row ({partly:?}): the test proves nothing"
    );

    // Room again: the store opens as it was, and the same replay fills in what it missed.
    let rx = Receiver::start();
    let out = replay(&rx, None);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(!said.contains("never reached the local store"), "{said}");
    assert_eq!(stored(), all, "each turn and call once");
}
