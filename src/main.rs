//! The `albedo-otel` command: reads agent events and sends them on as OpenTelemetry traces.
//!
//! Everything here is wiring: arguments, logging, signals and exit codes. The work is done by
//! the library's pipeline (`albedo_otel::pipeline`).

mod cli;

use clap::Parser;

fn main() {
    let args = cli::Cli::parse();
    cli::init_logging();
    let code = match cli::dispatch(args) {
        Ok(code) => code,
        Err(e) => {
            tracing::error!("{e:#}");
            2
        }
    };
    // Exit at once: a reader thread may still be blocked on a stdin that never closes.
    std::process::exit(code);
}
