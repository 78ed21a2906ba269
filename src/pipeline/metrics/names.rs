//! Every metric name, unit, bucket boundary and metric attribute key, in one place, each
//! checked against the conventions that define it.
//!
//! Read from `GENAI_METRICS`: open-telemetry/semantic-conventions-genai at
//! 004902b8cb70aa5ae6ca4ae07132b7daabcd3e10, `model/gen-ai/metrics.yaml` (`M`), each metric under its own name, and the
//! bucket advice of `docs/gen-ai/gen-ai-metrics.md` there. Attribute keys are those of spans
//! (`crate::assemble::semconv`), which cites them; the metric-only ones are below.

pub use crate::assemble::semconv::{
    ERROR_TYPE, GEN_AI_AGENT_NAME, GEN_AI_OPERATION_NAME, GEN_AI_PROVIDER_NAME,
    GEN_AI_REQUEST_MODEL, GEN_AI_RESPONSE_MODEL, GEN_AI_TOOL_NAME, USER_ID,
    VCS_REPOSITORY_URL_FULL,
};

/// M (its first metric): histogram of `{token}`, one point per token type of each model call.
pub const GEN_AI_CLIENT_TOKEN_USAGE: &str = "gen_ai.client.token.usage";
/// M: histogram in seconds: each model call (`chat`) from request to last chunk.
pub const GEN_AI_CLIENT_OPERATION_DURATION: &str = "gen_ai.client.operation.duration";
/// M: histogram in seconds: each turn (`invoke_agent`), the span's duration.
pub const GEN_AI_INVOKE_AGENT_DURATION: &str = "gen_ai.invoke_agent.duration";
/// M: histogram in seconds: each tool call (`execute_tool`), the span's duration.
pub const GEN_AI_EXECUTE_TOOL_DURATION: &str = "gen_ai.execute_tool.duration";
/// albedo's own (no convention has a cost metric yet): a monotonic sum of `gen_ai.usage.cost`
/// over the priced model calls, in US dollars.
pub const ALBEDO_USAGE_COST: &str = "albedo.usage.cost";

/// `gen_ai.token.type` (registry, required on the token histogram by M), and its
/// values `input` and `output`.
pub const GEN_AI_TOKEN_TYPE: &str = "gen_ai.token.type";
pub const TOKEN_TYPE_INPUT: &str = "input";
pub const TOKEN_TYPE_OUTPUT: &str = "output";
/// Set on the one series that takes every point past the series limit, as the SDKs do.
pub const OTEL_METRIC_OVERFLOW: &str = "otel.metric.overflow";

pub const UNIT_TOKEN: &str = "{token}";
pub const UNIT_SECONDS: &str = "s";
pub const UNIT_USD: &str = "USD";

/// The conventions' advice for `gen_ai.client.token.usage`: powers of 4 from 1 to 4^13.
pub const TOKEN_BUCKETS: [f64; 14] = [
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];

/// The conventions' advice for the duration histograms: 10 ms doubling to 81.92 s. Model
/// calls (`gen_ai.client.operation.duration`) take these.
pub const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/// Turns and tool calls last far longer than a model call (a turn of an hour, a test suite of
/// ten minutes): the same doubling, on to 5242.88 s (87 minutes), so that a turn's p95 can be
/// read past the advice's 81.92 s.
pub const LONG_DURATION_BUCKETS: [f64; 20] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92, 163.84,
    327.68, 655.36, 1310.72, 2621.44, 5242.88,
];

/// The span attributes a metric point may carry: none names a session, a trace or a call,
/// so the number of series stays that of models, tools, agents, people and repositories.
pub const POINT_KEYS: &[&str] = &[
    GEN_AI_OPERATION_NAME,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_TOOL_NAME,
    GEN_AI_AGENT_NAME,
    ERROR_TYPE,
    USER_ID,
    VCS_REPOSITORY_URL_FULL,
];
