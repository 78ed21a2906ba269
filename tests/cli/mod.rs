//! The commands a user with no collector runs: the local store, `report`, `sessions` and
//! `show`.

use std::path::Path;
use std::process::{Command, Output};

mod history;
mod report;
mod sessions;
mod store_faults;
mod store_writers;

/// `albedo-otel ARGS` with the store and configuration under `home`.
pub(super) fn albedo(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "albedo-otel {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
