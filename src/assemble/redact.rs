//! The secret scrubber: finds credentials in text and replaces each with `[REDACTED:kind]`.
//!
//! Agents handle secrets all day (`export GITHUB_TOKEN=…`, a `.env` they read, a curl with an
//! `Authorization` header), and tool arguments and outputs are exported by default, so every
//! string taken from input passes through here before it can reach a span. Most strings are
//! names, ids and plain output: a single Aho-Corasick pass for the fragments every built-in
//! secret contains (`sk-`, `ghp_`, `://`, `token`, …) clears them without running a regex. The
//! rest get one `RegexSet` pass to tell which rules match at all; only those rules then run
//! their replacement. Text with no secret comes back borrowed, unchanged and unallocated.

use std::borrow::Cow;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use regex::{Captures, Regex, RegexSet};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum RedactError {
    #[error("redaction pattern `{pattern}` is not a valid regular expression: {source}")]
    BadPattern {
        pattern: String,
        #[source]
        source: Box<regex::Error>,
    },
    #[error("redaction kind `{0}` must be letters, digits, `-` or `_`")]
    BadKind(String),
}

/// One kind of secret. The secret is the whole match, less the optional `pre` and `post`
/// groups, which are context kept as it was (the `Bearer ` before a token, the `@` after a
/// password in a URL).
struct Rule {
    kind: String,
    marker: String,
    re: Regex,
    /// Whether to look at the `name` group and spare counters like `max_tokens=4096`.
    spare_counters: bool,
}

/// Secret names that only look like secrets: counts and limits of tokens, not tokens.
fn is_counter_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
        "tokens", "_count", "_len", "_length", "_limit", "_size", "_max", "_min", "_ttl",
        "_timeout", "_expiry",
    ]
    .iter()
    .any(|s| lower.ends_with(s))
}

