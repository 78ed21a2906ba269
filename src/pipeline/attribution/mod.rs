//! Who and where, for each turn: the stage before assembly that looks up, for a session's
//! `session` and `prompted` records, the git checkout its folder is in (repository, branch,
//! commit) and who the user is, and hands them to the assembly with the record. The assembly
//! stays pure; the files are read here, on the assemble thread, never on a hook's path.
//!
//! Each folder's facts are kept, and a record checks them with a few `stat`s (HEAD, config,
//! the branch's ref, packed-refs) before they are used again, so a turn after a commit or a
//! checkout says the new ones. A folder that is not a checkout is looked at again after a
//! while, in case it became one. Nothing here fails a record: what cannot be read is left out.

mod git;
mod gitconfig;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::assemble::{Assembler, Attribution};
use crate::protocol::{Event, Record};

/// The configured `user.id`: who the user is said to be.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum UserId {
    /// The checkout's git `user.email`, else the global one, else the login name.
    #[default]
    Auto,
    /// This value, always.
    Fixed(String),
    /// No `user.id` at all.
    Off,
}

/// Folders remembered before the memo starts afresh.
const FOLDERS_KEPT: usize = 512;
/// How long a folder that is not a checkout is believed not to be one.
const RECHECK_NOT_A_CHECKOUT: Duration = Duration::from_secs(30);
/// The user's own git config is looked at no more often than this: it is the same for every
/// session, and a session start or a prompt each ask.
const RECHECK_GLOBAL: Duration = Duration::from_secs(1);

/// Where to find the user's own git config and login name: the process's environment,
/// taken once, so tests can give their own.
#[derive(Debug, Clone, Default)]
pub struct UserEnv {
    pub home: Option<PathBuf>,
    pub xdg_config_home: Option<PathBuf>,
    /// `USER`, `USERNAME` or `LOGNAME`, else the password file's name for our uid.
    pub login: Option<String>,
}

impl UserEnv {
    pub fn from_process() -> UserEnv {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        UserEnv {
            home: var("HOME").map(PathBuf::from),
            xdg_config_home: var("XDG_CONFIG_HOME").map(PathBuf::from),
            login: var("USER")
                .or_else(|| var("USERNAME"))
                .or_else(|| var("LOGNAME"))
                .or_else(login_from_passwd),
        }
    }
}

/// The daemon's environment is cut down to a few variables, `USER` not among them: the
/// password file names our uid without running anything.
#[cfg(unix)]
fn login_from_passwd() -> Option<String> {
    let uid = rustix::process::getuid().as_raw().to_string();
    let text = std::fs::read_to_string("/etc/passwd").ok()?;
    text.lines().find_map(|l| {
        let mut f = l.split(':');
        let name = f.next()?;
        (f.nth(1)? == uid && !name.is_empty()).then(|| name.to_string())
    })
}

#[cfg(not(unix))]
fn login_from_passwd() -> Option<String> {
    None
}

struct Folder {
    facts: Arc<Attribution>,
    /// Which read of the user's own git config the facts' `user.id` comes from.
    generation: u64,
    /// `None`: not a checkout, until `recheck`.
    stamps: Option<Vec<git::Stamp>>,
    recheck: Instant,
}

/// The stage: facts per folder, and who the user is.
pub struct Attributor {
    user: UserId,
    env: UserEnv,
    folders: HashMap<String, Folder>,
    /// The global git `user.email`, the files it came from, and when they are next looked at.
    global: Option<(Option<String>, Vec<git::Stamp>, Instant)>,
    /// How often the user's own git config is looked at (`RECHECK_GLOBAL`).
    global_every: Duration,
    /// Counts reads of the global config: facts made before the last one are made again.
    generation: u64,
    /// The facts of a session with no folder (only who), and their generation.
    nowhere: Option<(Arc<Attribution>, u64)>,
}

impl Attributor {
    pub fn new(user: UserId, env: UserEnv) -> Attributor {
        Attributor {
            user,
            env,
            folders: HashMap::new(),
            global: None,
            global_every: RECHECK_GLOBAL,
            generation: 0,
            nowhere: None,
        }
    }

