//! The name of every environment variable albedo-otel reads, in one place. The standard
//! `OTEL_*` names come first, with the SDKs' meaning; `ALBEDO_OTEL_*` are our own. Their
//! defaults are in [`super::defaults`], and the README's configuration table lists both.

pub const OTEL_EXPORTER_OTLP_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
pub const OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
pub const OTEL_EXPORTER_OTLP_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
pub const OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
pub const OTEL_EXPORTER_OTLP_HEADERS: &str = "OTEL_EXPORTER_OTLP_HEADERS";
pub const OTEL_EXPORTER_OTLP_TRACES_HEADERS: &str = "OTEL_EXPORTER_OTLP_TRACES_HEADERS";
pub const OTEL_EXPORTER_OTLP_TIMEOUT: &str = "OTEL_EXPORTER_OTLP_TIMEOUT";
pub const OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: &str = "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT";
pub const OTEL_EXPORTER_OTLP_COMPRESSION: &str = "OTEL_EXPORTER_OTLP_COMPRESSION";
pub const OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: &str = "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION";
pub const OTEL_EXPORTER_OTLP_CERTIFICATE: &str = "OTEL_EXPORTER_OTLP_CERTIFICATE";
pub const OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: &str = "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE";
pub const OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: &str = "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE";
pub const OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE: &str =
    "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE";
pub const OTEL_EXPORTER_OTLP_CLIENT_KEY: &str = "OTEL_EXPORTER_OTLP_CLIENT_KEY";
pub const OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: &str = "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY";
pub const OTEL_TRACES_EXPORTER: &str = "OTEL_TRACES_EXPORTER";
/// `none` turns the GenAI metrics off; `otlp` (the default) sends them beside the traces.
pub const OTEL_METRICS_EXPORTER: &str = "OTEL_METRICS_EXPORTER";
/// How often metrics are sent (ms); they are also sent at close and at every flush.
pub const OTEL_METRIC_EXPORT_INTERVAL: &str = "OTEL_METRIC_EXPORT_INTERVAL";
/// Metrics' own URL; otherwise the traces' endpoint with `/v1/metrics` for `/v1/traces`.
pub const OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT";
/// Metrics' own headers, timeout, compression and TLS files, as the spec names them: each
/// before the generic variable, for metrics only (the `TRACES_` ones never reach metrics).
pub const OTEL_EXPORTER_OTLP_METRICS_HEADERS: &str = "OTEL_EXPORTER_OTLP_METRICS_HEADERS";
pub const OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: &str = "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT";
pub const OTEL_EXPORTER_OTLP_METRICS_COMPRESSION: &str = "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION";
pub const OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE: &str = "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE";
pub const OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE: &str =
    "OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE";
pub const OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY: &str = "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY";
pub const OTEL_SERVICE_NAME: &str = "OTEL_SERVICE_NAME";
pub const OTEL_RESOURCE_ATTRIBUTES: &str = "OTEL_RESOURCE_ATTRIBUTES";
pub const OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: &str = "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT";
pub const OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: &str = "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT";
pub const OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: &str =
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";
pub const OTEL_BSP_SCHEDULE_DELAY: &str = "OTEL_BSP_SCHEDULE_DELAY";
pub const OTEL_BSP_MAX_EXPORT_BATCH_SIZE: &str = "OTEL_BSP_MAX_EXPORT_BATCH_SIZE";
pub const OTEL_BSP_MAX_QUEUE_SIZE: &str = "OTEL_BSP_MAX_QUEUE_SIZE";
/// Exports in flight at once (the SDK's name, from its batch span processor).
pub const OTEL_BSP_MAX_CONCURRENT_EXPORTS: &str = "OTEL_BSP_MAX_CONCURRENT_EXPORTS";
/// Our own: the configuration file (default `$XDG_CONFIG_HOME/albedo-otel/config.toml`).
pub const ALBEDO_OTEL_CONFIG: &str = "ALBEDO_OTEL_CONFIG";
/// Our own: the deadline for delivering everything at close, EOF or SIGTERM (ms).
pub const ALBEDO_OTEL_FLUSH_TIMEOUT: &str = "ALBEDO_OTEL_FLUSH_TIMEOUT";
/// Our own: `false` turns off export of tool arguments and outputs.
pub const ALBEDO_OTEL_CAPTURE_TOOL_CONTENT: &str = "ALBEDO_OTEL_CAPTURE_TOOL_CONTENT";
/// Our own: the log filter (`tracing` syntax), default `info`.
pub const ALBEDO_OTEL_LOG: &str = "ALBEDO_OTEL_LOG";
/// Our own: where undeliverable batches wait (default `$XDG_STATE_HOME/albedo-otel/spool`).
pub const ALBEDO_OTEL_SPOOL_DIR: &str = "ALBEDO_OTEL_SPOOL_DIR";
/// Our own: the spool's cap in bytes (default 256 MiB).
pub const ALBEDO_OTEL_SPOOL_MAX_BYTES: &str = "ALBEDO_OTEL_SPOOL_MAX_BYTES";
/// Our own: `false` keeps undeliverable batches in memory (retried, then dropped) instead.
pub const ALBEDO_OTEL_SPOOL: &str = "ALBEDO_OTEL_SPOOL";
/// Our own: `false` keeps no local store of turns, model calls and tool calls.
pub const ALBEDO_OTEL_STORE: &str = "ALBEDO_OTEL_STORE";
/// Our own: the local store's file (default `$XDG_DATA_HOME/albedo-otel/store.sqlite`).
pub const ALBEDO_OTEL_STORE_PATH: &str = "ALBEDO_OTEL_STORE_PATH";
/// Our own: how long the local store keeps what it holds (such as `365days`; default: for good).
pub const ALBEDO_OTEL_STORE_KEEP: &str = "ALBEDO_OTEL_STORE_KEEP";
/// Our own: the local store's cap in bytes, the oldest days going first (default: none).
pub const ALBEDO_OTEL_STORE_MAX_BYTES: &str = "ALBEDO_OTEL_STORE_MAX_BYTES";
/// Our own: where command hooks' journals go (default `$XDG_STATE_HOME/albedo-otel/hooks`).
pub const ALBEDO_OTEL_HOOK_DIR: &str = "ALBEDO_OTEL_HOOK_DIR";
/// Our own: how long the hook daemon waits with nothing to do before it exits.
pub const ALBEDO_OTEL_IDLE_EXIT: &str = "ALBEDO_OTEL_IDLE_EXIT";
/// Our own: how long a command hook's `Stop` waits for a held stop's continuation.
pub const ALBEDO_OTEL_STOP_GRACE: &str = "ALBEDO_OTEL_STOP_GRACE";
/// Our own: `user.id` on every turn (default: git `user.email`, else the login name; `none`
/// leaves it out).
pub const ALBEDO_OTEL_USER_ID: &str = "ALBEDO_OTEL_USER_ID";

