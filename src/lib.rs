//! albedo-otel turns the hook and observe events of AI coding agents (albedo, Claude Code)
//! into OpenTelemetry traces: one trace per turn, a span per tool call and per model call.
//!
//! The pipeline, one module per stage:
//! - [`ingest`]: bytes to protocol records (NDJSON lines, numbered, checked);
//! - [`assemble`]: records to finished spans, pure and deterministic;
//! - [`export`]: spans to OTLP (gRPC or HTTP), OTLP/JSON files or a tree on the console;
//! - [`pipeline`]: the threads, channels and deadlines that join the stages, and the handle a
//!   host calls from its hook.

pub mod assemble;
pub mod clock;
pub mod config;
pub mod export;
pub mod generate;
pub mod hooks;
pub mod host;
pub mod ingest;
pub mod pipeline;
pub mod private_fs;
pub mod redact;
