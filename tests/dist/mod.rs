//! What `scripts/dist` builds, installed as a user installs it, with no Rust toolchain on
//! `PATH`: the Linux archive unpacked into an empty folder, the npm tarballs into an empty
//! prefix (offline), the wheel with pip, `pipx` and `uvx` (tests/dist/python.rs). Each runs
//! `--version`, the README's replay, and the hook route: `install claude-code` into a fresh
//! HOME, a recorded Claude Code session through the command it installed, the spans at a
//! receiver. And what `cargo package` ships, for `cargo install`.
//!
//! The artifacts are found in `ALBEDO_OTEL_DIST_DIR` (`.ci/run` builds them with
//! `scripts/dist x86_64-unknown-linux-musl`); without it these tests skip, or fail under
//! `ALBEDO_OTEL_REQUIRE_TOOLS=1`. They also need npm, python3, and pipx and uv
//! (`ALBEDO_OTEL_PIPX`, `ALBEDO_OTEL_UVX`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::support::hooks::{recorded, run_as_agent};
use crate::support::*;

mod macos;
mod python;

const VERSION: &str = env!("CARGO_PKG_VERSION");
const TARGET: &str = "x86_64-unknown-linux-musl";

fn dist_dir() -> Option<PathBuf> {
    require_tool(
        "scripts/dist's artifacts",
        std::env::var_os("ALBEDO_OTEL_DIST_DIR")
            .map(PathBuf::from)
            .filter(|d| d.join("SHA256SUMS").is_file()),
        "run `scripts/dist x86_64-unknown-linux-musl` and set ALBEDO_OTEL_DIST_DIR=dist",
    )
}

/// A `PATH` with the system's programs and Node's: not rustup's `~/.cargo/bin`, so no cargo or
/// rustc (unless a distribution's own are in /usr/bin).
fn plain_path() -> String {
    let mut dirs = vec![
        "/usr/local/bin".to_string(),
        "/usr/bin".into(),
        "/bin".into(),
    ];
    for tool in ["node", "npm", "npx"] {
        if let Some(dir) = which(tool).and_then(|p| p.parent().map(Path::to_path_buf)) {
            dirs.insert(0, dir.display().to_string());
        }
    }
    dirs.dedup();
    dirs.join(":")
}

/// A command with only a fresh HOME and the plain PATH in its environment.
fn clean(program: impl AsRef<std::ffi::OsStr>, home: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear()
        .env("HOME", home)
        .env("PATH", plain_path())
        .stdin(Stdio::null());
    cmd
}

fn ok(out: Output, what: &str) -> String {
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "{what}: {}\n{stdout}\n{stderr}",
        out.status
    );
    format!("{stdout}{stderr}")
}

/// `--version`, the README's replay, and the hook route, with `cli` standing for however the
/// user runs `albedo-otel`. `before_payloads` runs between `install` and the session (to
/// remove what the hook must not depend on). Returns the hook command `install` wrote.
fn user_route(home: &Path, cli: &dyn Fn() -> Command, before_payloads: &dyn Fn()) -> String {
    // On stdout alone: uvx and pipx say what they set up on stderr.
    let version = cli().arg("--version").output().unwrap();
    ok(version.clone(), "--version");
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("albedo-otel {VERSION}")
    );

    let demo = repo_file("examples/demo-session.ndjson");
    let replay = ok(
        cli()
            .args(["replay", &demo, "--exporter", "console"])
            .output()
            .unwrap(),
        "replay",
    );
    assert!(
        replay.contains("invoke_agent albedo") && replay.contains("execute_tool agents.spawn"),
        "{replay}"
    );

    let rx = Receiver::start();
    let said = ok(
        cli()
            .args(["install", "claude-code"])
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", rx.grpc_url())
            .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
            .output()
            .unwrap(),
        "install claude-code",
    );
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(home.join(".claude/settings.json")).unwrap())
            .unwrap_or_else(|e| panic!("{e}: {said}"));
    let command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("no hook installed: {settings}"))
        .to_string();
    before_payloads();

    // The agent's side: a shell runs the command once per event, the payload on stdin.
    let hook_dir = home.join(".local/state/albedo-otel/hooks");
    for payload in recorded("multi_tool") {
        run_as_agent(
            clean("sh", home)
                .args(["-c", &command])
                .env("ALBEDO_OTEL_STOP_GRACE", "300ms")
                .env("ALBEDO_OTEL_IDLE_EXIT", "1s"),
            &payload,
        );
    }
    let log = || std::fs::read_to_string(hook_dir.join("daemon.log")).unwrap_or_default();
    let spans = rx.wait_for_spans(9, Duration::from_secs(30));
    let mut names: Vec<&str> = spans.iter().map(|s| s.span.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "chat claude-opus-5-5",
            "chat claude-opus-5-5",
            "chat claude-opus-5-5",
            "chat claude-opus-5-5",
            "execute_tool Bash",
            "execute_tool Bash",
            "execute_tool Edit",
            "execute_tool Read",
            "invoke_agent claude-code",
        ],
        "{}",
        log()
    );
    assert_eq!(check_invariants(&spans), 1, "one trace");
    wait_until(Duration::from_secs(30), "the daemon to exit", || {
        !albedo_otel::sources::command_hooks::daemon::running(&hook_dir)
    });
    command
}

