//! Writes a generated Claude Code history under a home folder, for the import and report
//! benchmarks (`scripts/bench-history`): `cargo run --release --example gen_claude_history --
//! HOME DAYS CALLS_PER_DAY`. Transcripts are shaped as Claude Code 2.1 writes them (a prompt,
//! then per model call an assistant line with its usage and a `tool_use`, and the user line
//! with its `tool_result`, each about a kilobyte as real ones are on average), a session of a
//! few turns, sessions through each day, a sub-agent's file in one session of three, ending
//! before now.
use std::io::Write;
use std::path::Path;

use albedo_otel::testing::Rng;
use serde_json::json;

fn iso(ms: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
    humantime::format_rfc3339_millis(t).to_string()
}

/// Filler of about `n` bytes, as the text and tool output that make real lines long.
fn filler(rng: &mut Rng, n: u64) -> String {
    const WORDS: [&str; 8] = ["the", "file", "reads", "tests", "pass", "build", "fn", "ok"];
    let mut s = String::new();
    while (s.len() as u64) < n {
        s.push_str(WORDS[rng.below(8) as usize]);
        s.push(' ');
    }
    s
}

fn main() {
    let mut args = std::env::args().skip(1);
    let home = args.next().expect("HOME DAYS CALLS_PER_DAY");
    let days: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(90);
    let per_day: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1_255);
    let project = Path::new(&home).join(".claude/projects/-home-dev-app");
    std::fs::create_dir_all(&project).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let (day_ms, start) = (86_400_000, now - days * 86_400_000);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut calls, mut bytes, mut n) = (0u64, 0u64, 0u64);
    for day in 0..days {
        let mut left = per_day;
        let mut s = 0;
        while left > 0 {
            let session = format!("{:08x}-{day:04x}-4{s:03x}-8000-000000000000", 0xab_cdef);
            // Through the first three quarters of its day: none runs past now.
            let mut at = start + day * day_ms + rng.below(day_ms / 4 * 3);
            let mut lines = Vec::new();
            let mut side = Vec::new();
            let line = |v: serde_json::Value, to: &mut Vec<String>| to.push(v.to_string());
            for t in 0..1 + rng.below(5) {
                line(
                    json!({"type": "user", "sessionId": session, "timestamp": iso(at),
                        "cwd": "/home/dev/app", "uuid": format!("p-{session}-{t}"),
                        "message": {"role": "user", "content": format!("turn {t}: {}", filler(&mut rng, 80))}}),
                    &mut lines,
                );
                for _ in 0..1 + rng.below(8) {
                    if left == 0 {
                        break;
                    }
                    left -= 1;
                    n += 1;
                    calls += 1;
                    at += 2_000 + rng.below(20_000);
                    let sub = s % 3 == 0 && rng.below(6) == 0;
                    let (input, output) = (3 + rng.below(50), 50 + rng.below(900));
                    let (read, write) = (20_000 + rng.below(80_000), rng.below(4_000));
                    let assistant = json!({"type": "assistant", "isSidechain": sub,
                        "sessionId": session, "timestamp": iso(at), "requestId": format!("req_{n}"),
                        "uuid": format!("u-{n}"), "cwd": "/home/dev/app",
                        "message": {"id": format!("msg_{n:024}"), "type": "message",
                            "role": "assistant", "model": "claude-sonnet-4-5",
                            "content": [{"type": "text", "text": filler(&mut rng, 300)},
                                {"type": "tool_use", "id": format!("toolu_{n}"), "name": "Bash",
                                 "input": {"command": "cargo test"}}],
                            "stop_reason": "tool_use",
                            "usage": {"input_tokens": input, "output_tokens": output,
                                "cache_read_input_tokens": read, "cache_creation_input_tokens": write,
                                "cache_creation": {"ephemeral_5m_input_tokens": write,
                                    "ephemeral_1h_input_tokens": 0}}}});
                    at += 500 + rng.below(5_000);
                    let result = json!({"type": "user", "isSidechain": sub, "sessionId": session,
                        "timestamp": iso(at), "uuid": format!("r-{n}"), "cwd": "/home/dev/app",
                        "message": {"role": "user", "content": [{"type": "tool_result",
                            "tool_use_id": format!("toolu_{n}"),
                            "content": filler(&mut rng, 500)}]}});
                    let to = if sub { &mut side } else { &mut lines };
                    line(assistant, to);
                    line(result, to);
                }
                at += 60_000;
            }
            let mut write = |path: &Path, lines: &[String]| {
                let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
                for l in lines {
                    writeln!(f, "{l}").unwrap();
                    bytes += l.len() as u64 + 1;
                }
            };
            write(&project.join(format!("{session}.jsonl")), &lines);
            if !side.is_empty() {
                let dir = project.join(&session).join("subagents");
                std::fs::create_dir_all(&dir).unwrap();
                write(&dir.join("agent-a1.jsonl"), &side);
            }
            s += 1;
        }
    }
    eprintln!(
        "{days} days, {calls} model calls, {:.0} MB",
        bytes as f64 / 1e6
    );
}
