//! albedo-otel turns the hook and observe events of AI coding agents (albedo, Claude Code)
//! into OpenTelemetry traces: one trace per turn, a span per tool call and per model call.
//!
//! The pipeline, one module per stage, in the order records flow:
//! - [`sources`]: where records come from: NDJSON streams, an in-process host, command hooks;
//! - [`protocol`]: the records every source produces, their decoding, and the checks every
//!   record passes;
//! - [`assemble`]: records to finished spans, pure and deterministic;
//! - [`export`]: encoded batches out, to OTLP (gRPC or HTTP), OTLP/JSON files or the console;
//! - [`pipeline`]: the threads, bounded queues, spool and deadlines that join the stages;
//! - [`config`]: every setting, resolved once, for the binary and a Rust host alike.
//!
//! [`host`] is the entry point for a Rust host: the shape of albedo's extension.

pub mod assemble;
pub mod clock;
pub mod config;
pub mod export;
pub mod fs;
pub mod pipeline;
pub mod process;
pub mod protocol;
pub mod sources;
pub mod text;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use sources::host;
