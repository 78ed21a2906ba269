//! The daemon's pipelines, one per set of settings that payloads were handed off with.
//!
//! A hook names its configuration file and passes on the variables it saw ([`HandOff`]); the
//! daemon resolves them, with its own flags below, into [`Settings`], and starts a pipeline
//! the first time it sees each. Two agents set up for two collectors each reach their own.
//! The file is looked at again whenever its size or modification time changes, so an edited
//! file takes effect for the next turn without a restart. Settings that do not resolve (a
//! malformed file) are an error, logged once; the payloads wait in their journal until they
//! do.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use super::HandOff;
use crate::config::{ConfigError, ConfigFile, Overrides, Settings};
use crate::export::{self, ExportError};
use crate::pipeline::{self, PipelineGuard, PipelineHandle, Summary};

/// Which settings: the hash of the hand-off and of the file's contents.
pub type ProfileId = u64;

/// An environment to look variables up in.
pub type EnvLookup = Box<dyn Fn(&str) -> Option<String>>;

/// A configuration file as last read, and how it looked on disk then.
struct Cached {
    stamp: Option<(u64, SystemTime)>,
    /// The contents' hash, part of the profile id: a changed file is other settings.
    hash: u64,
    file: Result<Option<ConfigFile>, ConfigError>,
}

struct Running {
    handle: PipelineHandle,
    guard: PipelineGuard,
    settings: Settings,
    /// Journals whose current turn goes here.
    bound: usize,
}

pub struct Profiles {
    /// The daemon's own flags: below the hand-off's variables, over the file.
    base: Overrides,
    /// The daemon's own environment, for what a hand-off does not carry (`HOME` and `XDG_*`
    /// from hooks older than their hand-off).
    base_env: EnvLookup,
    files: HashMap<PathBuf, Cached>,
    running: HashMap<ProfileId, Running>,
    logged: HashSet<String>,
}

fn hash_of(h: &impl Hash) -> u64 {
    let mut s = DefaultHasher::new();
    h.hash(&mut s);
    s.finish()
}

/// How a file looked on disk: its size and modification time.
pub(super) type Stamp = (u64, SystemTime);

/// The file's [`Stamp`] now; `None` if it is not there.
pub(super) fn stamp(path: &PathBuf) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?))
}

impl Profiles {
    pub fn new(base: Overrides, base_env: EnvLookup) -> Self {
        Profiles {
            base,
            base_env,
            files: HashMap::new(),
            running: HashMap::new(),
            logged: HashSet::new(),
        }
    }

    /// The file at `path`, read again if it changed on disk.
    fn file(&mut self, path: &PathBuf) -> &Cached {
        let now = stamp(path);
        let stale = self.files.get(path).is_none_or(|c| c.stamp != now);
        if stale {
            let text = std::fs::read(path).unwrap_or_default();
            let file = ConfigFile::load(path);
            if let Ok(Some(f)) = &file {
                for w in &f.warnings {
                    tracing::warn!("{w}");
                }
            }
            self.files.insert(
                path.clone(),
                Cached {
                    stamp: now,
                    hash: hash_of(&text),
                    file,
                },
            );
        }
        &self.files[path]
    }

    /// The settings `handoff` stands for, with their id.
    pub fn settings(&mut self, handoff: &HandOff) -> Result<(ProfileId, Settings), String> {
        let (file, file_hash) = match &handoff.config {
            Some(path) => {
                let cached = self.file(path);
                match &cached.file {
                    Ok(Some(f)) => (Some(f.clone()), cached.hash),
                    Ok(None) => {
                        return Err(format!(
                            "the configuration file {} does not exist (the hook command names it with --config); the payloads wait in the journal",
                            path.display()
                        ))
                    }
                    Err(e) => return Err(format!("{e}; the payloads wait in the journal until it is fixed")),
                }
            }
            None => (None, 0),
        };
        let env = |k: &str| {
            // A session's own places when its hook handed them off (older journals did not).
            let handed = k.starts_with("OTEL_")
                || k.starts_with("ALBEDO_OTEL_")
                || (super::is_session_place(k) && handoff.env.contains_key(k));
            if handed {
                handoff.env.get(k).cloned()
            } else {
                (self.base_env)(k)
            }
        };
        let mut settings =
            Settings::resolve(&self.base, &env, file.as_ref()).map_err(|e| e.to_string())?;
        settings.file = file;
        Ok((hash_of(&(handoff, file_hash)), settings))
    }

    /// Logs `message` the first time it is seen.
    pub fn log_once(&mut self, message: String) {
        if self.logged.insert(message.clone()) {
            tracing::error!("{message}");
        }
    }

    /// The pipeline of profile `id`, started (with `settings`) if it is not running.
    pub fn bind(&mut self, id: ProfileId, settings: &Settings) -> Result<(), ExportError> {
        if let Some(r) = self.running.get_mut(&id) {
            r.bound += 1;
            return Ok(());
        }
        let (kind, otlp) = (settings.exporter.clone(), settings.otlp.clone());
        let (handle, guard) = pipeline::start(settings.pipeline.clone(), move || {
            export::from_settings(&kind, otlp)
        })?;
        tracing::info!("exporting to {}", guard.target());
        self.running.insert(
            id,
            Running {
                handle,
                guard,
                settings: settings.clone(),
                bound: 1,
            },
        );
        Ok(())
    }

    /// A journal no longer sends to `id`; its pipeline is closed (what it holds delivered)
    /// once no journal does.
    pub fn unbind(&mut self, id: ProfileId) {
        let Some(r) = self.running.get_mut(&id) else {
            return;
        };
        r.bound = r.bound.saturating_sub(1);
        if r.bound == 0 {
            if let Some(r) = self.running.remove(&id) {
                let target = r.guard.target().to_string();
                drop(r.handle);
                let summary = r.guard.close();
                tracing::info!("closed the pipeline to {target}: {summary}");
            }
        }
    }

    pub fn handle(&self, id: ProfileId) -> Option<&PipelineHandle> {
        self.running.get(&id).map(|r| &r.handle)
    }

    pub fn settings_of(&self, id: ProfileId) -> Option<&Settings> {
        self.running.get(&id).map(|r| &r.settings)
    }

    /// Waits until everything handed to every pipeline is delivered or spooled.
    pub fn flush(&self, timeout: Duration) -> bool {
        self.running.values().all(|r| r.handle.flush(timeout))
    }

    /// Closes every pipeline; returns their counts, added up.
    pub fn close(self) -> Summary {
        let mut total = Summary::default();
        for (_, r) in self.running {
            drop(r.handle);
            total.add(&r.guard.close());
        }
        total
    }
}
