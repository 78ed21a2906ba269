//! Defaults, where the standard leaves them to the implementation, and the bounds that keep
//! memory and messages in check.

use std::time::Duration;

pub const GRPC_ENDPOINT: &str = "http://localhost:4317";
pub const HTTP_ENDPOINT: &str = "http://localhost:4318";
pub const HTTP_TRACES_PATH: &str = "/v1/traces";
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// Spans wait at most this long to be sent (the spec's 5 s is long to watch a live agent).
pub const BATCH_DELAY: Duration = Duration::from_secs(1);
pub const BATCH_SIZE: usize = 512;
/// Events a host may hand over before its hook starts dropping (and counting) them.
pub const QUEUE_SIZE: usize = 65_536;
pub const FLUSH_TIMEOUT: Duration = Duration::from_secs(5);
/// The spool's cap: 256 MiB.
pub const SPOOL_MAX_BYTES: u64 = 256 * 1024 * 1024;
/// `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`'s default here: long enough for a command line or an
/// error, short enough that a 64 KiB tool output does not become a 64 KiB attribute.
pub const MAX_VALUE_LEN: usize = 4096;
/// Lines longer than this are rejected unless configured otherwise (4 MiB).
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;
/// Open sessions kept before the least recently active one is closed and exported.
pub const MAX_SESSIONS: usize = 20_000;
/// Calls remembered per turn (running ones, and finished ones that nested calls may name).
pub const MAX_CALLS_PER_TURN: usize = 4_096;
/// The hook daemon exits after this long with nothing to do.
pub const IDLE_EXIT: Duration = Duration::from_secs(60);
/// A command hook's `Stop` waits this long for a held stop's continuation.
pub const STOP_GRACE: Duration = Duration::from_secs(15);
/// Exports in flight at once: enough to hide a distant collector's round trip.
pub const MAX_CONCURRENT_EXPORTS: usize = 8;
/// `service.name` when nothing sets one.
pub const SERVICE_NAME: &str = "albedo";
