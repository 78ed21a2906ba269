//! Where state lives by default: `$XDG_STATE_HOME/albedo-otel`, else
//! `~/.local/state/albedo-otel`, with the spool and the hook journals below it.

use std::path::{Path, PathBuf};

use super::env::{HOME, XDG_STATE_HOME};

/// `$XDG_STATE_HOME/albedo-otel`, else `$HOME/.local/state/albedo-otel`.
pub fn state_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |k: &str| env(k).filter(|s| !s.is_empty());
    let state = set(XDG_STATE_HOME)
        .map(PathBuf::from)
        .or_else(|| set(HOME).map(|h| Path::new(&h).join(".local/state")))?;
    Some(state.join("albedo-otel"))
}

/// The local store's file: `$XDG_DATA_HOME/albedo-otel/store.sqlite`, else under
/// `$HOME/.local/share`.
#[cfg(feature = "store")]
pub fn default_store_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |k: &str| env(k).filter(|s| !s.is_empty());
    let data = set(super::env::XDG_DATA_HOME)
        .map(PathBuf::from)
        .or_else(|| set(HOME).map(|h| Path::new(&h).join(".local/share")))?;
    Some(data.join("albedo-otel").join("store.sqlite"))
}

/// The spool's root: one subfolder per destination below it, so data spooled for one
/// collector is never sent to another.
pub fn default_spool_root(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    state_dir(env).map(|d| d.join("spool"))
}

/// The command hooks' journals.
pub fn default_hook_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    state_dir(env).map(|d| d.join("hooks"))
}
