//! Handing one payload off: what the hook reads of it, which session's journal it goes to
//! (another agent's payload never goes into a Claude Code session), and the settings it is
//! exported with.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;
use thiserror::Error;

use super::{agent, foreign, journal};

#[derive(Debug, Error)]
pub enum HookError {
    #[error("the hook payload is not JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("the hook payload has no session_id")]
    NoSession,
    #[error("cannot write the journal in {dir}: {source}")]
    Journal {
        dir: String,
        #[source]
        source: std::io::Error,
    },
}

/// What the hook reads of every payload, in one pass: its session, and what tells another
/// agent's payload from Claude Code's (see [`foreign`]; raw, so that a field of a shape no
/// one expected never costs the payload).
#[derive(Deserialize)]
pub(crate) struct Minimal<'a> {
    #[serde(borrow)]
    pub(crate) session_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(crate) transcript_path: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) hook_event_name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) doctor_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) cursor_version: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) conversation_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) generation_id: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "sessionId")]
    pub(crate) session_id_camel: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "hookEventName")]
    pub(crate) hook_event_camel: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "transcriptPath")]
    pub(crate) transcript_path_camel: Option<&'a RawValue>,
}

/// The settings a payload is handed off with: the configuration file in force for the hook
/// (its `--config`, `ALBEDO_OTEL_CONFIG`, or the default file if it exists), and the
/// `OTEL_*`/`ALBEDO_OTEL_*` variables the hook saw. Header variables are not recorded: they
/// are secrets, and their place is the configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize, Deserialize)]
pub struct HandOff {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
}

impl HandOff {
    /// What this process is handed: its `--config`, else the variable or the default file,
    /// and its own variables. A variable whose name or value is not UTF-8 is left out (and
    /// named in `skipped`, if it is one of ours): `std::env::vars` would panic on it, and a
    /// Latin-1 value in a user's shell profile must not cost every event.
    /// `otel`: whether the hook's `OTEL_*` variables are the agent's to hand on (see
    /// [`agent::Agent::passes_its_environment`]); `ALBEDO_OTEL_*` always are.
    pub fn of_process(config: Option<PathBuf>, otel: bool, skipped: &mut Vec<String>) -> HandOff {
        let env = |k: &str| std::env::var(k).ok();
        // Named by the variable (any bytes: it is a path), else the default file if it exists.
        let named = std::env::var_os(crate::config::env::ALBEDO_OTEL_CONFIG)
            .filter(|v| !v.to_string_lossy().trim().is_empty())
            .map(PathBuf::from);
        let config = config.or(named).or_else(|| {
            let path = crate::config::file::default_path(&env)?;
            path.is_file().then_some(path)
        });
        let ours = |k: &str| {
            (((otel && k.starts_with("OTEL_")) || k.starts_with("ALBEDO_OTEL_"))
                && !k.contains("HEADERS")
                && k != crate::config::env::ALBEDO_OTEL_CONFIG)
                || is_session_place(k)
        };
        let mut env = std::collections::BTreeMap::new();
        for (k, v) in std::env::vars_os() {
            let name = k.to_string_lossy();
            if !ours(&name) {
                continue;
            }
            match (k.to_str(), v.into_string()) {
                (Some(k), Ok(v)) => {
                    env.insert(k.to_string(), v);
                }
                _ => skipped.push(name.into_owned()),
            }
        }
        HandOff { config, env }
    }
}

/// The variables that say where a session's files are (`HOME`, `XDG_*`): handed off with
/// each payload, so the daemon, which serves every session, resolves each session's own
/// (its spool, its default configuration) rather than the first hook's.
pub fn is_session_place(name: &str) -> bool {
    matches!(
        name,
        "HOME" | "XDG_CONFIG_HOME" | "XDG_STATE_HOME" | "XDG_CACHE_HOME" | "XDG_DATA_HOME"
    )
}

/// Appends one hook payload to its session's journal, stamped with the time it arrived, the
/// settings it is handed off with, and the agent process that ran the hook (so the daemon can
/// tell when that agent is gone).
pub fn hand_off(
    dir: &Path,
    payload: &str,
    handoff: &HandOff,
    agent: Option<&str>,
) -> Result<(), HookError> {
    let received_ms = crate::clock::unix_ms();
    let raw: &RawValue = serde_json::from_str(payload).map_err(HookError::NotJson)?;
    let minimal = serde_json::from_str::<Minimal<'_>>(raw.get()).map_err(HookError::NotJson)?;
    let known = agent.and_then(agent::Agent::from_name);
    // Claude Code's hook is run by other agents too: theirs never go into its sessions.
    if known.is_none_or(|a| a == agent::Agent::ClaudeCode) {
        if let Some(caller) = foreign::recognise(&minimal, &|k| std::env::var(k).ok()) {
            return foreign::hand_off(dir, raw, &minimal, handoff, caller, received_ms);
        }
    }
    let spec = known.map(agent::Agent::spec);
    let parent = spec.and_then(|s| (s.journal_under)(raw.get()));
    let session = parent
        .map(Cow::Owned)
        .or(minimal.session_id)
        .filter(|s| !s.is_empty())
        .ok_or(HookError::NoSession)?;
    let rewritten = spec.and_then(|s| (s.rewrite)(raw.get(), &|k| std::env::var(k).ok()));
    // A journal line is one line: re-encode the rare pretty-printed payload.
    let compact: Cow<'_, str> = if let Some(slim) = rewritten {
        Cow::Owned(slim)
    } else if raw.get().contains('\n') {
        let v: serde_json::Value = serde_json::from_str(raw.get()).map_err(HookError::NotJson)?;
        Cow::Owned(v.to_string())
    } else {
        Cow::Borrowed(raw.get())
    };
    let stamp = journal::Stamp {
        received_ms,
        host: crate::process::hook_host(),
        handoff,
        agent,
    };
    journal::append(dir, &session, &compact, &stamp).map_err(|source| HookError::Journal {
        dir: dir.display().to_string(),
        source,
    })
}
