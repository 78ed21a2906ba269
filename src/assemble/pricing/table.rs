//! genai-prices' table, decoded one provider at a time: decoding all of it (47 providers,
//! some 2,000 models, each with its match rules) took some 240 million instructions per
//! process, while a session's calls go to one provider or two.
//!
//! `prices.json` is the crate's own data file, byte for byte (its `data/prices.json`, of the
//! version `Cargo.lock` pins; its licence is `prices.LICENSE`): the crate decodes a table
//! only whole, and keeps its copy to itself. The test `every_price_is_the_crate_s_own` prices
//! every model of it both ways, and fails when a new version of the crate brings other data.
//!
//! Which provider prices a call is the crate's decision, made as it makes it: a provider
//! named by its exact id is that provider; any other choice (an alias, a proxy, or no provider,
//! by the model's name) is made by the crate on an index of the providers' selection rules,
//! each provider with one stand-in model that matches any name, so that the crate's own
//! lookup names the provider it chose. Only that provider (and the providers it falls back
//! on) is then decoded whole, in the table's order, which keeps the choice the crate would
//! make on the whole table.

use std::collections::HashMap;
use std::sync::{LazyLock, OnceLock};

use genai_prices::{Calculator, PriceCalculation, PriceRequest};
use serde_json::value::RawValue;

/// genai-prices' data file.
static DATA: &str = include_str!("prices.json");

/// The table, split once per process; `None` if the data would not split (the tests say it
/// does).
static TABLE: LazyLock<Option<Table>> = LazyLock::new(|| Table::split(DATA).ok());

/// The fields of a provider that choose it; the rest (models, usage extractors, the API
/// pattern, which no call here names) stay out of the indexes.
const SELECTS: &[&str] = &["id", "name", "provider_match", "model_match"];

/// What an index puts in each provider: an API pattern (required, never matched here) and
/// a model that matches every name, and has no price.
const STAND_IN: &str = r#""api_pattern":"-","models":[{"id":"*","match":{"contains":""}}]"#;

/// The table, split by provider.
pub struct Table {
    providers: Vec<Provider>,
    /// Every provider's selection rules: chooses for a provider named otherwise than by its id.
    by_rules: OnceLock<Option<Calculator>>,
    /// The providers with a rule on model names, the only ones a call naming no provider can
    /// choose: fewer to compile than all.
    by_model: OnceLock<Option<Calculator>>,
}

struct Provider {
    id: &'static str,
    /// Its entry in the data file, as it is there.
    raw: &'static str,
    /// What of it chooses it, as an index's entry.
    rules: String,
    by_model: bool,
    falls_back_on: Vec<&'static str>,
    /// It and the providers it falls back on, decoded on first use.
    decoded: OnceLock<Option<Calculator>>,
}

/// Which provider prices a call, for [`Table::price`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chosen(usize);

impl Table {
    /// The process's table.
    pub fn get() -> Option<&'static Table> {
        TABLE.as_ref()
    }

    fn split(data: &'static str) -> Result<Table, String> {
        let entries: Vec<&'static RawValue> =
            serde_json::from_str(data).map_err(|e| format!("the price data: {e}"))?;
        let mut providers = Vec::with_capacity(entries.len());
        for (n, entry) in entries.iter().enumerate() {
            let fields: HashMap<&'static str, &'static RawValue> =
                serde_json::from_str(entry.get()).map_err(|e| format!("provider {n}: {e}"))?;
            let field = |name: &str| fields.get(name).map(|v| v.get());
            let id: &'static str = serde_json::from_str(field("id").unwrap_or("null"))
                .map_err(|e| format!("provider {n}'s id: {e}"))?;
            let falls_back_on: Vec<&'static str> = match field("fallback_model_providers") {
                Some(list) => serde_json::from_str(list)
                    .map_err(|e| format!("provider {id}'s fallback_model_providers: {e}"))?,
                None => Vec::new(),
            };
            let mut rules = String::from("{");
            for name in SELECTS {
                if let Some(value) = field(name) {
                    rules.push_str(&format!("{name:?}:{value},"));
                }
            }
            rules.push_str(STAND_IN);
            rules.push('}');
            providers.push(Provider {
                id,
                raw: entry.get(),
                rules,
                by_model: fields.contains_key("model_match"),
                falls_back_on,
                decoded: OnceLock::new(),
            });
        }
        Ok(Table {
            providers,
            by_rules: OnceLock::new(),
            by_model: OnceLock::new(),
        })
    }

    /// An index of the providers `which` keeps, in the table's order.
    fn index(&self, which: impl Fn(&Provider) -> bool) -> Option<Calculator> {
        let rules: Vec<&str> = self
            .providers
            .iter()
            .filter(|p| which(p))
            .map(|p| p.rules.as_str())
            .collect();
        Calculator::from_json(format!("[{}]", rules.join(","))).ok()
    }

    /// The provider that prices `request`, which names provider `id` (or none), as the crate
    /// would choose it from the whole table; the crate's error if none does (or the usage is
    /// bad). `None` if the table's indexes would not decode (the tests say they do).
    pub fn choose(
        &self,
        id: Option<&str>,
        request: &PriceRequest<'_>,
    ) -> genai_prices::Result<Option<Chosen>> {
        let index = match id {
            Some(id) => {
                // As the crate compares ids.
                if let Some(at) = self.position(&id.trim().to_lowercase()) {
                    return Ok(Some(Chosen(at)));
                }
                self.by_rules.get_or_init(|| self.index(|_| true))
            }
            None => self.by_model.get_or_init(|| self.index(|p| p.by_model)),
        };
        let Some(index) = index else {
            return Ok(None);
        };
        let chosen = index.calculate(request)?;
        Ok(self.position(&chosen.provider_id).map(Chosen))
    }

    /// What `request` costs at `chosen`'s prices.
    pub fn price(
        &self,
        chosen: Chosen,
        request: &PriceRequest<'_>,
    ) -> Option<genai_prices::Result<PriceCalculation>> {
        let provider = self.providers.get(chosen.0)?;
        let calculator = provider.decoded.get_or_init(|| self.decode(chosen.0));
        Some(calculator.as_ref()?.calculate(request))
    }

    fn position(&self, id: &str) -> Option<usize> {
        self.providers.iter().position(|p| p.id == id)
    }

    /// Provider `at` and those it falls back on (and theirs), in the table's order.
    fn decode(&self, at: usize) -> Option<Calculator> {
        let mut wanted = vec![at];
        let mut next = 0;
        while let Some(&i) = wanted.get(next) {
            for id in &self.providers[i].falls_back_on {
                if let Some(j) = self.position(id).filter(|j| !wanted.contains(j)) {
                    wanted.push(j);
                }
            }
            next += 1;
        }
        wanted.sort_unstable();
        let entries: Vec<&str> = wanted.iter().map(|&i| self.providers[i].raw).collect();
        Calculator::from_json(format!("[{}]", entries.join(","))).ok()
    }
}

/// Splits the table in the background, so that the first model call does not wait for it.
pub fn warm() {
    let _ = Table::get();
}
