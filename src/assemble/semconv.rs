//! Every attribute and event name the exporter emits, in one place, each checked against the
//! conventions that define it ([`CHECKED`] says where).
//!
//! GenAI semantic-convention names come first; OpenInference names are added beside them so
//! that Phoenix and Langfuse read the same spans; `albedo.*` names cover what neither has.
//! The dashboards and their test check their queries against [`ALL`], and a test fails when
//! a span carries a `gen_ai.*`, `llm.*` or `openinference.*` name that [`CHECKED`] lacks.
//!
//! Read from (the GenAI conventions left the main repository in 2026):
//! - `GENAI`: open-telemetry/semantic-conventions-genai at fe5608e249d64bc5961329a82f8915fe95ced51a
//!   (2026-08-03), `model/gen-ai/registry.yaml` (`R:`) and `model/gen-ai/spans.yaml` (`S:`);
//!   and, for the one rename after it, `changelog.d/440.breaking.md` at
//!   b9449702673fa5ea79d3c4cee3733f6d5e2b1e40 and `docs/gen-ai/client-inference.md` at
//!   024a4f944a1291fcb627c9c47da69e79868dd15e.
//! - `SEMCONV`: open-telemetry/semantic-conventions at 384d66161cb18704c729645fa8136a148df9571c
//!   (2026-08-20), for `session.id`, `process.*`, `error.type`, `vcs.*`, `user.id` and
//!   `host.name`.
//! - `OI`: Arize-ai/openinference at 1fe497f1d9f45a07eee55d97fe185e020560f9c7 (2026-08-21),
//!   `python/openinference-semantic-conventions/src/openinference/semconv/trace/__init__.py`.
//! - `LANGFUSE`: langfuse/langfuse at 62751446149b702b419a9292ddfc2280cdf74b8c (2026-08-22),
//!   `packages/shared/src/server/otel/OtelIngestionProcessor.ts` (`LF:`), for the one name
//!   no convention defines yet but backends read: `gen_ai.usage.cost`; and
//!   `packages/shared/src/server/otel/attributes.ts` (`LFA:`) for `user.id`.
//! - `MLFLOW`: the `mlflow` 3.17.2 wheel from PyPI (what tests/viewers/mlflow.rs runs), under
//!   `mlflow/`: `tracing/otel/translation/open_inference.py` (`OIT:`),
//!   `tracing/otel/translation/__init__.py` (`TR:`) and
//!   `store/tracking/sqlalchemy_store.py` (`SQL:`).
//!
//! Two viewers read both conventions, and a name set on one is set on the other. MLflow asks
//! OpenInference first (TR:37), and takes a span's token usage whole from the first
//! convention that has any of it (TR:181-213): a cache count missing on the OpenInference side
//! would be lost even though the GenAI one is there. So every `gen_ai.usage.*` count MLflow
//! reads has its `llm.token_count.*` twin, always, and the model that answered is
//! `llm.response.model_name` as well as `gen_ai.response.model`. Phoenix 20.26.1 fills each
//! OpenInference name a span lacks from its GenAI twin (`phoenix/trace/otel.py:94`), the
//! cache write from the old `gen_ai.usage.cache_creation.input_tokens` only. Both read
//! `session.id` and `user.id` from span attributes, never the resource (MLflow: the first span
//! of a trace that has each, SQL:5749 and SQL:5755; Phoenix:
//! `phoenix/server/api/dataloaders/user_ids.py:34`): `session.id` is on every span, `user.id`
//! on each turn's root and model calls. [`TWINS`] lists the pairs.

pub const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
pub const GEN_AI_AGENT_NAME: &str = "gen_ai.agent.name";
pub const GEN_AI_CONVERSATION_ID: &str = "gen_ai.conversation.id";
pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
pub const GEN_AI_TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
pub const GEN_AI_TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
pub const GEN_AI_TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
pub const GEN_AI_PROVIDER_NAME: &str = "gen_ai.provider.name";
pub const GEN_AI_REQUEST_MODEL: &str = "gen_ai.request.model";
pub const GEN_AI_REQUEST_MAX_TOKENS: &str = "gen_ai.request.max_tokens";
pub const GEN_AI_RESPONSE_MODEL: &str = "gen_ai.response.model";
pub const GEN_AI_RESPONSE_ID: &str = "gen_ai.response.id";
pub const GEN_AI_RESPONSE_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
pub const GEN_AI_USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
pub const GEN_AI_USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
pub const GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: &str = "gen_ai.usage.cache_read.input_tokens";
pub const GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS: &str = "gen_ai.usage.cache_write.input_tokens";
/// The name before PR #440 renamed it `cache_write`. Still emitted beside the new one, for
/// readers that have not moved (OpenInference's own mapping, Grafana dashboards written for
/// it), until albedo-otel 0.3 or 2027-06-01, whichever comes first (README: "Deprecated").
pub const GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: &str =
    "gen_ai.usage.cache_creation.input_tokens";
