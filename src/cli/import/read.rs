//! One reading of the chosen agents' history: each agent's files (or database) found, read
//! into records and handed to a pipeline, with a bar on a terminal and a line per agent.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use albedo_otel::pipeline::PipelineHandle;
use albedo_otel::protocol::{Event, Record};
use albedo_otel::sources::command_hooks::agent::{self, Agent, History};
use albedo_otel::sources::command_hooks::untraced;

use crate::cli::install::installed_commands;
use crate::cli::progress::Progress;

/// How deep below a root sessions are looked for (a link that loops ends there).
const DEPTH: usize = 8;

/// Records handed to the pipeline at once.
pub(super) const CHUNK: usize = 64;

/// Every file under `dir` that `keep` takes, in name order, `depth` folders down at most.
fn files(dir: &Path, keep: fn(&Path) -> bool, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            if depth > 0 {
                files(&p, keep, depth - 1, out);
            }
        } else if keep(&p) {
            out.push(p);
        }
    }
}

/// What one agent's import has read and handed on.
#[derive(Default)]
struct Tally {
    records: u64,
    /// Sessions of their own, not sub-agents' (which are part of their parent's).
    sessions: usize,
    /// Sessions the live route traced ([`History::Untraced`]), whole or in part: of those,
    /// only the turns it did not trace were read ([`Traced::untraced`]).
    left_to_live: usize,
    /// Sessions not read because the store could not say which the live route traced.
    left_unknown: usize,
}

impl Tally {
    /// Hands `read` (one file's records, or one family's) to the pipeline, [`CHUNK`] records
    /// at a time.
    fn take(&mut self, read: Vec<Record<'static>>, handle: &PipelineHandle) {
        self.records += read.len() as u64;
        self.sessions += (read.iter())
            .filter(|r| matches!(&r.event, Event::Session(info) if info.parent.is_none()))
            .count();
        let mut read = read.into_iter();
        loop {
            let chunk: Vec<Record<'static>> = read.by_ref().take(CHUNK).collect();
            if chunk.is_empty() || !handle.send_many(chunk) {
                return;
            }
        }
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural = if self.sessions == 1 { "" } else { "s" };
        write!(
            f,
            "{} session{plural}, {} events",
            self.sessions, self.records
        )?;
        if self.left_to_live > 0 {
            let n = self.left_to_live;
            write!(
                f,
                " ({n} the hooks traced: what they traced is theirs, the turns around it are read)"
            )?;
        }
        match self.left_unknown {
            0 => Ok(()),
            n => write!(
                f,
                " ({n} not read: the store could not say which the hooks traced)"
            ),
        }
    }
}

/// The sessions the live route traced, each with when its first traced turn began and its last
/// ended (in ns), for
/// the agents whose history is read only where it did not ([`History::Untraced`]); `None`
/// when the store could not say, and none of theirs is read.
pub(super) struct Traced(Option<HashMap<String, (i64, i64)>>);

impl Traced {
    pub fn of(settings: &albedo_otel::config::Settings, chosen: &[Agent]) -> Traced {
        let wanted = chosen
            .iter()
            .any(|a| matches!(a.history(), History::Untraced(_)));
        let Some(store) = settings.pipeline.store.as_ref().filter(|_| wanted) else {
            return Traced(Some(Default::default()));
        };
        let held = albedo_otel::export::store::Store::open_to_read(&store.path)
            .and_then(|s| s.map(|s| s.traced_live()).transpose());
        match held {
            Ok(sessions) => Traced(Some(sessions.unwrap_or_default())),
            Err(e) => {
                tracing::warn!(
                    "cannot tell which sessions the hooks traced ({e}): the agents whose history \
                     only that tells apart are not imported"
                );
                Traced(None)
            }
        }
    }

