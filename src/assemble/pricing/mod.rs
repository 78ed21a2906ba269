//! What a model call cost, in US dollars, from its token usage at the time it was made.
//!
//! The prices are pydantic's genai-prices table, compiled into the binary: no network, no
//! clock (the call's own start is the price date), so pricing stays a pure function and the
//! assembly stays pure. A model the table does not know has no cost, never a cost of 0.
//!
//! The table's lookup (provider rules, then each model's match rules) is a few microseconds;
//! its outcome for each (provider, model) is kept, so a model that has no price is not looked
//! up again, and a provider the table does not know is not tried again before the model's
//! name is. The table is decoded a provider at a time ([`table`]).

mod table;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::time::{Duration, UNIX_EPOCH};

use genai_prices::{ErrorKind, PriceRequest, Usage as PriceUsage, UsageKey};

pub use table::warm;
use table::{Chosen, Table};

use crate::protocol::Usage;

/// Distinct models remembered before the memo starts afresh: a bound on
/// memory if a host sends a new model name with every call.
const LOOKUPS_KEPT: usize = 1024;

/// A model call's price, in US dollars.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// Everything: tokens, and the web searches the provider ran, which are neither input
    /// nor output.
    pub total: f64,
    /// Input tokens: fresh, cache reads and cache writes.
    pub input: f64,
    /// Output tokens, reasoning included.
    pub output: f64,
}

/// How a (provider, model) pair is priced, once found out.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Lookup {
    /// By the table's provider chosen, asked as the call named it (`by_model`: without the
    /// provider it named, which the table does not know; by the model's maker, which its name
    /// tells).
    Priced { chosen: Chosen, by_model: bool },
    /// The table has no price for it.
    Unpriced,
}

/// Prices model calls, remembering how each (provider, model) pair is looked up.
#[derive(Debug, Default)]
pub struct Pricer {
    /// By model, then by provider: looked up with the call's own strings, so a call that
    /// was priced before allocates nothing to find out how.
    lookups: HashMap<Box<str>, ByProvider, foldhash::fast::RandomState>,
}

/// A model's lookups, by the provider the call named (if it named one).
type ByProvider = Vec<(Option<Box<str>>, Lookup)>;

impl Pricer {
    /// The price of a call to `model` (of `provider`, the `gen_ai.provider.name` value, when
    /// known) that used `usage`, made at `at_ms`. `None` when the table has no price for it.
    pub fn cost(
        &mut self,
        provider: Option<&str>,
        model: &str,
        usage: &Usage,
        at_ms: u64,
    ) -> Option<Cost> {
        if model.is_empty() {
            return None;
        }
        let id = provider.and_then(table_provider);
        if provider.is_some() && id.is_none() {
            // A model run on the user's own machine costs nothing we could know of.
            return None;
        }
        let table = Table::get()?;
        let known = self
            .lookups
            .get(model)
            .and_then(|by| by.iter().find(|(p, _)| p.as_deref() == id))
            .map(|(_, l)| *l);
        if known == Some(Lookup::Unpriced) {
            return None;
        }
        let usage = price_usage(usage);
        let at = UNIX_EPOCH + Duration::from_millis(at_ms);
        let request = |id| request(model, &usage, at, id);
        let lookup = match known {
            Some(known) => known,
            None => {
                let chosen = match table.choose(id, &request(id)) {
                    Err(e) if id.is_some() && e.kind() == ErrorKind::ProviderNotFound => table
                        .choose(None, &request(None))
                        .map(|c| c.map(|chosen| (chosen, true))),
                    found => found.map(|c| c.map(|chosen| (chosen, false))),
                };
                match chosen {
                    // Bad usage is this call's alone; only a miss in the table says the
                    // pair has no price.
                    Err(e) if e.kind() == ErrorKind::InvalidUsage => return None,
                    Ok(Some((chosen, by_model))) => Lookup::Priced { chosen, by_model },
                    _ => Lookup::Unpriced,
                }
            }
        };
        let found = match lookup {
            Lookup::Unpriced => None,
            Lookup::Priced { chosen, by_model } => {
                table.price(chosen, &request(if by_model { None } else { id }))
            }
        };
        let cost = match found {
            Some(Ok(p)) => Some(Cost {
                total: p.total_price,
                input: p.input_price,
                output: p.output_price,
            }),
            Some(Err(e)) if matches!(e.kind(), ErrorKind::InvalidUsage) => return None,
            _ => None,
        };
        if known.is_none() {
            if self.lookups.len() >= LOOKUPS_KEPT {
                self.lookups.clear();
            }
            let lookup = if cost.is_some() {
                lookup
            } else {
                Lookup::Unpriced
            };
            self.lookups
                .entry(Box::from(model))
                .or_default()
                .push((id.map(Box::from), lookup));
        }
        cost
    }
}