pub const GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: &str = "gen_ai.usage.reasoning.output_tokens";
pub const GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK: &str = "gen_ai.response.time_to_first_chunk";
pub const GEN_AI_TOOL_TYPE: &str = "gen_ai.tool.type";
pub const GEN_AI_SYSTEM_INSTRUCTIONS: &str = "gen_ai.system_instructions";
pub const GEN_AI_INPUT_MESSAGES: &str = "gen_ai.input.messages";
pub const GEN_AI_OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
/// A model call's price in US dollars (a double), from genai-prices' table. The GenAI
/// conventions have no cost attribute yet; Langfuse takes this one as the call's cost (LF:3022).
/// Only on `chat` spans: a turn's sum is `albedo.turn.cost`, so no backend adds it twice.
pub const GEN_AI_USAGE_COST: &str = "gen_ai.usage.cost";

pub const SESSION_ID: &str = "session.id";
pub const PROCESS_EXIT_CODE: &str = "process.exit.code";
pub const PROCESS_EXECUTABLE_NAME: &str = "process.executable.name";
pub const ERROR_TYPE: &str = "error.type";
/// Where a turn was worked on, on its root and its model calls: the `origin` remote's web
/// address (no credentials), the branch and the commit checked out when it started.
pub const VCS_REPOSITORY_URL_FULL: &str = "vcs.repository.url.full";
pub const VCS_REF_HEAD_NAME: &str = "vcs.ref.head.name";
pub const VCS_REF_HEAD_REVISION: &str = "vcs.ref.head.revision";
/// Who worked on it, on the same spans: viewers that group by user (Langfuse, MLflow) read
/// it from span attributes, not from the resource.
pub const USER_ID: &str = "user.id";
/// On the resource: the machine the spans come from.
pub const HOST_NAME: &str = "host.name";

pub const OPENINFERENCE_SPAN_KIND: &str = "openinference.span.kind";
pub const INPUT_VALUE: &str = "input.value";
pub const OUTPUT_VALUE: &str = "output.value";
pub const TOOL_NAME: &str = "tool.name";
pub const TOOL_PARAMETERS: &str = "tool.parameters";
pub const AGENT_NAME: &str = "agent.name";
pub const LLM_MODEL_NAME: &str = "llm.model_name";
/// The model that answered, beside `gen_ai.response.model`: MLflow reads it before
/// `llm.model_name` (MLFLOW OIT:50-55).
pub const LLM_RESPONSE_MODEL_NAME: &str = "llm.response.model_name";
pub const LLM_PROVIDER: &str = "llm.provider";
pub const LLM_TOKEN_COUNT_PROMPT: &str = "llm.token_count.prompt";
pub const LLM_TOKEN_COUNT_COMPLETION: &str = "llm.token_count.completion";
pub const LLM_TOKEN_COUNT_TOTAL: &str = "llm.token_count.total";
pub const LLM_TOKEN_COUNT_CACHE_READ: &str = "llm.token_count.prompt_details.cache_read";
pub const LLM_TOKEN_COUNT_CACHE_WRITE: &str = "llm.token_count.prompt_details.cache_write";
pub const LLM_TOKEN_COUNT_REASONING: &str = "llm.token_count.completion_details.reasoning";
pub const LLM_COST_TOTAL: &str = "llm.cost.total";
pub const LLM_COST_PROMPT: &str = "llm.cost.prompt";
pub const LLM_COST_COMPLETION: &str = "llm.cost.completion";
/// Prefixes of OpenInference's flattened messages: `llm.input_messages.{i}.message.role`, ...
pub const LLM_INPUT_MESSAGES: &str = "llm.input_messages";
pub const LLM_OUTPUT_MESSAGES: &str = "llm.output_messages";

