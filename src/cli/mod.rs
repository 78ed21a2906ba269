//! Command-line arguments and their resolution against the environment.

mod doctor;
mod hook;
mod install;
mod status;
mod stream;

use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};

use albedo_otel::assemble::{AssembleConfig, ContentPolicy};
use albedo_otel::config::{self, env, Compression, OtlpOverrides, Protocol};
use albedo_otel::pipeline::{spool, PipelineConfig, SpoolConfig};
use albedo_otel::redact::Scrubber;

#[derive(Parser)]
#[command(
    name = "albedo-otel",
    version,
    about = "OpenTelemetry traces for AI coding agents: every turn, tool call and model call of albedo or Claude Code, with real timing, in Jaeger or Grafana Tempo.",
    long_about = None,
    after_help = "Logs go to stderr (filter with ALBEDO_OTEL_LOG, e.g. debug). The collector is set with the standard OTEL_EXPORTER_OTLP_* variables; flags override them."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Read protocol events (NDJSON, one per line) from stdin until EOF, then flush and exit 0.
    /// This is the process albedo's extension starts; SIGTERM also flushes before exit.
    Run(ExportArgs),
    /// Replay recorded sessions (protocol NDJSON files; `-` reads stdin), then flush and exit.
    /// Exits 1 if a file could not be read, 3 if spans were lost (spooled ones are not lost).
    Replay {
        /// Files to replay, in order.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<String>,
        #[command(flatten)]
        export: ExportArgs,
    },
    /// A command hook for Claude Code and albedo's `hooks` extension: reads one payload on
    /// stdin, hands it to the background exporter, and exits 0 at once, printing nothing.
    Hook {
        /// Where session journals go [env: ALBEDO_OTEL_HOOK_DIR]
        /// [default: $XDG_STATE_HOME/albedo-otel/hooks]
        #[arg(long, value_name = "DIR")]
        hook_dir: Option<std::path::PathBuf>,
    },
    /// The background exporter for command hooks (started by `hook`; exits when idle).
    Daemon {
        #[arg(long, value_name = "DIR")]
        hook_dir: Option<std::path::PathBuf>,
        /// Exit after this long with nothing to do
        #[arg(long, env = "ALBEDO_OTEL_IDLE_EXIT", default_value = "60s", value_parser = humantime::parse_duration)]
        idle_exit: Duration,
        /// How long a Stop waits for a held stop's continuation before its turn ends
        #[arg(long, env = "ALBEDO_OTEL_STOP_GRACE", default_value = "15s", value_parser = humantime::parse_duration)]
        stop_grace: Duration,
        #[command(flatten)]
        export: ExportArgs,
    },
    /// Add albedo-otel's command hook to Claude Code's settings or albedo's hooks.json,
    /// keeping every other hook (a backup is written first). Running it again changes nothing.
    Install(install::Target),
    /// Remove albedo-otel's command hook, and only it.
    Uninstall(install::Target),
    /// Check the setup: the collector (with a test trace), the hooks, the daemon, the spool.
    Doctor {
        #[arg(long, value_name = "DIR")]
        hook_dir: Option<std::path::PathBuf>,
        #[command(flatten)]
        export: ExportArgs,
    },
    /// Show what waits in the spool, per collector. (A running exporter logs its counters on
    /// SIGUSR1.)
    Status {
        /// The spool [env: ALBEDO_OTEL_SPOOL_DIR] [default: $XDG_STATE_HOME/albedo-otel/spool]
        #[arg(long, value_name = "DIR")]
        spool_dir: Option<std::path::PathBuf>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExporterKind {
    /// OTLP to a collector (gRPC or HTTP).
    Otlp,
    /// OTLP/JSON lines to a file (see --file).
    File,
    /// A readable tree of each trace on stderr.
    Console,
}

#[derive(Args, Clone)]
pub struct ExportArgs {
    /// Where spans go [env: OTEL_TRACES_EXPORTER] [default: otlp]
    #[arg(long, value_enum)]
    exporter: Option<ExporterKind>,
    /// File for `--exporter file`; `-` is stdout.
    #[arg(long, default_value = "albedo-otel-traces.jsonl", value_name = "PATH")]
    file: String,
    /// Collector URL, like OTEL_EXPORTER_OTLP_ENDPOINT (over HTTP, /v1/traces is added)
    /// [default: http://localhost:4318, or http://localhost:4317 for grpc]
    #[arg(long, value_name = "URL")]
    endpoint: Option<String>,
    /// OTLP transport [env: OTEL_EXPORTER_OTLP_PROTOCOL] [default: http/protobuf]
    #[arg(long, value_enum)]
    protocol: Option<Protocol>,
    /// Extra request header KEY=VALUE, repeatable [env: OTEL_EXPORTER_OTLP_HEADERS]
    #[arg(long = "header", value_name = "KEY=VALUE", value_parser = parse_header)]
    headers: Vec<(String, String)>,
    /// Per-request timeout, e.g. 10s [env: OTEL_EXPORTER_OTLP_TIMEOUT, in ms]
    #[arg(long, value_parser = humantime::parse_duration)]
    timeout: Option<Duration>,
    /// Request compression [env: OTEL_EXPORTER_OTLP_COMPRESSION] [default: none]
    #[arg(long, value_enum)]
    compression: Option<Compression>,
    /// service.name of the resource [env: OTEL_SERVICE_NAME] [default: albedo]
    #[arg(long, value_name = "NAME")]
    service_name: Option<String>,
    /// Export prompts, stop replies and model messages
    /// [env: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true]
    #[arg(long)]
    capture_messages: bool,
    /// Do not export tool arguments and outputs [env: ALBEDO_OTEL_CAPTURE_TOOL_CONTENT=false]
    #[arg(long)]
    no_tool_content: bool,
    /// Cut exported text to this many bytes [env: OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT] [default: 4096]
    #[arg(long, value_name = "BYTES")]
    max_attribute_length: Option<usize>,
    /// Also redact matches of REGEX, shown as [REDACTED:KIND]; repeatable
    #[arg(long = "redact", value_name = "KIND=REGEX", value_parser = parse_header)]
    redact: Vec<(String, String)>,
    /// Spans per export request [env: OTEL_BSP_MAX_EXPORT_BATCH_SIZE] [default: 512]
    #[arg(long, value_name = "N")]
    batch_size: Option<usize>,
    /// Longest a span waits before it is sent, e.g. 1s [env: OTEL_BSP_SCHEDULE_DELAY, in ms]
    #[arg(long, value_parser = humantime::parse_duration)]
    batch_delay: Option<Duration>,
    /// Deadline for delivering everything at EOF or SIGTERM, e.g. 5s [env: ALBEDO_OTEL_FLUSH_TIMEOUT, in ms]
    #[arg(long, value_parser = humantime::parse_duration)]
    flush_timeout: Option<Duration>,
    /// Longest accepted input line; longer lines are skipped with an error
    #[arg(long, default_value_t = albedo_otel::ingest::DEFAULT_MAX_LINE_BYTES, value_name = "BYTES")]
    max_line_bytes: usize,
    /// Where batches wait while the collector is down [env: ALBEDO_OTEL_SPOOL_DIR]
    /// [default: $XDG_STATE_HOME/albedo-otel/spool]
    #[arg(long, value_name = "DIR")]
    spool_dir: Option<std::path::PathBuf>,
    /// Cap of the spool; the oldest batches are dropped past it [env: ALBEDO_OTEL_SPOOL_MAX_BYTES]
    /// [default: 268435456]
    #[arg(long, value_name = "BYTES")]
    spool_max_bytes: Option<u64>,
    /// Keep nothing on disk: retry in memory, then drop (and count) [env: ALBEDO_OTEL_SPOOL=false]
    #[arg(long)]
    no_spool: bool,
    /// Open sessions kept; past it the least recently active is ended and exported
    #[arg(long, default_value_t = albedo_otel::assemble::DEFAULT_MAX_SESSIONS, value_name = "N")]
    max_sessions: usize,
    /// Calls remembered per turn; past it the oldest are let go
    #[arg(long, default_value_t = albedo_otel::assemble::DEFAULT_MAX_CALLS_PER_TURN, value_name = "N")]
    max_calls_per_turn: usize,
}

fn parse_header(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| "expected KEY=VALUE".to_string())
}

