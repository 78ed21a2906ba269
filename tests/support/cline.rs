//! The real Cline CLI driven as an editor drives it (`cline --acp`), the hub it leaves running
//! stopped, its session's journal retired once it is gone, and a sub-agent's messages file
//! found: what `tests/sources/command_hooks/agents/cline.rs` needs beside its tests.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::agent_run::{albedo_otel, isolated_env};
use super::wait_until;

/// One `cline --acp` process, driven as an editor does: JSON-RPC, a line a message. Tool
/// permissions it asks for are granted.
pub struct Acp {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
    next: u64,
}

impl Acp {
    pub fn start(mut cmd: Command) -> Acp {
        let mut child = cmd
            .arg("--acp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    let _ = tx.send(v);
                }
            }
        });
        Acp {
            child,
            stdin,
            lines,
            next: 1,
        }
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends `method` and waits for its answer, granting what Cline asks meanwhile.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no answer to {method}: {e}"));
            if m["method"] == "session/request_permission" {
                let options = m["params"]["options"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let allow = options
                    .iter()
                    .find(|o| o["kind"].as_str().is_some_and(|k| k.starts_with("allow")))
                    .expect("an option that allows the call");
                let answer = json!({"jsonrpc": "2.0", "id": m["id"], "result":
                    {"outcome": {"outcome": "selected", "optionId": allow["optionId"]}}});
                self.send(answer);
            } else if m["id"] == id && m.get("method").is_none() {
                assert!(m.get("error").is_none(), "{method}: {m}");
                return m["result"].clone();
            }
        }
    }

    /// Closes Cline's input, as an editor that quits, and waits for it to exit.
    pub fn close(mut self) {
        drop(self.stdin);
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.wait();
    }
}

/// Stops the hub Cline starts in a process group of its own for a session in `work`: a
/// Cline that exits stops it, a killed one leaves it running.
#[cfg(unix)]
pub fn stop_hub(work: &Path) {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return;
    };
    let cwd = work.to_string_lossy().into_owned();
    for p in procs.flatten() {
        let Ok(pid) = p.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(p.path().join("cmdline")) else {
            continue;
        };
        let words: Vec<String> = cmdline
            .split(|b| *b == 0)
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        if words.iter().any(|w| w == "--cline-hub-daemon") && words.contains(&cwd) {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
}

/// `cline --json` ends its session with no hook (no `SessionShutdown`), and the daemon that
/// exported its turn may go idle before Cline exits: the next daemon, which sees Cline gone,
/// retires the session's journal. Waits for the first to go idle (its last turn out), then
/// runs that next one.
pub fn retire_after_exit(home: &Path, spool: &Path, hook_dir: &Path) {
    use albedo_otel::sources::command_hooks::daemon;
    wait_until(Duration::from_secs(60), "the daemon to go idle", || {
        !daemon::running(hook_dir)
    });
    // Appended to, as the daemons the hooks start write it.
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(hook_dir.join("daemon.log"))
        .unwrap();
    let status = albedo_otel(isolated_env, home, spool)
        .arg("daemon")
        .arg("--hook-dir")
        .arg(hook_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .status()
        .unwrap();
    assert!(status.success(), "the next daemon: {status}");
}

/// The one sub-agent's messages file, beside the session's `lead` file.
pub fn sub_agent_file(lead: &Path) -> PathBuf {
    let dir = lead.parent().unwrap();
    let subs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("agent_") && n.ends_with(".messages.json"))
        })
        .collect();
    assert_eq!(subs.len(), 1, "one sub-agent's file: {subs:?}");
    subs[0].clone()
}
