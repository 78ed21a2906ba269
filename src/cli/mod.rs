//! Command-line arguments, turned into the library's [`Overrides`]: the library resolves them
//! against the environment, as it does for any Rust host.

mod config_cmd;
mod doctor;
mod hook;
mod import;
mod install;
mod progress;
mod report;
mod run;
mod sessions;
mod status;
mod statusline;

use std::time::Duration;

use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};

use albedo_otel::config::{
    self, env, Compression, ExporterKind, OtlpOverrides, Overrides, Protocol, Settings,
};

/// The one-line description, naming every agent the hook route serves (from their list, so a
/// new agent is named without anyone remembering to).
fn about() -> String {
    let agents: Vec<&str> = albedo_otel::sources::command_hooks::agent::Agent::ALL
        .iter()
        .map(|a| a.title())
        .collect();
    format!(
        "OpenTelemetry traces for AI coding agents: every turn, tool call and model call of albedo, {}, with real timing, in Jaeger or Grafana Tempo.",
        agents.join(", ")
    )
}

#[derive(Parser)]
#[command(
    name = "albedo-otel",
    version,
    about = about(),
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
    /// Exits 1 if a file could not be read, 3 if spans were lost or lines read were never
    /// assembled (spooled spans are not lost).
    Replay {
        /// Files to replay, in order.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<String>,
        /// Send GenAI metrics too. Off for replay: a replayed span keeps its ids, so a backend
        /// keeps it once, but a metric point is a delta no collector can tell from a new one,
        /// and replaying a file twice would count it twice.
        #[arg(long)]
        metrics: bool,
        #[command(flatten)]
        export: ExportArgs,
    },
    /// The command hook `install` writes for every agent (`--agent` says whose; Claude Code's
    /// and albedo's `hooks` extension's without it): reads a payload on stdin, hands it to the
    /// background exporter, and exits 0 at once, printing nothing.
    Hook {
        /// Where session journals go [env: ALBEDO_OTEL_HOOK_DIR]
        /// [default: $XDG_STATE_HOME/albedo-otel/hooks]
        #[arg(long, value_name = "DIR")]
        hook_dir: Option<std::path::PathBuf>,
        /// The configuration file the payload is exported with [env: ALBEDO_OTEL_CONFIG]
        /// [default: $XDG_CONFIG_HOME/albedo-otel/config.toml]
        #[arg(long, value_name = "FILE")]
        config: Option<std::path::PathBuf>,
        /// Whose hook this is: the agent's name, as `install` writes it (`install --help`
        /// lists them); none for Claude Code and albedo
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
    },
    /// The background exporter for command hooks (started by `hook`; exits when idle).
    Daemon {
        #[command(flatten)]
        hooks: HookArgs,
        #[command(flatten)]
        export: ExportArgs,
    },
    /// Write the settings in force (flags and environment, headers included) into the
    /// configuration file, and add albedo-otel's hook to the agent's hooks file (or, for
    /// opencode, Kilo Code and Pi, a plugin or extension of its own; for Kimi Code, `[[hooks]]`
    /// tables in its config.toml), keeping every other hook (a backup is written first).
    /// The hook command names the file; it carries no secret.
    Install(install::Target),
    /// Remove albedo-otel's command hook, and only it.
    Uninstall(install::Target),
    /// Check the route as the host runs it: a test trace sent directly, then through each
    /// installed hook command (without OTEL_*, from another folder) and its daemon. Exits 1
    /// on any failure, each said in one line with its fix.
    Doctor {
        /// A Claude Code settings file to test, instead of the usual places; repeatable
        #[arg(long = "settings", value_name = "FILE")]
        settings: Vec<std::path::PathBuf>,
        /// Also test this folder's `.claude/settings.json`. Off by default: testing a hook
        /// runs it, and a checkout's settings are the checkout's author's.
        #[arg(long)]
        project: bool,
        #[command(flatten)]
        hooks: HookArgs,
        #[command(flatten)]
        export: ExportArgs,
    },
    /// The configuration file: `show` every setting and where it comes from, `set`, `unset`,
    /// `path`.
    Config(config_cmd::ConfigCmd),
    /// Show what waits in the spool, per collector. (A running exporter logs its counters on
    /// SIGUSR1.)
    Status {
        /// The spool [env: ALBEDO_OTEL_SPOOL_DIR] [default: $XDG_STATE_HOME/albedo-otel/spool]
        #[arg(long, value_name = "DIR")]
        spool_dir: Option<std::path::PathBuf>,
    },
    /// Usage and cost from the local store, by day (the default), week, month or session,
    /// with no collector: every turn exported is stored too
    /// [store: ALBEDO_OTEL_STORE_PATH, default $XDG_DATA_HOME/albedo-otel/store.sqlite].
    Report(report::ReportArgs),
    /// Where the local store is, what it holds and its size; `--prune-older-than` removes
    /// what is older.
    Store(report::StoreArgs),
    /// Read each agent's history from its own files into the local store (and, with
    /// `--export`, to the collector), as the live route would have traced it. Claude Code's,
    /// Codex CLI's, Copilot CLI's, Qwen Code's, Kimi Code's and Pi's for now; the others say
    /// why not. Importing again adds nothing.
    Import(import::ImportArgs),
    /// The status line `install claude-code --statusline` sets: this session's cost and
    /// tokens, today's cost across every agent, and the last hour's, from the local store
    /// (Claude Code's JSON on stdin, one line out; never waits, always exits 0).
    Statusline(statusline::StatuslineArgs),
    /// The sessions the local store holds, newest first: agent, repository, turns, tokens
    /// and cost.
    Sessions(sessions::SessionsArgs),
    /// One session's (or trace's) turns from the local store, drawn as the console exporter
    /// draws them: model calls with their tokens and cost, tool calls, nested as they ran.
    Show(sessions::ShowArgs),
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ExporterArg {
    /// OTLP to a collector (gRPC or HTTP).
    Otlp,
    /// OTLP/JSON lines to a file (see --file).
    File,
    /// A readable tree of each trace on stderr.
    Console,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ProtocolArg {
    #[value(name = "grpc")]
    Grpc,
    #[value(name = "http/protobuf")]
    HttpProtobuf,
    #[value(name = "http/json")]
    HttpJson,
}

impl From<ProtocolArg> for Protocol {
    fn from(p: ProtocolArg) -> Self {
        match p {
            ProtocolArg::Grpc => Protocol::Grpc,
            ProtocolArg::HttpProtobuf => Protocol::HttpProtobuf,
            ProtocolArg::HttpJson => Protocol::HttpJson,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CompressionArg {
    None,
    Gzip,
}

impl From<CompressionArg> for Compression {
    fn from(c: CompressionArg) -> Self {
        match c {
            CompressionArg::None => Compression::None,
            CompressionArg::Gzip => Compression::Gzip,
        }
    }
}

/// Where the command hooks' journals are, and how the daemon paces itself.
#[derive(Args, Clone)]
pub struct HookArgs {
    /// Where session journals go [env: ALBEDO_OTEL_HOOK_DIR]
    /// [default: $XDG_STATE_HOME/albedo-otel/hooks]
    #[arg(long, value_name = "DIR")]
    hook_dir: Option<std::path::PathBuf>,
    /// Exit after this long with nothing to do, a duration with its unit such as 90s or 5m
    /// [env: ALBEDO_OTEL_IDLE_EXIT] [default: 60s]
    #[arg(long, value_parser = humantime::parse_duration)]
    idle_exit: Option<Duration>,
    /// How long a Stop waits for a held stop's continuation before its turn ends, a duration
    /// with its unit such as 15s or 500ms [env: ALBEDO_OTEL_STOP_GRACE] [default: 15s]
    #[arg(long, value_parser = humantime::parse_duration)]
    stop_grace: Option<Duration>,
}

#[derive(Args, Clone)]
pub struct ExportArgs {
    /// The configuration file [env: ALBEDO_OTEL_CONFIG]
    /// [default: $XDG_CONFIG_HOME/albedo-otel/config.toml, else ~/.config/albedo-otel/config.toml]
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// Where spans go [env: OTEL_TRACES_EXPORTER] [default: otlp]
    #[arg(long, value_enum)]
    exporter: Option<ExporterArg>,
    /// File for `--exporter file`; `-` is stdout.
    #[arg(long, default_value = "albedo-otel-traces.jsonl", value_name = "PATH")]
    file: String,
    /// Collector URL, like OTEL_EXPORTER_OTLP_ENDPOINT (over HTTP, /v1/traces is added)
    /// [default: http://localhost:4318, or http://localhost:4317 for grpc]
    #[arg(long, value_name = "URL")]
    endpoint: Option<String>,
    /// OTLP transport [env: OTEL_EXPORTER_OTLP_PROTOCOL] [default: http/protobuf]
    #[arg(long, value_enum)]
    protocol: Option<ProtocolArg>,
    /// Extra request header KEY=VALUE, repeatable [env: OTEL_EXPORTER_OTLP_HEADERS]
    #[arg(long = "header", value_name = "KEY=VALUE", value_parser = parse_header)]
    headers: Vec<(String, String)>,
    /// Per-request timeout, e.g. 10s [env: OTEL_EXPORTER_OTLP_TIMEOUT, in ms]
    #[arg(long, value_parser = humantime::parse_duration)]
    timeout: Option<Duration>,
    /// Request compression [env: OTEL_EXPORTER_OTLP_COMPRESSION] [default: none]
    #[arg(long, value_enum)]
    compression: Option<CompressionArg>,
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
    /// Exports in flight at once [env: OTEL_BSP_MAX_CONCURRENT_EXPORTS] [default: 1]
    #[arg(long, value_name = "N")]
    max_concurrent_exports: Option<usize>,
    /// Longest a span waits before it is sent, e.g. 1s [env: OTEL_BSP_SCHEDULE_DELAY, in ms]
    #[arg(long, value_parser = humantime::parse_duration)]
    batch_delay: Option<Duration>,
    /// Deadline for delivering everything at EOF or SIGTERM, e.g. 5s [env: ALBEDO_OTEL_FLUSH_TIMEOUT, in ms]
    #[arg(long, value_parser = humantime::parse_duration)]
    flush_timeout: Option<Duration>,
    /// Longest accepted input line; longer lines are skipped with an error [default: 4194304]
    #[arg(long, value_name = "BYTES")]
    max_line_bytes: Option<usize>,
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
    /// [default: 20000]
    #[arg(long, value_name = "N")]
    max_sessions: Option<usize>,
    /// Calls remembered per turn; past it the oldest are let go [default: 4096]
    #[arg(long, value_name = "N")]
    max_calls_per_turn: Option<usize>,
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
        Command::Run(export) => run::run(&export, &["-".to_string()], run::Mode::Run),
        Command::Replay {
            files,
            export,
            metrics,
        } => run::run(&export, &files, run::Mode::Replay { metrics }),
        Command::Status { spool_dir } => status::run(spool_dir),
        Command::Hook {
            hook_dir,
            config,
            agent,
        } => Ok(hook::hook(hook_dir, config, agent)),
        Command::Daemon { hooks, export } => hook::daemon(&export, &hooks),
        Command::Install(target) => install::install(&target),
        Command::Uninstall(target) => install::uninstall(&target),
        Command::Doctor {
            settings,
            project,
            hooks,
            export,
        } => doctor::run(&export, &hooks, &settings, project),
        Command::Config(cmd) => config_cmd::run(&cmd),
        Command::Report(args) => report::report(&args),
        Command::Store(args) => report::store(&args),
        Command::Import(args) => import::run(&args),
        Command::Statusline(args) => Ok(statusline::run(&args)),
        Command::Sessions(args) => sessions::sessions(&args),
        Command::Show(args) => sessions::show(&args),
    }
}

/// The process environment, as the library's resolution reads it.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

impl ExportArgs {
    /// The flags as the library's overrides.
    pub fn overrides(&self, hooks: Option<&HookArgs>) -> Overrides {
        let exporter = self.exporter.map(|k| match k {
            ExporterArg::Otlp => ExporterKind::Otlp,
            ExporterArg::File => ExporterKind::File(self.file.clone()),
            ExporterArg::Console => ExporterKind::Console,
        });
        Overrides {
            config: self.config.clone(),
            exporter,
            otlp: OtlpOverrides {
                endpoint: self.endpoint.clone(),
                protocol: self.protocol.map(Into::into),
                headers: self.headers.clone(),
                timeout: self.timeout,
                compression: self.compression.map(Into::into),
            },
            service_name: self.service_name.clone(),
            capture_messages: self.capture_messages.then_some(true),
            capture_tool_content: self.no_tool_content.then_some(false),
            max_attribute_length: self.max_attribute_length,
            redact: self.redact.clone(),
            batch_size: self.batch_size,
            batch_delay: self.batch_delay,
            flush_timeout: self.flush_timeout,
            spool: self.no_spool.then_some(false),
            spool_dir: self.spool_dir.clone(),
            spool_max_bytes: self.spool_max_bytes,
            max_sessions: self.max_sessions,
            max_calls_per_turn: self.max_calls_per_turn,
            max_line_bytes: self.max_line_bytes,
            hook_dir: hooks.and_then(|h| h.hook_dir.clone()),
            idle_exit: hooks.and_then(|h| h.idle_exit),
            stop_grace: hooks.and_then(|h| h.stop_grace),
            max_concurrent_exports: self.max_concurrent_exports,
        }
    }

    /// Every setting, resolved: these flags, then the environment, then the configuration
    /// file, then the defaults.
    pub fn settings(&self, hooks: Option<&HookArgs>) -> Result<Settings> {
        Ok(Settings::load(&self.overrides(hooks), &process_env)?)
    }
}

/// The spool root from a flag, `ALBEDO_OTEL_SPOOL_DIR`, or the default.
fn spool_root(flag: Option<std::path::PathBuf>) -> Option<std::path::PathBuf> {
    flag.or_else(|| {
        process_env(env::ALBEDO_OTEL_SPOOL_DIR)
            .filter(|v| !v.trim().is_empty())
            .map(Into::into)
    })
    .or_else(|| config::default_spool_root(&process_env))
}
