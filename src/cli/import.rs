//! `import`: each agent's history from its own files, through the pipeline as the live route
//! would have sent it, into the local store (and, with `--export`, to the collector too, at
//! its original times). What is there already is not counted again: a second import adds
//! nothing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Result};
use clap::Args;
use jiff::civil::Date;

use super::ExportArgs;
use albedo_otel::export::{Batch, ExportFuture, Exported, SpanExporter};
use albedo_otel::pipeline;
use albedo_otel::sources::command_hooks::agent::{self, Agent, History};

#[derive(Args)]
pub struct ImportArgs {
    /// The agents whose history to import, by the names `install` takes; without one, every
    /// agent whose history is found
    #[arg(value_name = "AGENT")]
    agents: Vec<String>,
    /// Only sessions written to since this day (YYYY-MM-DD)
    #[arg(long, value_name = "DATE")]
    since: Option<Date>,
    /// Also send what is imported to the collector the settings name, at its original times,
    /// metrics included
    #[arg(long)]
    export: bool,
    #[command(flatten)]
    settings: ExportArgs,
}

/// Spans to nowhere: without `--export`, the local store is where an import goes.
struct StoreOnly;

impl SpanExporter for StoreOnly {
    fn export(&self, batch: Batch, _: Option<Duration>) -> ExportFuture {
        Box::pin(std::future::ready(Ok(Exported {
            accepted: batch.spans,
            rejected: 0,
        })))
    }

    fn describe(&self) -> String {
        "the local store only".into()
    }
}

/// Events an import keeps waiting for the assembly at most.
const IMPORT_QUEUE: usize = 2_048;

/// How deep below a root sessions are looked for (a link that loops ends there).
const DEPTH: usize = 8;

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
    /// Sessions left to the live route, which traced them ([`History::Untraced`]).
    left_to_live: usize,
    /// Sessions not read because the store could not say which the live route traced.
    left_unknown: usize,
}

