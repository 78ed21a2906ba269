//! Running command hooks as a host does: one process per event, payload on stdin.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{repo_file, scratch, wait_until, Receiver, Scratch};

/// A place for journals and the settings every hook of one test shares.
pub struct Setup {
    pub hook_dir: PathBuf,
    pub spool: PathBuf,
    /// Given to hooks as `OTEL_EXPORTER_OTLP_ENDPOINT` (gRPC), when set.
    pub endpoint: Option<String>,
    /// Arguments every hook gets (`--config FILE`).
    pub args: Vec<std::ffi::OsString>,
    /// Invocations so far: they alternate between `albedo-otel-hook` and `albedo-otel hook`,
    /// which must be interchangeable within one session.
    calls: std::sync::atomic::AtomicUsize,
    /// The folders this setup made, removed once its daemon is gone.
    owned: Option<(Scratch, Scratch)>,
}

impl Drop for Setup {
    fn drop(&mut self) {
        let Some(owned) = self.owned.take() else {
            return;
        };
        if std::thread::panicking() {
            // The folders stay for the failure (`Scratch` says where); no wait for that.
            return;
        }
        // A daemon still winding down would write into the folders as they go, and leave
        // some behind; it exits a second after its last hook.
        let gone = super::poll_until(Duration::from_secs(10), Duration::from_millis(20), || {
            !albedo_otel::sources::command_hooks::daemon::running(&self.hook_dir)
        });
        if gone {
            drop(owned);
        } else {
            // Left for whoever looks into why the daemon stayed.
            eprintln!(
                "the daemon in {} still runs: its folders are left",
                self.hook_dir.display()
            );
            std::mem::forget(owned);
        }
    }
}

impl Setup {
    /// Hooks told where `rx` is by the environment.
    pub fn new(rx: &Receiver) -> Setup {
        Setup::to(&rx.grpc_url())
    }

    /// Hooks told by the environment to send to `endpoint` over gRPC.
    pub fn to(endpoint: &str) -> Setup {
        let (hooks, spool) = (scratch("hooks"), scratch("spool"));
        Setup {
            hook_dir: hooks.to_path_buf(),
            spool: spool.to_path_buf(),
            endpoint: Some(endpoint.to_string()),
            args: Vec::new(),
            calls: std::sync::atomic::AtomicUsize::new(0),
            owned: Some((hooks, spool)),
        }
    }

    /// Hooks as Claude Code runs them after `install`: no `OTEL_*` variable, only
    /// `--config FILE`; their journals in `hook_dir` (shared with other setups: one daemon).
    pub fn with_config(hook_dir: &Path, config: &Path) -> Setup {
        Setup {
            hook_dir: hook_dir.to_path_buf(),
            spool: hook_dir.join("spool"),
            endpoint: None,
            args: vec!["--config".into(), config.into()],
            calls: std::sync::atomic::AtomicUsize::new(0),
            owned: None,
        }
    }