/// Where state and configuration live when the above do not say: the XDG base directories,
/// else under `HOME`.
pub const XDG_STATE_HOME: &str = "XDG_STATE_HOME";
pub const XDG_DATA_HOME: &str = "XDG_DATA_HOME";
pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";
pub const HOME: &str = "HOME";

/// The variables that set the same thing as `var`, most specific first: the signal's own
/// `OTEL_EXPORTER_OTLP_TRACES_*` before the generic one, the span limit before the general.
pub fn same_as(var: &'static str) -> &'static [&'static str] {
    match var {
        OTEL_EXPORTER_OTLP_PROTOCOL => &[
            OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
            OTEL_EXPORTER_OTLP_PROTOCOL,
        ],
        OTEL_EXPORTER_OTLP_TIMEOUT => &[
            OTEL_EXPORTER_OTLP_TRACES_TIMEOUT,
            OTEL_EXPORTER_OTLP_TIMEOUT,
        ],
        OTEL_EXPORTER_OTLP_COMPRESSION => &[
            OTEL_EXPORTER_OTLP_TRACES_COMPRESSION,
            OTEL_EXPORTER_OTLP_COMPRESSION,
        ],
        OTEL_EXPORTER_OTLP_CERTIFICATE => &[
            OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE,
            OTEL_EXPORTER_OTLP_CERTIFICATE,
        ],
        OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE => &[
            OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE,
            OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE,
        ],
        OTEL_EXPORTER_OTLP_CLIENT_KEY => &[
            OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY,
            OTEL_EXPORTER_OTLP_CLIENT_KEY,
        ],
        OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT => &[
            OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT,
            OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT,
        ],
        OTEL_EXPORTER_OTLP_ENDPOINT => &[OTEL_EXPORTER_OTLP_ENDPOINT],
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT => &[OTEL_EXPORTER_OTLP_TRACES_ENDPOINT],
        OTEL_TRACES_EXPORTER => &[OTEL_TRACES_EXPORTER],
        OTEL_METRICS_EXPORTER => &[OTEL_METRICS_EXPORTER],
        OTEL_METRIC_EXPORT_INTERVAL => &[OTEL_METRIC_EXPORT_INTERVAL],
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT => &[OTEL_EXPORTER_OTLP_METRICS_ENDPOINT],
        OTEL_SERVICE_NAME => &[OTEL_SERVICE_NAME],
        OTEL_BSP_SCHEDULE_DELAY => &[OTEL_BSP_SCHEDULE_DELAY],
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE => &[OTEL_BSP_MAX_EXPORT_BATCH_SIZE],
        OTEL_BSP_MAX_QUEUE_SIZE => &[OTEL_BSP_MAX_QUEUE_SIZE],
        OTEL_BSP_MAX_CONCURRENT_EXPORTS => &[OTEL_BSP_MAX_CONCURRENT_EXPORTS],
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT => {
            &[OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT]
        }
        ALBEDO_OTEL_FLUSH_TIMEOUT => &[ALBEDO_OTEL_FLUSH_TIMEOUT],
        ALBEDO_OTEL_CAPTURE_TOOL_CONTENT => &[ALBEDO_OTEL_CAPTURE_TOOL_CONTENT],
        ALBEDO_OTEL_SPOOL => &[ALBEDO_OTEL_SPOOL],
        ALBEDO_OTEL_SPOOL_DIR => &[ALBEDO_OTEL_SPOOL_DIR],
        ALBEDO_OTEL_SPOOL_MAX_BYTES => &[ALBEDO_OTEL_SPOOL_MAX_BYTES],
        ALBEDO_OTEL_STORE => &[ALBEDO_OTEL_STORE],
        ALBEDO_OTEL_STORE_PATH => &[ALBEDO_OTEL_STORE_PATH],
        ALBEDO_OTEL_STORE_KEEP => &[ALBEDO_OTEL_STORE_KEEP],
        ALBEDO_OTEL_STORE_MAX_BYTES => &[ALBEDO_OTEL_STORE_MAX_BYTES],
        ALBEDO_OTEL_HOOK_DIR => &[ALBEDO_OTEL_HOOK_DIR],
        ALBEDO_OTEL_IDLE_EXIT => &[ALBEDO_OTEL_IDLE_EXIT],
        ALBEDO_OTEL_STOP_GRACE => &[ALBEDO_OTEL_STOP_GRACE],
        ALBEDO_OTEL_USER_ID => &[ALBEDO_OTEL_USER_ID],
        _ => &[],
    }
}
