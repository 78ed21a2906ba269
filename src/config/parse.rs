//! Reading one setting's text: numbers, durations, switches. Each error names the setting
//! (the variable, flag or file key) and quotes the value, so the user can find and fix it.

use std::time::Duration;

use super::ConfigError;

pub(crate) fn invalid(name: &str, value: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        name: name.to_string(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

/// `true`/`false` (also `1`/`0`, `yes`/`no`, `on`/`off`).
pub fn flag(name: &str, s: &str) -> Result<bool, ConfigError> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" | "" => Ok(false),
        _ => Err(invalid(name, s, "expected true or false")),
    }
}

/// A whole number above 0.
pub fn count(name: &str, s: &str) -> Result<usize, ConfigError> {
    match s.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(invalid(name, s, "expected a whole number above 0")),
    }
}

/// A whole number of milliseconds, as the `OTEL_*` variables write durations.
pub fn millis(name: &str, s: &str) -> Result<Duration, ConfigError> {
    s.trim()
        .parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| invalid(name, s, "expected a whole number of milliseconds"))
}

/// A duration with its unit, such as `15s` or `500ms` (our own variables).
pub fn duration(name: &str, s: &str) -> Result<Duration, ConfigError> {
    humantime::parse_duration(s.trim())
        .map_err(|e| invalid(name, s, format!("expected a duration such as 15s ({e})")))
}

/// `key=value,key2=value2`, values percent-encoded, as the spec writes headers and resource
/// attributes. Pairs without `=` are an error; the caller decides how much of it to quote.
pub fn pairs(s: &str) -> Result<Vec<(String, String)>, PairError> {
    let mut out = Vec::new();
    for pair in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((k, v)) = pair.split_once('=') else {
            return Err(PairError::NoEquals);
        };
        let key = k.trim().to_string();
        let value = percent_encoding::percent_decode_str(v.trim())
            .decode_utf8()
            .map_err(|_| PairError::NotUtf8(key.clone()))?
            .into_owned();
        out.push((key, value));
    }
    Ok(out)
}

/// Why `pairs` failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairError {
    NoEquals,
    /// The key whose value is not UTF-8 once percent-decoded.
    NotUtf8(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_and_errors_name_the_setting() {
        assert_eq!(flag("X", " Yes "), Ok(true));
        assert_eq!(count("X", "7"), Ok(7));
        assert_eq!(millis("X", "250"), Ok(Duration::from_millis(250)));
        assert_eq!(duration("X", "15s"), Ok(Duration::from_secs(15)));
        assert_eq!(
            count("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "0")
                .unwrap_err()
                .to_string(),
            "OTEL_BSP_MAX_EXPORT_BATCH_SIZE=\"0\": expected a whole number above 0"
        );
        assert_eq!(
            pairs("a=1, b = x%20y ,"),
            Ok(vec![("a".into(), "1".into()), ("b".into(), "x y".into())])
        );
        assert_eq!(pairs("secret"), Err(PairError::NoEquals));
    }
}