    /// What of `records` (one file's, `agent`'s) the live route did not trace: all of them,
    /// or, for a session it traced part of, the turns before the first it traced (the hooks
    /// were installed half-way) and, where no hook of ours is in place for the session now
    /// (they were taken out), those after the last; `None` when the store could not say.
    /// While a hook is in place, a turn after the last it traced is its own still to come.
    fn untraced(
        &self,
        agent: Agent,
        records: Vec<Record<'static>>,
    ) -> Option<Vec<Record<'static>>> {
        let traced = self.0.as_ref()?;
        let began = records.iter().find_map(|r| match &r.event {
            Event::Session(info) if info.parent.is_none() => traced
                .get(r.session.as_ref())
                .map(|span| (span, info.workspace.as_deref())),
            _ => None,
        });
        Some(match began {
            Some((&(first, last), workspace)) => {
                let ms = |ns: i64| u64::try_from(ns / 1_000_000).unwrap_or(0);
                let last = match hooked(agent, workspace) {
                    true => u64::MAX,
                    false => ms(last),
                };
                untraced::outside(records, ms(first)..=last)
            }
            None => records,
        })
    }
}

/// Whether a hook of ours for `agent` is in place for a session run in `workspace`: in the
/// user's settings, or in that project's.
fn hooked(agent: Agent, workspace: Option<&str>) -> bool {
    let install = &agent.spec().install;
    let user = (install.user_file)(&crate::cli::process_env);
    let project = workspace
        .filter(|_| !install.project_file.is_empty())
        .map(|w| Path::new(w).join(install.project_file));
    user.into_iter()
        .chain(project)
        .any(|file| !installed_commands(&file, &install.form).is_empty())
}

/// What one reading is of, the same for each reading of one import.
pub(super) struct Reading<'a> {
    pub chosen: &'a [Agent],
    /// The agents named on the command line (none: every agent whose history is found).
    pub named: bool,
    /// Files written to since then, in ns (a database's sessions since then).
    pub since: Option<i64>,
    pub traced: &'a Traced,
    pub reading: agent::Reading,
}

impl Reading<'_> {
    /// Reads every chosen agent's history into `handle`; `label` goes after each agent's name
    /// on its bar, and `say` prints each agent's line. Returns the sessions read.
    pub fn send_to(&self, handle: &PipelineHandle, label: &str, say: bool) -> usize {
        let env = crate::cli::process_env;
        let mut sessions = 0;
        for agent in self.chosen {
            let spec = agent.spec();
            let history = agent.history();
            let (roots, keep) = match history {
                History::Files(h) | History::Untraced(h) => (h.roots, h.is_session),
                History::Database(d) => (d.roots, d.is_database),
                History::Cannot(why) => {
                    if self.named && say {
                        println!("{}: {why}", spec.title);
                    }
                    continue;
                }
            };
            let mut found = Vec::new();
            for root in roots(&env) {
                files(&root, keep, DEPTH, &mut found);
            }
            // A database is chosen from by its sessions' own times (its file's changes only
            // at a checkpoint of its write-ahead log).
            if !matches!(history, History::Database(_)) {
                found.retain(|p| self.recent(p));
            }
            let mut tally = Tally::default();
            let progress = Progress::files(&format!("{}{label}", spec.title), found.len());
            for path in &found {
                let read = match history {
                    History::Files(h) => std::fs::read(path)
                        .map(|bytes| tally.take((h.records)(path, &bytes, self.reading), handle)),
                    History::Untraced(h) => std::fs::read(path).map(|bytes| {
                        let read = (h.records)(path, &bytes, self.reading);
                        let whole = read.len();
                        match self.traced.untraced(*agent, read) {
                            Some(read) if read.len() == whole => tally.take(read, handle),
                            Some(read) => {
                                tally.left_to_live += 1;
                                tally.take(read, handle);
                            }
                            None => tally.left_unknown += 1,
                        }
                    }),
                    History::Database(d) => {
                        let since_ms = self
                            .since
                            .map(|ns| u64::try_from(ns / 1_000_000).unwrap_or(0));
                        (d.records)(path, since_ms, &mut |family| tally.take(family, handle))
                            .map_err(std::io::Error::other)
                    }
                    History::Cannot(why) => Err(std::io::Error::other(why)),
                };
                if let Err(e) = read {
                    progress.aside(|| tracing::warn!("cannot read {}: {e}", path.display()));
                }
                progress.read(tally.records);
            }
            drop(progress);
            sessions += tally.sessions;
            if say {
                println!("{}: {tally}", spec.title);
            }
        }
        sessions
    }

    /// Whether file `p` was written to since the day asked for.
    fn recent(&self, p: &Path) -> bool {
        self.since.is_none_or(|from| {
            std::fs::metadata(p)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .is_some_and(|d| d.as_nanos() as i128 >= i128::from(from))
        })
    }
}
