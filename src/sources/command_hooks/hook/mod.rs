//! The hook process itself, `albedo-otel hook` and `albedo-otel-hook`: on the agent's critical
//! path, so it reads the payload, hands it off to its journal, starts the daemon if none runs,
//! and returns 0 whatever happens, printing nothing.

pub(super) mod append;
pub(super) mod handoff;
pub mod oversized;
pub(super) mod spawn;
pub mod streaming;

use std::io::Read;
use std::path::PathBuf;

use super::problems::{caught, keep_panic_messages, log_problems, panic_message};
use super::{agent, ensure_daemon, hand_off, HandOff};
use handoff::{HookArgs, MAX_PAYLOAD};

/// Where the journals go: the flag, `ALBEDO_OTEL_HOOK_DIR`, or the default under
/// `XDG_STATE_HOME` (or `HOME`). The hook reads only this of the configuration: everything
/// else is the daemon's to resolve.
pub fn hook_dir(flag: Option<PathBuf>, env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    flag.or_else(|| set(crate::config::env::ALBEDO_OTEL_HOOK_DIR).map(Into::into))
        .or_else(|| crate::config::default_hook_dir(&set))
}

/// One hook invocation: the payload on stdin goes to its journal, and `daemon_exe` is
/// started as the daemon if none runs. Whatever happens it prints nothing and returns 0 (the
/// exit code): a trace exporter must never steer or stall the agent. Problems go to the
/// daemon's log.
///
/// Every step runs under `catch_unwind`: under `albedo-otel-hook`'s C `main` a panic that
/// escaped would abort the process (exit 134) before the payload is journaled. If building
/// the hand-off panics, the payload is still journaled, with the configuration file alone.
pub fn invoke(args: HookArgs, daemon_exe: impl FnOnce() -> std::io::Result<PathBuf>) -> i32 {
    keep_panic_messages();
    let Some(Some(dir)) = caught(|| hook_dir(args.dir.clone(), &|k| std::env::var(k).ok())) else {
        return 0;
    };
    if args
        .agent
        .as_deref()
        .and_then(agent::Agent::from_name)
        .is_some_and(agent::Agent::streams)
    {
        streaming::journal_lines(&args, &dir, daemon_exe);
        return 0;
    }
    let mut problems = Vec::new();
    let payload = read_payload(&mut problems);
    let mut skipped = Vec::new();
    let journaled = caught(|| {
        let known = args.agent.as_deref().and_then(agent::Agent::from_name);
        let otel = !known.is_some_and(agent::Agent::passes_its_environment);
        let handoff = HandOff::of_process(args.config.clone(), otel, &mut skipped);
        hand_off(&dir, &payload, &handoff, args.agent.as_deref())
    });
    for name in &skipped {
        problems.push(format!(
            "the variable {name} is not UTF-8; the payload went out without it"
        ));
    }
    let journaled = match journaled {
        Some(Ok(())) => true,
        Some(Err(e)) => {
            problems.push(e.to_string());
            false
        }
        None => {
            problems.push(format!("the hook panicked: {}", panic_message()));
            let bare = HandOff {
                config: args.config.clone(),
                env: Default::default(),
            };
            match caught(|| hand_off(&dir, &payload, &bare, args.agent.as_deref())) {
                Some(Ok(())) => {
                    problems.push("the payload was journaled without its variables".into());
                    true
                }
                Some(Err(e)) => {
                    problems.push(e.to_string());
                    false
                }
                None => {
                    problems.push("the payload was lost".into());
                    false
                }
            }
        }
    };
    // A daemon only for a payload it has to export.
    if journaled {
        match caught(|| ensure_daemon(&dir, daemon_exe, &[])) {
            Some(Ok(_)) => {}
            Some(Err(e)) => problems.push(e),
            None => problems.push(format!("starting the daemon panicked: {}", panic_message())),
        }
    }
    if !problems.is_empty() {
        let _ = caught(|| log_problems(&dir, &problems));
    }
    0
}

/// The payload, as text. Agents send UTF-8 JSON; bytes that are not UTF-8 are replaced
/// rather than losing the event over them. One over [`MAX_PAYLOAD`] is read to its end and
/// stands in the journal as its identifying fields.
fn read_payload(problems: &mut Vec<String>) -> String {
    let mut bytes = Vec::new();
    let mut stdin = std::io::stdin().lock();
    if let Err(e) = (&mut stdin).take(MAX_PAYLOAD).read_to_end(&mut bytes) {
        problems.push(format!("cannot read the payload: {e}"));
    }
    let mut next = [0u8; 1];
    if bytes.len() as u64 == MAX_PAYLOAD && matches!(stdin.read(&mut next), Ok(1)) {
        bytes.push(next[0]);
        return match oversized::identify(&bytes, stdin) {
            Ok(kept) => {
                problems.push(format!(
                    "a payload over {MAX_PAYLOAD} bytes was journaled as what identifies it ({kept:.200}), marked {}",
                    oversized::TRUNCATED
                ));
                kept
            }
            Err(e) => {
                problems.push(format!(
                    "a payload over {MAX_PAYLOAD} bytes is not a JSON object ({e}); dropped"
                ));
                String::new()
            }
        };
    }
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            problems.push(format!(
                "the payload is not UTF-8 at byte {}; those bytes were replaced",
                e.utf8_error().valid_up_to()
            ));
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    }
}