/// Logs go to stderr only: stdout belongs to protocols.
/// Standard error that never fails. When whoever reads our stderr has gone (an agent that
/// closed its end of the pipe, a BEAM port after `port_close`), tracing-subscriber answers a
/// failed write with `eprintln!`, which panics on the broken pipe: the process would die
/// while flushing, losing spans for a log line nobody could read.
struct LossyStderr;

impl std::io::Write for LossyStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = std::io::stderr().write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = std::io::stderr().flush();
        Ok(())
    }
}

pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env(env::ALBEDO_OTEL_LOG)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(|| LossyStderr)
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}

pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Run(export) => stream::run(&export, &["-".to_string()], stream::Mode::Run),
        Command::Replay { files, export } => stream::run(&export, &files, stream::Mode::Replay),
        Command::Status { spool_dir } => status::run(spool_dir),
        Command::Hook { hook_dir } => Ok(hook::hook(hook_dir)),
        Command::Daemon {
            hook_dir,
            idle_exit,
            stop_grace,
            export,
        } => hook::daemon(&export, hook_dir, idle_exit, stop_grace),
        Command::Install(target) => install::install(&target),
        Command::Uninstall(target) => install::uninstall(&target),
        Command::Doctor { hook_dir, export } => doctor::run(&export, hook_dir),
    }
}