pub const ALBEDO_TURN_NUMBER: &str = "albedo.turn.number";
pub const ALBEDO_TURN_PROMPTED: &str = "albedo.turn.prompted";
pub const ALBEDO_TURN_REASON: &str = "albedo.turn.reason";
/// On a turn's continuation: what the agent did after the turn had ended (a stop another hook
/// blocked once the turn was exported), a span under that turn's root, in its trace.
pub const ALBEDO_TURN_CONTINUED: &str = "albedo.turn.continued";
pub const ALBEDO_TURN_TOOL_CALLS: &str = "albedo.turn.tool_calls";
pub const ALBEDO_TURN_MODEL_CALLS: &str = "albedo.turn.model_calls";
pub const ALBEDO_TURN_INPUT_TOKENS: &str = "albedo.turn.input_tokens";
pub const ALBEDO_TURN_OUTPUT_TOKENS: &str = "albedo.turn.output_tokens";
pub const ALBEDO_TURN_CACHE_READ_TOKENS: &str = "albedo.turn.cache_read_tokens";
pub const ALBEDO_TURN_CACHE_WRITE_TOKENS: &str = "albedo.turn.cache_write_tokens";
/// The sum of the turn's own priced model calls, in US dollars (its sub-agents' turns have
/// their own). Not `gen_ai.usage.cost`, which a backend would add to its calls' own.
pub const ALBEDO_TURN_COST: &str = "albedo.turn.cost";
pub const ALBEDO_SESSION_MODEL: &str = "albedo.session.model";
pub const ALBEDO_SESSION_WORKSPACE: &str = "albedo.session.workspace";
pub const ALBEDO_PARENT_SESSION: &str = "albedo.parent.session";
pub const ALBEDO_PARENT_CALL: &str = "albedo.parent.call";
pub const ALBEDO_TOOL_WITHIN: &str = "albedo.tool.within";
pub const ALBEDO_TOOL_REFUSED: &str = "albedo.tool.refused";
pub const ALBEDO_TOOL_TIMED_OUT: &str = "albedo.tool.timed_out";
pub const ALBEDO_CHAT_TIME_TO_FIRST_TOKEN_MS: &str = "albedo.chat.time_to_first_token_ms";
/// With message capture on: the oldest messages left out of `gen_ai.input.messages` to keep
/// it under the attribute length limit.
pub const ALBEDO_CHAT_INPUT_MESSAGES_DROPPED: &str = "albedo.chat.input_messages_dropped";
/// What a call's price counts beside its tokens, when it has any (no convention names them):
/// the cache writes of `gen_ai.usage.cache_write.input_tokens` kept for an hour, the provider's
/// own web searches.
pub const ALBEDO_CHAT_CACHE_WRITE_1H_TOKENS: &str = "albedo.chat.cache_write_1h_tokens";
pub const ALBEDO_CHAT_WEB_SEARCHES: &str = "albedo.chat.web_searches";
/// The span was still open when its turn or session ended; its end is when that happened.
pub const ALBEDO_UNFINISHED: &str = "albedo.unfinished";
/// The span stands for a call that was only ever named as another call's `within`.
pub const ALBEDO_SYNTHESIZED: &str = "albedo.synthesized";
/// The input's end time was before its start time; the span was given zero length.
pub const ALBEDO_TIMING_CLAMPED: &str = "albedo.timing.clamped";
pub const ALBEDO_STOP_HELD: &str = "albedo.stop.held";
pub const ALBEDO_STOP_REPLY: &str = "albedo.stop.reply";

/// Span event: the model ended its turn without a tool call (`stopping`).
pub const EVENT_STOPPING: &str = "albedo.stopping";
/// Span event: the first token of a model response arrived. No convention defines an event
/// for it (the GenAI one is the attribute `gen_ai.response.time_to_first_chunk`), so it is
/// albedo's own; it was `gen_ai.first_token` before.
pub const EVENT_FIRST_TOKEN: &str = "albedo.first_token";

