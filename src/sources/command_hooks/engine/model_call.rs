//! One model call, built once for every agent: what an agent knows of a call becomes the
//! protocol's `call_sent` here, with the clamps every agent needs (an end never before the
//! start, a first token between the two) and its tokens in the protocol's terms ([`Tokens`]).

use std::borrow::Cow;

use crate::protocol::{CallSent, Json, Request, Response, Usage};

/// What an agent knows of one model call. Fill in what it has, `..ModelCall::default()` for
/// the rest; [`call_sent`](Self::call_sent) makes the record's event.
#[derive(Debug, Default)]
pub(crate) struct ModelCall {
    /// The agent's id for the call (its message or request id), which keys it in the store.
    pub id: Option<String>,
    /// The model asked.
    pub model: String,
    /// `gen_ai.provider.name`.
    pub provider: Option<Cow<'static, str>>,
    pub max_tokens: Option<u64>,
    /// The conversation sent and the system instructions, where capture keeps them.
    pub messages: Option<Json<'static>>,
    pub system: Option<Json<'static>>,
    pub started_ms: u64,
    /// Clamped to `started_ms` at the least.
    pub finished_ms: u64,
    /// When the first token came, clamped between the start and the end.
    pub first_token_ms: Option<u64>,
    pub usage: Usage,
    /// The answer; `None` when none came (the call failed or was cut short).
    pub answer: Option<Answer>,
    /// Why the call failed.
    pub error: Option<Json<'static>>,
}

/// A model call's answer.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    /// The provider's id for the response.
    pub id: Option<String>,
    /// The model that answered, where it is not the one asked.
    pub model: Option<String>,
    pub stop_reason: Option<String>,
    /// What it answered, where capture keeps it.
    pub content: Option<Json<'static>>,
}

impl ModelCall {
    /// The call as the protocol's `call_sent`.
    pub(crate) fn call_sent(self) -> CallSent<'static> {
        let finished_ms = self.finished_ms.max(self.started_ms);
        let response = self.answer.map(|a| Response {
            id: a.id.map(Cow::Owned),
            model: Some(Cow::Owned(a.model.unwrap_or_else(|| self.model.clone()))),
            stop_reason: a.stop_reason.map(Cow::Owned),
            content: a.content,
        });
        CallSent {
            id: self.id.map(Cow::Owned),
            request: Request {
                model: Cow::Owned(self.model),
                provider: self.provider,
                max_tokens: self.max_tokens,
                messages: self.messages,
                system: self.system,
            },
            response,
            usage: self.usage,
            started_ms: self.started_ms,
            finished_ms,
            first_token_ms: self
                .first_token_ms
                .map(|t| t.clamp(self.started_ms, finished_ms)),
            error: self.error,
        }
    }
}

/// A failure's message as the call's error.
pub(crate) fn error_text(why: &str) -> Option<Json<'static>> {
    Json::of(why).ok()
}

/// A model call's tokens as an agent reports them. How it counts them is said on both axes
/// where it is read ([`usage`](Self::usage)): whether the input holds the cache's tokens,
/// and whether the output holds the reasoning.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    /// Of `cache_write`, those kept an hour (Anthropic's), dearer than the rest.
    pub cache_write_1h: u32,
    pub reasoning: u64,
    /// Web searches the provider ran for the call.
    pub web_searches: u32,
}

/// Whether an agent's input count holds the cache's tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cache {
    /// The input is what was neither read from nor written to the cache (Anthropic's API,
    /// and the protocol's own terms).
    Apart,
    /// The input holds the tokens read from the cache (OpenAI's and Gemini's APIs).
    ReadsWithin,
    /// The input holds the tokens read from the cache and those written to it (Cline's).
    ReadsAndWritesWithin,
}

/// Whether an agent's output count holds the reasoning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reasoning {
    /// The output is all that was billed as completion, reasoning included (the protocol's
    /// own terms: OpenAI's and Anthropic's APIs).
    Within,
    /// The output leaves the reasoning out, counted apart (Gemini's API, opencode's).
    Apart,
}

impl Tokens {
    /// The protocol's usage: the input without the cache's tokens, the output with the
    /// reasoning. A cache count above the input it is said to be within is all of it.
    pub(crate) fn usage(self, cache: Cache, reasoning: Reasoning) -> Usage {
        let (input, cache_read) = match cache {
            Cache::Apart => (self.input, self.cache_read),
            Cache::ReadsWithin => within(self.input, self.cache_read),
            Cache::ReadsAndWritesWithin => {
                within(self.input.saturating_sub(self.cache_write), self.cache_read)
            }
        };
        let output = match reasoning {
            Reasoning::Within => self.output,
            Reasoning::Apart => self.output.saturating_add(self.reasoning),
        };
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: cache_read,
            cache_write_tokens: self.cache_write,
            reasoning_tokens: (self.reasoning > 0).then_some(self.reasoning),
            cache_write_1h_tokens: self.cache_write_1h,
            web_searches: self.web_searches,
        }
    }
}

/// `(input without the cached part, the cached part)`, the cached part at most the input.
fn within(input: u64, cached: u64) -> (u64, u64) {
    let cached = cached.min(input);
    (input - cached, cached)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens() -> Tokens {
        Tokens {
            input: 1_001,
            output: 21,
            cache_read: 101,
            cache_write: 7,
            reasoning: 5,
            ..Tokens::default()
        }
    }

    #[test]
    fn each_way_of_counting_comes_out_in_the_protocol_s_terms() {
        let u = tokens().usage(Cache::Apart, Reasoning::Within);
        assert_eq!(
            (
                u.input_tokens,
                u.cache_read_tokens,
                u.cache_write_tokens,
                u.output_tokens
            ),
            (1_001, 101, 7, 21)
        );
        let u = tokens().usage(Cache::ReadsWithin, Reasoning::Apart);
        assert_eq!(
            (u.input_tokens, u.cache_read_tokens, u.output_tokens),
            (900, 101, 26)
        );
        assert_eq!(u.reasoning_tokens, Some(5));
        let u = tokens().usage(Cache::ReadsAndWritesWithin, Reasoning::Within);
        assert_eq!(
            (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens),
            (893, 101, 7)
        );
    }

    #[test]
    fn a_cache_count_above_the_input_is_all_of_it() {
        let t = Tokens {
            input: 50,
            cache_read: 80,
            ..Tokens::default()
        };
        let u = t.usage(Cache::ReadsWithin, Reasoning::Within);
        assert_eq!((u.input_tokens, u.cache_read_tokens), (0, 50));
        assert_eq!(
            u.reasoning_tokens, None,
            "no reasoning is not a reasoning of 0"
        );
    }

    #[test]
    fn an_end_before_the_start_and_a_first_token_outside_them_are_clamped() {
        let c = ModelCall {
            model: "m".into(),
            started_ms: 100,
            finished_ms: 90,
            first_token_ms: Some(200),
            answer: Some(Answer::default()),
            ..ModelCall::default()
        }
        .call_sent();
        assert_eq!(
            (c.started_ms, c.finished_ms, c.first_token_ms),
            (100, 100, Some(100))
        );
        assert_eq!(c.response.unwrap().model.as_deref(), Some("m"));
        let c = ModelCall {
            started_ms: 100,
            finished_ms: 300,
            first_token_ms: Some(50),
            error: error_text("cut"),
            ..ModelCall::default()
        }
        .call_sent();
        assert_eq!(c.first_token_ms, Some(100));
        assert!(c.response.is_none());
        assert_eq!(c.error.unwrap().get(), "\"cut\"");
    }
}