/// The built-in rules, most specific first: a key with its own prefix is named as what it is
/// before the generic `NAME=value` rule could claim it.
const BUILTIN: &[(&str, &str)] = &[
    (
        "private-key",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|$)",
    ),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    (
        "openai-key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
    ),
    (
        "github-token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    ("gitlab-token", r"\bgl(?:pat|dt|rt|ptt)-[A-Za-z0-9_\-]{20,}"),
    (
        "slack-token",
        r"\bxox[abposr]-[A-Za-z0-9\-]{10,}|https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+",
    ),
    ("stripe-key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("aws-access-key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    (
        "jwt",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    ),
    (
        "bearer-token",
        r"(?P<pre>(?i:\bbearer)\s+)[A-Za-z0-9._~+/\-]{16,}=*",
    ),
    (
        "basic-auth",
        r#"(?P<pre>(?i:authorization)\\?["']?\s*[:=]\s*\\?["']?(?i:basic)\s+)[A-Za-z0-9+/]{8,}={0,2}"#,
    ),
    (
        "url-password",
        r#"(?P<pre>\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@"'\\]+:)[^\s@/"'\\]+(?P<post>@)"#,
    ),
    (
        "secret",
        // Quotes may be escaped any number of times: JSON inside a JSON string, inside another.
        r#"(?P<pre>\\*"(?P<name>[A-Za-z0-9_.\-]*(?i:token|secret|password|passwd|api_?key|apikey|access_?key|private_?key|credential|auth_?key)[A-Za-z0-9_.\-]*)\\*"\s*:\s*\\*")(?:[^"\\]|\\[^"])+?(?P<post>\\*")"#,
    ),
    (
        "secret",
        r#"(?P<pre>\b(?P<name>[A-Za-z0-9_.\-]*(?i:token|secret|password|passwd|api_?key|apikey|access_?key|private_?key|credential|auth_?key)[A-Za-z0-9_.\-]*)\s*=\s*["']?)[^\s"'\\,;&]{3,}"#,
    ),
];

/// Every match of a built-in rule contains one of these (compared without case): text with
/// none of them cannot hold a built-in secret. Keep in step with `BUILTIN`; the corpus test
/// checks every secret it has against both.
const TRIGGERS: &[&str] = &[
    "private key",
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "gldt-",
    "glrt-",
    "glptt-",
    "xox",
    "hooks.slack.com",
    "_live_",
    "_test_",
    "aiza",
    "akia",
    "asia",
    "abia",
    "acca",
    "eyj",
    "bearer",
    "authorization",
    "://",
    "token",
    "secret",
    "passw",
    "api_key",
    "apikey",
    "access_key",
    "accesskey",
    "private_key",
    "privatekey",
    "credential",
    "auth_key",
    "authkey",
];

fn triggers() -> AhoCorasick {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(TRIGGERS)
        .expect("the trigger list builds")
}

/// Whether `text` holds a fragment every built-in secret has (exposed for the corpus test).
#[doc(hidden)]
pub fn has_trigger(text: &str) -> bool {
    static AC: std::sync::OnceLock<AhoCorasick> = std::sync::OnceLock::new();
    AC.get_or_init(triggers).is_match(text)
}

/// Finds and replaces secrets. Cheap to share (`Arc`), immutable once built.
///
/// The built-in rules are compiled on first use, or by [`Scrubber::warm`] on a thread that
/// has time: building their regexes takes 15-20 ms, which an exporter's startup (and so the
/// agent) need not wait for. The user's rules are compiled at once, so that a bad pattern is an
/// error when the exporter starts, not later.
pub struct Scrubber {
    /// `None` when the built-in rules are off.
    builtin: Option<OnceLock<Rules>>,
    user: Rules,
}

/// Compiled rules and the set that finds which of them match.
struct Rules {
    set: RegexSet,
    rules: Vec<Rule>,
    /// Fragments one of the rules needs; text without any skips the set (built-ins only).
    triggers: Option<AhoCorasick>,
}

impl Rules {
    fn compile(patterns: impl IntoIterator<Item = (String, String)>) -> Result<Rules, RedactError> {
        let mut rules = Vec::new();
        for (kind, pattern) in patterns {
            if kind.is_empty()
                || !kind
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(RedactError::BadKind(kind));
            }
            let re = Regex::new(&pattern).map_err(|e| RedactError::BadPattern {
                pattern: pattern.clone(),
                source: Box::new(e),
            })?;
            let spare_counters = re.capture_names().any(|n| n == Some("name"));
            rules.push(Rule {
                marker: format!("[REDACTED:{kind}]"),
                kind,
                re,
                spare_counters,
            });
        }
        let set = RegexSet::new(rules.iter().map(|r| r.re.as_str())).map_err(|e| {
            RedactError::BadPattern {
                pattern: "(the combined set)".into(),
                source: Box::new(e),
            }
        })?;
        Ok(Rules {
            set,
            rules,
            triggers: None,
        })
    }

    fn builtin() -> Rules {
        let mut r = Rules::compile(BUILTIN.iter().map(|(k, p)| (k.to_string(), p.to_string())))
            .expect("built-in redaction patterns are valid");
        r.triggers = Some(triggers());
        r
    }

    fn empty() -> Rules {
        Rules {
            set: RegexSet::empty(),
            rules: Vec::new(),
            triggers: None,
        }
    }

    /// The rules that match `text`.
    fn matching<'r>(&'r self, text: &str) -> impl Iterator<Item = &'r Rule> + 'r {
        let hit = !self.rules.is_empty() && self.triggers.as_ref().is_none_or(|t| t.is_match(text));
        let found: Vec<usize> = if hit {
            self.set.matches(text).iter().collect()
        } else {
            Vec::new()
        };
        found.into_iter().map(|i| &self.rules[i])
    }
}

