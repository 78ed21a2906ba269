//! scripts/stack's own promises, kept without Go or the programs it builds: once built, `build`
//! and `env` need no Go on PATH (README and .ci/run read their output), and an `up` that fails
//! stops only what it started itself.
//!
//! The programs are stand-ins (small shell scripts), put into a tools cache of the test's own
//! by the real script's `build`, through a stand-in `go` that "builds" them; every later run
//! finds them by the script's own cache lookup.

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/stack");

/// What the script runs besides itself (and what the stand-ins run): linked one by one into a
/// folder of its own, so that PATH holds no `go` wherever Go is installed.
const TOOLS: &[&str] = &[
    "bash",
    "env",
    "dirname",
    "basename",
    "cat",
    "sha256sum",
    "shasum",
    "cut",
    "mkdir",
    "mktemp",
    "mv",
    "rm",
    "cp",
    "cmp",
    "diff",
    "awk",
    "tr",
    "ps",
    "grep",
    "tail",
    "sed",
    "sleep",
    "touch",
    "chmod",
];

/// Go as the script uses it: `env GOVERSION`, `install` (the Collector Builder) and `build -o`.
const GO: &str = r#"#!/bin/sh
case "$1" in
    env) echo "${STANDIN_GOVERSION:-go1.26.0-standin}" ;;
    install) mkdir -p "$GOBIN" && cp "@/builder" "$GOBIN/builder" ;;
    build)
        while [ $# -gt 0 ]; do
            if [ "$1" = -o ]; then out=$2; shift; fi
            package=$1; shift
        done
        rm -f "$out" && cp "@/$(basename "$package")" "$out" && chmod 755 "$out" ;;
    *) echo "stand-in go: $*" >&2; exit 2 ;;
esac
"#;

/// The Collector Builder: the collector into dist/, its go.sum left as the script put it.
const BUILDER: &str = "#!/bin/sh\nmkdir -p dist && cp @/otelcol dist/otelcol-albedo\n";

/// A collector that will not start: `up` fails once Jaeger runs.
const OTELCOL: &str = "#!/bin/sh\necho 'stand-in collector: not starting' >&2\nexit 1\n";

/// A Jaeger that runs until stopped, and says when it started, and as which process.
const JAEGER: &str = "#!/bin/sh\necho $$ >@/jaeger.started\nwhile :; do sleep 1; done\n";

const PROMETHEUS: &str = "#!/bin/sh\nexit 1\n";

/// One test's folders: tools, stand-ins, cache and state, removed at the end.
struct Stack {
    root: PathBuf,
}

impl Drop for Stack {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}

