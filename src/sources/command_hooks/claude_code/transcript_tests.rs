//! The transcript reader on recorded Claude Code transcripts.

use super::*;

fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/claude-code/{path}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn each_message_is_one_call_with_its_usage_and_timing() {
    let data = fixture("multi_tool/transcript.jsonl");
    let mut c = TranscriptCursor::default();
    assert_eq!(c.feed(&data), data.len());
    let calls = c.take_calls();
    let ids: Vec<_> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "msg_01Mockmain000001",
            "msg_01Mockmain010002",
            "msg_01Mockmain020003",
            "msg_01Mockmain030004"
        ]
    );
    let first = &calls[0];
    assert_eq!(first.model, "claude-opus-5-5");
    assert_eq!(first.max_tokens, Some(128000));
    assert_eq!(first.stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(first.usage.input_tokens, 4);
    assert_eq!(first.usage.cache_write_tokens, 14211);
    assert_eq!(first.usage.output_tokens, 130);
    // From the api-request (…49.888) to the message's last block (…49.905).
    assert_eq!(first.finished_ms - first.started_ms, 17);
    assert_eq!(calls[3].stop_reason.as_deref(), Some("end_turn"));
    // What was sent: the first call, the prompt; the second, the first call's tool uses
    // and both their results.
    let input = |i: usize| -> serde_json::Value {
        serde_json::from_str(calls[i].messages.as_deref().unwrap()).unwrap()
    };
    assert_eq!(input(0).as_array().unwrap().len(), 1);
    assert_eq!(
        input(0)[0]["content"][0]["text"],
        "please say hello and fix notes.txt"
    );
    let second = input(1);
    assert_eq!(second.as_array().unwrap().len(), 3, "{second}");
    assert_eq!(second[1]["role"], "assistant");
    let results: Vec<&str> = second[2]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["tool_use_id"].as_str())
        .collect();
    assert_eq!(results, ["toolu_01Mockmain0002", "toolu_01Mockmain0001"]);
    assert_eq!(input(3).as_array().unwrap().len(), 7);
    assert!(calls[0]
        .system
        .as_deref()
        .unwrap()
        .contains("Claude Agent SDK"));
    // Nothing is counted twice, even when the same lines come again.
    let mut again = c.clone();
    again.feed(&data);
    assert!(again.take_calls().is_empty());
}

/// Issue 37: the cache writes kept for an hour and the web searches Anthropic's servers ran,
/// as Claude Code records them in the message's usage, reach the call (the fixture's first
/// message, its counts changed: CLI 2.1.332 wrote them as 0).
#[test]
fn hour_long_cache_writes_and_web_searches_are_read() {
    let data = String::from_utf8(fixture("multi_tool/transcript.jsonl")).unwrap();
    // Each block of a message is a line, each with the message's usage.
    let data: String = data
        .split_inclusive('\n')
        .map(|line| {
            if !line.contains("msg_01Mockmain000001") {
                return line.to_string();
            }
            line.replace(
                r#""server_tool_use":{"web_search_requests":0,"#,
                r#""server_tool_use":{"web_search_requests":2,"#,
            )
            .replace(
                r#""cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":14211}"#,
                r#""cache_creation":{"ephemeral_1h_input_tokens":14000,"ephemeral_5m_input_tokens":211}"#,
            )
        })
        .collect();
    let mut c = TranscriptCursor::default();
    c.feed(data.as_bytes());
    let calls = c.take_calls();
    let u = calls[0].usage;
    assert_eq!(
        (
            u.cache_write_tokens,
            u.cache_write_1h_tokens,
            u.web_searches
        ),
        (14211, 14000, 2)
    );
    let later = calls[1].usage;
    assert_eq!((later.cache_write_1h_tokens, later.web_searches), (0, 0));
}

/// A daemon that resumes mid-session starts at the saved offset; the calls after it still
/// carry the conversation before it.
#[test]
fn a_resumed_cursor_recalls_the_conversation_before_its_offset() {
    let data = fixture("multi_tool/transcript.jsonl");
    let mut whole = TranscriptCursor::default();
    whole.feed(&data);
    let expected: Vec<Option<String>> =
        whole.take_calls().into_iter().map(|c| c.messages).collect();
    // Resume right after the first call's last line.
    let text = std::str::from_utf8(&data).unwrap();
    let cut = text
        .find("last-prompt")
        .map(|i| text[..i].rfind('\n').unwrap() + 1)
        .unwrap();
    let mut first = TranscriptCursor::default();
    first.feed(&data[..cut]);
    assert_eq!(first.take_calls().len(), 1);
    let mut resumed = TranscriptCursor {
        offset: first.offset,
        ..TranscriptCursor::default()
    };
    resumed.recall(&data, 0);
    resumed.feed(&data[cut..]);
    let got: Vec<Option<String>> = resumed
        .take_calls()
        .into_iter()
        .map(|c| c.messages)
        .collect();
    assert_eq!(
        got,
        expected[1..],
        "the same inputs as one reading from the start"
    );
}

/// A new daemon reads only the tail before its resume point: a read that starts inside a
/// line skips that line, and takes the rest as a read from the next line would.
#[test]
fn a_recall_from_inside_a_line_skips_it() {
    let data = fixture("multi_tool/transcript.jsonl");
    // The line of the user's prompt, and the one after it.
    let text = std::str::from_utf8(&data).unwrap();
    let prompt = text[..text
        .find(r#""type":"user","message":{"role":"user","content":"please"#)
        .unwrap()]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let next = prompt + text[prompt..].find('\n').unwrap() + 1;
    let resumed = |from: usize| {
        let mut c = TranscriptCursor {
            offset: data.len() as u64,
            ..TranscriptCursor::default()
        };
        c.set_message_budget(1 << 20);
        c.recall(&data[from..], from as u64);
        c.feed(b"");
        format!("{:?}", c.conversation)
    };
    assert!(
        resumed(prompt + 3) == resumed(next),
        "the cut line is skipped whole"
    );
}

#[test]
fn a_partial_last_line_waits_for_its_end() {
    let data = fixture("bash_write/transcript.jsonl");
    let cut = data.len() - 10;
    let mut c = TranscriptCursor::default();
    let first = c.feed(&data[..cut]);
    assert!(first < cut);
    let rest = c.feed(&data[first..]);
    assert_eq!(first + rest, data.len());
    assert!(!c.take_calls().is_empty());
}

#[test]
fn timestamps_parse_to_milliseconds() {
    assert_eq!(rfc3339_ms("1970-01-01T00:00:01.250Z"), Some(1250));
    assert_eq!(rfc3339_ms("nonsense"), None);
}
