//! `run` and `replay`: read protocol lines, feed the pipeline, close it on EOF or a signal.

use std::fs::File;
use std::io::Read;
use std::sync::Arc;

use anyhow::Result;
use crossbeam_channel::bounded;

use super::ExportArgs;
use albedo_otel::config::{ExporterKind, Settings};
use albedo_otel::export;
use albedo_otel::pipeline;
use albedo_otel::sources::stream::read_lines;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Run,
    /// `metrics`: send GenAI metrics too (`replay --metrics`); off by default, since a
    /// collector counts a replayed point again.
    Replay {
        metrics: bool,
    },
}

enum Stop {
    /// Every source was read to its end; `false` if one could not be opened or read.
    Eof(bool),
    Signal(&'static str),
}

/// Starts the pipeline with the exporter the settings choose.
pub fn start_pipeline(
    settings: &Settings,
) -> Result<(pipeline::PipelineHandle, pipeline::PipelineGuard)> {
    if let Some(hint) = settings.otlp.as_ref().and_then(|o| o.port_hint()) {
        tracing::warn!("{hint}");
    }
    let (kind, otlp) = (settings.exporter.clone(), settings.otlp.clone());
    Ok(pipeline::start(settings.pipeline.clone(), move || {
        export::from_settings(&kind, otlp)
    })?)
}

pub fn run(args: &ExportArgs, sources: &[String], mode: Mode) -> Result<i32> {
    let mut settings = args.settings(None)?;
    if mode == (Mode::Replay { metrics: false }) {
        settings.pipeline.metrics = None;
    }
    // A replay is a batch job, as an import is: what it reads goes into the store, however
    // slow the disk (`run`, albedo's live route, drops and counts rather than hold it up).
    if let (Mode::Replay { .. }, Some(store)) = (mode, settings.pipeline.store.as_mut()) {
        store.batch_job = true;
    }
    let kind = settings.exporter.clone();
    let (handle, guard) = start_pipeline(&settings)?;
    tracing::debug!("albedo-otel {} started", env!("CARGO_PKG_VERSION"));

    let (stop_tx, stop_rx) = bounded::<Stop>(2);
    watch_signals(stop_tx.clone(), handle.clone())?;
    // Once signals are handled (a USR1 before that would kill the process): from here on
    // events are accepted. Benchmarks time startup to this line.
    tracing::info!(
        "ready: reading {}; spans go to {}",
        sources
            .iter()
            .map(|s| if s == "-" { "stdin" } else { s.as_str() })
            .collect::<Vec<_>>()
            .join(", "),
        guard.target()
    );
    {
        let sources = sources.to_vec();
        let max_line = settings.max_line_bytes;
        let handle = handle.clone();
        std::thread::Builder::new()
            .name("albedo-otel-read".into())
            .spawn(move || {
                let mut all_read = true;
                for source in &sources {
                    let (name, input): (Arc<str>, Box<dyn Read>) = if source == "-" {
                        ("stdin".into(), Box::new(std::io::stdin().lock()))
                    } else {
                        match File::open(source) {
                            Ok(f) => (source.as_str().into(), Box::new(f)),
                            Err(e) => {
                                tracing::error!("cannot open {source}: {e}");
                                all_read = false;
                                continue;
                            }
                        }
                    };
                    if let Err(e) = read_lines(name.clone(), input, max_line, |chunk| {
                        handle.send_lines(chunk)
                    }) {
                        tracing::error!("reading {name}: {e}");
                        all_read = false;
                    }
                }
                let _ = stop_tx.send(Stop::Eof(all_read));
            })?;
    }

    let stop = stop_rx.recv().unwrap_or(Stop::Eof(false));
    let all_read = match stop {
        Stop::Eof(ok) => ok,
        Stop::Signal(name) => {
            tracing::info!("{name}: flushing and exiting");
            true
        }
    };
    drop(handle);
    let summary = guard.close();
    let lost = summary.lost();
    if summary.spooled > 0 {
        tracing::warn!(
            "{} spans went to the spool while the collector was unreachable; what is still there is sent by the next albedo-otel run or replay to the same collector",
            summary.spooled
        );
    }
    if lost > 0 {
        tracing::error!("done: {summary}{}", memory_note());
        if kind == ExporterKind::Otlp {
            tracing::error!(
                "is a collector listening? `docker compose -f deploy/docker-compose.yml up -d` starts one; `--exporter console` shows the traces without one"
            );
        }
    } else if summary.unassembled > 0 {
        tracing::error!("done: {summary}{}", memory_note());
    } else {
        tracing::info!("done: {summary}{}", memory_note());
    }
    if summary.unassembled > 0 {
        tracing::error!(
            "{} lines read were never assembled, so their events were never exported: the assembly was still held up at the flush deadline",
            summary.unassembled
        );
    }
    Ok(exit_code(mode, all_read, &summary))
}

/// `run` exits 0 (its reader, albedo, does not look); `replay` says what went wrong: 1 if a
/// file could not be read, 3 if spans were lost or lines read were never assembled (spooled
/// spans are not lost: a later run sends them).
fn exit_code(mode: Mode, all_read: bool, summary: &pipeline::Summary) -> i32 {
    match mode {
        Mode::Run => 0,
        Mode::Replay { .. } if !all_read => 1,
        Mode::Replay { .. } if summary.lost() > 0 || summary.unassembled > 0 => 3,
        Mode::Replay { .. } => 0,
    }
}

/// SIGTERM and SIGINT close the pipeline (flushing what it holds); SIGUSR1 logs a status line.
#[cfg(unix)]
fn watch_signals(
    stop_tx: crossbeam_channel::Sender<Stop>,
    handle: pipeline::PipelineHandle,
) -> Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM, SIGUSR1};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGUSR1])?;
    std::thread::Builder::new()
        .name("albedo-otel-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if sig == SIGUSR1 {
                    // A status line on demand: `kill -USR1 <pid>`.
                    tracing::info!("status: {}{}", handle.stats(), memory_note());
                    continue;
                }
                let name = if sig == SIGTERM { "SIGTERM" } else { "SIGINT" };
                let _ = stop_tx.send(Stop::Signal(name));
                return;
            }
        })?;
    Ok(())
}

