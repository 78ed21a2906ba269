//! `import`: each agent's history from its own files, through the pipeline as the live route
//! would have sent it, into the local store (and, with `--export`, to the collector too, at
//! its original times: `send`). What is there already is not counted again: a second import
//! adds nothing, and sends nothing again.

mod read;
mod send;

use std::time::Duration;

use anyhow::{bail, Result};
use clap::Args;
use jiff::civil::Date;

use super::ExportArgs;
use albedo_otel::export::{Batch, ExportFuture, Exported, SpanExporter};
use albedo_otel::pipeline;
use albedo_otel::sources::command_hooks::agent::{self, Agent};
use read::{Reading, Traced};

#[derive(Args)]
pub struct ImportArgs {
    /// The agents whose history to import, by the names `install` takes; without one, every
    /// agent whose history is found
    #[arg(value_name = "AGENT")]
    agents: Vec<String>,
    /// Only sessions written to since this day (YYYY-MM-DD)
    #[arg(long, value_name = "DATE")]
    since: Option<Date>,
    /// Also send the history to the collector the settings name, at its original times,
    /// metrics included: what no collector has had (not the turns the hooks sent, nor what an
    /// earlier --export sent)
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
    if !args.export && settings.pipeline.store.is_none() {
        bail!("the local store is off (ALBEDO_OTEL_STORE=false), so an import would keep nothing; add --export to send the history to the collector");
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
    // room: a short queue bounds the memory and costs no time. Its slots hold a chunk each.
    settings.pipeline.queue_size = settings.pipeline.queue_size.min(IMPORT_QUEUE / read::CHUNK);
    let since = args
        .since
        .map(|d| albedo_otel::export::store::report::start_of(d, &jiff::tz::TimeZone::system()));
    let traced = Traced::of(&settings, &chosen);
    let mut reading = Reading {
        chosen: &chosen,
        named: !args.agents.is_empty(),
        since,
        traced: &traced,
        // The store keeps no conversation, and reading it costs an import a sixth of its time.
        reading: agent::Reading { message_budget: 0 },
    };
    if settings.pipeline.store.is_none() {
        return send::history(&settings, &mut reading, true);
    }
    // Into the store first, which tells what is new: what the hooks traced, or an import
    // before this one, is kept once.
    let mut stored = settings.pipeline.clone();
    (stored.metrics, stored.spool) = (None, None);
    let (handle, guard) =
        pipeline::start(stored, || Ok(Box::new(StoreOnly) as Box<dyn SpanExporter>))?;
    let sessions = reading.send_to(&handle, "", true);
    drop(handle);
    let code = closed(guard);
    if sessions > 0 && code == 0 {
        println!("`albedo-otel report` shows them; importing again adds nothing");
    }
    match args.export && code == 0 {
        true => send::history(&settings, &mut reading, false),
        false => Ok(code),
    }
}

/// Closes an import's pipeline; its exit code: 3 if anything was lost on the way.
fn closed(guard: pipeline::PipelineGuard) -> i32 {
    let summary = guard.close();
    if summary.lost() > 0 || summary.store_lost > 0 {
        tracing::error!("done: {summary}");
        return 3;
    }
    tracing::info!("done: {summary}");
    0
}