/// Values of `gen_ai.tool.type` (R:382-392: `function` is run by the client, here the agent's
/// harness, with arguments the model chose; `extension` calls out to an external service).
pub const TOOL_TYPE_FUNCTION: &str = "function";
pub const TOOL_TYPE_EXTENSION: &str = "extension";

/// Values of `gen_ai.operation.name`.
pub const OP_INVOKE_AGENT: &str = "invoke_agent";
pub const OP_EXECUTE_TOOL: &str = "execute_tool";
pub const OP_CHAT: &str = "chat";

/// Every attribute key above, for the checks that keep dashboards honest.
pub const ALL: &[&str] = &[
    GEN_AI_OPERATION_NAME,
    GEN_AI_AGENT_NAME,
    GEN_AI_CONVERSATION_ID,
    GEN_AI_TOOL_NAME,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_CALL_ARGUMENTS,
    GEN_AI_TOOL_CALL_RESULT,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_REQUEST_MAX_TOKENS,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_RESPONSE_ID,
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
    GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
    GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS,
    GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
    GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
    GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
    GEN_AI_TOOL_TYPE,
    GEN_AI_SYSTEM_INSTRUCTIONS,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_USAGE_COST,
    SESSION_ID,
    PROCESS_EXIT_CODE,
    PROCESS_EXECUTABLE_NAME,
    ERROR_TYPE,
    VCS_REPOSITORY_URL_FULL,
    VCS_REF_HEAD_NAME,
    VCS_REF_HEAD_REVISION,
    USER_ID,
    HOST_NAME,
    OPENINFERENCE_SPAN_KIND,
    INPUT_VALUE,
    OUTPUT_VALUE,
    TOOL_NAME,
    TOOL_PARAMETERS,
    AGENT_NAME,
    LLM_MODEL_NAME,
    LLM_RESPONSE_MODEL_NAME,
    LLM_PROVIDER,
    LLM_TOKEN_COUNT_PROMPT,
    LLM_TOKEN_COUNT_COMPLETION,
    LLM_TOKEN_COUNT_TOTAL,
    LLM_TOKEN_COUNT_CACHE_READ,
    LLM_TOKEN_COUNT_CACHE_WRITE,
    LLM_TOKEN_COUNT_REASONING,
    LLM_COST_TOTAL,
    LLM_COST_PROMPT,
    LLM_COST_COMPLETION,
    ALBEDO_TURN_NUMBER,
    ALBEDO_TURN_PROMPTED,
    ALBEDO_TURN_REASON,
    ALBEDO_TURN_CONTINUED,
    ALBEDO_TURN_TOOL_CALLS,
    ALBEDO_TURN_MODEL_CALLS,
    ALBEDO_TURN_INPUT_TOKENS,
    ALBEDO_TURN_OUTPUT_TOKENS,
    ALBEDO_TURN_CACHE_READ_TOKENS,
    ALBEDO_TURN_CACHE_WRITE_TOKENS,
    ALBEDO_TURN_COST,
    ALBEDO_SESSION_MODEL,
    ALBEDO_SESSION_WORKSPACE,
    ALBEDO_PARENT_SESSION,
    ALBEDO_PARENT_CALL,
    ALBEDO_TOOL_WITHIN,
    ALBEDO_TOOL_REFUSED,
    ALBEDO_TOOL_TIMED_OUT,
    ALBEDO_CHAT_TIME_TO_FIRST_TOKEN_MS,
    ALBEDO_CHAT_INPUT_MESSAGES_DROPPED,
    ALBEDO_CHAT_CACHE_WRITE_1H_TOKENS,
    ALBEDO_CHAT_WEB_SEARCHES,
    ALBEDO_UNFINISHED,
    ALBEDO_SYNTHESIZED,
    ALBEDO_TIMING_CLAMPED,
    ALBEDO_STOP_HELD,
    ALBEDO_STOP_REPLY,
];