fn write_program(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn find_tool(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

impl Stack {
    fn new(what: &str) -> Stack {
        let root = std::env::temp_dir().join(format!(
            "albedo-otel-stack-script-{what}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["bin", "go", "standins", "cache", "state"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for tool in TOOLS {
            if let Some(found) = find_tool(tool) {
                std::os::unix::fs::symlink(found, root.join("bin").join(tool)).unwrap();
            }
        }
        let standins = root.join("standins");
        let here = |text: &str| text.replace('@', standins.to_str().unwrap());
        write_program(&root.join("go/go"), &here(GO));
        for (name, text) in [
            ("builder", BUILDER),
            ("otelcol", OTELCOL),
            ("jaeger", JAEGER),
            ("prometheus", PROMETHEUS),
        ] {
            write_program(&standins.join(name), &here(text));
        }
        Stack { root }
    }

    fn cache(&self) -> PathBuf {
        self.root.join("cache")
    }

    /// The script, with Go on PATH or not, the cache in `cache`, and `env` besides.
    fn command(&self, args: &[&str], go: bool, cache: &Path, env: &[(&str, String)]) -> Command {
        let mut path = vec![self.root.join("bin")];
        if go {
            path.push(self.root.join("go"));
        }
        let mut cmd = Command::new(SCRIPT);
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::join_paths(path).unwrap())
            .env("HOME", &self.root)
            .env("XDG_CACHE_HOME", cache)
            .env("STACK_STATE_DIR", self.root.join("state"))
            .envs(env.iter().map(|(k, v)| (*k, v)))
            .stdin(Stdio::null());
        cmd
    }

    fn run(&self, args: &[&str], go: bool, cache: &Path, env: &[(&str, String)]) -> Output {
        self.command(args, go, cache, env).output().unwrap()
    }

    /// `build`'s three lines, each checked to name a program that is there.
    fn build(&self, go: bool, cache: &Path, env: &[(&str, String)]) -> Vec<(String, PathBuf)> {
        let out = self.run(&["build"], go, cache, env);
        assert!(out.status.success(), "build failed:\n{}", text(&out.stderr));
        let lines: Vec<(String, PathBuf)> = text(&out.stdout)
            .lines()
            .map(|l| {
                let (name, path) = l.split_once(' ').unwrap();
                (name.to_string(), PathBuf::from(path))
            })
            .collect();
        let names: Vec<&str> = lines.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["otelcol", "jaeger", "prometheus"], "{lines:?}");
        for (name, path) in &lines {
            assert!(path.starts_with(cache), "{name}: {}", path.display());
            assert!(path.is_file(), "{name}: {}", path.display());
        }
        lines
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else {
            // std's copy keeps the mode: the programs stay executable.
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn once_built_env_and_build_need_no_go() {
    let stack = Stack::new("env");
    let built = stack.build(true, &stack.cache(), &[]);
    // Another machine's cache, or this one moved: a copy, read with no Go anywhere on PATH.
    let copy = stack.root.join("cache-copy");
    copy_tree(&stack.cache(), &copy);
    let moved: Vec<(String, PathBuf)> = built
        .iter()
        .map(|(n, p)| (n.clone(), copy.join(p.strip_prefix(stack.cache()).unwrap())))
        .collect();

    let out = stack.run(&["env"], false, &copy, &[]);
    assert!(out.status.success(), "env failed:\n{}", text(&out.stderr));
    let want: Vec<String> = moved
        .iter()
        .map(|(n, p)| format!("export ALBEDO_OTEL_{}={}", n.to_uppercase(), p.display()))
        .collect();
    assert_eq!(text(&out.stdout).lines().collect::<Vec<_>>(), want);

    assert_eq!(stack.build(false, &copy, &[]), moved);
}

/// The cache is still keyed by Go's version where Go is: a new Go builds anew, and a run
/// without Go then takes that newest build.
#[test]
fn a_new_go_builds_anew_and_that_build_serves_runs_without_go() {
    let stack = Stack::new("newgo");
    let first = stack.build(true, &stack.cache(), &[]);
    let newer = [("STANDIN_GOVERSION", "go1.99.0-standin".to_string())];
    let second = stack.build(true, &stack.cache(), &newer);
    for ((name, a), (_, b)) in first.iter().zip(&second) {
        assert_ne!(a, b, "{name} was not built anew for another Go");
    }
    assert_eq!(stack.build(false, &stack.cache(), &[]), second);
}

/// Ports for `up`, none of them listened on: the five named ones, and the seven from the
/// base.
fn ports() -> Vec<(&'static str, String)> {
    let pick = || {
        TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let base = loop {
        let p = pick();
        if p < 65_000 && (p..p + 7).all(|q| TcpListener::bind(("127.0.0.1", q)).is_ok()) {
            break p;
        }
    };
    let mut named: Vec<u16> = Vec::new();
    while named.len() < 5 {
        let p = pick();
        if !(base..base + 7).contains(&p) && !named.contains(&p) {
            named.push(p);
        }
    }
    [
        "STACK_OTLP_GRPC_PORT",
        "STACK_OTLP_HTTP_PORT",
        "STACK_JAEGER_UI_PORT",
        "STACK_PROMETHEUS_PORT",
        "STACK_SPAN_METRICS_PORT",
    ]
    .into_iter()
    .zip(named.iter().map(u16::to_string))
    .chain([("STACK_PORT_BASE", base.to_string())])
    .collect()
}

/// Jaeger's OTLP port: the base. Whoever listens there is, for `up`, Jaeger answering.
fn jaeger_port(ports: &[(&str, String)]) -> u16 {
    ports
        .iter()
        .find(|(k, _)| *k == "STACK_PORT_BASE")
        .map(|(_, v)| v.parse().unwrap())
        .unwrap()
}

/// Whether `pid` runs (a zombie, exited but not yet reaped, does not).
fn runs(pid: u32) -> bool {
    let out = Command::new("ps")
        .args(["-o", "stat=", "-p", &pid.to_string()])
        .output()
        .unwrap();
    let stat = text(&out.stdout);
    !stat.trim().is_empty() && !stat.trim_start().starts_with('Z')
}

/// `up` with Go on PATH, so that a script that still asked Go for its cache key gets as far
/// as starting programs (the failure looked at is in starting them, not in building).
fn failed_up(stack: &Stack, ports: &[(&str, String)]) -> String {
    let out = stack.run(&["up"], true, &stack.cache(), ports);
    let err = text(&out.stderr);
    assert!(!out.status.success(), "up did not fail:\n{err}");
    assert!(
        err.contains("otelcol exited"),
        "up failed otherwise:\n{err}"
    );
    err
}

/// A Jaeger left running by an earlier `up` is not this `up`'s to stop when it fails.
#[test]
fn a_failed_up_leaves_running_what_an_earlier_up_started() {
    let stack = Stack::new("earlier");
    let built = stack.build(true, &stack.cache(), &[]);
    let jaeger = &built[1].1;
    let ports = ports();
    let _answers = TcpListener::bind(("127.0.0.1", jaeger_port(&ports))).unwrap();
    let mut earlier = Command::new(jaeger)
        .args(["--config", "earlier-up"])
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    // As `up` records what it starts: the pid, and the program it ran.
    let pid_file = stack.root.join("state/jaeger.pid");
    std::fs::write(
        &pid_file,
        format!("{} {}\n", earlier.id(), jaeger.display()),
    )
    .unwrap();

    let err = failed_up(&stack, &ports);
    let still = earlier.try_wait().unwrap().is_none();
    let _ = earlier.kill();
    let _ = earlier.wait();
    assert!(still, "the earlier up's Jaeger was stopped:\n{err}");
    assert!(err.contains("jaeger already runs"), "{err}");
    assert!(pid_file.exists(), "its pid file is gone");
    assert!(!stack.root.join("state/otelcol.pid").exists());
}

/// What this `up` started itself is still stopped when a later step fails.
#[test]
fn a_failed_up_stops_what_it_started() {
    let stack = Stack::new("started");
    stack.build(true, &stack.cache(), &[]);
    let ports = ports();
    let mut up = stack
        .command(&["up"], true, &stack.cache(), &ports)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Jaeger's port is taken only once `up` has seen it free and started the stand-in.
    let started = stack.root.join("standins/jaeger.started");
    let deadline = Instant::now() + Duration::from_secs(20);
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&started)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
        {
            break pid;
        }
        if Instant::now() > deadline || up.try_wait().unwrap().is_some() {
            let _ = up.kill();
            let out = up.wait_with_output().unwrap();
            panic!("Jaeger's stand-in never started:\n{}", text(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _answers = TcpListener::bind(("127.0.0.1", jaeger_port(&ports))).unwrap();
    let out = up.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert!(!out.status.success(), "up did not fail:\n{err}");
    assert!(
        err.contains("otelcol exited"),
        "up failed otherwise:\n{err}"
    );
    assert!(err.contains("jaeger stopped"), "{err}");
    assert!(!runs(pid), "Jaeger, started by this up, still runs:\n{err}");
    assert!(!stack.root.join("state/jaeger.pid").exists());
}
