//! The exporter as a user runs it (`albedo-otel run`, fed line by line), and what the fault
//! tests need around it: generated streams, the spool's contents, the closing summary's
//! counts, and a collector that never answers.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};

use albedo_otel::testing::{generate, Expected, GenConfig};

use super::{check_invariants, scratch, Receiver, Scratch};

/// The exporter as a child process fed line by line, stderr kept in a file.
pub struct Exporter {
    pub child: Child,
    stdin: Option<ChildStdin>,
    log: PathBuf,
    /// Its log's folder and its empty configuration folder, removed with it.
    _dirs: (Scratch, Scratch),
}

impl Exporter {
    pub fn start(args: &[&str], spool: &Path) -> Exporter {
        let (log_dir, config) = (scratch("log"), scratch("config"));
        let log = log_dir.join("stderr.log");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
        cmd.args(args)
            .arg("--spool-dir")
            .arg(spool)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            // A config file of the developer's own must not change what is tested.
            .env("XDG_CONFIG_HOME", &config);
        for (k, _) in std::env::vars() {
            if k.starts_with("OTEL_") || k.starts_with("ALBEDO_OTEL") {
                cmd.env_remove(k);
            }
        }
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take();
        Exporter {
            child,
            stdin,
            log,
            _dirs: (log_dir, config),
        }
    }

    pub fn write(&mut self, lines: &[String]) {
        let stdin = self.stdin.as_mut().unwrap();
        for l in lines {
            writeln!(stdin, "{l}").unwrap();
        }
        stdin.flush().unwrap();
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Closes stdin (EOF) and waits for the exporter to flush and exit.
    pub fn finish(mut self) -> (ExitStatus, String) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        (status, self.stderr())
    }

    /// SIGTERM, as a host stopping the exporter sends; waits for the exit.
    pub fn term(mut self) -> (ExitStatus, String) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success());
        let status = self.child.wait().unwrap();
        (status, self.stderr())
    }

    pub fn kill9(mut self) -> String {
        self.child.kill().unwrap(); // SIGKILL
        self.child.wait().unwrap();
        self.stderr()
    }
}

/// How many spans the assembly emits for these lines, before the end of input.
pub fn spans_emitted_by(lines: &[String]) -> usize {
    use albedo_otel::assemble::{AssembleConfig, Assembler, Output};
    let mut asm = Assembler::new(AssembleConfig::default());
    let mut out = Output::default();
    for l in lines {
        asm.push(
            &albedo_otel::protocol::decode_line(l.as_bytes()).unwrap(),
            &mut out,
        );
    }
    out.spans.len()
}

/// `run` to `url` over `protocol`, in batches of `batch` spans, then `extra`.
pub fn run_args<'a>(
    protocol: &'a str,
    url: &'a str,
    batch: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--protocol",
        protocol,
        "--endpoint",
        url,
        "--batch-size",
        batch,
    ];
    args.extend_from_slice(extra);
    args
}

pub fn stream(sessions: usize) -> (Vec<String>, Expected) {
    stream_seeded(sessions, 11)
}

pub fn stream_seeded(sessions: usize, seed: u64) -> (Vec<String>, Expected) {
    generate(&GenConfig {
        sessions,
        turns_per_session: 2,
        seed,
        ..GenConfig::default()
    })
}

/// Spans waiting in the spool, by the counts in its file names.
pub fn spooled_spans(root: &Path) -> u64 {
    pub fn walk(dir: &Path, total: &mut u64) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                // A destination's `metrics` folder holds metrics exports, counted in points.
                if p.file_name().is_some_and(|n| n != "metrics") {
                    walk(&p, total);
                }
            } else if let Some(name) = p.file_name().and_then(|n| n.to_str()) {
                if let Some(stem) = name.strip_suffix(".otlp") {
                    *total += stem
                        .rsplit('-')
                        .next()
                        .and_then(|n| n.parse::<u64>().ok())
                        .unwrap_or(0);
                }
            }
        }
    }
    let mut total = 0;
    walk(root, &mut total);
    total
}

/// Everything the receivers got, checked: exactly the expected spans, each once. Prints the
/// table row.
pub fn assert_exactly_once(
    fault: &str,
    expected: &Expected,
    receivers: &[&Receiver],
    dropped: u64,
) {
    assert_each_once(fault, expected.spans(), receivers, dropped);
}

/// As [`assert_exactly_once`], for `want` spans in all.
pub fn assert_each_once(fault: &str, want: u64, receivers: &[&Receiver], dropped: u64) {
    let mut all = Vec::new();
    for r in receivers {
        all.extend(r.spans());
    }
    let unique: HashSet<_> = all
        .iter()
        .map(|s| (s.span.trace_id.clone(), s.span.span_id.clone()))
        .collect();
    let duplicates = all.len() - unique.len();
    println!(
        "| {fault} | {want} | {} | {duplicates} | {dropped} |",
        unique.len()
    );
    assert_eq!(duplicates, 0, "{fault}: duplicates");
    assert_eq!(
        unique.len() as u64 + dropped,
        want,
        "{fault}: spans received"
    );
    if dropped == 0 {
        check_invariants(&all);
    }
}

/// The counts in the exporter's closing summary (`done: … N delivered …`).
pub fn summary_count(stderr: &str, suffix: &str) -> u64 {
    let summary = stderr.lines().find(|l| l.contains("done:")).unwrap_or("");
    summary
        .split([',', ';', ':'])
        .find_map(|part| part.trim().strip_suffix(suffix))
        .and_then(|n| n.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// A collector that accepts connections, reads whatever is sent, and never answers.
pub struct Silent {
    pub port: u16,
    received: std::sync::Arc<std::sync::atomic::AtomicU64>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Silent {
    pub fn start() -> Silent {
        use std::sync::atomic::Ordering::Relaxed;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let thread = {
            let (received, stop) = (received.clone(), stop.clone());
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Relaxed) {
                        return;
                    }
                    let Ok(mut conn) = conn else { continue };
                    let received = received.clone();
                    std::thread::spawn(move || {
                        use std::io::Read;
                        let mut buf = [0u8; 64 << 10];
                        while let Ok(n) = conn.read(&mut buf) {
                            if n == 0 {
                                return;
                            }
                            received.fetch_add(n as u64, Relaxed);
                        }
                    });
                }
            })
        };
        Silent {
            port,
            received,
            stop,
            thread: Some(thread),
        }
    }

    pub fn received(&self) -> u64 {
        self.received.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Stops listening, so that the port can be taken by a real receiver.
    pub fn stop(mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}