    /// The environment every hook of this setup runs with.
    pub fn env(&self) -> Vec<(&'static str, std::ffi::OsString)> {
        let mut env: Vec<(&'static str, std::ffi::OsString)> = vec![
            // No configuration file but one a test writes.
            ("XDG_CONFIG_HOME", self.hook_dir.join("no-config").into()),
            ("ALBEDO_OTEL_HOOK_DIR", self.hook_dir.clone().into()),
            ("ALBEDO_OTEL_SPOOL_DIR", self.spool.clone().into()),
            ("ALBEDO_OTEL_STOP_GRACE", "300ms".into()),
            ("ALBEDO_OTEL_IDLE_EXIT", "1s".into()),
        ];
        if let Some(endpoint) = &self.endpoint {
            env.push(("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.into()));
            env.push(("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc".into()));
            env.push(("OTEL_BSP_SCHEDULE_DELAY", "100".into()));
        }
        env
    }

    /// Runs one hook invocation; returns its wall time.
    pub fn hook(&self, payload: &str) -> Duration {
        self.hook_with(payload, &[])
    }

    /// As [`hook`](Self::hook), with more variables in the hook's environment (which need not
    /// be UTF-8).
    pub fn hook_with(
        &self,
        payload: &str,
        extra: &[(std::ffi::OsString, std::ffi::OsString)],
    ) -> Duration {
        let n = self
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut cmd = if n.is_multiple_of(2) {
            Command::new(env!("CARGO_BIN_EXE_albedo-otel-hook"))
        } else {
            let mut c = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
            c.arg("hook");
            c
        };
        cmd.args(&self.args);
        for (k, _) in std::env::vars() {
            if k.starts_with("OTEL_") || k.starts_with("ALBEDO_OTEL") {
                cmd.env_remove(k);
            }
        }
        cmd.envs(self.env());
        cmd.envs(extra.iter().map(|(k, v)| (k, v)));
        let start = Instant::now();
        run_as_agent(&mut cmd, payload);
        start.elapsed()
    }

    pub fn daemon_log(&self) -> String {
        std::fs::read_to_string(self.hook_dir.join("daemon.log")).unwrap_or_default()
    }

    /// Waits until the daemon has found an agent alive with its turn open `n` times (it
    /// says so in its log at debug level: run the hook with `ALBEDO_OTEL_LOG=debug`).
    pub fn wait_for_alive_checks(&self, n: usize) {
        wait_until(
            Duration::from_secs(30),
            &format!("the daemon to find the agent alive {n} times"),
            || self.daemon_log().matches("its agent is alive").count() >= n,
        );
    }

    /// Waits for the daemon to drain every (ended) session's journal and exit.
    pub fn wait_idle(&self) {
        wait_until(
            Duration::from_secs(30),
            "the daemon to drain and exit",
            || {
                albedo_otel::sources::command_hooks::journal::list(&self.hook_dir).is_empty()
                    && !albedo_otel::sources::command_hooks::daemon::running(&self.hook_dir)
                    && self.daemon_log().contains("daemon done (Some(Idle))")
            },
        );
    }
}

/// The recorded payloads of a fixture, with transcript paths pointing at the fixture files.
pub fn recorded(name: &str) -> Vec<String> {
    let dir = repo_file(&format!("tests/fixtures/claude-code/{name}"));
    std::fs::read_to_string(format!("{dir}/hooks.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            let p = v["payload"].as_object_mut().unwrap();
            if p.contains_key("transcript_path") {
                p.insert(
                    "transcript_path".into(),
                    format!("{dir}/transcript.jsonl").into(),
                );
            }
            if p.contains_key("agent_transcript_path") {
                p.insert(
                    "agent_transcript_path".into(),
                    format!("{dir}/transcripts/subagent-agent.jsonl").into(),
                );
            }
            v["payload"].to_string()
        })
        .collect()
}

/// Runs an installed hook command as an agent does: `cmd` (a shell running the command, its
/// environment set) with `payload` on stdin; the hook must exit 0 at once and print nothing.
pub fn run_as_agent(cmd: &mut Command, payload: &str) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        (out.status.code(), out.stdout.len(), out.stderr.len()),
        (Some(0), 0, 0),
        "a hook exits 0 and never prints: {cmd:?}\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A stand-in agent process: a Python loop that runs `hook` (the hook binary and its
/// arguments) as its own child for each payload it is sent, as an agent runs its hooks, so the
/// daemon takes its pid for the agent's, and killing it is the agent dying.
pub struct StandIn {
    child: std::process::Child,
    to: std::process::ChildStdin,
    from: std::io::BufReader<std::process::ChildStdout>,
}

impl StandIn {
    /// `cmd` is `python3` with the agent's environment; `hook` the command each payload runs.
    pub fn start(mut cmd: Command, hook: &[&str]) -> StandIn {
        let argv: Vec<String> = hook.iter().map(|a| format!("{a:?}")).collect();
        let script = format!(
            "import subprocess, sys\n\
             for line in sys.stdin:\n\
             \x20   subprocess.run([{}], input=line.encode(), check=True)\n\
             \x20   print('ok', flush=True)\n",
            argv.join(", ")
        );
        let mut child = cmd
            .args(["-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let to = child.stdin.take().unwrap();
        let from = std::io::BufReader::new(child.stdout.take().unwrap());
        StandIn { child, to, from }
    }

    /// Hands `payload` to a hook, and waits until that hook has exited 0.
    pub fn run(&mut self, payload: &str) {
        use std::io::BufRead;
        writeln!(self.to, "{payload}").unwrap();
        let mut line = String::new();
        self.from.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ok", "the hook failed on {payload}");
    }

    /// The agent's process id, which its hooks name.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The agent dies (SIGKILL: no hook says so).
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}
