//! Cutting text to a byte budget on a character boundary: for exported values, and for error
//! and log messages that quote input.

/// `text` cut to at most `limit` bytes on a character boundary, ending in `…` if it was cut.
pub fn truncate(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_string();
    }
    const ELLIPSIS: &str = "…";
    let keep = floor_char_boundary(text, limit.saturating_sub(ELLIPSIS.len()));
    let mut out = String::with_capacity(keep + ELLIPSIS.len());
    out.push_str(&text[..keep]);
    if limit >= ELLIPSIS.len() {
        out.push_str(ELLIPSIS);
    }
    out
}

/// The largest character boundary at or below `at`.
pub fn floor_char_boundary(text: &str, at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    let mut i = at;
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_char_boundaries_within_the_limit() {
        assert_eq!(truncate("hello", 10), "hello");
        assert_eq!(truncate("hello world", 8), "hello…");
        let t = truncate("ééééé", 6);
        assert!(t.len() <= 6 && t.ends_with('…'), "{t}");
        assert_eq!(truncate("abc", 0), "");
    }
}