impl Tally {
    /// Hands `read` (one file's records, or one family's) to the pipeline.
    fn take(
        &mut self,
        read: Vec<albedo_otel::protocol::Record<'static>>,
        handle: &pipeline::PipelineHandle,
    ) {
        for r in read {
            self.records += 1;
            if let albedo_otel::protocol::Event::Session(info) = &r.event {
                self.sessions += usize::from(info.parent.is_none());
            }
            handle.send(r);
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
            write!(f, " ({n} more the hooks traced: theirs are kept)")?;
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

/// The sessions the live route traced, for the agents whose history is read only where it
/// did not ([`History::Untraced`]); `None` when the store could not say, and none is read.
struct Traced(Option<std::collections::HashSet<String>>);

impl Traced {
    fn of(settings: &albedo_otel::config::Settings, chosen: &[Agent]) -> Traced {
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

    /// Whether `records` (one file's) are of a session the live route traced; `None` when
    /// the store could not say.
    fn holds(&self, records: &[albedo_otel::protocol::Record<'_>]) -> Option<bool> {
        let traced = self.0.as_ref()?;
        Some(records.iter().any(|r| match &r.event {
            albedo_otel::protocol::Event::Session(info) => {
                info.parent.is_none() && traced.contains(r.session.as_ref())
            }
            _ => false,
        }))
    }
}

/// Why albedo's history is not imported: it is not an agent folder's, and keeps none.
const ALBEDO: &str =
    "albedo: it keeps no history of its own for albedo-otel to read (its extension \
traces each turn live; a stream recorded from it goes in with `albedo-otel replay FILE`)";

pub fn run(args: &ImportArgs) -> Result<i32> {
    let mut settings = args.settings.settings(None)?;
    if args.agents.iter().any(|a| a == "albedo") {
        println!("{ALBEDO}");
        if args.agents.len() == 1 {
            return Ok(0);
        }
    }
    let chosen: Vec<Agent> = if args.agents.is_empty() {
        Agent::ALL.to_vec()
    } else {
        args.agents
            .iter()
            .filter(|name| *name != "albedo")
            .map(|name| {
                Agent::from_name(name).ok_or_else(|| {
                    anyhow::anyhow!(
                        "no agent named {name}; `albedo-otel install --help` lists them"
                    )
                })
            })
            .collect::<Result<_>>()?
    };
    if !args.export {
        if settings.pipeline.store.is_none() {
            bail!("the local store is off (ALBEDO_OTEL_STORE=false), so an import would keep nothing; add --export to send the history to the collector");
        }
        settings.pipeline.metrics = None;
        settings.pipeline.spool = None;
    }
    // The store is what an import is for: the pipeline waits for it, however slow the disk.
    if let Some(store) = settings.pipeline.store.as_mut() {
        store.batch_job = true;
    }
    // A batch job: what was read is written, however long the store takes to catch up.
    settings.pipeline.flush_timeout = settings
        .pipeline
        .flush_timeout
        .max(Duration::from_secs(600));
    // Files are read far faster than they are assembled and stored, and `send` waits for
    // room: a short queue bounds the memory and costs no time.
    settings.pipeline.queue_size = settings.pipeline.queue_size.min(IMPORT_QUEUE);
    let since = args
        .since
        .map(|d| albedo_otel::export::store::report::start_of(d, &jiff::tz::TimeZone::system()));
    let (handle, guard) = if args.export {
        super::run::start_pipeline(&settings)?
    } else {
        pipeline::start(settings.pipeline.clone(), || {
            Ok(Box::new(StoreOnly) as Box<dyn SpanExporter>)
        })?
    };
    // Model calls carry their conversation only where it goes anywhere: to the collector, with
    // capture on. The store keeps none, and reading it costs an import a sixth of its time.
    let reading = agent::Reading {
        message_budget: if args.export {
            settings.pipeline.assemble.policy.message_budget()
        } else {
            0
        },
    };
    let env = super::process_env;
    let traced = Traced::of(&settings, &chosen);
    let mut sessions = 0;
    for agent in chosen {
        let spec = agent.spec();
        let history = agent.history();
        let (roots, keep) = match history {
            History::Files(h) | History::Untraced(h) => (h.roots, h.is_session),
            History::Database(d) => (d.roots, d.is_database),
            History::Cannot(why) => {
                if !args.agents.is_empty() {
                    println!("{}: {why}", spec.title);
                }
                continue;
            }
        };
        let mut found = Vec::new();
        for root in roots(&env) {
            files(&root, keep, DEPTH, &mut found);
        }
        let recent = |p: &PathBuf| {
            since.is_none_or(|from| {
                std::fs::metadata(p)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .is_some_and(|d| d.as_nanos() as i128 >= i128::from(from))
            })
        };
        // A database is chosen from by its sessions' own times (its file's changes only at a
        // checkpoint of its write-ahead log).
        if !matches!(history, History::Database(_)) {
            found.retain(recent);
        }
        let mut tally = Tally::default();
        let progress = super::progress::Progress::files(spec.title, found.len());
        for path in &found {
            let read = match history {
                History::Files(h) => std::fs::read(path)
                    .map(|bytes| tally.take((h.records)(path, &bytes, reading), &handle)),
                History::Untraced(h) => std::fs::read(path).map(|bytes| {
                    let read = (h.records)(path, &bytes, reading);
                    match traced.holds(&read) {
                        Some(true) => tally.left_to_live += 1,
                        Some(false) => tally.take(read, &handle),
                        None => tally.left_unknown += 1,
                    }
                }),
                History::Database(d) => {
                    let since_ms = since.map(|ns| u64::try_from(ns / 1_000_000).unwrap_or(0));
                    (d.records)(path, since_ms, &mut |family| tally.take(family, &handle))
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
        println!("{}: {tally}", spec.title);
    }
    drop(handle);
    let summary = guard.close();
    if summary.lost() > 0 || summary.store_lost > 0 {
        tracing::error!("done: {summary}");
        return Ok(3);
    }
    tracing::info!("done: {summary}");
    if sessions > 0 {
        println!("`albedo-otel report` shows them; importing again adds nothing");
    }
    Ok(0)
}