impl ExportArgs {
    fn spool_config(&self) -> Result<Option<SpoolConfig>> {
        let enabled = !self.no_spool
            && var(env::ALBEDO_OTEL_SPOOL)
                .map(|v| config::flag(env::ALBEDO_OTEL_SPOOL, &v))
                .transpose()?
                .unwrap_or(true);
        if !enabled {
            return Ok(None);
        }
        let Some(root) = spool_root(self.spool_dir.clone()) else {
            tracing::warn!("no spool: neither XDG_STATE_HOME nor HOME is set (use --spool-dir)");
            return Ok(None);
        };
        let max_bytes = match self.spool_max_bytes {
            Some(n) => n,
            None => var(env::ALBEDO_OTEL_SPOOL_MAX_BYTES)
                .map(|v| config::count(env::ALBEDO_OTEL_SPOOL_MAX_BYTES, &v).map(|n| n as u64))
                .transpose()?
                .unwrap_or(spool::DEFAULT_MAX_BYTES),
        };
        Ok(Some(SpoolConfig { root, max_bytes }))
    }
}

/// The spool root from a flag, `ALBEDO_OTEL_SPOOL_DIR`, or the default.
fn spool_root(flag: Option<std::path::PathBuf>) -> Option<std::path::PathBuf> {
    flag.or_else(|| var(env::ALBEDO_OTEL_SPOOL_DIR).map(Into::into))
        .or_else(|| spool::default_root(&|k| std::env::var(k).ok()))
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl ExportArgs {
    pub fn exporter_kind(&self) -> Result<ExporterKind> {
        if let Some(k) = self.exporter {
            return Ok(k);
        }
        match var(env::OTEL_TRACES_EXPORTER).as_deref().map(str::trim) {
            None | Some("otlp") => Ok(ExporterKind::Otlp),
            Some("console") => Ok(ExporterKind::Console),
            Some(other) => anyhow::bail!(
                "{}={other:?} is not supported here; use otlp or console (or --exporter file)",
                env::OTEL_TRACES_EXPORTER
            ),
        }
    }

    pub fn otlp_overrides(&self) -> OtlpOverrides {
        OtlpOverrides {
            endpoint: self.endpoint.clone(),
            protocol: self.protocol,
            headers: self.headers.clone(),
            timeout: self.timeout,
            compression: self.compression,
        }
    }

    pub fn pipeline_config(&self) -> Result<PipelineConfig> {
        let mut c = PipelineConfig::default();
        let capture_messages = self.capture_messages
            || var(env::OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)
                .map(|v| config::flag(env::OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, &v))
                .transpose()?
                .unwrap_or(false);
        let capture_tool_content = !self.no_tool_content
            && var(env::ALBEDO_OTEL_CAPTURE_TOOL_CONTENT)
                .map(|v| config::flag(env::ALBEDO_OTEL_CAPTURE_TOOL_CONTENT, &v))
                .transpose()?
                .unwrap_or(true);
        let max_value_len = match self.max_attribute_length {
            Some(n) => n,
            None => match var(env::OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT)
                .map(|v| (env::OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT, v))
                .or_else(|| {
                    var(env::OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT)
                        .map(|v| (env::OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT, v))
                }) {
                Some((name, v)) => config::count(name, &v)?,
                None => albedo_otel::assemble::policy::DEFAULT_MAX_VALUE_LEN,
            },
        };
        let scrubber = Scrubber::with_patterns(self.redact.iter().cloned()).context("--redact")?;
        c.assemble = AssembleConfig {
            policy: ContentPolicy::new(
                capture_tool_content,
                capture_messages,
                max_value_len,
                std::sync::Arc::new(scrubber),
            ),
            max_sessions: self.max_sessions,
            max_calls_per_turn: self.max_calls_per_turn,
            ..AssembleConfig::default()
        };
        c.batch_size = match self.batch_size {
            Some(n) if n > 0 => n,
            Some(_) => anyhow::bail!("--batch-size must be above 0"),
            None => var(env::OTEL_BSP_MAX_EXPORT_BATCH_SIZE)
                .map(|v| config::count(env::OTEL_BSP_MAX_EXPORT_BATCH_SIZE, &v))
                .transpose()?
                .unwrap_or(c.batch_size),
        };
        c.batch_delay = match self.batch_delay {
            Some(d) => d,
            None => var(env::OTEL_BSP_SCHEDULE_DELAY)
                .map(|v| config::duration_ms(env::OTEL_BSP_SCHEDULE_DELAY, &v))
                .transpose()?
                .unwrap_or(c.batch_delay),
        };
        c.queue_size = var(env::OTEL_BSP_MAX_QUEUE_SIZE)
            .map(|v| config::count(env::OTEL_BSP_MAX_QUEUE_SIZE, &v))
            .transpose()?
            .unwrap_or(c.queue_size);
        c.spool = self.spool_config()?;
        c.flush_timeout = match self.flush_timeout {
            Some(d) => d,
            None => var(env::ALBEDO_OTEL_FLUSH_TIMEOUT)
                .map(|v| config::duration_ms(env::ALBEDO_OTEL_FLUSH_TIMEOUT, &v))
                .transpose()?
                .unwrap_or(c.flush_timeout),
        };
        Ok(c)
    }
}
