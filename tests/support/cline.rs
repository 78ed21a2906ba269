//! The real Cline CLI driven as an editor drives it (`cline --acp`), and the hub it leaves
//! running stopped: what `tests/cline_cli.rs` needs beside its tests.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

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
pub fn stop_hub(work: &std::path::Path) {
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
