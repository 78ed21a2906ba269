//! Every attribute and event name the exporter emits, in one place.
//!
//! GenAI semantic-convention names come first; OpenInference names are added beside them so
//! that Phoenix and Langfuse read the same spans; `albedo.*` names cover what neither has.
//! The dashboards and their test check their queries against [`ALL`], so a name used anywhere
//! else must be listed here.

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
pub const GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: &str =
    "gen_ai.usage.cache_creation.input_tokens";
pub const GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: &str = "gen_ai.usage.reasoning.output_tokens";

pub const SESSION_ID: &str = "session.id";
pub const PROCESS_EXIT_CODE: &str = "process.exit.code";
pub const ERROR_TYPE: &str = "error.type";

pub const OPENINFERENCE_SPAN_KIND: &str = "openinference.span.kind";
pub const INPUT_VALUE: &str = "input.value";
pub const OUTPUT_VALUE: &str = "output.value";
pub const TOOL_NAME: &str = "tool.name";
pub const LLM_MODEL_NAME: &str = "llm.model_name";
pub const LLM_PROVIDER: &str = "llm.provider";
pub const LLM_TOKEN_COUNT_PROMPT: &str = "llm.token_count.prompt";
pub const LLM_TOKEN_COUNT_COMPLETION: &str = "llm.token_count.completion";
pub const LLM_TOKEN_COUNT_TOTAL: &str = "llm.token_count.total";
pub const LLM_TOKEN_COUNT_CACHE_READ: &str = "llm.token_count.prompt_details.cache_read";
pub const LLM_TOKEN_COUNT_CACHE_WRITE: &str = "llm.token_count.prompt_details.cache_write";
pub const LLM_TOKEN_COUNT_REASONING: &str = "llm.token_count.completion_details.reasoning";

pub const ALBEDO_TURN_NUMBER: &str = "albedo.turn.number";
pub const ALBEDO_TURN_PROMPTED: &str = "albedo.turn.prompted";
pub const ALBEDO_TURN_REASON: &str = "albedo.turn.reason";
pub const ALBEDO_TURN_TOOL_CALLS: &str = "albedo.turn.tool_calls";
pub const ALBEDO_TURN_MODEL_CALLS: &str = "albedo.turn.model_calls";
pub const ALBEDO_TURN_INPUT_TOKENS: &str = "albedo.turn.input_tokens";
pub const ALBEDO_TURN_OUTPUT_TOKENS: &str = "albedo.turn.output_tokens";
pub const ALBEDO_TURN_CACHE_READ_TOKENS: &str = "albedo.turn.cache_read_tokens";
pub const ALBEDO_TURN_CACHE_WRITE_TOKENS: &str = "albedo.turn.cache_write_tokens";
pub const ALBEDO_SESSION_MODEL: &str = "albedo.session.model";
pub const ALBEDO_SESSION_WORKSPACE: &str = "albedo.session.workspace";
pub const ALBEDO_PARENT_SESSION: &str = "albedo.parent.session";
pub const ALBEDO_PARENT_CALL: &str = "albedo.parent.call";
pub const ALBEDO_TOOL_WITHIN: &str = "albedo.tool.within";
pub const ALBEDO_TOOL_REFUSED: &str = "albedo.tool.refused";
pub const ALBEDO_TOOL_TIMED_OUT: &str = "albedo.tool.timed_out";
pub const ALBEDO_CHAT_TIME_TO_FIRST_TOKEN_MS: &str = "albedo.chat.time_to_first_token_ms";
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
/// Span event: the first token of a model response arrived.
pub const EVENT_FIRST_TOKEN: &str = "gen_ai.first_token";

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
    GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
    GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
    SESSION_ID,
    PROCESS_EXIT_CODE,
    ERROR_TYPE,
    OPENINFERENCE_SPAN_KIND,
    INPUT_VALUE,
    OUTPUT_VALUE,
    TOOL_NAME,
    LLM_MODEL_NAME,
    LLM_PROVIDER,
    LLM_TOKEN_COUNT_PROMPT,
    LLM_TOKEN_COUNT_COMPLETION,
    LLM_TOKEN_COUNT_TOTAL,
    LLM_TOKEN_COUNT_CACHE_READ,
    LLM_TOKEN_COUNT_CACHE_WRITE,
    LLM_TOKEN_COUNT_REASONING,
    ALBEDO_TURN_NUMBER,
    ALBEDO_TURN_PROMPTED,
    ALBEDO_TURN_REASON,
    ALBEDO_TURN_TOOL_CALLS,
    ALBEDO_TURN_MODEL_CALLS,
    ALBEDO_TURN_INPUT_TOKENS,
    ALBEDO_TURN_OUTPUT_TOKENS,
    ALBEDO_TURN_CACHE_READ_TOKENS,
    ALBEDO_TURN_CACHE_WRITE_TOKENS,
    ALBEDO_SESSION_MODEL,
    ALBEDO_SESSION_WORKSPACE,
    ALBEDO_PARENT_SESSION,
    ALBEDO_PARENT_CALL,
    ALBEDO_TOOL_WITHIN,
    ALBEDO_TOOL_REFUSED,
    ALBEDO_TOOL_TIMED_OUT,
    ALBEDO_CHAT_TIME_TO_FIRST_TOKEN_MS,
    ALBEDO_UNFINISHED,
    ALBEDO_SYNTHESIZED,
    ALBEDO_TIMING_CLAMPED,
    ALBEDO_STOP_HELD,
    ALBEDO_STOP_REPLY,
];
