//! The hook for an agent that streams its events (opencode's plugin): one process reads a
//! JSON payload a line until its input closes, and journals each as it comes, so that what
//! the agent wrote survives the agent. The same hand-off as one payload's, line by line: a
//! line that is not a payload is named in the daemon's log by its number, and the stream
//! goes on.
//!
//! The input closes when the agent exits, however it exits: the hook then journals
//! [`EXITED`] for each session it saw, which the agent itself never says. The daemon closes
//! those sessions (an open turn goes out unfinished) and removes their journals.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::super::{
    caught, ensure_daemon, hand_off, log_problems, panic_message, HandOff, HookArgs,
};
use super::super::{RawHead, MAX_PAYLOAD};

/// The payload the hook journals for each session once its agent has exited.
pub const EXITED: &str = "agent.exited";

/// A daemon just started takes a moment to hold its lock: no second one before then.
const DAEMON_START: Duration = Duration::from_secs(2);

/// Journals each line of stdin until it closes; never fails, never prints.
pub(super) fn journal_lines(
    args: &HookArgs,
    dir: &Path,
    daemon_exe: impl FnOnce() -> std::io::Result<PathBuf>,
) {
    let mut skipped = Vec::new();
    // The agent runs its plugins with the user's whole environment: its OTEL_* are meant for
    // other programs, and the configuration file decides.
    let handoff = caught(|| HandOff::of_process(args.config.clone(), false, &mut skipped))
        .unwrap_or_else(|| HandOff {
            config: args.config.clone(),
            env: Default::default(),
        });
    let skipped: Vec<String> = skipped
        .into_iter()
        .map(|name| format!("the variable {name} is not UTF-8; the payloads went out without it"))
        .collect();
    if !skipped.is_empty() {
        let _ = caught(|| log_problems(dir, &skipped));
    }
    let exe = caught(daemon_exe).and_then(Result::ok);
    let mut started: Option<Instant> = None;
    let mut input = std::io::stdin().lock();
    let mut line = Vec::new();
    let mut number = 0u64;
    let mut sessions: Vec<String> = Vec::new();
    loop {
        line.clear();
        match (&mut input).take(MAX_PAYLOAD).read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = caught(|| log_problems(dir, &[format!("cannot read the events: {e}")]));
                break;
            }
        }
        number += 1;
        let mut problems = Vec::new();
        if line.last() != Some(&b'\n') && line.len() as u64 == MAX_PAYLOAD {
            // The rest of an overlong line, up to its newline, is not a payload either.
            let _ = input.skip_until(b'\n');
            problems.push(format!(
                "line {number} is longer than {MAX_PAYLOAD} bytes; dropped"
            ));
        } else {
            let text = String::from_utf8_lossy(&line);
            let payload = text.trim();
            if payload.is_empty() {
                continue;
            }
            match caught(|| hand_off(dir, payload, &handoff, args.agent.as_deref())) {
                Some(Ok(())) => {
                    let session = serde_json::from_str::<RawHead<'_>>(payload)
                        .ok()
                        .and_then(|m| m.session_id);
                    if let Some(id) = session.filter(|id| !sessions.iter().any(|s| s == id)) {
                        sessions.push(id.into_owned());
                    }
                    let fresh = started.is_some_and(|t| t.elapsed() < DAEMON_START);
                    if let (Some(exe), false) = (&exe, fresh) {
                        match caught(|| ensure_daemon(dir, || Ok(exe.clone()), &[])) {
                            Some(Ok(true)) => started = Some(Instant::now()),
                            Some(Ok(false)) => {}
                            Some(Err(e)) => problems.push(e),
                            None => problems
                                .push(format!("starting the daemon panicked: {}", panic_message())),
                        }
                    }
                }
                Some(Err(e)) => problems.push(format!("line {number}: {e}")),
                None => problems.push(format!(
                    "line {number}: the hook panicked: {}",
                    panic_message()
                )),
            }
        }
        if !problems.is_empty() {
            let _ = caught(|| log_problems(dir, &problems));
        }
    }
    let at_ms = crate::clock::unix_ms();
    let mut problems = Vec::new();
    for id in &sessions {
        let exited =
            serde_json::json!({"session_id": id, "hook_event_name": EXITED, "at_ms": at_ms});
        match caught(|| hand_off(dir, &exited.to_string(), &handoff, args.agent.as_deref())) {
            Some(Ok(())) => {}
            Some(Err(e)) => problems.push(format!("session {id} ended: {e}")),
            None => problems.push(format!("session {id} ended: {}", panic_message())),
        }
    }
    if !sessions.is_empty() && exe.is_some() {
        let exe = exe.clone().expect("checked");
        if let Some(Err(e)) = caught(|| ensure_daemon(dir, || Ok(exe), &[])) {
            problems.push(e);
        }
    }
    if !problems.is_empty() {
        let _ = caught(|| log_problems(dir, &problems));
    }
}