/// Windows has no signal iterator and no SIGUSR1: Ctrl-C (SIGINT) and SIGTERM set a flag, which
/// a thread looks at ten times a second, so that they still flush before exit. No status line.
#[cfg(not(unix))]
fn watch_signals(
    stop_tx: crossbeam_channel::Sender<Stop>,
    _handle: pipeline::PipelineHandle,
) -> Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    use std::sync::atomic::{AtomicBool, Ordering};
    let (int, term) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    signal_hook::flag::register(SIGINT, int.clone())?;
    signal_hook::flag::register(SIGTERM, term.clone())?;
    std::thread::Builder::new()
        .name("albedo-otel-signals".into())
        .spawn(move || loop {
            let name = if term.load(Ordering::Relaxed) {
                "SIGTERM"
            } else if int.load(Ordering::Relaxed) {
                "SIGINT"
            } else {
                std::thread::sleep(std::time::Duration::from_millis(100));
                continue;
            };
            let _ = stop_tx.send(Stop::Signal(name));
            return;
        })?;
    Ok(())
}

/// "; memory 12.3 MiB, peak 20.1 MiB" from `/proc/self/status` (Linux), or nothing elsewhere:
/// the first thing to look at when a long-running exporter seems to grow.
fn memory_note() -> String {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return String::new();
    };
    let kib = |field: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    };
    match (kib("VmRSS:"), kib("VmHWM:")) {
        (Some(now), Some(peak)) => format!(
            "; memory {:.1} MiB, peak {:.1} MiB",
            now as f64 / 1024.0,
            peak as f64 / 1024.0
        ),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_fails_when_lines_it_read_were_never_assembled() {
        let settled = pipeline::Summary {
            lines: 4,
            events: 4,
            spans: 4,
            exported: 3,
            spooled: 1,
            ..Default::default()
        };
        assert_eq!(
            exit_code(Mode::Replay { metrics: false }, true, &settled),
            0,
            "spooled is not lost"
        );
        let stuck = pipeline::Summary {
            unassembled: 3,
            ..settled
        };
        assert_eq!(exit_code(Mode::Replay { metrics: false }, true, &stuck), 3);
        assert_eq!(exit_code(Mode::Run, true, &stuck), 0);
        assert!(stuck.to_string().contains("3 lines read but not assembled"));
    }
}