/// Every `gen_ai.*`, `llm.*`, `openinference.*` and other convention name emitted, with where
/// it is defined (see the module's sources). `{i}` and `{k}` stand for any index. A test runs
/// varied streams through the assembly and fails on a name of those namespaces not here.
pub const CHECKED: &[(&str, &str)] = &[
    (
        GEN_AI_OPERATION_NAME,
        "GENAI R:488; Required on every span (S:24)",
    ),
    (
        GEN_AI_AGENT_NAME,
        "GENAI R:352; invoke_agent S:65, execute_tool S:149",
    ),
    (
        GEN_AI_CONVERSATION_ID,
        "GENAI R:325; invoke_agent S:112, inference S:237",
    ),
    (GEN_AI_TOOL_NAME, "GENAI R:367; execute_tool Required"),
    (GEN_AI_TOOL_CALL_ID, "GENAI R:372"),
    (
        GEN_AI_TOOL_CALL_ARGUMENTS,
        "GENAI R:393 (Opt-In on execute_tool)",
    ),
    (
        GEN_AI_TOOL_CALL_RESULT,
        "GENAI R:413 (Opt-In on execute_tool)",
    ),
    (GEN_AI_TOOL_TYPE, "GENAI R:382; execute_tool S:146, S:606"),
    (
        GEN_AI_PROVIDER_NAME,
        "GENAI R:3 (values R:6-76); inference Required",
    ),
    (GEN_AI_REQUEST_MODEL, "GENAI R:98"),
    (GEN_AI_REQUEST_MAX_TOKENS, "GENAI R:103"),
    (GEN_AI_RESPONSE_MODEL, "GENAI R:205"),
    (GEN_AI_RESPONSE_ID, "GENAI R:200"),
    (GEN_AI_RESPONSE_FINISH_REASONS, "GENAI R:210"),
    (
        GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
        "GENAI R:257 (double, seconds); inference S:221",
    ),
    (
        GEN_AI_USAGE_INPUT_TOKENS,
        "GENAI R:265 (includes cached tokens, R:269)",
    ),
    (GEN_AI_USAGE_OUTPUT_TOKENS, "GENAI R:294"),
    (
        GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
        "GENAI R:280; inference S:43",
    ),
    (
        GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS,
        "GENAI changelog.d/440.breaking.md:1 @b9449702 (rename); client-inference.md @024a4f94",
    ),
    (
        GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
        "GENAI R:287 @fe5608e (deprecated by #440; kept for now)",
    ),
    (
        GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
        "GENAI R:304; inference S:224",
    ),
    (
        GEN_AI_SYSTEM_INSTRUCTIONS,
        "GENAI R:718, schema gen-ai-system-instructions.json",
    ),
    (
        GEN_AI_INPUT_MESSAGES,
        "GENAI R:760, schema gen-ai-input-messages.json",
    ),
    (
        GEN_AI_OUTPUT_MESSAGES,
        "GENAI R:814, schema gen-ai-output-messages.json",
    ),
    (
        GEN_AI_USAGE_COST,
        "LANGFUSE LF:3022 (the call's total cost); GENAI registry.yaml has no cost name (read at 002c8a6e)",
    ),
    (SESSION_ID, "SEMCONV model/session/registry.yaml:4; OI :258"),
    (PROCESS_EXIT_CODE, "SEMCONV model/process/registry.yaml:216"),
    (
        PROCESS_EXECUTABLE_NAME,
        "SEMCONV model/process/registry.yaml:76",
    ),
    (
        ERROR_TYPE,
        "SEMCONV model/error/registry.yaml:8; GenAI spans S:3",
    ),
    (
        VCS_REPOSITORY_URL_FULL,
        "SEMCONV model/vcs/registry.yaml:9 (no `.git` suffix)",
    ),
    (VCS_REF_HEAD_NAME, "SEMCONV model/vcs/registry.yaml:97"),
    (VCS_REF_HEAD_REVISION, "SEMCONV model/vcs/registry.yaml:126"),
    (
        USER_ID,
        "SEMCONV model/user/registry.yaml:27; OI :262; LANGFUSE LFA:4",
    ),
    (HOST_NAME, "SEMCONV model/host/registry.yaml:16 (resource)"),
    (OPENINFERENCE_SPAN_KIND, "OI :256"),
    (INPUT_VALUE, "OI :25"),
    (OUTPUT_VALUE, "OI :19"),
    (TOOL_NAME, "OI :225"),
    (TOOL_PARAMETERS, "OI :233"),
    (AGENT_NAME, "OI :266"),
    (LLM_MODEL_NAME, "OI :62"),
    (LLM_RESPONSE_MODEL_NAME, "OI :72; MLFLOW OIT:50-55"),
    (LLM_PROVIDER, "OI :78 (values :597-613)"),
    (LLM_TOKEN_COUNT_PROMPT, "OI :122"),
    (LLM_TOKEN_COUNT_COMPLETION, "OI :110"),
    (LLM_TOKEN_COUNT_TOTAL, "OI :148"),
    (LLM_TOKEN_COUNT_CACHE_READ, "OI :140"),
    (LLM_TOKEN_COUNT_CACHE_WRITE, "OI :144"),
    (LLM_TOKEN_COUNT_REASONING, "OI :118"),
    (LLM_COST_TOTAL, "OI :215 (USD)"),
    (LLM_COST_PROMPT, "OI :182 (USD)"),
    (LLM_COST_COMPLETION, "OI :157 (USD)"),
    ("llm.input_messages.{i}.message.role", "OI :54 + :326"),
    ("llm.input_messages.{i}.message.content", "OI :54 + :330"),
    (
        "llm.input_messages.{i}.message.tool_call_id",
        "OI :54 + :359",
    ),
    (
        "llm.input_messages.{i}.message.tool_calls.{k}.tool_call.id",
        "OI :54 + :344 + :510",
    ),
    (
        "llm.input_messages.{i}.message.tool_calls.{k}.tool_call.function.name",
        "OI :54 + :344 + :514",
    ),
    (
        "llm.input_messages.{i}.message.tool_calls.{k}.tool_call.function.arguments",
        "OI :54 + :344 + :518",
    ),
    ("llm.output_messages.{i}.message.role", "OI :58 + :326"),
    ("llm.output_messages.{i}.message.content", "OI :58 + :330"),
    (
        "llm.output_messages.{i}.message.tool_call_id",
        "OI :58 + :359",
    ),
    (
        "llm.output_messages.{i}.message.tool_calls.{k}.tool_call.id",
        "OI :58 + :344 + :510",
    ),
    (
        "llm.output_messages.{i}.message.tool_calls.{k}.tool_call.function.name",
        "OI :58 + :344 + :514",
    ),
    (
        "llm.output_messages.{i}.message.tool_calls.{k}.tool_call.function.arguments",
        "OI :58 + :344 + :518",
    ),
];

