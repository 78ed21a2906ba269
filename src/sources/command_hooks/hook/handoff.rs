//! What a hook is handed and hands on: its command line, the head of every payload (what is
//! read of it whatever its agent: by the hook, raw, and by the daemon), and the settings a
//! payload is exported with (the hook's own variables, never its headers).

use std::borrow::Cow;
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::value::RawValue;
use thiserror::Error;

/// Payloads larger than this are not journaled whole (a tool output is cut to 64 KiB before
/// hooks see it): what identifies the event is, marked truncated (see [`super::oversized`]).
pub(crate) const MAX_PAYLOAD: u64 = 16 << 20;

/// What a hook is told on its command line.
#[derive(Debug, Clone, Default)]
pub struct HookArgs {
    /// Where journals go (`--hook-dir`).
    pub dir: Option<PathBuf>,
    /// The configuration file the daemon exports this payload with (`--config`).
    pub config: Option<PathBuf>,
    /// Whose hook this is (`--agent`): none for Claude Code's and albedo's.
    pub agent: Option<String>,
}

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

/// The head of a payload as the hook reads it, in one pass: its session, and what tells another
/// agent's payload from Claude Code's (see [`super::super::foreign`]; raw, so that a field of a shape no
/// one expected never costs the payload). The daemon reads the same head of a journaled payload
/// as a [`Head`].
#[derive(Deserialize)]
pub(crate) struct RawHead<'a> {
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

/// The head of a payload as the daemon reads it from its journal line, whatever its agent: a
/// line without a session or an event is not a payload (the hook's `RawHead` of the same
/// payload takes it as it comes).
#[derive(Debug, Deserialize)]
pub struct Head {
    pub session_id: String,
    pub hook_event_name: String,
    /// Only on `albedo-otel doctor`'s test payload: which test it is.
    #[serde(default)]
    pub doctor_id: Option<String>,
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
    /// [`super::agent::Agent::passes_its_environment`]); `ALBEDO_OTEL_*` always are.
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