    /// The facts to hand in with `record`: for a `session` or `prompted` record only (a
    /// session's start and each turn's), `None` for the others, which change nothing.
    pub fn for_record(
        &mut self,
        record: &Record<'_>,
        assembler: &Assembler,
    ) -> Option<Arc<Attribution>> {
        let sid = record.session.as_ref();
        let folder = match &record.event {
            Event::Session(info) => info
                .workspace
                .as_deref()
                .or_else(|| assembler.workspace(sid))
                .or_else(|| {
                    let parent = info.parent.as_ref()?;
                    assembler.workspace(&parent.session)
                }),
            Event::Prompted { .. } => assembler.workspace(sid),
            _ => return None,
        };
        Some(self.facts(folder))
    }

    /// The facts for a session working in `folder` (or in none).
    pub fn facts(&mut self, folder: Option<&str>) -> Arc<Attribution> {
        self.refresh_global();
        let Some(folder) = folder.filter(|f| !f.is_empty()) else {
            return self.nowhere();
        };
        if let Some(f) = self.folders.get(folder) {
            let fresh = match &f.stamps {
                Some(stamps) => !stamps.iter().any(git::Stamp::changed),
                None => Instant::now() < f.recheck,
            };
            if fresh && f.generation == self.generation {
                return f.facts.clone();
            }
        }
        let found = git::find(Path::new(folder))
            .map(|c| (git::read(&c, self.env.home.as_deref()), c.git_dir));
        let stamps = found.as_ref().map(|(f, _)| f.stamps.clone());
        let facts = match found {
            Some((f, git_dir)) => Attribution {
                user: self.user(f.email, Some(&git_dir)),
                repository: f.repository,
                branch: f.branch,
                revision: f.revision,
            },
            None => (*self.nowhere()).clone(),
        };
        let facts = Arc::new(facts);
        if self.folders.len() >= FOLDERS_KEPT {
            self.folders.clear();
        }
        self.folders.insert(
            folder.to_string(),
            Folder {
                facts: facts.clone(),
                generation: self.generation,
                stamps,
                recheck: Instant::now() + RECHECK_NOT_A_CHECKOUT,
            },
        );
        facts
    }

    fn nowhere(&mut self) -> Arc<Attribution> {
        match &self.nowhere {
            Some((facts, generation)) if *generation == self.generation => facts.clone(),
            _ => {
                let facts = Arc::new(Attribution {
                    user: self.user(None, None),
                    ..Attribution::default()
                });
                self.nowhere = Some((facts.clone(), self.generation));
                facts
            }
        }
    }

    /// `user.id`: the setting, else the checkout's email, the global one, the login. A
    /// checkout reads the global files again with its own folder, for their `includeIf`s.
    fn user(&self, checkout_email: Option<String>, git_dir: Option<&Path>) -> Option<String> {
        match &self.user {
            UserId::Off => None,
            UserId::Fixed(id) => Some(id.clone()),
            UserId::Auto => checkout_email
                .or_else(|| match git_dir {
                    Some(g) => self.read_global(Some(g)),
                    None => self.global.as_ref().and_then(|(e, _, _)| e.clone()),
                })
                .or_else(|| self.env.login.clone()),
        }
    }

    /// The first email the user's own files name: git reads `~/.gitconfig` after the XDG
    /// file, so its value wins, and `global_files` lists it first.
    fn read_global(&self, git_dir: Option<&Path>) -> Option<String> {
        let home = self.env.home.as_deref();
        self.global_files()
            .iter()
            .find_map(|f| gitconfig::read(f, git_dir, home).email)
            .filter(|e| !e.trim().is_empty())
    }

    /// The files git reads a user's own settings from, the one that wins first.
    fn global_files(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        if let Some(h) = &self.env.home {
            files.push(h.join(".gitconfig"));
        }
        match (&self.env.xdg_config_home, &self.env.home) {
            (Some(x), _) => files.push(x.join("git").join("config")),
            (None, Some(h)) => files.push(h.join(".config").join("git").join("config")),
            (None, None) => {}
        }
        files
    }

    /// Reads the user's own git config again if it changed (or was never read), and then
    /// counts a new generation, so facts that named the old email are made again.
    fn refresh_global(&mut self) {
        if self.user != UserId::Auto {
            return;
        }
        let now = Instant::now();
        let stale = match &mut self.global {
            None => true,
            Some((_, _, next)) if now < *next => false,
            Some((_, stamps, next)) => {
                *next = now + self.global_every;
                stamps.iter().any(git::Stamp::changed)
            }
        };
        if !stale {
            return;
        }
        let email = self.read_global(None);
        let stamps = self
            .global_files()
            .into_iter()
            .map(git::Stamp::of)
            .collect();
        self.global = Some((email, stamps, now + self.global_every));
        self.generation += 1;
    }
}

#[cfg(test)]
mod tests;
