//! Defaults, where the standard leaves them to the implementation, and the bounds that keep
//! memory and messages in check. Each stage owns its own (`assemble::defaults`,
//! `pipeline::defaults`, the OTLP exporter's); they are gathered here for the configuration,
//! which resolves every layer down to them.

use std::time::Duration;

pub use crate::assemble::defaults::*;
pub use crate::export::otlp::{
    GRPC_ENDPOINT, HTTP_ENDPOINT, HTTP_METRICS_PATH, HTTP_TRACES_PATH, TIMEOUT,
};
pub use crate::export::resource::DEFAULT_SERVICE_NAME as SERVICE_NAME;
pub use crate::pipeline::defaults::*;

/// Lines longer than this are rejected unless configured otherwise (4 MiB).
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;
/// The hook daemon exits after this long with nothing to do.
pub const IDLE_EXIT: Duration = Duration::from_secs(60);
/// A command hook's `Stop` waits this long for a held stop's continuation.
pub const STOP_GRACE: Duration = Duration::from_secs(15);
