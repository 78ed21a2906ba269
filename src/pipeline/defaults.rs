//! How the pipeline batches, queues and closes when nothing says otherwise.

use std::time::Duration;

/// Spans wait at most this long to be sent (the spec's 5 s is long to watch a live agent).
pub const BATCH_DELAY: Duration = Duration::from_secs(1);
pub const BATCH_SIZE: usize = 512;
/// Events a host may hand over before its hook starts dropping (and counting) them.
pub const QUEUE_SIZE: usize = 65_536;
pub const FLUSH_TIMEOUT: Duration = Duration::from_secs(5);
/// The spool's cap: 256 MiB.
pub const SPOOL_MAX_BYTES: u64 = 256 * 1024 * 1024;
/// Exports in flight at once: enough to hide a distant collector's round trip.
pub const MAX_CONCURRENT_EXPORTS: usize = 8;
/// Metrics are sent this often (the SDKs' default), besides at every flush and at close: a
/// short-lived exporter sends them once, when it closes.
pub const METRIC_EXPORT_INTERVAL: Duration = Duration::from_secs(60);