/// A request for the price of a call to `model` that used `usage`, made `at`, as sold by
/// provider `id` (any, with none).
fn request<'a>(
    model: &'a str,
    usage: &'a PriceUsage,
    at: std::time::SystemTime,
    id: Option<&'a str>,
) -> PriceRequest<'a> {
    let request = PriceRequest::new(model, usage).with_timestamp(at);
    match id {
        Some(id) => request.with_provider_id(id),
        None => request,
    }
}

/// The genai-prices provider id for a `gen_ai.provider.name` value (GENAI R:6-76) or a
/// provider id a host passed on; `None` for a model server on the user's own machine.
/// Names not listed go as they are: the table matches ids and aliases itself (`gcp.gemini`
/// is Google's, `aws.bedrock` AWS's, `mistral_ai` Mistral's, `github_copilot` Copilot's).
fn table_provider(name: &str) -> Option<&str> {
    Some(match name {
        "ollama" | "lmstudio" | "llama.cpp" | "llamacpp" | "vllm" | "local" => return None,
        "x_ai" => "x-ai",
        "azure.ai.openai" | "azure.ai.inference" => "azure",
        "gcp.vertex_ai" | "gcp.gen_ai" => "google",
        "moonshot_ai" => "moonshotai",
        other => other,
    })
}

/// The usage as the table counts it: `input_tokens` with cache reads and writes inside it,
/// `output_tokens` with reasoning inside it (as the protocol's are), one-hour cache writes
/// inside the writes, and web searches by the count.
fn price_usage(u: &Usage) -> PriceUsage {
    let mut usage = PriceUsage::from([
        (UsageKey::INPUT_TOKENS, u.total_input() as f64),
        (UsageKey::OUTPUT_TOKENS, u.output_tokens as f64),
    ]);
    if u.cache_read_tokens > 0 {
        usage.insert(UsageKey::CACHE_READ_TOKENS, u.cache_read_tokens as f64);
    }
    if u.cache_write_tokens > 0 {
        usage.insert(UsageKey::CACHE_WRITE_TOKENS, u.cache_write_tokens as f64);
    }
    // Inside the cache writes, as the table counts them: the rest are priced at the
    // five-minute rate, and all of them are where a model has no one-hour price. More than
    // the writes would make the table refuse the call whole.
    let hour = u64::from(u.cache_write_1h_tokens).min(u.cache_write_tokens);
    if hour > 0 {
        usage.insert(UsageKey::CACHE_WRITE_1H_TOKENS, hour as f64);
    }
    if u.web_searches > 0 {
        usage.insert(UsageKey::WEB_SEARCHES, u.web_searches as f64);
    }
    // More reasoning than output is a host counting them apart: the output then holds none
    // of it, and the table would refuse the call whole.
    if let Some(r) = u
        .reasoning_tokens
        .filter(|r| *r > 0 && *r <= u.output_tokens)
    {
        usage.insert(UsageKey::OUTPUT_REASONING_TOKENS, r as f64);
    }
    usage
}