impl std::fmt::Debug for Scrubber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let builtin = self
            .builtin
            .as_ref()
            .map(|_| BUILTIN.iter().map(|(k, _)| *k));
        f.debug_struct("Scrubber")
            .field("builtin", &builtin.map(|b| b.collect::<Vec<_>>()))
            .field(
                "user",
                &self.user.rules.iter().map(|r| &r.kind).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Default for Scrubber {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Scrubber {
    /// The built-in rules.
    pub fn builtin() -> Self {
        Scrubber {
            builtin: Some(OnceLock::new()),
            user: Rules::empty(),
        }
    }

    /// The built-in rules plus the user's, each a `(kind, regex)`. A user regex may use the
    /// groups `pre` and `post` to keep context around the secret.
    pub fn with_patterns<K, P>(extra: impl IntoIterator<Item = (K, P)>) -> Result<Self, RedactError>
    where
        K: Into<String>,
        P: Into<String>,
    {
        Ok(Scrubber {
            builtin: Some(OnceLock::new()),
            user: Rules::compile(extra.into_iter().map(|(k, p)| (k.into(), p.into())))?,
        })
    }

    /// A scrubber that changes nothing (for tests and for users who opt out).
    pub fn disabled() -> Self {
        Scrubber {
            builtin: None,
            user: Rules::empty(),
        }
    }

    /// Compiles the built-in rules now, if they are not yet: call it where waiting is free.
    pub fn warm(&self) {
        if let Some(b) = &self.builtin {
            b.get_or_init(Rules::builtin);
        }
    }

    /// How many rules there are (built-in and the user's).
    pub fn len(&self) -> usize {
        self.builtin.as_ref().map_or(0, |_| BUILTIN.len()) + self.user.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `text` with every secret replaced by `[REDACTED:kind]`.
    pub fn scrub<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let builtin = self.builtin.as_ref().map(|b| b.get_or_init(Rules::builtin));
        let mut out = Cow::Borrowed(text);
        // Built-in rules first, then the user's: an earlier, more specific rule names a secret.
        let rules: Vec<&Rule> = builtin
            .into_iter()
            .flat_map(|b| b.matching(text))
            .chain(self.user.matching(text))
            .collect();
        for rule in rules {
            let replaced = rule.re.replace_all(&out, |caps: &Captures<'_>| {
                if rule.spare_counters {
                    if let Some(name) = caps.name("name") {
                        if is_counter_name(name.as_str()) {
                            return caps[0].to_string();
                        }
                    }
                }
                let whole = caps.get(0).expect("group 0 always matches");
                let pre = caps.name("pre").map_or("", |m| m.as_str());
                let post = caps.name("post").map_or("", |m| m.as_str());
                let secret = &whole.as_str()[pre.len()..whole.len() - post.len()];
                // An earlier, more specific rule already named this one.
                if secret.starts_with("[REDACTED:") {
                    return whole.as_str().to_string();
                }
                format!("{pre}{}{post}", rule.marker)
            });
            // `replace_all` copies on any match, even one a rule chose to keep as it was.
            if let Cow::Owned(s) = replaced {
                if s != *out {
                    out = Cow::Owned(s);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_the_basics_and_keeps_context() {
        let s = Scrubber::builtin();
        let cases = [
            (
                "key sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAA done",
                "key [REDACTED:anthropic-key] done",
            ),
            (
                "curl -H 'Authorization: Bearer abcdefghijklmnop1234'",
                "curl -H 'Authorization: Bearer [REDACTED:bearer-token]'",
            ),
            (
                "postgres://admin:hunter22@db:5432/x",
                "postgres://admin:[REDACTED:url-password]@db:5432/x",
            ),
            (
                "export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                "export GITHUB_TOKEN=[REDACTED:github-token]",
            ),
            ("DB_PASSWORD=s3cret!", "DB_PASSWORD=[REDACTED:secret]"),
            (
                r#"{"command":"echo \"api_key\": \"abc123\""}"#,
                r#"{"command":"echo \"api_key\": \"[REDACTED:secret]\""}"#,
            ),
            ("AKIAIOSFODNN7EXAMPLE", "[REDACTED:aws-access-key]"),
        ];
        for (input, want) in cases {
            assert_eq!(s.scrub(input), want, "{input}");
        }
    }

    #[test]
    fn leaves_look_alikes_alone_without_allocating() {
        let s = Scrubber::builtin();
        for text in [
            "commit 3f786850e387550fdab836ed7e6dc881de23001b",
            "id 123e4567-e89b-12d3-a456-426614174000",
            "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
            "max_tokens=4096 and \"input_tokens\": 12",
            "task-abcdefghijklmnopqrstuvwxyz",
            "Basic authentication is described in RFC 7617",
        ] {
            assert!(matches!(s.scrub(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn user_patterns_add_kinds_and_bad_ones_are_named() {
        let s = Scrubber::with_patterns([("ticket", r"TICKET-\d{4}")]).unwrap();
        assert_eq!(s.scrub("see TICKET-1234"), "see [REDACTED:ticket]");
        let e = Scrubber::with_patterns([("x", "(")]).unwrap_err();
        assert!(e
            .to_string()
            .contains("`(` is not a valid regular expression"));
        assert!(Scrubber::with_patterns([("bad kind", "x")]).is_err());
    }
}