/// The hook command's program, which must be the native binary itself (a launcher in front
/// of it would double what every agent event costs).
fn hook_program(command: &str) -> PathBuf {
    let program = PathBuf::from(command.split(' ').next().unwrap());
    assert_eq!(
        program.file_name().unwrap(),
        "albedo-otel-hook",
        "{command}"
    );
    let head = std::fs::read(&program).unwrap();
    assert_eq!(
        &head[..4],
        b"\x7fELF",
        "{} is not the native binary",
        program.display()
    );
    program
}

fn unpack(archive: &Path, into: &Path) {
    ok(
        Command::new("tar")
            .arg("-xzf")
            .arg(archive)
            .arg("-C")
            .arg(into)
            .output()
            .unwrap(),
        "tar",
    );
}

fn file_says(path: &Path) -> String {
    ok(
        Command::new("file").arg("-b").arg(path).output().unwrap(),
        "file",
    )
}

#[test]
fn the_linux_archive_unpacked_runs_every_route() {
    let Some(dist) = dist_dir() else { return };
    let dir = scratch("dist-archive");
    unpack(
        &dist.join(format!("albedo-otel-{VERSION}-{TARGET}.tar.gz")),
        &dir,
    );
    let root = dir.join(format!("albedo-otel-{VERSION}-{TARGET}"));
    let mut files: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        ["LICENSE", "README.md", "albedo-otel", "albedo-otel-hook"]
    );
    for bin in ["albedo-otel", "albedo-otel-hook"] {
        let said = file_says(&root.join(bin));
        assert!(
            said.contains("static") && said.contains(", stripped"),
            "{bin}: {said}"
        );
    }
    // The debug info is beside the archive, one file per binary.
    let debug = dir.join("debug");
    std::fs::create_dir(&debug).unwrap();
    unpack(
        &dist.join(format!("albedo-otel-{VERSION}-{TARGET}-debug.tar.gz")),
        &debug,
    );
    for bin in ["albedo-otel", "albedo-otel-hook"] {
        let said = file_says(&debug.join(format!("{bin}.debug")));
        assert!(said.contains("with debug_info"), "{bin}.debug: {said}");
    }

    let home = dir.join("home");
    std::fs::create_dir(&home).unwrap();
    let cli = || clean(root.join("albedo-otel"), &home);
    let command = user_route(&home, &cli, &|| {});
    assert_eq!(hook_program(&command), root.join("albedo-otel-hook"));
}

#[test]
fn the_npm_packages_install_offline_and_the_hook_outlives_the_npx_cache() {
    let Some(dist) = dist_dir() else { return };
    require_tool("npm", which("npm"), "install Node.js and npm");
    let dir = scratch("dist-npm");
    let (prefix, home, cache) = (dir.join("prefix"), dir.join("home"), dir.join("npm-cache"));
    for d in [&prefix, &home] {
        std::fs::create_dir(d).unwrap();
    }
    // An empty cache and --offline: nothing can come from a registry, only from dist/.
    let out = clean("npm", &home)
        .args([
            "install",
            "--offline",
            "--no-audit",
            "--no-fund",
            "--prefix",
        ])
        .arg(&prefix)
        .arg("--cache")
        .arg(&cache)
        .arg(dist.join(format!("albedo-otel-{VERSION}.tgz")))
        .arg(dist.join(format!("albedo-otel-linux-x64-{VERSION}.tgz")))
        .output()
        .unwrap();
    ok(out, "npm install");

    let cli = || {
        let mut c = clean("npx", &home);
        c.args(["--offline", "--cache"])
            .arg(&cache)
            .arg("albedo-otel")
            .current_dir(&prefix);
        c
    };
    // What `npm cache clean` or a newer npx does to the packages npx ran from.
    let command = user_route(&home, &cli, &|| {
        std::fs::remove_dir_all(&prefix).unwrap();
        std::fs::remove_dir_all(&cache).unwrap();
    });
    assert_eq!(
        hook_program(&command),
        home.join(format!(
            ".local/share/albedo-otel/npm/{VERSION}/albedo-otel-hook"
        ))
    );
}

