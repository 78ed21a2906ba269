//! `import --export`: the history read again, once the store has it, and sent to the
//! collector, metrics and all. Only the traces no collector has had go: the store tells them
//! (`Store::unsent`), since it knows which turns the hooks traced (and sent) and which an
//! earlier `import --export` sent. Once they are delivered (or kept in the spool, to be), the
//! store marks them sent; metric points, sent apart, are not waited for.

use std::collections::HashSet;
use std::sync::Arc;

use albedo_otel::assemble::TraceId;
use albedo_otel::config::Settings;
use albedo_otel::export::store::Store;
use albedo_otel::pipeline::OnlyTraces;
use anyhow::{Context, Result};

use super::{closed, Reading};
use crate::cli::run::start_pipeline;

/// Sends the history `reading` reads to the collector `settings` name. `everything`: with no
/// store to tell what was sent before (it is off), all of it.
pub(super) fn history(
    settings: &Settings,
    reading: &mut Reading<'_>,
    everything: bool,
) -> Result<i32> {
    // The conversation goes where capture is on, as the live route's.
    reading.reading.message_budget = settings.pipeline.assemble.policy.message_budget();
    let mut sending = settings.clone();
    // The first reading wrote the store.
    sending.pipeline.store = None;
    let remembered = match (&settings.pipeline.store, &settings.otlp) {
        (Some(store), Some(_)) if !everything => Some(&store.path),
        // Spans shown (the console) or written to a file are not a collector's: all go.
        _ => None,
    };
    let Some(path) = remembered else {
        let (handle, guard) = start_pipeline(&sending)?;
        reading.send_to(&handle, " (sending)", everything);
        drop(handle);
        return Ok(closed(guard));
    };
    const BLIND: &str = "nothing sent: cannot tell what the collector has had";
    let mut store = Store::open(path).context(BLIND)?;
    let unsent = store.unsent().context(BLIND)?;
    let wanted: HashSet<TraceId> = unsent
        .iter()
        .filter_map(|t| TraceId::from_hex(t).ok())
        .collect();
    if wanted.is_empty() {
        println!("nothing to send: the collector has had every turn (the hooks sent them, or an import before)");
        return Ok(0);
    }
    let only = Arc::new(OnlyTraces::new(wanted));
    sending.pipeline.only = Some(only.clone());
    let (handle, guard) = start_pipeline(&sending)?;
    reading.send_to(&handle, " (sending)", false);
    drop(handle);
    let summary = guard.close();
    let met = only.met();
    // Spans given up on with no spool to keep them (or dropped from a full one) may go when
    // run again: nothing is marked, though what was delivered then goes twice. Spans the
    // collector refused it would refuse again: those are marked with the rest, and said.
    let undelivered = summary.lost() - summary.rejected;
    if undelivered > 0 || summary.dropped_events > 0 || summary.unassembled > 0 {
        tracing::error!(
            "done: {summary}; nothing is marked sent: `import --export` again sends it all again"
        );
        return Ok(3);
    }
    let met: Vec<String> = met.iter().map(ToString::to_string).collect();
    store
        .mark_sent(met.iter().map(String::as_str))
        .context("sent, but could not mark it so: `import --export` again sends it again")?;
    let plural = if met.len() == 1 { "" } else { "s" };
    println!(
        "sent {} turn{plural} to the collector; what it had already was not sent again",
        met.len()
    );
    if summary.rejected > 0 {
        tracing::error!(
            "done: {summary}; the {} spans the collector refused are not sent again",
            summary.rejected
        );
        return Ok(3);
    }
    tracing::info!("done: {summary}");
    Ok(0)
}