/// GenAI names MLflow or Phoenix read, each with the OpenInference twin set beside it with the
/// same value (the module's doc says why): tests/viewers/mlflow.rs checks every span against it, and
/// MLflow's own reading of them. Names whose values differ by convention (the span kind, the
/// provider's spelling, a sub-agent's conversation against its trace's session) are not here.
pub const TWINS: &[(&str, &str)] = &[
    (GEN_AI_USAGE_INPUT_TOKENS, LLM_TOKEN_COUNT_PROMPT),
    (GEN_AI_USAGE_OUTPUT_TOKENS, LLM_TOKEN_COUNT_COMPLETION),
    (
        GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
        LLM_TOKEN_COUNT_CACHE_READ,
    ),
    (
        GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS,
        LLM_TOKEN_COUNT_CACHE_WRITE,
    ),
    (
        GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
        LLM_TOKEN_COUNT_CACHE_WRITE,
    ),
    (
        GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
        LLM_TOKEN_COUNT_REASONING,
    ),
    (GEN_AI_USAGE_COST, LLM_COST_TOTAL),
    (GEN_AI_REQUEST_MODEL, LLM_MODEL_NAME),
    (GEN_AI_RESPONSE_MODEL, LLM_RESPONSE_MODEL_NAME),
    (GEN_AI_TOOL_NAME, TOOL_NAME),
    (GEN_AI_TOOL_CALL_ARGUMENTS, INPUT_VALUE),
    (GEN_AI_TOOL_CALL_ARGUMENTS, TOOL_PARAMETERS),
    (GEN_AI_TOOL_CALL_RESULT, OUTPUT_VALUE),
];

/// `name` with every run of digits between dots made `{i}` (the first) or `{k}` (the second),
/// the form [`CHECKED`] lists flattened names in.
pub fn pattern(name: &str) -> String {
    let mut out = Vec::new();
    let mut indices = 0;
    for part in name.split('.') {
        if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
            out.push(if indices == 0 { "{i}" } else { "{k}" });
            indices += 1;
        } else {
            out.push(part);
        }
    }
    out.join(".")
}