/// What `cargo install --locked albedo-otel` builds from, as `cargo package` lists it: the
/// sources, the lock file and the license, every file that `src/` compiles in, and none of the
/// tests' fixtures, the deploy stack, the fuzzer or the benchmarks. The build itself is
/// `cargo package --locked` in `.ci/run`.
#[test]
fn the_crate_ships_its_sources_license_and_lock_file_and_no_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let listed = ok(
        Command::new(env!("CARGO"))
            .args(["package", "--list", "--locked", "--allow-dirty", "--quiet"])
            .current_dir(root)
            .output()
            .unwrap(),
        "cargo package --list",
    );
    let files: std::collections::BTreeSet<&str> = listed
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with([' ', '|', '=']) && !l.contains(": "))
        .collect();
    for needed in [
        "Cargo.toml",
        "Cargo.lock",
        "LICENSE",
        "README.md",
        "build.rs",
        "src/lib.rs",
        "src/main.rs",
        "src/bin/albedo-otel-hook.rs",
    ] {
        assert!(files.contains(needed), "{needed} not packaged");
    }
    let mut total = 0;
    for file in &files {
        assert!(
            file.starts_with("src/")
                || [
                    "Cargo.toml",
                    "Cargo.toml.orig",
                    "Cargo.lock",
                    "LICENSE",
                    "README.md",
                    "build.rs",
                    ".cargo_vcs_info.json"
                ]
                .contains(file),
            "{file} is packaged, and `cargo install` does not need it"
        );
        let Ok(meta) = std::fs::metadata(root.join(file)) else {
            continue; // .cargo_vcs_info.json and Cargo.toml.orig are cargo's own
        };
        // The one large file is genai-prices' own data, which the binary compiles in.
        if *file == "src/assemble/pricing/prices.json" {
            assert!(meta.len() < 1_000_000, "{file}: {} bytes", meta.len());
            continue;
        }
        assert!(meta.len() < 100_000, "{file}: {} bytes", meta.len());
        total += meta.len();
    }
    // About 2.1 MB of sources, the lock file and the README (December 2026): a fixture or a
    // data file that slipped in would take it well past this.
    assert!(total < 2_500_000, "{total} bytes packaged");
    // A file that `src/` compiles in from elsewhere would be missing from the package, and
    // only the verify build would say so.
    for file in files.iter().filter(|f| f.ends_with(".rs")) {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let dir = Path::new(file).parent().unwrap();
        for (_, rest) in text
            .match_indices("include_str!(\"")
            .chain(text.match_indices("include_bytes!(\""))
            .chain(text.match_indices("#[path = \""))
            .map(|(i, m)| (i, &text[i + m.len()..]))
        {
            let named = &rest[..rest.find('"').unwrap()];
            let mut path = dir.to_path_buf();
            for part in Path::new(named).components() {
                match part {
                    std::path::Component::ParentDir => assert!(path.pop(), "{file}: {named}"),
                    other => path.push(other),
                }
            }
            let path = path.to_string_lossy().into_owned();
            assert!(
                files.contains(path.as_str()),
                "{file} needs {path}, not packaged"
            );
        }
    }
}

/// The release workflow cannot run in CI; its format is checked against the schema.
#[test]
fn the_release_workflow_is_a_valid_github_workflow() {
    let Some(check) = require_tool(
        "check-jsonschema",
        which("check-jsonschema"),
        "pip install check-jsonschema==0.39.0",
    ) else {
        return;
    };
    let out = Command::new(check)
        .args(["--builtin-schema", "vendor.github-workflows"])
        .arg(repo_file(".github/workflows/release.yml"))
        .output()
        .unwrap();
    ok(out, "check-jsonschema");
}
