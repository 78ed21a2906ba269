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
