//! The `albedo-otel` command: reads agent events and sends them on as OpenTelemetry traces.
//!
//! Everything here is wiring: arguments, logging, signals and exit codes. The work is done by
//! the library's pipeline (`albedo_otel::pipeline`).

mod cli;

// Assembly and encoding make and free many small strings and one large buffer per batch;
// mimalloc's thread-local free lists and reused segments cut the allocator's share of a
// busy stream's CPU by more than half against glibc's malloc (see docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
